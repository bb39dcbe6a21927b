package mine

import (
	"context"
	"fmt"
	"slices"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/derive"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// Building a candidate from a sample of its examples.
//
// The builder looks at every example of a candidate at once (a step's
// actions side by side), so a candidate of a hundred thousand examples
// would hold a hundred thousand decoded traces. Above
// Options.ExampleSample examples, the candidate is built from a
// deterministic sample of them, evenly spaced in corpus order, and every
// other example is then read back in batches of the same size and checked
// against what the sample decided: each constant holds the same value,
// each binding finds the same value in the earlier step's result, no
// constant, parameter or binding holds a credential, approval, fuzziness
// and the kinds of side effects agree, and each derived parameter's
// expression computes its value. An example that disagrees rejects the
// candidate with CodeSampleDisagreement, naming the example and the
// step; nothing it disagreed on reaches a workflow. The report lists
// every example, and support, score, confidence and the candidate id
// count all of them. What the sample alone decides, and a warning says
// so: the example values and types of parameters, expected outputs and
// receipts, savings (per run, over the sample's runs), the name, the
// cluster key and the derivation evidence.
//
// At or below the bound nothing changes: the candidate is built from
// every example, as before.

// DefaultExampleSample is the most examples a candidate is built from
// when Options.ExampleSample is zero.
const DefaultExampleSample = 1000

func (o Options) exampleSample() int {
	switch {
	case o.ExampleSample < 0:
		return 0
	case o.ExampleSample == 0:
		return DefaultExampleSample
	}
	return max(o.ExampleSample, o.minExamples())
}

// sampleIndexes returns k indexes of n examples (k < n), evenly spaced
// and increasing, the first and the last example among them.
func sampleIndexes(n, k int) []int {
	out := make([]int, k)
	for i := range k {
		if k == 1 {
			break
		}
		out[i] = int(int64(i) * int64(n-1) / int64(k-1))
	}
	return out
}

// sampled splits the matches of a candidate into the sample it is built
// from and, when there is a sample, the indexes it took.
func sampled(all []match, bound int) ([]match, []int) {
	if bound <= 0 || len(all) <= bound {
		return all, nil
	}
	picked := sampleIndexes(len(all), bound)
	out := make([]match, len(picked))
	for i, p := range picked {
		out[i] = all[p]
	}
	return out, picked
}

// checkRest completes c, built from the matches at picked of all, with
// the other examples: it reads them back through src in batches of
// len(picked), checks each against c and lists it among c's examples.
// With opts.Verify it also asks shadow replay's verdict on each example
// read and returns which examples it verified (see verify.go); with
// opts.Verdicts it first skips the examples an earlier run verified.
func checkRest(ctx context.Context, src traceSource, c *candidate.Candidate, all []match, picked []int, eligible int, opts Options) ([]bool, error) {
	length := len(c.Steps)
	rows := make([]candidate.Example, len(all))
	inSample := make([]bool, len(all))
	for i, p := range picked {
		rows[p] = c.Examples[i]
		inSample[p] = true
	}
	chk := newSampleCheck(c, len(picked), len(all))
	var rest []int
	for e := range all {
		if !inSample[e] {
			rest = append(rest, e)
		}
	}
	var (
		verify   func([]*candidate.Example, []*trace.Trace) []bool
		listed   []bool
		verified []bool
	)
	if opts.Verify != nil {
		verify = opts.Verify.Check(c)
		listed = opts.Verify.Listed(len(all))
		verified = make([]bool, len(all))
	}
	// Remembered verdicts are only of use for examples the shadow report
	// does not list, and only when both checks run.
	cache := verify != nil && listed != nil && opts.Verdicts != nil && opts.SourceHash != nil
	var fingerprint string
	if cache {
		var err error
		if fingerprint, err = candidate.Fingerprint(c); err != nil {
			return nil, fmt.Errorf("fingerprinting candidate %s: %w", c.Name, err)
		}
	}
	// A gapped candidate's examples are judged on the whole trace: shadow
	// replay's tolerance of the actions between its steps depends on
	// retries that may start before the first step.
	gapped := c.Examples[0].Positions != nil
	key := func(e int) candidate.VerdictKey {
		return candidate.VerdictKey{Candidate: fingerprint, SourceHash: opts.SourceHash(all[e].seq), StartIndex: int(all[e].pos[0])}
	}
	for len(rest) > 0 {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		chunk := rest[:min(len(rest), len(picked))]
		rest = rest[len(chunk):]
		if cache {
			var err error
			if chunk, err = skipRemembered(ctx, opts.Verdicts, chunk, listed, key, length, rows, verified); err != nil {
				return nil, err
			}
		}
		traces, at, err := readChunk(ctx, src, all, chunk, gapped)
		if err != nil {
			return nil, err
		}
		agreed := make([]bool, len(chunk))
		for i, e := range chunk {
			m, t := all[e], traces[i]
			ids := make([]string, length)
			for j := range length {
				ids[j] = t.Actions[at[i].pos[j]].ID
			}
			rows[e] = candidate.Example{TraceID: t.ID, Source: t.Source, SourceHash: t.SourceHash, StartIndex: int(m.pos[0]), ActionIDs: ids}
			if gapped {
				rows[e].Positions = ints(m.pos)
			}
			if m.retries != nil {
				rows[e].Retries = ints(m.retries)
			}
			agreed[i] = chk.example(t, at[i])
		}
		if verify == nil {
			continue
		}
		passed, err := verifyChunk(ctx, src, verify, all, chunk, rows, traces, gapped)
		if err != nil {
			return nil, err
		}
		var verdicts []candidate.Verdict
		for i, e := range chunk {
			verified[e] = passed[i] && listed != nil && !listed[e]
			if cache {
				verdicts = append(verdicts, candidate.Verdict{Key: key(e), Example: rows[e], Passed: passed[i] && agreed[i]})
			}
		}
		if len(verdicts) > 0 {
			if err := opts.Verdicts.Record(ctx, verdicts); err != nil {
				return nil, fmt.Errorf("recording example verdicts: %w", err)
			}
		}
	}
	c.Examples = rows
	c.Support = len(all)
	c.Score = int(Score(len(all), length))
	c.ID = candidateID(c.SequenceSignature, c.Examples)
	for i := range c.DerivedParameters {
		c.DerivedParameters[i].SourceChecks = len(all)
	}
	sampleDecides := "its parameter examples, expected outputs, receipts and savings are the sample's"
	if c.Examples[0].Positions != nil {
		// A gapped candidate also counts its steps' retries.
		sampleDecides = "its parameter examples, expected outputs, receipts, retries and savings are the sample's"
	}
	c.Warnings = append(c.Warnings, candidate.Problem{
		Code: candidate.CodeExampleSample,
		Message: fmt.Sprintf("built from a sample of %d of its %d examples; the other %d were checked against its constants, bindings, credentials, approvals, side effects and derived parameters, and %s",
			len(picked), len(all), len(all)-len(picked), sampleDecides),
	})
	c.RejectionReasons = append(c.RejectionReasons, chk.problems...)
	c.ConfidenceFactors.Support = round4(float64(len(all)) / float64(max(eligible, 1)))
	c.Confidence = 0
	if c.Safe() {
		c.Confidence = Confidence(c.ConfidenceFactors)
	}
	return verified, nil
}

// readChunk reads the traces of the examples at chunk of all, in chunk
// order, with each example's match as it indexes the trace returned. A
// contiguous candidate's examples are read as windows of their steps'
// actions, the match moved to the window's start, since nothing checked
// here looks beyond them; a gapped one's are read whole.
func readChunk(ctx context.Context, src traceSource, all []match, chunk []int, gapped bool) ([]*trace.Trace, []match, error) {
	need := make([]int32, len(chunk))
	for i, e := range chunk {
		need[i] = all[e].seq
	}
	out := make([]*trace.Trace, len(chunk))
	at := make([]match, len(chunk))
	if gapped {
		traces, err := src.traces(ctx, need)
		if err != nil {
			return nil, nil, err
		}
		for i, e := range chunk {
			out[i], at[i] = traces[all[e].seq], all[e]
		}
		return out, at, nil
	}
	windows := make([]trace.Window, len(chunk))
	for i, e := range chunk {
		m := all[e]
		lo := m.pos[0]
		windows[i] = trace.Window{Lo: int(lo), Hi: int(m.pos[len(m.pos)-1]) + 1}
		pos := make([]int32, len(m.pos))
		for j, p := range m.pos {
			pos[j] = p - lo
		}
		at[i] = match{seq: m.seq, pos: pos}
	}
	out, err := src.windows(ctx, need, windows)
	if err != nil {
		return nil, nil, err
	}
	return out, at, nil
}

// verifyChunk asks shadow replay's verdict on the examples at chunk of
// all, whose rows are filled in and whose traces readChunk read. An
// example that passes on its window passes on its whole trace: the
// alignment pinned at the example's start, which is all a passing source
// example needs, sees the same actions in both. An example whose window
// fails is judged again on its whole trace, where shadow replay may find
// the procedure elsewhere, so every verdict is the whole trace's.
func verifyChunk(ctx context.Context, src traceSource, verify func([]*candidate.Example, []*trace.Trace) []bool, all []match, chunk []int, rows []candidate.Example, traces []*trace.Trace, gapped bool) ([]bool, error) {
	exs := make([]*candidate.Example, len(chunk))
	for i, e := range chunk {
		exs[i] = &rows[e]
		if !gapped {
			ex := rows[e]
			ex.StartIndex -= int(all[e].pos[0])
			exs[i] = &ex
		}
	}
	passed := verify(exs, traces)
	if gapped {
		return passed, nil
	}
	var (
		again []int
		need  []int32
	)
	for i, e := range chunk {
		if !passed[i] {
			again = append(again, i)
			need = append(need, all[e].seq)
		}
	}
	if len(again) == 0 {
		return passed, nil
	}
	whole, err := src.traces(ctx, need)
	if err != nil {
		return nil, err
	}
	exs, ts := make([]*candidate.Example, len(again)), make([]*trace.Trace, len(again))
	for k, i := range again {
		exs[k], ts[k] = &rows[chunk[i]], whole[all[chunk[i]].seq]
	}
	for k, ok := range verify(exs, ts) {
		passed[again[k]] = ok
	}
	return passed, nil
}

// skipRemembered asks verdicts about the examples of chunk that the
// shadow report does not list, fills in the row of each that an earlier
// run verified and marks it verified, and returns the examples that must
// still be read. A remembered row that does not fit the example (another
// start or number of actions) is not trusted: that example is read.
func skipRemembered(ctx context.Context, verdicts candidate.ExampleVerdicts, chunk []int, listed []bool, key func(int) candidate.VerdictKey, length int, rows []candidate.Example, verified []bool) ([]int, error) {
	var (
		keys []candidate.VerdictKey
		at   []int
	)
	for _, e := range chunk {
		if !listed[e] {
			keys = append(keys, key(e))
			at = append(at, e)
		}
	}
	if len(keys) == 0 {
		return chunk, nil
	}
	got, err := verdicts.Passed(ctx, keys)
	if err != nil {
		return nil, fmt.Errorf("reading example verdicts: %w", err)
	}
	if len(got) != len(keys) {
		return nil, fmt.Errorf("reading example verdicts: %d answers for %d examples", len(got), len(keys))
	}
	known := map[int]bool{}
	for k, ex := range got {
		if ex == nil || ex.SourceHash != keys[k].SourceHash || ex.StartIndex != keys[k].StartIndex || len(ex.ActionIDs) != length {
			continue
		}
		e := at[k]
		rows[e], verified[e], known[e] = *ex, true, true
	}
	if len(known) == 0 {
		return chunk, nil
	}
	read := make([]int, 0, len(chunk)-len(known))
	for _, e := range chunk {
		if !known[e] {
			read = append(read, e)
		}
	}
	return read, nil
}

// sampleCheck checks examples outside the sample against the candidate
// built from it, and collects one problem per disagreement found (the
// first example that shows it).
type sampleCheck struct {
	c               *candidate.Candidate
	sample, total   int
	problems        []candidate.Problem
	seen            map[string]bool
	derived         []derivedCheck
	paramPaths      map[string]string // parameter name → source path
	approval, fuzzy []bool
	shapes          [][]string
	// disagreed is set while checking an example that disagreed on
	// anything, listed or not.
	disagreed bool
}

type derivedCheck struct {
	name string
	expr derive.Expr
	refs []string
}

func newSampleCheck(c *candidate.Candidate, sample, total int) *sampleCheck {
	k := &sampleCheck{c: c, sample: sample, total: total, seen: map[string]bool{}, paramPaths: map[string]string{}}
	for _, p := range c.Parameters {
		if len(p.SourcePaths) > 0 {
			k.paramPaths[p.Name] = p.SourcePaths[0]
		}
	}
	for _, d := range c.DerivedParameters {
		if len(d.SourcePaths) > 0 {
			k.paramPaths[d.Name] = d.SourcePaths[0]
		}
		// The expression was printed by the search the sample ran; it
		// always parses back.
		if e, err := derive.Parse(d.Expression); err == nil {
			k.derived = append(k.derived, derivedCheck{name: d.Name, expr: e, refs: d.Refs})
		}
	}
	for _, s := range c.Steps {
		k.approval = append(k.approval, s.Approval != nil && s.Approval.Required)
		k.fuzzy = append(k.fuzzy, s.Segment == candidate.Fuzzy)
		var shapes []string
		for _, se := range s.SideEffects {
			shapes = append(shapes, shapeKey(se))
		}
		slices.Sort(shapes)
		k.shapes = append(k.shapes, shapes)
	}
	return k
}

// disagree records that example t disagrees on what, at step (1-based,
// 0 for the candidate as a whole); the key dedupes repeats.
func (k *sampleCheck) disagree(key string, t *trace.Trace, step int, what string) {
	k.disagreed = true
	if k.seen[key] {
		return
	}
	k.seen[key] = true
	k.problems = append(k.problems, candidate.Problem{
		Code:    candidate.CodeSampleDisagreement,
		Message: fmt.Sprintf("example trace %s (%s), outside the sample of %d of %d examples the candidate was built from, %s", t.ID, t.SourceHash, k.sample, k.total, what),
		Step:    step,
		TraceID: t.ID,
	})
}

// example checks one example and reports whether it agreed with the
// sample on everything.
func (k *sampleCheck) example(t *trace.Trace, m match) bool {
	k.disagreed = false
	for j := range k.c.Steps {
		step := &k.c.Steps[j]
		a := &t.Actions[m.pos[j]]
		required := a.Approval != nil && a.Approval.Required || a.Approval == nil && a.Kind == trace.KindHumanApproval
		if required != k.approval[j] {
			k.disagree(fmt.Sprintf("approval %d", j), t, step.Index, fmt.Sprintf("differs on whether step %d needs human approval", step.Index))
		}
		if !k.fuzzy[j] && (a.Kind == trace.KindModelCall || a.Fuzzy != nil && *a.Fuzzy) {
			k.disagree(fmt.Sprintf("fuzzy %d", j), t, step.Index, fmt.Sprintf("marks step %d fuzzy, which the sample runs as code", step.Index))
		}
		shapes := make([]string, 0, len(a.SideEffects))
		for _, se := range a.SideEffects {
			shapes = append(shapes, shapeKey(se))
		}
		slices.Sort(shapes)
		if !slices.Equal(shapes, k.shapes[j]) {
			k.disagree(fmt.Sprintf("effects %d", j), t, step.Index, fmt.Sprintf("has other side effects at step %d", step.Index))
		}
		for _, arg := range step.Arguments {
			v, ok := candidate.ActionArgs(a)[arg.Key]
			field := fmt.Sprintf("step %d parameters.%s", step.Index, arg.Key)
			if arg.Kind == candidate.ArgSecret {
				continue
			}
			if !ok {
				k.disagree("missing "+field, t, step.Index, "has no "+field)
				continue
			}
			if anySecret([]any{v}) {
				k.disagree("secret "+field, t, step.Index, "holds a credential in "+field)
				continue
			}
			switch arg.Kind {
			case candidate.ArgConstant:
				if canonical(v) != canonical(arg.Value) {
					k.disagree("constant "+field, t, step.Index, "has another value in "+field+", which the sample holds constant")
				}
			case candidate.ArgBinding:
				b := arg.Binding
				got, found := resultValue(&t.Actions[m.pos[b.FromStep-1]], b.FromField, b.FromPath)
				if !found || got != canonical(v) {
					k.disagree("binding "+field, t, step.Index, fmt.Sprintf("does not pass %s from step %d %s %s, as the sample does", field, b.FromStep, b.FromField, b.FromPath))
				}
			}
		}
	}
	for _, d := range k.derived {
		values := map[string]string{}
		ok := true
		for _, name := range append([]string{d.name}, d.refs...) {
			s, found := stringAt(t, m, k.paramPaths[name])
			ok = ok && found
			values[name] = s
		}
		got, evaluated := d.expr.Eval(values)
		if !ok || !evaluated || got != values[d.name] {
			k.disagree("derived "+d.name, t, 0, fmt.Sprintf("does not give parameter %s the value its expression %s computes", d.name, d.expr))
		}
	}
	return !k.disagreed
}

// resultValue returns the canonical value at path of an action's output
// or observed output, as the flow index sees it.
func resultValue(a *trace.Action, field, path string) (string, bool) {
	val := a.Output
	if field == "observed_output" {
		val = a.ObservedOutput
	}
	if val == nil {
		return "", false
	}
	var out string
	found := false
	nodes := 0
	flatten(val, "$", 0, &nodes, func(p string, x any) {
		if !found && p == path {
			out, found = canonical(x), true
		}
	})
	return out, found
}

// stringAt reads the string at a parameter's source path
// ("steps[N].parameters.KEY") in one example.
func stringAt(t *trace.Trace, m match, path string) (string, bool) {
	step, key, ok := candidate.ParseParameterPath(path)
	if !ok || step > len(m.pos) {
		return "", false
	}
	s, ok := candidate.ActionArgs(&t.Actions[m.pos[step-1]])[key].(string)
	return s, ok
}
