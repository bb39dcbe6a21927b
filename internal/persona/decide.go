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
	// Proposed: a group of records recurs exactly; a candidate is
	// proposed.
	Proposed Decision = "proposed"
	// Gated: no recurrence group has enough clean records or enough
	// history yet.
	Gated Decision = "gated"
	// Rejected: the candidate built from the chosen group's records did
	// not hold under mining or shadow comparison.
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
	// CodeWorkerMismatch, CodeShapeMismatch (path $.bundle or $.result)
	// and CodeDownstreamMismatch say how a listed group's key differs
	// from the chosen group's.
	CodeWorkerMismatch     = "worker_mismatch"
	CodeShapeMismatch      = "shape_mismatch"
	CodeDownstreamMismatch = "downstream_mismatch"
	// CodeWeakerGroup: a listed group that has enough records and history
	// but fewer records (or less history) than the chosen one.
	CodeWeakerGroup = "weaker_group"
	// CodeOtherGroups is a warning: the clean records form more than one
	// recurrence group; Result.Groups lists them.
	CodeOtherGroups = "other_groups"
	// CodeUnknownStatus is a warning: records whose status is neither a
	// success nor a known failure, named, and left out.
	CodeUnknownStatus = "unknown_status"
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
	if o.Persona == "" {
		return ErrNoPersona
	}
	if o.MinExamples != 0 {
		if err := CheckMinExamples(o.MinExamples); err != nil {
			return err
		}
	}
	if o.HostedHistoryDays != nil {
		return CheckHistoryDays("HostedHistoryDays", *o.HostedHistoryDays)
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
	// Records counts the persona's records; Examples the clean records of
	// the chosen recurrence group, which the decision rests on.
	Records  int `json:"records"`
	Examples int `json:"examples"`
	// HistoryDays is the hosted history in whole days; HistorySource says
	// whether it was computed from timestamps or given by the host.
	HistoryDays   int    `json:"history_days"`
	HistorySource string `json:"history_source"`
	// MinExamples and MinHostedHistoryDays are the thresholds applied.
	MinExamples          int `json:"min_examples"`
	MinHostedHistoryDays int `json:"min_hosted_history_days"`
	// Worker, InputShape, OutputShape and DownstreamAction are the chosen
	// group's key, empty when there is no clean record.
	InputShape       string `json:"input_shape"`
	OutputShape      string `json:"output_shape"`
	DownstreamAction string `json:"downstream_action"`
	// Reasons say why the decision is not Proposed; Warnings are notes
	// that do not decide (unclean records, varying result members).
	Reasons  []candidate.Problem `json:"reasons"`
	Warnings []candidate.Problem `json:"warnings"`
	// Lines are the lines of the chosen group's records, in file order.
	Lines []int `json:"lines"`
	// Groups are the recurrence groups of the clean records, the chosen
	// one first, then the others from the strongest, each with its
	// status and reasons.
	Groups []Group `json:"groups"`
	// Proposal is set when Decision is Proposed.
	Proposal *Proposal `json:"-"`

	// matched are the chosen group's records, in file order.
	matched []*Record
}

