package bundle

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/crystallize-dev/crystallize/internal/assert"
	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/codegen"
	"github.com/crystallize-dev/crystallize/internal/replay"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// ErrNoCandidate is returned by ReplayShadow and Eval for a bundle that
// holds no candidate (kind rejected without a candidate id).
var ErrNoCandidate = errors.New("bundle holds no candidate")

// ErrNoEvalPack is returned by Eval for a bundle without an eval pack.
var ErrNoEvalPack = errors.New("bundle has no eval pack")

// ShadowCheck is the result of ReplayShadow: the shadow comparison run
// again on the bundle's fixtures, and whether it agrees with the one the
// manifest records.
type ShadowCheck struct {
	CandidateID string `json:"candidate_id"`
	Compared    int    `json:"compared"`
	Pass        bool   `json:"pass"`
	// Matches is true when pass, the number of compared traces and every
	// trace's status equal the recorded shadow report.
	Matches bool `json:"matches"`
	// Differences says how the result differs from the record, one line
	// per difference.
	Differences []string `json:"differences"`
	// Current is the replay's whole report, for a caller that wants more
	// than the verdict; the JSON form (shadow --json) leaves it out.
	Current *candidate.ShadowReport `json:"-"`
}

// HeldoutCheck is a bundle's candidate replayed against held-out runs
// (ShadowHeldout), as `crystallize shadow --heldout --json` prints it.
type HeldoutCheck struct {
	Bundle      string `json:"bundle"`
	CandidateID string `json:"candidate_id"`
	// Heldout are the held-out traces compared, in the replay's order.
	Heldout []HeldoutTrace `json:"heldout"`
	// Pass is true when the replay passes and compared at least one
	// held-out trace: no held-out evidence is not a pass.
	Pass bool `json:"pass"`
	// Report is the replay's whole report; the JSON form leaves it out.
	Report *candidate.ShadowReport `json:"-"`
}

// HeldoutTrace is one held-out trace's outcome.
type HeldoutTrace struct {
	TraceID string `json:"trace_id"`
	// Status is candidate.StatusPass, StatusFail or StatusUnmatched.
	Status string `json:"status"`
	// FirstDivergentStep is the 1-based candidate step where the trace
	// first differs, 0 when it does not.
	FirstDivergentStep int `json:"first_divergent_step"`
}

// readShadowInputs reads the bundle's manifest, its candidate and its
// fixtures (checked against their recorded sha256), split by role.
func readShadowInputs(dir string) (*Manifest, *candidate.Candidate, []*trace.Trace, []*trace.Trace, error) {
	b, err := Read(dir)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	m := b.Manifest
	if m.CandidateID == "" {
		return nil, nil, nil, nil, fmt.Errorf("shadow replay of %s: %w", dir, ErrNoCandidate)
	}
	c, err := readCandidate(dir, m.CandidateID)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	var sources, heldout []*trace.Trace
	for _, f := range m.Fixtures {
		t, err := readFixture(dir, f)
		if err != nil {
			return nil, nil, nil, nil, fmt.Errorf("shadow replay of %s: %w", dir, err)
		}
		switch f.Role {
		case candidate.RoleSource:
			sources = append(sources, t)
		case candidate.RoleHeldout:
			heldout = append(heldout, t)
		default:
			return nil, nil, nil, nil, fmt.Errorf("shadow replay of %s: %s: role %q; want source or heldout", dir, f.Path, f.Role)
		}
	}
	return m, c, sources, heldout, nil
}

// ShadowHeldout replays the bundle's candidate against held-out traces
// that are not in the bundle (another run of the procedure, read by the
// caller), beside the bundle's own source fixtures, and returns the
// outcome for each held-out trace. It writes nothing: the bundle, and so
// what its reviewer read, stays as it is; recording new held-out evidence
// means writing a new bundle. A trace with the id of one of the bundle's
// source examples is refused: a run is not its own held-out evidence.
func ShadowHeldout(dir string, extra []*trace.Trace) (*HeldoutCheck, error) {
	_, c, sources, _, err := readShadowInputs(dir)
	if err != nil {
		return nil, err
	}
	for _, h := range extra {
		for _, s := range sources {
			if h.ID == s.ID {
				return nil, fmt.Errorf("held-out trace %s (%s) is a source example of %s: a run cannot be its own held-out evidence", h.ID, h.Source, dir)
			}
		}
	}
	sh := replay.Shadow(c, sources, extra)
	hc := &HeldoutCheck{Bundle: dir, CandidateID: c.ID, Heldout: []HeldoutTrace{}, Report: sh}
	for _, t := range sh.Traces {
		if t.Role == candidate.RoleHeldout {
			hc.Heldout = append(hc.Heldout, HeldoutTrace{TraceID: t.TraceID, Status: t.Status, FirstDivergentStep: t.FirstDivergentStep})
		}
	}
	hc.Pass = sh.Pass && len(hc.Heldout) > 0
	return hc, nil
}

