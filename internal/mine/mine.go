package mine

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sort"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/price"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// DefaultMinExamples is the number of distinct sessions a procedure must
// occur in to become a candidate when Options.MinExamples is zero. Two is the
// least that can show which fields vary.
const DefaultMinExamples = 2

// DefaultMaxCandidates is how many safe candidates a report lists when
// Options.MaxCandidates is zero.
const DefaultMaxCandidates = 10

// ErrMinExamples is returned when Options.MinExamples is below two: one
// example cannot tell a parameter from a constant.
var ErrMinExamples = errors.New("min examples must be at least 2")

// Options controls a mining run. The zero value mines with the defaults.
type Options struct {
	// MinExamples is the number of distinct sessions (support.go) a
	// sequence must occur in; zero means DefaultMinExamples. Values below 2 are an error.
	MinExamples int
	// MaxCandidates bounds the safe candidates listed in the report; zero
	// means DefaultMaxCandidates.
	MaxCandidates int
	// WorkflowName names the selected candidate; the others get names
	// inferred from their goal or steps.
	WorkflowName string
	// GeneratedAt is copied into the report. Mining never reads the clock.
	GeneratedAt string
	// Progress, when set, is called as candidates are built.
	Progress func(done, total int)
	// Mode chooses the miner: ModeExact finds contiguous repeats,
	// ModeGapped finds procedures with other actions between their steps
	// (skipping observations, folding retries), and ModeAuto, or "",
	// chooses gapped when any trace has metadata.agent or an action of
	// kind observation (an agent session), exact otherwise.
	Mode string
	// MaxGap is the most non-observation actions the gapped miner allows
	// between two consecutive steps; zero means DefaultMaxGap.
	MaxGap int
	// SearchBudget bounds the patterns the gapped search visits; zero
	// means DefaultSearchBudget. The report warns when it cuts the search.
	SearchBudget int
	// ExampleCache bounds, in actions, the decoded example traces a
	// two-pass run (Scan.Mine) keeps between batches of candidates; zero
	// means DefaultExampleCache. It changes the time and memory of the
	// run, never its report.
	ExampleCache int
	// ExampleSample bounds the examples a candidate of either miner is
	// built from: above it, the candidate is built from a deterministic
	// sample of that many and the other examples are checked against it
	// (see sample.go). Zero means DefaultExampleSample; a negative value
	// builds every candidate from all its examples.
	ExampleSample int
	// Verify, when set, judges each example of a sampled candidate the
	// way shadow replay will, in the same read that checks it against the
	// sample (see verify.go), so that a two-pass run reads those examples
	// once; Scan.Verified then says which of them shadow replay need not
	// read again. It changes what is read, never the report.
	Verify ExampleVerifier
	// Verdicts, when set with Verify and SourceHash, remembers examples
	// verified by an earlier run (see candidate.ExampleVerdicts): an
	// example it recorded as passing against a candidate with the same
	// content, which the shadow report does not list, is not read again.
	Verdicts candidate.ExampleVerdicts
	// SourceHash returns the source hash of an eligible trace by the
	// index Scan.Add gave it, without reading it: the key Verdicts needs
	// before an example is read.
	SourceHash func(eligible int32) string
	// Prices prices the tokens of a model call whose trace gives no cost
	// (agents' logs name the model and count tokens, but carry no
	// dollars); nil means price.Default. A model it does not know is
	// listed in the savings as unpriced, never counted as free.
	Prices *price.Table
	// RunParameters are the values the one run Single builds a candidate
	// from declares as its parameters, by name (a release manifest's
	// current_version, next_version, target_release_branch, …): they
	// become the workflow's parameters, and the values made from them
	// expressions over them (see declareParameters). Mine ignores them:
	// there, what varies is seen across the examples.
	RunParameters map[string]string
}

// prices returns the price table of o.
func (o Options) prices() *price.Table {
	if o.Prices == nil {
		return price.Default()
	}
	return o.Prices
}

// ErrMode is returned for an Options.Mode that is not a miner.
var ErrMode = errors.New("unknown miner mode")

func (o Options) maxGap() int32 {
	if o.MaxGap <= 0 {
		return DefaultMaxGap
	}
	return int32(o.MaxGap)
}

func (o Options) searchBudget() int {
	if o.SearchBudget <= 0 {
		return DefaultSearchBudget
	}
	return o.SearchBudget
}

func (o Options) minExamples() int {
	if o.MinExamples == 0 {
		return DefaultMinExamples
	}
	return o.MinExamples
}

func (o Options) maxCandidates() int {
	if o.MaxCandidates <= 0 {
		return DefaultMaxCandidates
	}
	return o.MaxCandidates
}

// scanLimit bounds how many ranked repeats are built into candidates while
// looking for safe ones. Building is linear in length × examples, so the
// bound keeps a corpus full of rejected repeats from taking quadratic time;
// when it cuts the scan short the report says so.
func (o Options) scanLimit() int {
	return max(200, 20*o.maxCandidates())
}