// Evaluate decides whether the persona's records recur exactly. It does
// not build the candidate (Crystallize does): it is the gate alone.
//
// Recurrence is a grouping, not a veto: the clean records of the persona
// are grouped by the exact recurrence key (worker, input shape, output
// shape, downstream action), in order of first appearance. A group with
// at least MinExamples records and MinHostedHistoryDays of history is a
// candidate; the strongest (eligible first, then most records, then
// longest history, then first seen) is the one decided on, and every
// other group is listed in Result.Groups with why it was not chosen. So
// one record that went another way (a close among merges) no longer
// hides the recurrence of the others. The decision is Proposed when the
// strongest group is a candidate and Gated otherwise, with that group's
// reasons. It fails only for invalid options.
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
		Groups:               []Group{},
	}
	if opts.HostedHistoryDays != nil {
		res.HistorySource = HistoryFromHost
	}
	var clean []*Record
	var failed []int
	unknown := map[string][]int{}
	var unknownOrder []string
	for _, r := range records {
		if r.Persona != opts.Persona {
			continue
		}
		res.Records++
		if r.Clean() {
			clean = append(clean, r)
			continue
		}
		if _, known := StatusSucceeded(r.Status); !known {
			if _, seen := unknown[r.Status]; !seen {
				unknownOrder = append(unknownOrder, r.Status)
			}
			unknown[r.Status] = append(unknown[r.Status], r.Line)
			continue
		}
		failed = append(failed, r.Line)
	}
	if len(failed) > 0 {
		res.Warnings = append(res.Warnings, candidate.Problem{
			Code:    CodeUncleanRecords,
			Message: fmt.Sprintf("%d record(s) of %s failed or carry validation errors and are left out (lines %s)", len(failed), opts.Persona, lineList(failed)),
		})
	}
	for _, st := range unknownOrder {
		res.Warnings = append(res.Warnings, candidate.Problem{
			Code:    CodeUnknownStatus,
			Message: fmt.Sprintf("status %s is neither a success (%s) nor a known failure; %d record(s) left out (lines %s)", strconv.Quote(st), strings.Join(successStatuses, ", "), len(unknown[st]), lineList(unknown[st])),
			Path:    "$.status",
		})
	}
	if res.Records == 0 {
		res.Decision = Gated
		res.Reasons = append(res.Reasons, candidate.Problem{
			Code:    CodeNoRecords,
			Message: fmt.Sprintf("the history has no record of persona %s", opts.Persona),
		})
		return res, nil
	}

	groups := recurrenceGroups(clean)
	for i := range groups {
		g := &groups[i]
		g.HistoryDays = historyDays(g.records)
		if opts.HostedHistoryDays != nil {
			g.HistoryDays = *opts.HostedHistoryDays
		}
		g.Reasons = gateReasons(res, g, len(failed), len(unknownLines(unknown)))
	}
	// The strongest group first; the sort is stable, so equal groups keep
	// the order in which they first appear.
	slices.SortStableFunc(groups, func(a, b Group) int {
		switch {
		case (len(a.Reasons) == 0) != (len(b.Reasons) == 0):
			if len(a.Reasons) == 0 {
				return -1
			}
			return 1
		case a.Examples != b.Examples:
			return b.Examples - a.Examples
		}
		return b.HistoryDays - a.HistoryDays
	})

	if len(groups) == 0 {
		// No clean record: name the worker the persona's records name,
		// when they name one, so the summary line says what was gated.
		all := keyGroups(personaRecords(records, opts.Persona), func(r *Record) string { return r.Worker })
		res.Worker = only(all)
		res.HistoryDays = 0
		if opts.HostedHistoryDays != nil {
			res.HistoryDays = *opts.HostedHistoryDays
		}
		res.Reasons = gateReasons(res, &Group{HistoryDays: res.HistoryDays}, len(failed), len(unknownLines(unknown)))
		res.Decision = Gated
		return res, nil
	}

	best := &groups[0]
	res.Worker, res.InputShape, res.OutputShape, res.DownstreamAction = best.Worker, best.InputShape, best.OutputShape, best.DownstreamAction
	res.Examples, res.HistoryDays, res.Lines, res.matched = best.Examples, best.HistoryDays, best.Lines, best.records
	res.Reasons = append(res.Reasons, best.Reasons...)
	if len(best.Reasons) == 0 {
		best.Status = GroupProposed
		res.Decision = Proposed
	} else {
		best.Status = GroupGated
		res.Decision = Gated
	}
	for i := range groups[1:] {
		g := &groups[i+1]
		g.Status = GroupGated
		if len(g.Reasons) == 0 {
			g.Status = GroupCandidate
			g.Reasons = append(g.Reasons, candidate.Problem{
				Code:    CodeWeakerGroup,
				Message: fmt.Sprintf("%d record(s) over %d day(s); the chosen group has %d over %d", g.Examples, g.HistoryDays, best.Examples, best.HistoryDays),
			})
		}
		g.Reasons = append(g.Reasons, differences(best, g)...)
	}
	res.Groups = groups
	if len(groups) > 1 {
		res.Warnings = append(res.Warnings, candidate.Problem{
			Code:    CodeOtherGroups,
			Message: fmt.Sprintf("the clean records of %s form %d recurrence groups; %d other group(s) are listed with their reasons", opts.Persona, len(groups), len(groups)-1),
		})
	}
	return res, nil
}

// Statuses of a Group.
const (
	// GroupProposed: the group the decision rests on, and a candidate.
	GroupProposed = "proposed"
	// GroupCandidate: a group with enough records and history that is
	// weaker than the proposed one.
	GroupCandidate = "candidate"
	// GroupGated: a group with too few records or too short a history.
	GroupGated = "gated"
)