// ReplayShadow re-runs replay.Shadow for the bundle's candidate (read from
// report.json) on its redacted fixtures, each with the role the manifest
// gives it, and compares the result with the shadow report of
// candidate.json. It has no side effects: it reads files and calls
// nothing. Fixtures are checked against their recorded sha256 first, since
// a comparison on tampered fixtures would prove nothing.
func ReplayShadow(dir string) (*ShadowCheck, error) {
	m, c, sources, heldout, err := readShadowInputs(dir)
	if err != nil {
		return nil, err
	}
	cur := replay.Shadow(c, sources, heldout)
	sc := &ShadowCheck{CandidateID: c.ID, Compared: cur.ComparedTraces, Pass: cur.Pass, Current: cur, Differences: diffShadow(m.Shadow, cur)}
	sc.Matches = len(sc.Differences) == 0
	return sc, nil
}

// diffShadow lists how cur differs from the recorded report rec.
func diffShadow(rec, cur *candidate.ShadowReport) []string {
	d := []string{}
	if rec == nil {
		return append(d, "the manifest records no shadow report")
	}
	if rec.Pass != cur.Pass {
		d = append(d, fmt.Sprintf("pass: recorded %v, now %v", rec.Pass, cur.Pass))
	}
	if rec.ComparedTraces != cur.ComparedTraces {
		d = append(d, fmt.Sprintf("compared: recorded %d, now %d", rec.ComparedTraces, cur.ComparedTraces))
	}
	if rt, ct := rec.Tally(), cur.Tally(); rt.SourcePassed != ct.SourcePassed {
		d = append(d, fmt.Sprintf("source examples passed: recorded %d, now %d", rt.SourcePassed, ct.SourcePassed))
	}
	// A passing source example that one side counts without listing it
	// (a report lists a bounded selection of them, and the bound the
	// bundle was written with may not be the one used now) is no
	// difference; the passing counts above are compared instead.
	unlisted := func(sh *candidate.ShadowReport, t candidate.ShadowTrace) bool {
		return sh.PassedNotListed > 0 && t.Role == candidate.RoleSource && t.Status == candidate.StatusPass
	}
	type key struct{ id, role string }
	now := map[key]string{}
	for _, t := range cur.Traces {
		now[key{t.TraceID, t.Role}] = t.Status
	}
	seen := map[key]bool{}
	for _, t := range rec.Traces {
		k := key{t.TraceID, t.Role}
		seen[k] = true
		switch st, ok := now[k]; {
		case !ok && unlisted(cur, t):
		case !ok:
			d = append(d, fmt.Sprintf("%s trace %s: recorded %s, now not compared", t.Role, t.TraceID, t.Status))
		case st != t.Status:
			d = append(d, fmt.Sprintf("%s trace %s: recorded %s, now %s", t.Role, t.TraceID, t.Status, st))
		}
	}
	for _, t := range cur.Traces {
		if !seen[key{t.TraceID, t.Role}] && !unlisted(rec, t) {
			d = append(d, fmt.Sprintf("%s trace %s: not recorded, now %s", t.Role, t.TraceID, t.Status))
		}
	}
	return d
}

// readCandidate returns the candidate with the given id from the bundle's
// report.json.
func readCandidate(dir, id string) (*candidate.Candidate, error) {
	r, err := ReadReport(dir)
	if err != nil {
		return nil, err
	}
	c := findCandidate(r, id)
	if c == nil {
		return nil, fmt.Errorf("%s: no candidate %s", filepath.Join(dir, ReportFile), id)
	}
	return c, nil
}

