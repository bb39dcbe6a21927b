package replay

import (
	"cmp"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/derive"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// MatchThreshold is the share of candidate steps that must be synchronous
// moves of a trace's best alignment for the trace to contain the
// procedure at all: at least half. Below it a held-out trace is unmatched
// (some other procedure, reported but not compared) and a source example
// fails. Half keeps a held-out run that skipped or added a step or two in
// the comparison, where it fails with the moves that differ, instead of
// hiding it as "not this procedure".
const MatchThreshold = 0.5

// Shadow compares candidate c, without running anything, with its source
// examples and with held-out traces, and reports pass or fail per trace.
//
// Source traces are the ones c was mined from: each of c.Examples is
// looked up among sources by trace id and source hash (other source traces
// are not examples of c and are ignored; an example missing from sources
// fails with code example_missing). Every held-out trace is compared.
//
// Each trace is aligned with the candidate (see the comment at the top of
// align.go for the alignment and its fitness). A trace whose best
// alignment pairs fewer than MatchThreshold of the steps is unmatched
// when held out and failed when a source. A trace with fitness 1 is then
// compared step by step with the candidate: side effects, approval
// boundaries and, where the step has an expected output, the action's
// output; and, for a candidate that compares arguments
// (Candidate.ArgumentsCompared), the arguments of its deterministic
// steps (see compareArguments). When the trace has a replay_run or the candidate expects
// receipts, the replay oracle compares the trace's replay run with a copy
// of it carrying the candidate's expected receipts (see Oracle). A trace
// passes when its fitness is 1, no comparison found a difference and the
// oracle passed.
//
// Shadow neither modifies c and the traces nor keeps references to them
// beyond the report, which shares strings and JSON values with them. It
// spreads the traces over all cores; the report does not depend on how.
func Shadow(c *candidate.Candidate, sources, heldout []*trace.Trace) *candidate.ShadowReport {
	if c == nil {
		return ShadowFrom(nil, nil, heldout)
	}
	return ShadowFrom(c, IndexSources(sources), heldout)
}

// Sources finds the trace of a candidate's example: the source trace with
// the example's trace id and source hash, or nil when there is none.
type Sources interface {
	Example(ex *candidate.Example) *trace.Trace
}

// SourceIndex is a Sources over traces in memory, keyed by trace id and
// source hash. Building it is linear in the traces, so looking up every
// example of every candidate is linear too; scanning the traces for each
// example, as a list would, is the product of the two, which at a hundred
// thousand traces took half of a mining run.
type SourceIndex map[sourceKey]*trace.Trace

type sourceKey struct{ id, hash string }

// IndexSources indexes traces by id and source hash. Of two traces with
// the same pair, the first is found, as a scan in order would find it.
func IndexSources(traces []*trace.Trace) SourceIndex {
	ix := make(SourceIndex, len(traces))
	for _, t := range traces {
		if t == nil {
			continue
		}
		k := sourceKey{t.ID, t.SourceHash}
		if _, dup := ix[k]; !dup {
			ix[k] = t
		}
	}
	return ix
}

// Example returns the trace of ex, or nil.
func (ix SourceIndex) Example(ex *candidate.Example) *trace.Trace {
	return ix[sourceKey{ex.TraceID, ex.SourceHash}]
}

// ShadowFrom is Shadow with the source traces given as a Sources, so that
// a caller shadowing many candidates indexes them once, or reads only the
// examples from disk.
func ShadowFrom(c *candidate.Candidate, sources Sources, heldout []*trace.Trace) *candidate.ShadowReport {
	if c == nil {
		return shadowReport(nil, 0)
	}
	p := newPlan(c)
	p.limitListed(Options{})
	traces, notListed := p.compareSources(sources)
	return shadowReport(append(traces, p.compareHeldout(heldout)...), notListed)
}

// DefaultListPassing is how many of a candidate's passing source examples
// a shadow report lists, with their alignments, when
// Options.ListPassing is zero. A reviewer reads a few hundred alignments,
// not fifty thousand, and at a million traces listing every one made the
// report 2.65 GB; failures are listed however many there are.
const DefaultListPassing = 1000

// Options tunes how shadow replay reports a candidate's source examples.
// The zero value is the default.
type Options struct {
	// ListPassing bounds the passing source examples a shadow report
	// lists. A candidate with more examples than the bound lists those at
	// an evenly spaced selection of ListPassing of its examples (the first
	// and the last among them, as mining's example sample), plus every
	// example that did not pass; the others are counted in
	// ShadowReport.PassedNotListed. Which examples are selected depends
	// only on how many there are, so it is known before any is read. Zero
	// means DefaultListPassing; a negative value lists every example.
	ListPassing int
	// Verified, when set, returns which examples of c (in its Examples
	// order) were already compared with c and passed, in the read that
	// checked them against mining's sample (see Verifier), or nil. Such an
	// example that the report does not list is counted in
	// PassedNotListed without its trace being looked for; one it lists
	// is compared as any other. The report is the same as without.
	Verified func(c *candidate.Candidate) []bool
}

// Verifier judges examples the way shadow replay does, for a reader that
// has them in hand before shadow replay runs (mining's sample check,
// through mine.Options.Verify): its verdicts are the Options.Verified of
// a later Apply with the same Options.
type Verifier struct{ o Options }

// NewVerifier returns the Verifier of shadow replay with o.
func NewVerifier(o Options) Verifier { return Verifier{o} }

// Listed returns which of n examples a report lists even when they pass,
// or nil when it lists every one (ListedExamples).
func (v Verifier) Listed(n int) []bool { return ListedExamples(n, v.o) }

// Check returns a function that reports, for each example of c and its
// trace, whether shadow replay passes it. The verdict depends on c's
// steps, signature and expected receipts and on the example's start or
// positions, not on c's id or its other examples, so c may be checked
// before its examples are all known. The function compares its examples
// on every core.
func (v Verifier) Check(c *candidate.Candidate) func(examples []*candidate.Example, traces []*trace.Trace) []bool {
	p := newPlan(c)
	return func(examples []*candidate.Example, traces []*trace.Trace) []bool {
		jobs := make([]job, len(examples))
		for i := range examples {
			jobs[i] = job{t: traces[i], role: candidate.RoleSource, example: examples[i]}
		}
		out := make([]bool, len(jobs))
		for i, st := range p.compareAll(jobs) {
			out[i] = st.Status == candidate.StatusPass
		}
		return out
	}
}

func (o Options) listPassing() int {
	switch {
	case o.ListPassing < 0:
		return 0
	case o.ListPassing == 0:
		return DefaultListPassing
	}
	return o.ListPassing
}

// ListedExamples returns, for a candidate with n examples, which of them
// a shadow report lists even when they pass (see Options.ListPassing), or
// nil when it lists every one.
func ListedExamples(n int, o Options) []bool {
	bound := o.listPassing()
	if bound <= 0 || n <= bound {
		return nil
	}
	listed := make([]bool, n)
	for i := range bound {
		// Evenly spaced and increasing, the first and the last example
		// among them; a bound of one lists the first.
		at := 0
		if bound > 1 {
			at = int(int64(i) * int64(n-1) / int64(bound-1))
		}
		listed[at] = true
	}
	return listed
}

// limitListed makes p list only the passing source examples o selects.
func (p *plan) limitListed(o Options) {
	p.listed = ListedExamples(len(p.c.Examples), o)
	if p.listed != nil && o.Verified != nil {
		if v := o.Verified(p.c); len(v) == len(p.c.Examples) {
			p.verified = v
		}
	}
}

// counted reports whether example i was verified before and is not
// listed: it is counted, and its trace not looked for.
func (p *plan) counted(i int) bool {
	return p.verified != nil && p.verified[i] && !p.listed[i]
}

// keeps reports whether the comparison st of example i is listed.
func (p *plan) keeps(i int, st *candidate.ShadowTrace) bool {
	return p.listed == nil || p.listed[i] || st.Status != candidate.StatusPass
}

// compareSources compares the candidate with each of its examples, found
// in sources, and returns the listed comparisons in example order and how
// many passing ones it did not list.
func (p *plan) compareSources(sources Sources) ([]candidate.ShadowTrace, int) {
	c := p.c
	jobs := make([]job, 0, len(c.Examples))
	var at []int
	notListed := 0
	for i := range c.Examples {
		if p.counted(i) {
			notListed++
			continue
		}
		ex := &c.Examples[i]
		var t *trace.Trace
		if sources != nil {
			t = sources.Example(ex)
		}
		jobs = append(jobs, job{t: t, role: candidate.RoleSource, example: ex})
		at = append(at, i)
	}
	all := p.compareAll(jobs)
	out := all[:0]
	for n := range all {
		if p.keeps(at[n], &all[n]) {
			out = append(out, all[n])
		} else {
			notListed++
		}
	}
	clear(all[len(out):])
	return out, notListed
}

// compareSourceBatches compares the candidate with each of its examples,
// whose traces batches hands over (see ExampleBatchesFunc); the result is
// in example order and is compareSources' over the batches' traces. A
// passing comparison that is not listed is counted and let go with its
// batch.
func (p *plan) compareSourceBatches(batches func(yield func([]*trace.Trace) error) error) ([]candidate.ShadowTrace, int, error) {
	c := p.c
	// The examples not yet found, by trace id and source hash; two
	// examples of one trace are both found with it.
	pending := make(map[sourceKey][]int, len(c.Examples))
	out := make([]candidate.ShadowTrace, len(c.Examples))
	found := make([]bool, len(c.Examples))
	skipped := make([]bool, len(c.Examples))
	notListed := 0
	for i := range c.Examples {
		if p.counted(i) {
			found[i], skipped[i] = true, true
			notListed++
			continue
		}
		ex := &c.Examples[i]
		k := sourceKey{ex.TraceID, ex.SourceHash}
		pending[k] = append(pending[k], i)
	}
	var (
		jobs []job
		at   []int
	)
	err := batches(func(batch []*trace.Trace) error {
		jobs, at = jobs[:0], at[:0]
		for _, t := range batch {
			if t == nil {
				continue
			}
			k := sourceKey{t.ID, t.SourceHash}
			for _, i := range pending[k] {
				jobs = append(jobs, job{t: t, role: candidate.RoleSource, example: &c.Examples[i]})
				at = append(at, i)
			}
			delete(pending, k)
		}
		for n, st := range p.compareAll(jobs) {
			found[at[n]] = true
			if p.keeps(at[n], &st) {
				out[at[n]] = st
			} else {
				notListed++
				skipped[at[n]] = true
			}
		}
		// The jobs hold the batch's traces: clear them so that the
		// batch can go before the next one is read.
		clear(jobs)
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	var missing []job
	at = at[:0]
	for i := range c.Examples {
		if !found[i] {
			missing = append(missing, job{role: candidate.RoleSource, example: &c.Examples[i]})
			at = append(at, i)
		}
	}
	for n, st := range p.compareAll(missing) {
		out[at[n]] = st
	}
	if notListed > 0 {
		kept := out[:0]
		for i := range out {
			if !skipped[i] {
				kept = append(kept, out[i])
			}
		}
		out = kept
	}
	return out, notListed, nil
}

// compareHeldout compares the candidate with each held-out trace, in
// order.
func (p *plan) compareHeldout(heldout []*trace.Trace) []candidate.ShadowTrace {
	jobs := make([]job, 0, len(heldout))
	for _, t := range heldout {
		if t != nil {
			jobs = append(jobs, job{t: t, role: candidate.RoleHeldout})
		}
	}
	return p.compareAll(jobs)
}

// compareAll compares the jobs on every core; the result is in job order.
func (p *plan) compareAll(jobs []job) []candidate.ShadowTrace {
	out := make([]candidate.ShadowTrace, len(jobs))
	run(len(jobs), func(al *aligner, i int) { out[i] = p.compare(al, jobs[i]) }, p)
	return out
}

// shadowReport completes the report of the compared traces: the failures,
// the count of compared traces and whether they all passed.
func shadowReport(traces []candidate.ShadowTrace, passedNotListed int) *candidate.ShadowReport {
	if traces == nil {
		traces = []candidate.ShadowTrace{}
	}
	rep := &candidate.ShadowReport{Failures: []candidate.Problem{}, Traces: traces, PassedNotListed: passedNotListed, ComparedTraces: passedNotListed}
	for _, st := range rep.Traces {
		switch st.Status {
		case candidate.StatusPass:
			rep.ComparedTraces++
		case candidate.StatusFail:
			rep.ComparedTraces++
			rep.Failures = append(rep.Failures, candidate.Problem{
				Code:    candidate.CodeShadowFailed,
				Message: fmt.Sprintf("%s trace %s failed shadow comparison: %s", st.Role, st.TraceID, summary(st.Details)),
				Step:    st.FirstDivergentStep,
				TraceID: st.TraceID,
			})
		case candidate.StatusUnmatched:
			rep.Failures = append(rep.Failures, candidate.Problem{
				Code:    candidate.CodeHeldoutUnmatched,
				Message: fmt.Sprintf("held-out trace %s does not contain the procedure (fitness %.3f)", st.TraceID, st.Fitness),
				TraceID: st.TraceID,
			})
		}
	}
	// An empty comparison proves nothing, so it does not pass.
	rep.Pass = rep.ComparedTraces > 0 && rep.ComparedTraces == passedNotListed+countStatus(rep.Traces, candidate.StatusPass)
	return rep
}

// job is one trace to compare; t is nil for an example whose trace is
// missing.
type job struct {
	t       *trace.Trace
	role    string
	example *candidate.Example
}

func countStatus(ts []candidate.ShadowTrace, status string) int {
	n := 0
	for _, t := range ts {
		if t.Status == status {
			n++
		}
	}
	return n
}

// summary lists the codes of a trace's details for a failure message.
func summary(details []candidate.Problem) string {
	var codes []string
	for _, d := range details {
		if !slices.Contains(codes, d.Code) {
			codes = append(codes, d.Code)
		}
	}
	return strings.Join(codes, ", ")
}

// chunk is how many traces a worker takes at a time: large enough that
// the shared counter is not contended, small enough to balance the load.
const chunk = 64

// run calls f for 0..n-1 on all cores, each worker with its own aligner.
// Results go to index i of a slice the caller owns, so the output order
// is the input order.
func run(n int, f func(al *aligner, i int), p *plan) {
	workers := min(runtime.GOMAXPROCS(0), (n+chunk-1)/chunk)
	if workers <= 1 {
		al := p.newAligner()
		for i := range n {
			f(al, i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			al := p.newAligner()
			for {
				start := int(next.Add(chunk)) - chunk
				if start >= n {
					return
				}
				for i := start; i < min(start+chunk, n); i++ {
					f(al, i)
				}
			}
		})
	}
	wg.Wait()
}

// plan is what Shadow precomputes from the candidate once, for every
// trace: signature ids and each step's expectations in comparable form.
type plan struct {
	c       *candidate.Candidate
	ix      *sigIndex
	effects [][]effect // per step, sorted
	// gapped is true for a candidate mined with other actions between its
	// steps (its examples record the matched positions): the alignment
	// then tolerates the interleaved actions mining tolerated.
	gapped bool
	// listed marks the examples whose comparison is listed even when it
	// passes; nil lists every one (see Options.ListPassing).
	listed []bool
	// verified marks the examples compared and passed before
	// (Options.Verified); only set with listed.
	verified []bool
	// args is what a candidate that compares arguments holds a trace
	// to; nil for one that does not.
	args *arguments
	// targetExprs is true when a side effect's target is an expression
	// over the parameters, which each trace's values resolve.
	targetExprs bool
}

// effect is a side effect reduced to what shadow compares. param is the
// parameter whose value the target must equal, for a candidate side effect
// whose target varied across the examples ("{version}" with metadata
// target_parameter = "version").
type effect struct {
	kind, target, capability, mutation string
	param                              string
	// expr is the target's expression over the candidate's parameters
	// (candidate.TargetExpression), evaluated on each trace's values.
	expr derive.Expr
}

func (e effect) String() string {
	s := e.kind + " " + e.target
	if e.capability != "" {
		s += " (" + e.capability + ")"
	}
	if e.mutation != "" {
		s += " " + e.mutation
	}
	return s
}

func compareEffects(a, b effect) int {
	return cmp.Or(cmp.Compare(a.kind, b.kind), cmp.Compare(a.target, b.target),
		cmp.Compare(a.capability, b.capability), cmp.Compare(a.mutation, b.mutation))
}

func newPlan(c *candidate.Candidate) *plan {
	p := &plan{c: c, ix: newSigIndex(c), effects: make([][]effect, len(c.Steps)), args: newArguments(c)}
	for _, ex := range c.Examples {
		if len(ex.Positions) > 0 {
			p.gapped = true
		}
	}
	for i, s := range c.Steps {
		for _, se := range s.SideEffects {
			e := effect{kind: se.Kind, target: se.Target, capability: se.Capability, mutation: se.Mutation}
			if key, ok := se.Metadata["target_parameter"].(string); ok && se.Target == "{"+key+"}" {
				e.param = key
			}
			if e.expr = targetExpr(se); e.expr != nil {
				p.targetExprs = true
			}
			p.effects[i] = append(p.effects[i], e)
		}
	}
	return p
}

func (p *plan) newAligner() *aligner {
	return &aligner{ix: p.ix, gapped: p.gapped, sigKeys: map[string]int32{}}
}

// compare builds the ShadowTrace of one job.
func (p *plan) compare(al *aligner, j job) candidate.ShadowTrace {
	c := p.c
	m := len(c.SequenceSignature)
	st := candidate.ShadowTrace{Role: j.role, Alignment: []candidate.Move{}, Details: []candidate.Problem{}}
	if j.t == nil {
		st.TraceID, st.SourceHash = j.example.TraceID, j.example.SourceHash
		st.Status = candidate.StatusFail
		st.Details = append(st.Details, candidate.Problem{
			Code:    candidate.CodeExampleMissing,
			Message: fmt.Sprintf("example trace %s (%s) is not among the source traces", j.example.TraceID, j.example.SourceHash),
			TraceID: j.example.TraceID,
		})
		return st
	}
	t := j.t
	st.TraceID, st.SourceHash = t.ID, t.SourceHash

	al.intern(t)
	var res alignment
	pinned := false
	if j.example != nil {
		if len(j.example.Positions) > 0 {
			res, pinned = al.pinnedAt(t, j.example.Positions)
		} else {
			res, pinned = al.pinned(t, j.example.StartIndex)
		}
	}
	if !pinned {
		res = al.align(t)
	}
	st.Alignment = res.moves
	st.Fitness = res.fitness(m)
	st.Interleaved = res.interleaved

	if m == 0 || float64(res.sync) < MatchThreshold*float64(m) {
		msg := fmt.Sprintf("trace pairs %d of %d candidate steps; at least half must be paired for the trace to contain the procedure", res.sync, m)
		if m == 0 {
			msg = "candidate has no steps"
		}
		st.Details = append(st.Details, candidate.Problem{Code: candidate.CodeUnmatched, Message: msg})
		st.FirstDivergentStep = firstDivergent(res.moves, st.Details)
		if j.role == candidate.RoleHeldout {
			st.Status = candidate.StatusUnmatched
			return st
		}
		st.Status = candidate.StatusFail
		p.oracle(&st, t)
		return st
	}

	if res.log+res.model > 0 {
		st.Details = append(st.Details, mismatches(t, res.moves)...)
	} else {
		al.values = nil
		if p.targetExprs {
			al.values = p.paramValues(t, res.moves)
		}
		for _, mv := range res.moves {
			st.Details = append(st.Details, p.compareStep(al, mv.Step, mv.ActionIndex, &t.Actions[mv.ActionIndex])...)
		}
		if p.args != nil {
			st.Details = append(st.Details, p.compareArguments(t, res.moves)...)
		}
	}
	p.oracle(&st, t)
	st.FirstDivergentStep = firstDivergent(res.moves, st.Details)
	st.Status = candidate.StatusFail
	if res.log+res.model == 0 && len(st.Details) == 0 && (st.ReplayOracle == nil || st.ReplayOracle.Passed) {
		st.Status = candidate.StatusPass
	}
	return st
}

// mismatches describes every non-synchronous move. A log move is charged
// to the step that follows it: that is where the trace left the candidate's
// sequence.
func mismatches(t *trace.Trace, moves []candidate.Move) []candidate.Problem {
	var out []candidate.Problem
	for k, mv := range moves {
		switch mv.Kind {
		case candidate.MoveModel:
			out = append(out, candidate.Problem{
				Code:    candidate.CodeSignatureMismatch,
				Message: fmt.Sprintf("step %d %s is missing from the trace", mv.Step, mv.Signature),
				Step:    mv.Step,
			})
		case candidate.MoveLog:
			out = append(out, candidate.Problem{
				Code:    candidate.CodeSignatureMismatch,
				Message: fmt.Sprintf("action %d (%s) %s is not a step of the candidate", mv.ActionIndex, t.Actions[mv.ActionIndex].ID, mv.Signature),
				Step:    nextStep(moves, k),
				Path:    fmt.Sprintf("$.actions[%d]", mv.ActionIndex),
			})
		}
	}
	return out
}

// nextStep returns the step of the first move after k that has one.
func nextStep(moves []candidate.Move, k int) int {
	for _, mv := range moves[k+1:] {
		if mv.Step > 0 {
			return mv.Step
		}
	}
	return 0
}

// firstDivergent returns the first candidate step with a non-synchronous
// move or a detail, or 0.
func firstDivergent(moves []candidate.Move, details []candidate.Problem) int {
	first := 0
	note := func(step int) {
		if step > 0 && (first == 0 || step < first) {
			first = step
		}
	}
	for k, mv := range moves {
		switch mv.Kind {
		case candidate.MoveModel:
			note(mv.Step)
		case candidate.MoveLog:
			note(nextStep(moves, k))
		}
	}
	for _, d := range details {
		note(d.Step)
	}
	return first
}

// compareStep compares candidate step (1-based) with the action aligned to
// it, action index in the trace.
func (p *plan) compareStep(al *aligner, step, index int, a *trace.Action) []candidate.Problem {
	if step > len(p.c.Steps) {
		return nil // a candidate without step details: signatures only
	}
	s := &p.c.Steps[step-1]
	var out []candidate.Problem
	path := func() string { return fmt.Sprintf("$.actions[%d]", index) }
	if d := p.compareEffects(al, step, a); d != "" {
		out = append(out, candidate.Problem{Code: candidate.CodeSideEffectsDiffer, Message: d, Step: step, Path: path()})
	}
	// A failure no later attempt retried pairs with its step, as mining
	// matched it; it is what the runs did only if one of them did it too.
	if p.gapped && s.Failures == 0 && a.Failed() {
		out = append(out, candidate.Problem{
			Code:    candidate.CodeUnexpectedFailure,
			Message: fmt.Sprintf("step %d %s: action %s failed and was not retried, but the step succeeded in every example", step, s.Name, a.ID),
			Step:    step,
			Path:    path(),
		})
	}
	// The approval boundary is one of the four things a replay must
	// keep: a run that stopped at another gate, or at none, is not the
	// procedure the reviewer approved, however alike its calls are.
	want := s.Approval != nil && s.Approval.Required
	gate := candidate.ActionGate(a)
	got := gate != nil && gate.Required
	switch {
	case want != got:
		out = append(out, candidate.Problem{
			Code:    candidate.CodeApprovalDiffers,
			Message: fmt.Sprintf("step %d %s: candidate %s approval, action %s %s", step, s.Name, requires(want), a.ID, requires(got)),
			Step:    step,
			Path:    path() + ".approval",
		})
	case want && gate.Boundary != stepBoundary(s):
		out = append(out, candidate.Problem{
			Code:    candidate.CodeApprovalDiffers,
			Message: fmt.Sprintf("step %d %s: candidate stops at approval boundary %q, action %s at %q", step, s.Name, stepBoundary(s), a.ID, gate.Boundary),
			Step:    step,
			Path:    path() + ".approval.boundary",
		})
	}
	// An action that recorded no output is no evidence either way: many
	// traces do not record outputs at all.
	if s.ExpectedOutput != nil {
		got := a.ObservedOutput
		if got == nil {
			got = a.Output
		}
		if got != nil && !equal(s.ExpectedOutput, got) {
			out = append(out, candidate.Problem{
				Code:    candidate.CodeOutputDiffers,
				Message: fmt.Sprintf("step %d %s: action %s produced another output than the candidate expects", step, s.Name, a.ID),
				Step:    step,
				Path:    path(),
			})
		}
	}
	return out
}

// stepBoundary is the boundary a step's approval names, its name when the
// candidate left it empty (as ActionGate reads an action).
func stepBoundary(s *candidate.Step) string {
	if s.Approval.Boundary != "" {
		return s.Approval.Boundary
	}
	return s.Name
}

func requires(b bool) string {
	if b {
		return "requires"
	}
	return "does not require"
}

// compareEffects returns a description of how the action's side effects
// differ from the step's, or "". Both sides are compared as sorted lists
// of (kind, target, capability, mutation); a templated candidate target
// takes the action's value of its parameter first. The lists are built in
// the worker's scratch space, so a step that matches allocates nothing.
func (p *plan) compareEffects(al *aligner, step int, a *trace.Action) string {
	want := p.effects[step-1]
	if len(want) == 0 && len(a.SideEffects) == 0 {
		return ""
	}
	resolved := al.want[:0]
	for _, e := range want {
		if e.param != "" {
			if v, ok := candidate.ActionArgs(a)[e.param].(string); ok {
				e.target = v
			}
		}
		if e.expr != nil {
			if v, ok := e.expr.Eval(al.values); ok {
				e.target = v
			}
		}
		resolved = append(resolved, e)
	}
	got := al.got[:0]
	for _, se := range a.SideEffects {
		got = append(got, effect{kind: se.Kind, target: se.Target, capability: se.Capability, mutation: se.Mutation})
	}
	al.want, al.got = resolved, got
	slices.SortFunc(resolved, compareEffects)
	slices.SortFunc(got, compareEffects)
	if slices.EqualFunc(resolved, got, func(x, y effect) bool { return compareEffects(x, y) == 0 }) {
		return ""
	}
	return fmt.Sprintf("step %d %s: candidate declares side effects %s, action %s requested %s",
		step, p.c.Steps[step-1].Name, describe(resolved), a.ID, describe(got))
}

func describe(es []effect) string {
	if len(es) == 0 {
		return "[]"
	}
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = e.String()
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// oracle runs the replay oracle for a trace when the candidate expects
// receipts. A candidate without expected receipts (its examples recorded
// none, or did not agree on them) makes no claim about receipts, so a
// trace's replay run has nothing to be compared with; a trace without a
// replay run, against a candidate that expects receipts, diverges.
func (p *plan) oracle(st *candidate.ShadowTrace, t *trace.Trace) {
	if len(p.c.ExpectedReceipts) == 0 {
		return
	}
	// The second run is a shallow copy: only top-level members are
	// replaced, so the trace's own values are shared and never written.
	second := make(map[string]any, len(t.ReplayRun)+2)
	for k, v := range t.ReplayRun {
		second[k] = v
	}
	second["run_id"] = "shadow_" + p.c.ID + "_" + t.ID
	receipts := p.c.ExpectedReceipts
	if receipts == nil {
		receipts = []any{}
	}
	second["effect_receipts"] = receipts
	first := t.ReplayRun
	if first == nil {
		first = map[string]any{}
	}
	rep := Oracle(first, second, t.ReplayAllowlist)
	rep.Name = "shadow " + p.c.ID + " " + t.ID
	st.ReplayOracle = &rep
	firstReceipts, _ := first["effect_receipts"].([]any)
	st.ComparedReceipts = max(len(firstReceipts), len(receipts))
	if d := rep.Divergence; d != nil {
		st.Details = append(st.Details, candidate.Problem{
			Code:    candidate.CodeReceiptDrift,
			Message: fmt.Sprintf("replay run diverges from the candidate's expected receipts at %s: %s", displayPath(d.Path), d.Message),
			Path:    d.Path,
		})
	}
}

func displayPath(p string) string {
	if p == "" {
		return "the run root"
	}
	return p
}
