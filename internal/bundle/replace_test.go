package bundle

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/crystallize-dev/crystallize/internal/candidate"
)

func evidence(step int) candidate.SynthesizedStep {
	return candidate.SynthesizedStep{
		Step: step, Name: "release", Function: "decide", FunctionSHA256: strings.Repeat("a", 64),
		Model: "local-coder-1", ModelKey: "default", PromptSHA256: strings.Repeat("b", 64), ResponseSHA256: strings.Repeat("c", 64),
		ExamplesChecked: 3, HeldoutChecked: 1,
	}
}

// files reads every file of a bundle.
func files(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		out[p] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// A new workflow version replaces the approved one: the evidence is
// recorded, the approval goes stale, and approving again makes the
// bundle valid and ready.
func TestReplaceWorkflow(t *testing.T) {
	s, h := releaseTraces(t, nil)
	dir, _ := scenario{sources: s, heldout: h, build: releaseCandidate, opts: opts()}.write(t)
	if _, err := Approve(dir, Approval{Actor: "lead@example.com", At: "2026-04-27T09:00:00Z"}); err != nil {
		t.Fatal(err)
	}
	old := mustRead(t, filepath.Join(dir, WorkflowFile))
	src := append(append([]byte{}, old...), "# revised by synthesis\n"...)
	m, err := ReplaceWorkflow(dir, src, evidence(1))
	if err != nil {
		t.Fatal(err)
	}
	got := mustRead(t, filepath.Join(dir, WorkflowFile))
	if string(got) != string(src) || m.Workflow.SHA256 != hexSHA(src) {
		t.Errorf("workflow.star not replaced (sha256 %s)", m.Workflow.SHA256)
	}
	if len(m.SynthesizedSteps) != 1 || m.SynthesizedSteps[0].PreviousWorkflowSHA256 != hexSHA(old) || m.SynthesizedSteps[0].WorkflowSHA256 != hexSHA(src) {
		t.Errorf("synthesized_steps = %+v", m.SynthesizedSteps)
	}
	if m.Promotion.Criteria.Status != StatusNeedsApproval {
		t.Errorf("status = %s, want %s", m.Promotion.Criteria.Status, StatusNeedsApproval)
	}
	if rep := string(mustRead(t, filepath.Join(dir, ReportFile))); !strings.Contains(rep, `"synthesized_steps"`) {
		t.Error("report.json lacks synthesized_steps")
	}
	v := Validate(dir)
	if !hasProblem(v, CodeApprovalStale, "approval_history") {
		t.Errorf("Validate after the replacement:\n%s", describe(v))
	}
	if _, err := Approve(dir, Approval{Actor: "lead@example.com", At: "2026-04-27T10:00:00Z"}); err != nil {
		t.Fatal(err)
	}
	if v := Validate(dir); len(v.Problems) != 0 {
		t.Errorf("Validate after approving again:\n%s", describe(v))
	}
}

// A refused replacement changes no byte of the bundle.
func TestReplaceWorkflowRefused(t *testing.T) {
	tests := []struct {
		name   string
		tamper bool
		src    func(old string) string
		step   int
		want   string
	}{
		{"not a workflow", false, func(string) string { return "def other(ctx):\n    pass\n" }, 1, "function other"},
		{"does not parse", false, func(old string) string { return old + "def (\n" }, 1, "the new workflow"},
		{"holds a secret", false, func(old string) string { return old + "# " + fakeToken + "\n" }, 1, "secret"},
		{"no such step", false, func(old string) string { return old + "# x\n" }, 99, "step 99"},
		{"workflow changed since written", true, func(old string) string { return old + "# x\n" }, 1, "not the"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, h := releaseTraces(t, nil)
			dir, _ := scenario{sources: s, heldout: h, build: releaseCandidate, opts: opts()}.write(t)
			old := string(mustRead(t, filepath.Join(dir, WorkflowFile)))
			if tt.tamper {
				mustWrite(t, filepath.Join(dir, WorkflowFile), []byte(old+"# edited\n"))
			}
			before := files(t, dir)
			_, err := ReplaceWorkflow(dir, []byte(tt.src(old)), evidence(tt.step))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("ReplaceWorkflow = %v, want an error containing %q", err, tt.want)
			}
			if diff := cmp.Diff(before, files(t, dir)); diff != "" {
				t.Errorf("the bundle changed (-before +after):\n%s", diff)
			}
		})
	}
}

