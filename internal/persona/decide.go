package persona

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/crystallize-dev/crystallize/internal/candidate"
)

// Defaults of Options.
const (
	DefaultMinExamples          = 3
	DefaultMinHostedHistoryDays = 90
)

// Decision is the answer for one persona.
type Decision string

// Decisions.
const (
	// Proposed: the records recur exactly; a candidate is proposed.
	Proposed Decision = "proposed"
	// Gated: nothing disagrees, but there are not enough clean records or
	// not enough history yet.
	Gated Decision = "gated"
	// Rejected: the persona's clean records disagree (worker, shapes or
	// downstream action), or the candidate built from them did not hold.
	Rejected Decision = "rejected"
)

// Reason and warning codes. They are stable: tools and tests match them.
const (
	// CodeNoRecords: the history has no record of the persona (gated).
	CodeNoRecords = "no_records"
	// CodeTooFewExamples: fewer clean records than MinExamples (gated).
	CodeTooFewExamples = "too_few_examples"
	// CodeInsufficientHistory: the clean records span fewer days than
	// MinHostedHistoryDays (gated).
	CodeInsufficientHistory = "insufficient_history"
	// CodeWorkerMismatch: the persona's clean records name more than one
	// worker (rejected).
	CodeWorkerMismatch = "worker_mismatch"
	// CodeShapeMismatch: the clean records' bundles (path $.bundle) or
	// results (path $.result) have more than one shape (rejected).
	CodeShapeMismatch = "shape_mismatch"
	// CodeDownstreamMismatch: the clean records name more than one
	// downstream action (rejected).
	CodeDownstreamMismatch = "downstream_mismatch"
	// CodeCandidateRejected: the records agreed, but mining or shadow
	// comparison rejected the candidate built from them (rejected); the
	// candidate's own reasons follow it.
	CodeCandidateRejected = "candidate_rejected"
	// CodeUncleanRecords is a warning: records of the persona that failed
	// or carry validation errors, left out of the decision.
	CodeUncleanRecords = "unclean_records"
	// CodeVaryingResult is a warning: result members that vary between
	// the records and equal no member of the bundle; the patch asks a
	// model for them, marked review_required.
	CodeVaryingResult = "varying_result"
)

// ErrNoPersona is returned by Evaluate when Options.Persona is empty.
var ErrNoPersona = errors.New("no persona given")

// Options controls Evaluate and Crystallize. The zero value, with Persona
// set, is the documented default.
type Options struct {
	// Persona is the persona whose records are considered; required.
	Persona string
	// MinExamples is the number of clean records required; 0 means
	// DefaultMinExamples (3). Values below 2 are an error: one record
	// cannot show recurrence.
	MinExamples int
	// MinHostedHistoryDays is the history, in days, required; 0 means
	// DefaultMinHostedHistoryDays (90) and a negative value requires none.
	MinHostedHistoryDays int
	// HostedHistoryDays, when set, is the persona's hosted history in
	// days, as its host knows it; nil computes it from the clean records'
	// finished_at timestamps (the whole days between the first and the
	// last).
	HostedHistoryDays *int
	// GeneratedAt is copied into the report of a proposal; nothing here
	// reads the clock.
	GeneratedAt string
}

func (o Options) minExamples() int {
	if o.MinExamples == 0 {
		return DefaultMinExamples
	}
	return o.MinExamples
}

func (o Options) minHistoryDays() int {
	switch {
	case o.MinHostedHistoryDays == 0:
		return DefaultMinHostedHistoryDays
	case o.MinHostedHistoryDays < 0:
		return 0
	}
	return o.MinHostedHistoryDays
}

func (o Options) check() error {
	switch {
	case o.Persona == "":
		return ErrNoPersona
	case o.MinExamples != 0 && o.MinExamples < 2:
		return fmt.Errorf("min examples must be at least 2, got %d: one record cannot show recurrence", o.MinExamples)
	case o.HostedHistoryDays != nil && *o.HostedHistoryDays < 0:
		return fmt.Errorf("hosted history days must not be negative, got %d", *o.HostedHistoryDays)
	}
	return nil
}

// History sources of Result.HistorySource.
const (
	HistoryFromTimestamps = "timestamps"
	HistoryFromHost       = "host"
)

