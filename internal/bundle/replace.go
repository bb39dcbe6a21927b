package bundle

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/codegen"
	"github.com/crystallize-dev/crystallize/internal/redact"
)

// ReplaceWorkflow makes src the bundle's new workflow version, in which
// the model call of step ev.Step was replaced by the verified function
// ev describes. It is how a fuzzy step that earned its way to code enters
// a reviewed bundle:
//
//   - workflow.star becomes src, with its header counts refreshed
//     (codegen.RefreshHeader);
//   - report.json and candidate.json record ev under synthesized_steps,
//     with the sha256 of the workflow before and after; candidate.json
//     holds the new sha256, lists the step as deterministic, and its
//     savings count the model calls still made per run;
//   - the approval history is kept, but it is about the old bytes, so the
//     promotion status falls back to needs_approval: validate reports
//     approval_stale and run refuses the bundle until a person approves
//     the new version.
//
// It refuses, changing nothing, a bundle without a candidate, a workflow
// that no longer has the sha256 the manifest records (the change must be
// to the version that was reviewed), a step the candidate does not have,
// and a src that does not pass codegen.Check for the workflow's function
// or that holds anything the secret scanner flags. The files are each
// replaced atomically, candidate.json last: a failure in between leaves a
// manifest whose workflow sha256 no longer matches, which validate
// reports, never a bundle that looks approved.
func ReplaceWorkflow(dir string, src []byte, ev candidate.SynthesizedStep) (*Manifest, error) {
	fail := func(err error) (*Manifest, error) {
		return nil, fmt.Errorf("updating bundle %s: %w", dir, err)
	}
	unlock, err := lock(dir)
	if err != nil {
		return nil, err
	}
	defer unlock()
	b, err := Read(dir)
	if err != nil {
		return nil, err
	}
	m := b.Manifest
	if m.CandidateID == "" {
		return fail(fmt.Errorf("it holds no candidate (kind %s)", m.Kind))
	}
	if err := checkBundlePath(dir, m.Workflow.Path); err != nil {
		return fail(err)
	}
	wfPath := filepath.Join(dir, filepath.FromSlash(m.Workflow.Path))
	old, err := os.ReadFile(wfPath)
	if err != nil {
		return fail(err)
	}
	if sum := hexSHA(old); sum != m.Workflow.SHA256 {
		return fail(fmt.Errorf("%s has sha256 %s, not the %s the bundle records; regenerate the bundle", m.Workflow.Path, sum, m.Workflow.SHA256))
	}
	src, _, err = codegen.RefreshHeader(src)
	if err != nil {
		return fail(fmt.Errorf("the new workflow: %w", err))
	}
	if err := codegen.Check(m.Workflow.Path, src, m.Workflow.Name); err != nil {
		return fail(fmt.Errorf("the new workflow: %w", err))
	}
	if fs := redact.Scan(src); len(fs) > 0 {
		return fail(fmt.Errorf("the new workflow: line %d: %s secret %s", fs[0].Line, fs[0].Kind, fs[0].Excerpt))
	}
	repPath := filepath.Join(dir, ReportFile)
	r, err := ReadReport(dir)
	if err != nil {
		return fail(err)
	}
	c := findCandidate(r, m.CandidateID)
	if c == nil {
		return fail(fmt.Errorf("%s: no candidate %s", ReportFile, m.CandidateID))
	}
	if ev.Step < 1 || ev.Step > len(c.Steps) {
		return fail(fmt.Errorf("step %d: the candidate has %d steps", ev.Step, len(c.Steps)))
	}
	ev.PreviousWorkflowSHA256 = m.Workflow.SHA256
	ev.WorkflowSHA256 = hexSHA(src)
	if ev.Properties == nil {
		ev.Properties = []string{}
	}
	remaining, err := codegen.ModelCalls(src)
	if err != nil {
		return fail(fmt.Errorf("the new workflow: %w", err))
	}
	note := fmt.Sprintf("step %d %s: the model call is replaced by %s (sha256 %s), written by %s and verified on %d recorded and %d held-out runs",
		ev.Step, ev.Name, ev.Function, ev.FunctionSHA256, ev.Model, ev.ExamplesChecked, ev.HeldoutChecked)

	c.SynthesizedSteps = append(c.SynthesizedSteps, ev)
	c.Steps[ev.Step-1].ReviewNotes = append(c.Steps[ev.Step-1].ReviewNotes, note)
	setRemaining(&c.Savings, remaining)
	report, err := r.Encode()
	if err != nil {
		return fail(fmt.Errorf("encoding %s: %w", ReportFile, err))
	}

	m.Workflow.SHA256 = ev.WorkflowSHA256
	m.SynthesizedSteps = append(m.SynthesizedSteps, ev)
	if i := slices.IndexFunc(m.FuzzySteps, func(s StepRef) bool { return s.Index == ev.Step }); i >= 0 {
		ref := m.FuzzySteps[i]
		ref.ReviewNotes = append(ref.ReviewNotes, note)
		m.FuzzySteps = slices.Delete(m.FuzzySteps, i, i+1)
		m.DeterministicSteps = append(m.DeterministicSteps, ref)
		slices.SortFunc(m.DeterministicSteps, func(a, b StepRef) int { return a.Index - b.Index })
	}
	if m.Savings != nil {
		setRemaining(m.Savings, remaining)
	}
	// The approvals stay as the history of the old version; the status
	// is recomputed for the new one, which no one has approved yet.
	m.Promotion.Criteria.Reasons = recompute(m)
	settle(m)
	manifest, err := encodeManifest(m)
	if err != nil {
		return fail(err)
	}
	for _, w := range []struct {
		name string
		data []byte
	}{{wfPath, src}, {repPath, report}, {filepath.Join(dir, ManifestFile), manifest}} {
		if err := replaceBundleFile(w.name, w.data); err != nil {
			return fail(err)
		}
	}
	return m, nil
}

// replaceBundleFile is replaceFile; tests make it fail part way through a
// replacement.
var replaceBundleFile = replaceFile

// setRemaining records that a run of the workflow makes n model calls;
// the rest of the savings stay as mined.
func setRemaining(s *candidate.Savings, n int) {
	s.PerRun.RemainingModelCalls = float64(n)
	s.RemainingModelCalls = int64(n) * int64(max(s.Runs, 1))
}