// Mine finds the repeated procedures in traces and returns the report. The
// traces must be decoded and normalized (trace.Normalize); they are not
// modified. Mine returns an error only for invalid options or a cancelled
// context: finding nothing is a report with no selected candidate.
func Mine(ctx context.Context, traces []*trace.Trace, opts Options) (*candidate.Report, error) {
	s, err := NewScan(opts)
	if err != nil {
		return nil, err
	}
	eligible := make([]*trace.Trace, 0, len(traces))
	for _, t := range traces {
		if s.Add(Summarize(t)) >= 0 {
			eligible = append(eligible, t)
		}
	}
	if gapped, reason := s.gapped(); gapped {
		return s.mineGapped(ctx, memoryTraces(eligible), reason)
	}
	return s.mine(ctx, memoryTraces(eligible))
}

// mine finds the repeats among the scanned symbol sequences and builds
// them, in rank order, into candidates, reading the traces of their
// examples through src.
func (s *Scan) mine(ctx context.Context, src traceSource) (*candidate.Report, error) {
	opts, report := s.opts, s.report
	minEx := opts.minExamples()
	if done, err := s.begin(ctx, candidate.MiningSummary{}); err != nil {
		return nil, err
	} else if done {
		return report, nil
	}

	sc := newSessionCounter(s.session, s.sessions)
	idx := NewIndex(s.seqs)
	repeats := idx.RepeatsBy(minEx, 2, sc.colours())
	idx.Release()
	report.Mining.RepeatsFound = len(repeats)
	// What is not a procedure ranks after every procedure (shape.go); the
	// sort is stable, so each part keeps the order of Repeats.
	sh := symbolShapes(s.symbols)
	notProc := make([]bool, len(repeats))
	moved := false
	for i, r := range repeats {
		// A procedure has steps that are actions, of more than one tool,
		// and most repeats show two in their first few symbols: no copy
		// of the symbols.
		first, actions := int32(-1), 0
		if !idx.any(r, func(y int32) bool {
			if sh.shape[y] != shapeAction {
				return false
			}
			actions++
			if first < 0 {
				first = y
				return sh.tool[y] == ""
			}
			return sh.tool[y] == "" || sh.tool[y] != sh.tool[first]
		}) && actions != 1 {
			// No action, or two or more all of one tool: notProcedure's
			// verdict, read without copying the symbols.
			notProc[i], moved = true, true
		}
	}
	if moved {
		sorted := make([]Repeat, 0, len(repeats))
		for _, last := range []bool{false, true} {
			for i, r := range repeats {
				if notProc[i] == last {
					sorted = append(sorted, r)
				}
			}
		}
		repeats = sorted
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	r := &repeatRanking{idx: idx, repeats: repeats, shapes: sh}
	how := selection{
		builder:  builder{eligible: len(s.seqs), prices: opts.prices()},
		sessions: sc,
		batch:    2 * max(1, runtime.GOMAXPROCS(0)),
	}
	if err := s.selectCandidates(ctx, src, r, how); err != nil {
		return nil, err
	}
	return report, nil
}

// repeatRanking is the exact miner's ranking: the repeats in rank order.
type repeatRanking struct {
	idx     *Index
	repeats []Repeat
	shapes  shapes
	at      int
	built   []builtPattern
}

func (r *repeatRanking) more() bool           { return r.at < len(r.repeats) }
func (r *repeatRanking) scanned() int         { return r.at }
func (r *repeatRanking) total() (int, string) { return len(r.repeats), "repeated sequences" }

func (r *repeatRanking) next(limit, n int) []pick {
	var picks []pick
	for r.at < len(r.repeats) && r.at < limit && len(picks) < n {
		rep := r.repeats[r.at]
		r.at++
		syms, examples := r.idx.Symbols(rep), r.idx.Examples(rep)
		traces := exampleSeqs(examples)
		if subsumed(r.built, syms, traces, rep.Support, containsRun) {
			continue
		}
		// What is not a procedure is built to say so, but stands for
		// nothing a procedure could repeat.
		if symsNotProcedure(syms, r.shapes) == "" {
			r.built = append(r.built, builtPattern{syms: syms, traces: traces, sessions: rep.Support})
		}
		picks = append(picks, pick{length: len(syms), traces: traces, all: contiguous(examples, len(syms))})
	}
	return picks
}

// noteSessions records the eligible sessions in m when they are fewer
// than the eligible traces.
func (s *Scan) noteSessions(m *candidate.MiningSummary) {
	if s.sessions < len(s.seqs) {
		m.EligibleSessions = s.sessions
	}
}

// tooFewSessions is the warning that the corpus has fewer eligible
// sessions than the examples a candidate needs, if it has.
func (s *Scan) tooFewSessions(minEx int) (candidate.Problem, bool) {
	if s.sessions >= minEx {
		return candidate.Problem{}, false
	}
	what := fmt.Sprintf("%d eligible traces", len(s.seqs))
	if s.sessions < len(s.seqs) {
		what = fmt.Sprintf("%d eligible traces in %d sessions", len(s.seqs), s.sessions)
	}
	return candidate.Problem{
		Code:    candidate.CodeNoCandidate,
		Message: fmt.Sprintf("%s, fewer than the %d examples a candidate needs", what, minEx),
	}, true
}

// finish notes omitted rejected candidates, names and selects the best
// safe candidate, or says why there is none.
func finish(report *candidate.Report, opts Options, names map[string]bool, rejectedOmitted int) {
	if rejectedOmitted > 0 {
		report.Warnings = append(report.Warnings, candidate.Problem{
			Code:    "rejected_candidates_omitted",
			Message: fmt.Sprintf("%d more rejected candidates are not listed", rejectedOmitted),
		})
	}
	if len(report.Candidates) > 0 {
		sel := &report.Candidates[0]
		if opts.WorkflowName != "" {
			name := candidate.Identifier(opts.WorkflowName)
			// The explicit name wins; a candidate that inferred the same
			// name gets renamed so --out-dir files stay distinct.
			for i := range report.Candidates[1:] {
				if report.Candidates[i+1].Name == name {
					report.Candidates[i+1].Name = uniqueName(names, name)
				}
			}
			for i := range report.RejectedCandidates {
				if report.RejectedCandidates[i].Name == name {
					report.RejectedCandidates[i].Name = uniqueName(names, name)
				}
			}
			sel.Name = name
		}
		id := sel.ID
		report.SelectedCandidateID = &id
	} else {
		report.Warnings = append(report.Warnings, candidate.Problem{
			Code:    candidate.CodeNoCandidate,
			Message: noCandidateMessage(report),
		})
	}
}

func noCandidateMessage(r *candidate.Report) string {
	switch {
	case len(r.RejectedCandidates) > 0:
		return fmt.Sprintf("no safe crystallization candidate: %d repeated sequences were found and all were rejected", len(r.RejectedCandidates))
	case r.Mining.RepeatsFound == 0 && r.Mining.EligibleSessions > 0:
		return fmt.Sprintf("no sequence of two or more actions repeats in %d distinct sessions", r.Mining.MinExamples)
	case r.Mining.RepeatsFound == 0:
		return fmt.Sprintf("no sequence of two or more actions repeats in %d distinct traces", r.Mining.MinExamples)
	default:
		return "no safe crystallization candidate"
	}
}

// uniqueName returns name, or name_2, name_3, … when it is taken, and
// marks the result taken.
func uniqueName(taken map[string]bool, name string) string {
	out := name
	for i := 2; taken[out]; i++ {
		suffix := fmt.Sprintf("_%d", i)
		// An inferred name stays within MaxNameLen with its suffix; a
		// longer one the user chose keeps its length.
		base := name
		if len(name) <= MaxNameLen {
			base = cutName(name, MaxNameLen-len(suffix))
		}
		out = base + suffix
	}
	taken[out] = true
	return out
}

// exampleSeqs returns the eligible indexes of the examples.
func exampleSeqs(examples []Occurrence) []int32 {
	out := make([]int32, len(examples))
	for i, o := range examples {
		out[i] = o.Seq
	}
	return out
}

// containsRun reports whether needle is a contiguous run of hay.
func containsRun(hay, needle []int32) bool {
outer:
	for i := 0; i+len(needle) <= len(hay); i++ {
		for j := range needle {
			if hay[i+j] != needle[j] {
				continue outer
			}
		}
		return true
	}
	return false
}

// Excluded says why a trace must not be mined from, or used as held-out
// evidence, if it must not: an unresolved policy violation, or an action
// with side effects that is fuzzy or nondeterministic.
func Excluded(t *trace.Trace) (candidate.Exclusion, bool) {
	ex := candidate.Exclusion{TraceID: t.ID, Source: t.Source, SourceHash: t.SourceHash}
	return exclusionOf(ex, t.PolicyViolation, len(t.Actions), func(i int) actionFacts { return decodedFacts(&t.Actions[i]) })
}

// InputFormat describes the trace format mining reads.
func InputFormat() candidate.InputFormat {
	return candidate.InputFormat{
		Name:           "harn.crystallization.trace",
		Version:        trace.SchemaVersion,
		RequiredFields: []string{"actions", "actions[].kind", "actions[].name"},
		PreservedFields: []string{
			"ordered actions", "tool calls", "model calls", "human approvals",
			"file mutations", "external API calls", "observed outputs", "costs",
			"timestamps", "source hashes", "Flow provenance references", "unknown fields",
		},
	}
}

// sortedKeys returns the keys of m in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// sortedSet returns the members of m in order, an empty list (never nil)
// for none: sortedKeys always allocates.
func sortedSet(m map[string]bool) []string { return sortedKeys(m) }