// Result is the decision for one persona, with everything it was decided
// from.
type Result struct {
	Persona  string   `json:"persona"`
	Worker   string   `json:"worker"`
	Decision Decision `json:"decision"`
	// Records counts the persona's records; Examples the clean ones that
	// the decision rests on.
	Records  int `json:"records"`
	Examples int `json:"examples"`
	// HistoryDays is the hosted history in whole days; HistorySource says
	// whether it was computed from timestamps or given by the host.
	HistoryDays   int    `json:"history_days"`
	HistorySource string `json:"history_source"`
	// MinExamples and MinHostedHistoryDays are the thresholds applied.
	MinExamples          int `json:"min_examples"`
	MinHostedHistoryDays int `json:"min_hosted_history_days"`
	// InputShape, OutputShape and DownstreamAction are what the clean
	// records share, empty when they disagree or there are none.
	InputShape       string `json:"input_shape"`
	OutputShape      string `json:"output_shape"`
	DownstreamAction string `json:"downstream_action"`
	// Reasons say why the decision is not Proposed; Warnings are notes
	// that do not decide (unclean records, varying result members).
	Reasons  []candidate.Problem `json:"reasons"`
	Warnings []candidate.Problem `json:"warnings"`
	// Lines are the lines of the clean records, in file order.
	Lines []int `json:"lines"`
	// Proposal is set when Decision is Proposed.
	Proposal *Proposal `json:"-"`

	// matched are the clean records, in file order.
	matched []*Record
}

// Evaluate decides whether the persona's records recur exactly. It does
// not build the candidate (Crystallize does): it is the gate alone. The
// rules are those of the package comment, applied to the clean records of
// the persona in file order; disagreement rejects whatever the counts, and
// every gate that fails is listed. It fails only for invalid options.
func Evaluate(records []*Record, opts Options) (*Result, error) {
	if err := opts.check(); err != nil {
		return nil, err
	}
	res := &Result{
		Persona:              opts.Persona,
		MinExamples:          opts.minExamples(),
		MinHostedHistoryDays: opts.minHistoryDays(),
		HistorySource:        HistoryFromTimestamps,
		Reasons:              []candidate.Problem{},
		Warnings:             []candidate.Problem{},
		Lines:                []int{},
	}
	var unclean []int
	for _, r := range records {
		if r.Persona != opts.Persona {
			continue
		}
		res.Records++
		if !r.Clean() {
			unclean = append(unclean, r.Line)
			continue
		}
		res.matched = append(res.matched, r)
		res.Lines = append(res.Lines, r.Line)
	}
	res.Examples = len(res.matched)
	if len(unclean) > 0 {
		res.Warnings = append(res.Warnings, candidate.Problem{
			Code:    CodeUncleanRecords,
			Message: fmt.Sprintf("%d record(s) of %s failed or carry validation errors and are left out (lines %s)", len(unclean), opts.Persona, lineList(unclean)),
		})
	}
	res.HistoryDays = historyDays(res.matched)
	if opts.HostedHistoryDays != nil {
		res.HistoryDays = *opts.HostedHistoryDays
		res.HistorySource = HistoryFromHost
	}
	if res.Records == 0 {
		res.Decision = Gated
		res.Reasons = append(res.Reasons, candidate.Problem{
			Code:    CodeNoRecords,
			Message: fmt.Sprintf("the history has no record of persona %s", opts.Persona),
		})
		return res, nil
	}

	// Disagreement first: more records would not make it recur.
	workers := groups(res.matched, func(r *Record) string { return r.Worker })
	inputs := groups(res.matched, func(r *Record) string { return Shape(r.Bundle) })
	outputs := groups(res.matched, func(r *Record) string { return Shape(resultValue(r)) })
	actions := groups(res.matched, func(r *Record) string { return r.DownstreamAction })
	res.Worker = only(workers)
	if res.Worker == "" && len(res.matched) == 0 {
		// No clean record: name the worker the persona's records name,
		// when they name one, so the summary line says what was gated.
		all := groups(personaRecords(records, opts.Persona), func(r *Record) string { return r.Worker })
		res.Worker = only(all)
	}
	res.InputShape, res.OutputShape, res.DownstreamAction = only(inputs), only(outputs), only(actions)
	if len(workers) > 1 {
		res.Reasons = append(res.Reasons, candidate.Problem{
			Code:    CodeWorkerMismatch,
			Message: fmt.Sprintf("the clean records name %d workers: %s", len(workers), describeGroups(workers, quoted)),
			Path:    "$.worker",
		})
	}
	if len(inputs) > 1 {
		res.Reasons = append(res.Reasons, candidate.Problem{
			Code:    CodeShapeMismatch,
			Message: fmt.Sprintf("the repair bundles have %d input shapes: %s", len(inputs), describeGroups(inputs, short)),
			Path:    "$.bundle",
		})
	}
	if len(outputs) > 1 {
		res.Reasons = append(res.Reasons, candidate.Problem{
			Code:    CodeShapeMismatch,
			Message: fmt.Sprintf("the results have %d output shapes: %s", len(outputs), describeGroups(outputs, short)),
			Path:    "$.result",
		})
	}
	if len(actions) > 1 {
		res.Reasons = append(res.Reasons, candidate.Problem{
			Code:    CodeDownstreamMismatch,
			Message: fmt.Sprintf("the records name %d downstream actions: %s", len(actions), describeGroups(actions, quoted)),
			Path:    "$.downstream_action",
		})
	}
	if len(res.Reasons) > 0 {
		res.Decision = Rejected
		return res, nil
	}

	if res.Examples < res.MinExamples {
		msg := fmt.Sprintf("%d clean record(s) of %s, fewer than the %d required", res.Examples, opts.Persona, res.MinExamples)
		if len(unclean) > 0 {
			msg += fmt.Sprintf(" (%d more failed or carry validation errors)", len(unclean))
		}
		res.Reasons = append(res.Reasons, candidate.Problem{Code: CodeTooFewExamples, Message: msg})
	}
	if res.HistoryDays < res.MinHostedHistoryDays {
		from := "between the first and the last clean record"
		if res.HistorySource == HistoryFromHost {
			from = "of hosted history, as given"
		}
		res.Reasons = append(res.Reasons, candidate.Problem{
			Code:    CodeInsufficientHistory,
			Message: fmt.Sprintf("%d day(s) %s, fewer than the %d required", res.HistoryDays, from, res.MinHostedHistoryDays),
		})
	}
	if len(res.Reasons) > 0 {
		res.Decision = Gated
		return res, nil
	}
	res.Decision = Proposed
	return res, nil
}