// readFixture reads and decodes one fixture, refusing an unsafe path, a
// changed file and a trace other than the one the manifest names.
func readFixture(dir string, f Fixture) (*trace.Trace, error) {
	if err := checkBundlePath(dir, f.Path); err != nil {
		return nil, err
	}
	data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f.Path)))
	if err != nil {
		return nil, err
	}
	if got := hexSHA(data); got != f.SHA256 {
		return nil, fmt.Errorf("%s: sha256 %s differs from the manifest's %s", f.Path, got, f.SHA256)
	}
	t, err := trace.Decode(data, f.Path, 0)
	if err != nil {
		return nil, err
	}
	if t.ID != f.TraceID || t.SourceHash != f.SourceHash {
		return nil, fmt.Errorf("%s: holds trace %s (%s), the manifest names %s (%s)", f.Path, t.ID, t.SourceHash, f.TraceID, f.SourceHash)
	}
	trace.Normalize(t)
	return t, nil
}

// EvalResult is the outcome of Eval.
type EvalResult struct {
	Assertions []AssertionResult `json:"assertions"`
	// Passed is true when every blocking assertion passed.
	Passed bool `json:"passed"`
}

// Failed lists the IDs of the blocking assertions that failed, in order:
// the reasons Passed is false.
func (r *EvalResult) Failed() []string {
	var ids []string
	for _, a := range r.Assertions {
		if a.Blocking && !a.Passed {
			ids = append(ids, a.ID)
		}
	}
	return ids
}

// AssertionResult is one assertion of the eval pack as run. ID is
// "<case id>/<rubric id>/<assertion index>".
type AssertionResult struct {
	ID       string `json:"id"`
	Kind     string `json:"kind"`
	Blocking bool   `json:"blocking"`
	Passed   bool   `json:"passed"`
	Message  string `json:"message"`
}

// Eval runs the assertions of the bundle's eval pack for every case that
// names their rubric. A crystallization-shadow assertion passes when
// ReplayShadow succeeds, matches the recorded result, its pass equals the
// expected pass, the candidate is the expected one, and every expected
// fixture is one of the bundle's. An assertion of the harness case format
// (json_schema, tool_call_f1, …) is decided by the assert package's
// engine, the one "harness run" uses, against the case's input: its
// recorded output or output_file, its trajectory or trace (a fixture of
// the manifest is checked against its sha256 first), and its
// expectations. It blocks when its case is blocking and the engine's
// defaults table says it blocks (so a metric blocks once its threshold
// is marked calibrated; model-judged kinds, with no judge configured
// here, fail without blocking). An assertion of an unknown kind fails:
// an evaluator that cannot run a check must not report it as passed.
// The error is for a bundle or eval pack that cannot be read; failing
// assertions are in the result.
func Eval(dir string) (*EvalResult, error) {
	b, err := Read(dir)
	if err != nil {
		return nil, err
	}
	m := b.Manifest
	if m.EvalPack.Path == nil {
		return nil, fmt.Errorf("evaluating %s: %w", dir, ErrNoEvalPack)
	}
	p := *m.EvalPack.Path
	if err := checkBundlePath(dir, p); err != nil {
		return nil, fmt.Errorf("evaluating %s: %w", dir, err)
	}
	data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(p)))
	if err != nil {
		return nil, fmt.Errorf("evaluating bundle: %w", err)
	}
	pack, err := codegen.ParseEvalPack(data)
	if err != nil {
		return nil, fmt.Errorf("evaluating %s: %s: %w", dir, p, err)
	}
	rubrics := map[string]codegen.EvalRubric{}
	for _, r := range pack.Rubrics {
		rubrics[r.ID] = r
	}
	fixtures := map[string]bool{}
	for _, f := range m.Fixtures {
		fixtures[f.TraceID] = true
	}
	// The shadow replay is the same for every assertion; run it once.
	var (
		shadow    *ShadowCheck
		shadowErr error
		ran       bool
	)
	res := &EvalResult{Assertions: []AssertionResult{}, Passed: true}
	var eng assert.Engine
	for _, cs := range pack.Cases {
		blocking := cs.Severity == codegen.SeverityBlocking
		// A case's evidence is read once, for its first assertion of the
		// harness case format.
		var (
			ev       assert.Evidence
			evErr    error
			gathered bool
		)
		for _, rid := range cs.Rubrics {
			for i, a := range rubrics[rid].Assertions {
				ar := AssertionResult{ID: fmt.Sprintf("%s/%s/%d", cs.ID, rid, i), Kind: a.Kind, Blocking: blocking}
				switch {
				case a.Check != nil:
					if !gathered {
						ev, evErr = caseEvidence(dir, m, cs.Input)
						gathered = true
					}
					if evErr != nil {
						ar.Message = evErr.Error()
						break
					}
					r := eng.Check(context.Background(), *a.Check, ev)
					ar.Passed, ar.Message, ar.Blocking = r.Passed, r.Message, blocking && r.Blocking
				case a.Kind != codegen.ShadowAssertion:
					ar.Message = fmt.Sprintf("unknown assertion kind %q", a.Kind)
				default:
					if !ran {
						shadow, shadowErr = ReplayShadow(dir)
						ran = true
					}
					ar.Passed, ar.Message = shadowAssertion(a.Expected, m, shadow, shadowErr, fixtures)
				}
				if ar.Blocking && !ar.Passed {
					res.Passed = false
				}
				res.Assertions = append(res.Assertions, ar)
			}
		}
	}
	return res, nil
}

