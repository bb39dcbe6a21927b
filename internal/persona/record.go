package persona

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/crystallize-dev/crystallize/internal/trace"
)

// Record is one repair-worker record of a persona's history: one call of
// the worker by the persona and what came of it.
type Record struct {
	Persona string
	Worker  string
	Status  string
	// ValidationErrors are the problems the persona found in the worker's
	// result, as recorded (any JSON values).
	ValidationErrors []any
	// Bundle is the repair bundle the worker was given (kind, repo,
	// conflict_paths, failing_checks, allowed_write_scope,
	// required_verification, release_facts, extra_context); Result what it
	// returned (diagnosis, files_changed, tests_run, commits_created,
	// push_result, residual_risk, release_outputs). Both are the generic
	// values of trace.ParseJSON; Result is nil when the record has none.
	Bundle map[string]any
	Result map[string]any
	// DownstreamAction is what the persona did with the result.
	DownstreamAction string
	AgentLoop        AgentLoop
	// FinishedAt is finished_at as written; Finished is it parsed.
	FinishedAt string
	Finished   time.Time

	// File and Line locate the record; SourceHash is the content hash of
	// the line (trace.HashBytes), which names the record in candidate ids
	// and bundle fixtures.
	File       string
	Line       int
	SourceHash string
}

// AgentLoop is what the worker's model loop spent on one record: what
// crystallizing the worker would save.
type AgentLoop struct {
	ModelCalls   int64
	InputTokens  int64
	OutputTokens int64
	CostUSD      float64
	WallMS       int64
}

// Clean reports whether the record counts as an example: a successful
// status (StatusSucceeded) and no validation errors.
func (r *Record) Clean() bool {
	ok, _ := StatusSucceeded(r.Status)
	return ok && len(r.ValidationErrors) == 0
}

// Status words of repair-worker records, compared case-insensitively.
// Producers write success in several words (harn's workers write
// "completed" as often as "success"), so reading only one of them would
// count clean history as failed.
var (
	successStatuses = []string{"success", "succeeded", "ok", "completed", "passed", "done"}
	failureStatuses = []string{"failure", "failed", "fail", "error", "errored", "cancelled", "canceled", "timeout", "timed_out", "aborted", "rejected", "skipped", "crashed"}
)

// StatusSucceeded reports whether status says the worker succeeded, and
// whether the word is known at all. An unknown status is not a success,
// but it is not a known failure either: Evaluate warns about it by name
// instead of counting it silently as failed.
func StatusSucceeded(status string) (succeeded, known bool) {
	s := strings.ToLower(strings.TrimSpace(status))
	if slices.Contains(successStatuses, s) {
		return true, true
	}
	return false, slices.Contains(failureStatuses, s)
}

// maxLine bounds one record. A repair record is a few kilobytes; a line
// of many megabytes is a broken file, not history, and reading it whole
// would only spend memory.
const maxLine = 16 << 20

// Load reads the history file at path with Decode.
func Load(path string) ([]*Record, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Decode(f, path)
}

// Decode reads a history: JSON Lines, one record per line, blank lines
// skipped, a "\r" before the "\n" ignored. file names the input in errors.
//
// Every bad record is reported, not only the first: the error is a
// trace.ErrorList whose entries read "file:line: $.path: message" (with
// the byte column for a syntax error). persona, worker, status and
// finished_at (an RFC 3339 timestamp) are required strings and bundle a
// required object; result and agent_loop are optional objects,
// validation_errors an optional array, downstream_action an optional
// string, and the members of agent_loop are non-negative numbers. A read
// error other than a bad record is returned as it is.
func Decode(r io.Reader, file string) ([]*Record, error) {
	br := bufio.NewReader(r)
	var (
		out  []*Record
		errs trace.ErrorList
		p    trace.Parser
	)
	for n := 1; ; n++ {
		line, err := readLine(br)
		if err != nil && !errors.Is(err, io.EOF) {
			if errors.Is(err, errLineTooLong) {
				errs = append(errs, &trace.Error{File: file, Line: n, Msg: err.Error()})
				continue
			}
			return nil, fmt.Errorf("reading %s: %w", file, err)
		}
		if len(bytes.TrimSpace(line)) > 0 {
			rec, lerr := decodeLine(&p, line, file, n)
			var list trace.ErrorList
			switch {
			case errors.As(lerr, &list):
				errs = append(errs, list...)
			case lerr != nil:
				errs = append(errs, &trace.Error{File: file, Line: n, Msg: lerr.Error()})
			default:
				out = append(out, rec)
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return out, nil
}

var errLineTooLong = fmt.Errorf("record longer than %d bytes", maxLine)

// readLine returns the next line without its ending, io.EOF with the last
// line, or errLineTooLong after skipping the rest of an overlong line.
func readLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(line)+len(chunk) > maxLine {
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = br.ReadSlice('\n')
			}
			if err != nil && !errors.Is(err, io.EOF) {
				return nil, err
			}
			return nil, errLineTooLong
		}
		line = append(line, chunk...)
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err != nil:
			return bytes.TrimSuffix(line, []byte("\r")), err
		}
		line = bytes.TrimSuffix(line[:len(line)-1], []byte("\r"))
		return line, nil
	}
}

// decodeLine decodes one record.
func decodeLine(p *trace.Parser, line []byte, file string, n int) (*Record, error) {
	v, err := p.Parse(line, file, n)
	if err != nil {
		return nil, err
	}
	f := &trace.Fields{File: file, Line: n}
	obj, ok := v.(map[string]any)
	if !ok {
		f.TypeError("$", "object", v)
		return nil, f.Err()
	}
	r := &Record{File: file, Line: n, SourceHash: trace.HashBytes(line)}
	r.Persona = f.ReqString(obj, "$", "persona")
	r.Worker = f.ReqString(obj, "$", "worker")
	r.Status = f.ReqString(obj, "$", "status")
	if arr, ok := f.OptArray(obj, "$", "validation_errors"); ok {
		r.ValidationErrors = arr
	}
	if _, present := obj["bundle"]; !present {
		f.Errorf("$.bundle", "missing required field")
	} else if r.Bundle = f.OptObject(obj, "$", "bundle"); r.Bundle == nil && obj["bundle"] == nil {
		f.TypeError("$.bundle", "object", nil)
	}
	r.Result = f.OptObject(obj, "$", "result")
	r.DownstreamAction = f.OptString(obj, "$", "downstream_action")
	if loop := f.OptObject(obj, "$", "agent_loop"); loop != nil {
		const lp = "$.agent_loop"
		r.AgentLoop = AgentLoop{
			ModelCalls:   f.Count(loop, lp, "model_calls"),
			InputTokens:  f.Count(loop, lp, "input_tokens"),
			OutputTokens: f.Count(loop, lp, "output_tokens"),
			CostUSD:      f.Amount(loop, lp, "cost_usd"),
			WallMS:       f.Count(loop, lp, "wall_ms"),
		}
	}
	r.FinishedAt = f.ReqString(obj, "$", "finished_at")
	if r.FinishedAt != "" {
		t, err := time.Parse(time.RFC3339Nano, r.FinishedAt)
		if err != nil {
			f.Errorf("$.finished_at", "expected an RFC 3339 timestamp, got %q", r.FinishedAt)
		}
		r.Finished = t
	}
	if err := f.Err(); err != nil {
		return nil, err
	}
	return r, nil
}
