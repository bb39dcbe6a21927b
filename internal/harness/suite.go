package harness

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/crystallize-dev/crystallize/internal/assert"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// Case is one eval case, a line of a suite's JSONL file, in the seed's
// case format (id, kind, input, assert, tags). Expected, Critical and
// Split label a golden-set case for judge calibration.
type Case struct {
	ID       string      `json:"id"`
	Kind     string      `json:"kind"`
	Input    CaseInput   `json:"input"`
	Assert   []Assertion `json:"assert"`
	Tags     []string    `json:"tags,omitempty"`
	Expected string      `json:"expected,omitempty"`
	Critical bool        `json:"critical,omitempty"`
	Split    string      `json:"split,omitempty"`
}

// maxCaseLine bounds one JSONL line.
const maxCaseLine = 4 << 20

// LoadSuite reads a JSONL suite. It reports every bad line, with the
// file, line and JSON path; blank lines are allowed.
func LoadSuite(file string) ([]Case, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ParseSuite(f, file)
}

// ParseSuite reads a JSONL suite from r; file names it in errors.
func ParseSuite(r io.Reader, file string) ([]Case, error) {
	var cases []Case
	var errs trace.ErrorList
	ids := map[string]int{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxCaseLine)
	line := 0
	for sc.Scan() {
		line++
		text := bytes.TrimSpace(sc.Bytes())
		if len(text) == 0 {
			continue
		}
		bad := func(p, format string, args ...any) {
			errs = append(errs, &trace.Error{File: file, Line: line, Path: p, Msg: fmt.Sprintf(format, args...)})
		}
		// trace.ParseJSON first, as for a manifest: the Decoder stops
		// after one value, so a second case on the line was dropped.
		if _, err := trace.ParseJSON(text, file, line); err != nil {
			errs = append(errs, err.(trace.ErrorList)...)
			continue
		}
		var c Case
		// DisallowUnknownFields still takes "Command" for "command".
		if names := trace.CheckNames(text, file, line, &c); len(names) > 0 {
			errs = append(errs, names...)
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(text))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&c); err != nil {
			bad("$", "decoding case: %v", err)
			continue
		}
		if c.ID == "" {
			bad("$.id", "empty id")
		} else if prev, ok := ids[c.ID]; ok {
			bad("$.id", "duplicate id %q (first on line %d)", c.ID, prev)
		} else {
			ids[c.ID] = line
		}
		sources := 0
		if len(c.Input.Command) > 0 {
			sources++
			if _, err := c.Input.Argv(); err != nil {
				bad("$.input.command", "%v", err)
			}
		}
		if c.Input.Output != nil {
			sources++
		}
		if c.Input.OutputFile != "" {
			sources++
			if err := checkRel(c.Input.OutputFile); err != nil {
				bad("$.input.output_file", "%v", err)
			}
		}
		if sources > 1 {
			bad("$.input", "more than one of command, output and output_file")
		}
		if c.Input.Trace != "" {
			if err := checkRel(c.Input.Trace); err != nil {
				bad("$.input.trace", "%v", err)
			}
			if len(c.Input.Trajectory) > 0 {
				bad("$.input", "both trace and trajectory")
			}
		}
		if len(c.Assert) == 0 {
			bad("$.assert", "no assertions")
		}
		for i, a := range c.Assert {
			p := fmt.Sprintf("$.assert[%d]", i)
			if _, ok := Blocking[a.Type]; !ok {
				bad(p+".type", "unknown assertion type %q", a.Type)
			}
			if a.Threshold != nil && (*a.Threshold < 0 || *a.Threshold > 1) {
				bad(p+".threshold", "threshold %v outside [0, 1]", *a.Threshold)
			}
		}
		switch c.Expected {
		case "", "pass", "fail", "ambiguous":
		default:
			bad("$.expected", "expected %q, want pass, fail or ambiguous", c.Expected)
		}
		switch c.Split {
		case "", SplitCalibration, SplitHeldOut:
		default:
			bad("$.split", "split %q, want %s or %s", c.Split, SplitCalibration, SplitHeldOut)
		}
		cases = append(cases, c)
	}
	if err := sc.Err(); err != nil {
		errs = append(errs, &trace.Error{File: file, Line: line + 1, Msg: "reading suite: " + err.Error()})
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return cases, nil
}

// trajectoryOf is the case's trajectory: its own, or the actions of its
// crystallize trace other than model calls (name, parameters, and
// whether metadata marks the call as failed).
func trajectoryOf(root string, in CaseInput) ([]ToolCall, error) {
	if in.Trace == "" {
		return in.Trajectory, nil
	}
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(in.Trace)))
	if err != nil {
		return nil, err
	}
	t, err := trace.Decode(data, in.Trace, 0)
	if err != nil {
		return nil, err
	}
	return assert.TraceTrajectory(t), nil
}