// A replacement that fails after the new workflow is written leaves a
// bundle that validate reports and that is not ready to run, never one
// that looks approved with bytes no one approved.
func TestReplaceWorkflowInterrupted(t *testing.T) {
	s, h := releaseTraces(t, nil)
	dir, _ := scenario{sources: s, heldout: h, build: releaseCandidate, opts: opts()}.write(t)
	if _, err := Approve(dir, Approval{Actor: "lead@example.com", At: "2026-04-27T09:00:00Z"}); err != nil {
		t.Fatal(err)
	}
	if r := Ready(dir); !r.OK() {
		t.Fatalf("approved bundle not ready: %v", r.Err())
	}
	calls := 0
	replaceBundleFile = func(name string, data []byte) error {
		if calls++; calls == 2 {
			return os.ErrPermission
		}
		return replaceFile(name, data)
	}
	t.Cleanup(func() { replaceBundleFile = replaceFile })
	old := mustRead(t, filepath.Join(dir, WorkflowFile))
	src := append(append([]byte{}, old...), "# revised by synthesis\n"...)
	if _, err := ReplaceWorkflow(dir, src, evidence(1)); err == nil {
		t.Fatal("ReplaceWorkflow succeeded although writing report.json failed")
	}
	if got := mustRead(t, filepath.Join(dir, WorkflowFile)); string(got) != string(src) {
		t.Fatal("the interruption was not after the workflow was written")
	}
	if v := Validate(dir); !hasProblem(v, CodeWorkflowHash, "") {
		t.Errorf("Validate of the interrupted bundle:\n%s", describe(v))
	}
	if r := Ready(dir); r.OK() {
		t.Error("the interrupted bundle is ready to run")
	}
}

// TestReplaceWorkflowRefreshesHeader checks that the workflow written is
// src with its header counts recomputed from its code, whatever src's
// header claims, so that the reviewer reads how many model calls a run
// still makes; and that the evidence's list of properties is a list even
// when the caller gave none.
func TestReplaceWorkflowRefreshesHeader(t *testing.T) {
	s, h := releaseTraces(t, nil)
	dir, _ := scenario{sources: s, heldout: h, build: releaseCandidate, opts: opts()}.write(t)
	old := string(mustRead(t, filepath.Join(dir, WorkflowFile)))
	const counted = "deterministic steps: 3 of 3 · remaining model calls per run: 0"
	if !strings.Contains(old, counted) {
		t.Fatalf("workflow header lacks %q:\n%s", counted, old)
	}
	stale := strings.Replace(old, counted, "deterministic steps: 2 of 3 · remaining model calls per run: 1", 1)
	m, err := ReplaceWorkflow(dir, []byte(stale), evidence(1))
	if err != nil {
		t.Fatal(err)
	}
	got := string(mustRead(t, filepath.Join(dir, WorkflowFile)))
	if !strings.Contains(got, counted) || got != old {
		t.Errorf("workflow written with header counts not recomputed:\n%s", got)
	}
	if m.Workflow.SHA256 != hexSHA([]byte(got)) {
		t.Errorf("manifest workflow sha256 %s, not the file's %s", m.Workflow.SHA256, hexSHA([]byte(got)))
	}
	if rep := string(mustRead(t, filepath.Join(dir, ReportFile))); !strings.Contains(rep, `"properties":[]`) && !strings.Contains(rep, `"properties": []`) {
		t.Errorf("report.json synthesized step properties are not an empty list:\n%s", rep)
	}
}