// shadowAssertion decides one crystallization-shadow assertion.
func shadowAssertion(want codegen.EvalExpected, m *Manifest, sc *ShadowCheck, err error, fixtures map[string]bool) (bool, string) {
	switch {
	case want.CandidateID != m.CandidateID:
		return false, fmt.Sprintf("assertion is for candidate %s, the bundle holds %s", want.CandidateID, m.CandidateID)
	case err != nil:
		return false, fmt.Sprintf("shadow replay failed: %v", err)
	}
	for _, id := range want.Fixtures {
		if !fixtures[id] {
			return false, fmt.Sprintf("expected fixture %s is not in the bundle", id)
		}
	}
	switch {
	case !sc.Matches:
		return false, fmt.Sprintf("shadow replay differs from the recorded result: %v", sc.Differences)
	case sc.Pass != want.Pass:
		return false, fmt.Sprintf("shadow replay pass=%v, expected pass=%v (compared %d)", sc.Pass, want.Pass, sc.Compared)
	}
	return true, fmt.Sprintf("shadow replay of %s: compared=%d pass=%v, as recorded", sc.CandidateID, sc.Compared, sc.Pass)
}

// caseEvidence reads what a case's harness-format assertions are checked
// against from its input: the recorded output (or the bundle file
// output_file names), the trajectory (or the actions of the trace file
// trace names, verified against the manifest when it is one of its
// fixtures), and the ranking. Paths stay inside the bundle.
func caseEvidence(dir string, m *Manifest, in *codegen.EvalInput) (assert.Evidence, error) {
	if in == nil {
		return assert.Evidence{}, errors.New("the case has no input to check")
	}
	ev := assert.Evidence{Input: in.CaseInput, Retrieved: in.RetrievedDocuments, Trajectory: in.Trajectory}
	switch {
	case in.Output != nil:
		ev.Output = *in.Output
	case in.OutputFile != "":
		data, err := readBundleFile(dir, in.OutputFile)
		if err != nil {
			return ev, fmt.Errorf("input.output_file: %w", err)
		}
		ev.Output = string(data)
	}
	if in.Trace != "" {
		t, err := readEvalTrace(dir, m, in.Trace)
		if err != nil {
			return ev, fmt.Errorf("input.trace: %w", err)
		}
		ev.Trajectory = assert.TraceTrajectory(t)
	}
	return ev, nil
}

// readBundleFile reads a file the eval pack names, refusing a path that
// leaves the bundle or passes through a symlink.
func readBundleFile(dir, p string) ([]byte, error) {
	if err := checkBundlePath(dir, p); err != nil {
		return nil, err
	}
	return os.ReadFile(filepath.Join(dir, filepath.FromSlash(p)))
}

// readEvalTrace decodes a trace file of the bundle: through readFixture, with
// its recorded hash and identity, when the manifest lists it.
func readEvalTrace(dir string, m *Manifest, p string) (*trace.Trace, error) {
	for _, f := range m.Fixtures {
		if f.Path == p {
			return readFixture(dir, f)
		}
	}
	data, err := readBundleFile(dir, p)
	if err != nil {
		return nil, err
	}
	return trace.Decode(data, p, 0)
}
