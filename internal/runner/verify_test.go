package runner

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/bundle"
	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/runstate"
	"github.com/crystallize-dev/crystallize/internal/toolexec"
	"github.com/crystallize-dev/crystallize/internal/verify"
)

const verifySrc = "def wf(ctx):\n    ctx.tool(\"t.a\", x = \"1\")\n    return ctx.tool(\"t.b\")\n"

// verifyTools returns in-process tools t.a and t.b; t.b answers b.
func verifyTools(b string) map[string]toolexec.Tool {
	return map[string]toolexec.Tool{
		"t.a": {Func: func(context.Context, map[string]any) (any, error) { return "A", nil }},
		"t.b": {Func: func(context.Context, map[string]any) (any, error) { return b, nil }},
	}
}

// verifyBundle runs verifySrc twice as a bare file and writes a ready
// bundle whose candidate was mined, in effect, from those two runs: their
// traces are its example fixtures and the first run's receipts its
// expected receipts. expect overrides the expected receipts when not nil.
func verifyBundle(t *testing.T, expect func([]any) []any) string {
	t.Helper()
	w := workflow(t, verifySrc)
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "fixtures"), 0o755)
	var receipts []any
	var fixtures []string
	for _, id := range []string{"run-1", "run-2"} {
		o := opts(t, nil)
		o.RunID = id
		o.Tools = verifyTools("B")
		res, err := Run(context.Background(), w, nil, o)
		if err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(filepath.Join(res.Dir, runstate.TraceFile))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, "fixtures", id+".json"), data, 0o644)
		fixtures = append(fixtures, fmt.Sprintf(`{"path":"fixtures/%s.json","trace_id":%q,"role":"source"}`, id, id))
		if receipts == nil {
			receipts, _ = readTrace(t, res).ReplayRun["effect_receipts"].([]any)
		}
	}
	if expect != nil {
		receipts = expect(receipts)
	}
	rep, err := json.Marshal(candidate.Report{Candidates: []candidate.Candidate{{
		ID:               "c1",
		Examples:         []candidate.Example{{TraceID: "run-1"}, {TraceID: "run-2"}},
		ExpectedReceipts: receipts,
	}}})
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, bundle.ReportFile), rep, 0o644)
	os.WriteFile(filepath.Join(dir, bundle.WorkflowFile), []byte(verifySrc), 0o644)
	sum := sha256.Sum256([]byte(verifySrc))
	manifest := fmt.Sprintf(`{"schema":%q,"schema_version":1,"candidate_id":"c1","capabilities":[],"required_secrets":[],
"workflow":{"path":"workflow.star","name":"wf","sha256":%q},
"fixtures":[%s],
"promotion":{"criteria":{"status":"needs_approval"}}}`, bundle.Schema, hex.EncodeToString(sum[:]), strings.Join(fixtures, ","))
	os.WriteFile(filepath.Join(dir, bundle.ManifestFile), []byte(manifest), 0o644)
	return dir
}