// resultValue is the record's result as a JSON value: nil (null) when it
// has none, so a missing result has a shape of its own.
func resultValue(r *Record) any {
	if r.Result == nil {
		return nil
	}
	return r.Result
}

func personaRecords(records []*Record, persona string) []*Record {
	var out []*Record
	for _, r := range records {
		if r.Persona == persona {
			out = append(out, r)
		}
	}
	return out
}

// historyDays is the number of whole days between the earliest and the
// latest finished_at of the records; 0 for fewer than two.
func historyDays(records []*Record) int {
	if len(records) == 0 {
		return 0
	}
	first, last := records[0].Finished, records[0].Finished
	for _, r := range records[1:] {
		if r.Finished.Before(first) {
			first = r.Finished
		}
		if r.Finished.After(last) {
			last = r.Finished
		}
	}
	return int(last.Sub(first) / (24 * time.Hour))
}

// group is the records that share a key, by line.
type group struct {
	key   string
	lines []int
}

// groups partitions the records by key, in order of first appearance.
func groups(records []*Record, key func(*Record) string) []group {
	var out []group
	for _, r := range records {
		k := key(r)
		i := slices.IndexFunc(out, func(g group) bool { return g.key == k })
		if i < 0 {
			out = append(out, group{key: k})
			i = len(out) - 1
		}
		out[i].lines = append(out[i].lines, r.Line)
	}
	return out
}

// only returns the key of the one group, or "".
func only(gs []group) string {
	if len(gs) == 1 {
		return gs[0].key
	}
	return ""
}

func quoted(s string) string { return strconv.Quote(s) }

// short abbreviates a shape digest for a message.
func short(s string) string {
	if len(s) > len("sha256:")+12 {
		return s[:len("sha256:")+12]
	}
	return s
}

// describeGroups renders groups as `key (lines 1, 3); key (line 2)`.
func describeGroups(gs []group, show func(string) string) string {
	parts := make([]string, len(gs))
	for i, g := range gs {
		word := "lines"
		if len(g.lines) == 1 {
			word = "line"
		}
		parts[i] = fmt.Sprintf("%s (%s %s)", show(g.key), word, lineList(g.lines))
	}
	return strings.Join(parts, "; ")
}

func lineList(lines []int) string {
	parts := make([]string, len(lines))
	for i, l := range lines {
		parts[i] = strconv.Itoa(l)
	}
	return strings.Join(parts, ", ")
}