// Group is the clean records of a persona that share the exact
// recurrence key: worker, input shape, output shape, downstream action.
type Group struct {
	Worker           string `json:"worker"`
	InputShape       string `json:"input_shape"`
	OutputShape      string `json:"output_shape"`
	DownstreamAction string `json:"downstream_action"`
	Examples         int    `json:"examples"`
	HistoryDays      int    `json:"history_days"`
	Lines            []int  `json:"lines"`
	// Status is GroupProposed, GroupCandidate or GroupGated; Reasons say
	// why a group was not proposed, and how it differs from the group
	// that was.
	Status  string              `json:"status"`
	Reasons []candidate.Problem `json:"reasons"`

	records []*Record
}

// recurrenceGroups groups the clean records by the exact recurrence key,
// in order of first appearance.
func recurrenceGroups(clean []*Record) []Group {
	var out []Group
	index := map[[4]string]int{}
	for _, r := range clean {
		k := [4]string{r.Worker, Shape(r.Bundle), Shape(resultValue(r)), r.DownstreamAction}
		i, ok := index[k]
		if !ok {
			i = len(out)
			index[k] = i
			out = append(out, Group{Worker: k[0], InputShape: k[1], OutputShape: k[2], DownstreamAction: k[3], Lines: []int{}, Reasons: []candidate.Problem{}})
		}
		g := &out[i]
		g.records = append(g.records, r)
		g.Lines = append(g.Lines, r.Line)
		g.Examples++
	}
	return out
}

// gateReasons are the thresholds group g misses; failed and unknown count
// the persona's records left out, for the message.
func gateReasons(res *Result, g *Group, failed, unknown int) []candidate.Problem {
	out := []candidate.Problem{}
	if g.Examples < res.MinExamples {
		msg := fmt.Sprintf("%d clean record(s) of %s, fewer than the %d required", g.Examples, res.Persona, res.MinExamples)
		switch {
		case failed > 0 && unknown > 0:
			msg += fmt.Sprintf(" (%d more failed or carry validation errors, %d more have an unknown status)", failed, unknown)
		case failed > 0:
			msg += fmt.Sprintf(" (%d more failed or carry validation errors)", failed)
		case unknown > 0:
			msg += fmt.Sprintf(" (%d more have an unknown status)", unknown)
		}
		out = append(out, candidate.Problem{Code: CodeTooFewExamples, Message: msg})
	}
	if g.HistoryDays < res.MinHostedHistoryDays {
		from := "between the first and the last clean record"
		if res.HistorySource == HistoryFromHost {
			from = "of hosted history, as given"
		}
		out = append(out, candidate.Problem{
			Code:    CodeInsufficientHistory,
			Message: fmt.Sprintf("%d day(s) %s, fewer than the %d required", g.HistoryDays, from, res.MinHostedHistoryDays),
		})
	}
	return out
}

// differences says how group g's key differs from the chosen group's.
func differences(best, g *Group) []candidate.Problem {
	var out []candidate.Problem
	if g.Worker != best.Worker {
		out = append(out, candidate.Problem{Code: CodeWorkerMismatch, Path: "$.worker",
			Message: fmt.Sprintf("worker %s, the chosen group's is %s", quoted(g.Worker), quoted(best.Worker))})
	}
	if g.InputShape != best.InputShape {
		out = append(out, candidate.Problem{Code: CodeShapeMismatch, Path: "$.bundle",
			Message: fmt.Sprintf("input shape %s, the chosen group's is %s", short(g.InputShape), short(best.InputShape))})
	}
	if g.OutputShape != best.OutputShape {
		out = append(out, candidate.Problem{Code: CodeShapeMismatch, Path: "$.result",
			Message: fmt.Sprintf("output shape %s, the chosen group's is %s", short(g.OutputShape), short(best.OutputShape))})
	}
	if g.DownstreamAction != best.DownstreamAction {
		out = append(out, candidate.Problem{Code: CodeDownstreamMismatch, Path: "$.downstream_action",
			Message: fmt.Sprintf("downstream action %s, the chosen group's is %s", quoted(g.DownstreamAction), quoted(best.DownstreamAction))})
	}
	return out
}

func unknownLines(m map[string][]int) []int {
	var out []int
	for _, l := range m {
		out = append(out, l...)
	}
	return out
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

// keyGroups partitions the records by key, in order of first appearance.
func keyGroups(records []*Record, key func(*Record) string) []group {
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

func lineList(lines []int) string {
	parts := make([]string, len(lines))
	for i, l := range lines {
		parts[i] = strconv.Itoa(l)
	}
	return strings.Join(parts, ", ")
}