func TestVerify(t *testing.T) {
	dir := verifyBundle(t, nil)
	w, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		out     string // what t.b answers
		path    string // the divergence, "" for none
		verdict bool
	}{
		{name: "identical", out: "B", verdict: true},
		{name: "changed output", out: "B2", path: "/effect_receipts/1/result_sha256"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := opts(t, nil)
			o.RunID = "run-verify"
			o.Tools = verifyTools(tt.out)
			o.Verify = true
			o.AllowUnapproved = true // a hand-made bundle; readiness is TestBundleNotReady's
			res, err := Run(context.Background(), w, nil, o)
			if res == nil || res.Verification == nil {
				t.Fatalf("Run = %v, %v; want a verified run", res, err)
			}
			v := res.Verification
			if v.Passed != tt.verdict || v.Expected != 2 || v.Actual != 2 {
				t.Errorf("Verification = %+v, want passed %v with 2 receipts each", v, tt.verdict)
			}
			tr := readTrace(t, res)
			rec, _ := tr.Metadata["crystallize_run"].(map[string]any)["verification"].(map[string]any)
			if rec == nil || rec["passed"] != tt.verdict {
				t.Errorf("trace.json verification = %v, want passed %v", rec, tt.verdict)
			}
			session := readFile(t, filepath.Join(res.Dir, runstate.SessionFile))
			if !strings.Contains(session, "\n## Verify\n") {
				t.Errorf("session.md has no Verify phase:\n%s", session)
			}
			if tt.verdict {
				if err != nil {
					t.Errorf("Run = %v, want success", err)
				}
				return
			}
			var de *verify.DriftError
			if !errors.As(err, &de) || !errors.Is(err, verify.ErrDrift) {
				t.Fatalf("Run = %v, want a *verify.DriftError", err)
			}
			if de.Divergence.Path != tt.path || v.Divergence == nil || v.Divergence.Path != tt.path {
				t.Errorf("divergence at %q (recorded %+v), want %s", de.Divergence.Path, v.Divergence, tt.path)
			}
			want := "receipts drift from the candidate's expected receipts at " + tt.path
			if !strings.HasPrefix(err.Error(), want) || !strings.HasPrefix(res.Error, want) {
				t.Errorf("error = %q (recorded %q), want it to start with %q", err, res.Error, want)
			}
			if res.Status != runstate.StatusCompleted {
				t.Errorf("status = %s, want %s: the workflow completed, its receipts drifted", res.Status, runstate.StatusCompleted)
			}
			if m := rec["divergence"].(map[string]any); m["path"] != tt.path {
				t.Errorf("trace.json divergence = %v, want path %s", m, tt.path)
			}
			if !strings.Contains(session, "> [!error]\n> receipts drift") {
				t.Errorf("session.md does not record the drift:\n%s", session)
			}
		})
	}
}

// TestVerifyExtraReceipt: a receipt the candidate does not expect is
// drift even under the "*" rules, since rules mask values, not counts.
func TestVerifyExtraReceipt(t *testing.T) {
	dir := verifyBundle(t, func(r []any) []any { return r[:1] })
	w, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	o := opts(t, nil)
	o.Tools = verifyTools("B")
	o.Verify = true
	o.AllowUnapproved = true
	_, err = Run(context.Background(), w, nil, o)
	var de *verify.DriftError
	if !errors.As(err, &de) || de.Divergence.Path != "/effect_receipts/1" {
		t.Errorf("Run = %v, want drift at /effect_receipts/1", err)
	}
}

// TestVerifyRefused: a run that cannot be verified is refused before its
// first step.
func TestVerifyRefused(t *testing.T) {
	noReceipts := verifyBundle(t, func([]any) []any { return nil })
	tests := []struct {
		name   string
		target func(t *testing.T) *Workflow
		dryRun bool
		want   string
	}{
		{"bare file", func(t *testing.T) *Workflow { return workflow(t, verifySrc) }, false, "is not a bundle"},
		{"dry run", func(t *testing.T) *Workflow { w, _ := Load(verifyBundle(t, nil)); return w }, true, "a dry run executes nothing"},
		{"no expected receipts", func(t *testing.T) *Workflow { w, _ := Load(noReceipts); return w }, false, "candidate c1 expects no receipts"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			called := 0
			o := opts(t, nil)
			o.Tools = map[string]toolexec.Tool{
				"t.a": {Func: func(context.Context, map[string]any) (any, error) { called++; return nil, nil }},
				"t.b": {Func: func(context.Context, map[string]any) (any, error) { called++; return nil, nil }},
			}
			o.Verify, o.DryRun, o.AllowUnapproved = true, tt.dryRun, true
			res, err := Run(context.Background(), tt.target(t), nil, o)
			if !errors.Is(err, verify.ErrUnverifiable) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Run = %v, want verify.ErrUnverifiable saying %q", err, tt.want)
			}
			if res != nil || called != 0 {
				t.Errorf("a refused run ran: %v, %d calls", res, called)
			}
		})
	}
}
