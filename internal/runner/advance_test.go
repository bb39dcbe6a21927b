package runner

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/crystallize-dev/crystallize/internal/runconfig"
	"github.com/crystallize-dev/crystallize/internal/runstate"
)

// driveToEnd advances a run one step at a time, as a durable engine
// does, carrying the journal through JSON (the engine's history) between
// calls and deciding each boundary with decide.
func driveToEnd(t *testing.T, w *Workflow, o Options, params Params, decide func(*runstate.Pending) Options) (*Result, []string) {
	t.Helper()
	j := NewJournal(w, "run-driven", params, nil)
	var statuses []string
	var next Options
	for range 50 {
		step := o
		step.Approve, step.Reject, step.Decide = next.Approve, next.Reject, next.Decide
		next = Options{}
		nj, res, err := Advance(context.Background(), w, j, step)
		if nj == nil {
			t.Fatalf("Advance after %v: %v", statuses, err)
		}
		statuses = append(statuses, nj.Status)
		switch nj.Status {
		case runstate.StatusRunning:
		case runstate.StatusPendingApproval:
			next = decide(nj.Pending)
		default:
			return res, statuses
		}
		data, jerr := json.Marshal(nj)
		if jerr != nil {
			t.Fatal(jerr)
		}
		j = new(Journal)
		if jerr := json.Unmarshal(data, j); jerr != nil {
			t.Fatal(jerr)
		}
		if nj.Status == runstate.StatusRunning && len(j.Calls) == 0 {
			t.Fatalf("advance made no progress: %+v", nj)
		}
		if _, err := os.Stat(filepath.Join(o.StateDir, "runs", "run-driven")); err == nil {
			t.Fatalf("a run in progress wrote its record directory")
		}
	}
	t.Fatalf("run did not end: %v", statuses)
	return nil, nil
}

// TestAdvance drives the approval workflow step by step: every effect
// happens exactly once, each call performs at most one step, and the
// record written at the end is the one a local run that was approved in
// advance writes.
func TestAdvance(t *testing.T) {
	w := workflow(t, approvalWorkflow)
	state := t.TempDir()
	c := counter{}
	models := 0
	o := approvalOpts(t, state, c, &models)
	res, statuses := driveToEnd(t, w, o, Params{"branch": "b1"}, func(p *runstate.Pending) Options {
		return Options{Approve: []string{p.Boundary}}
	})
	if res == nil || res.Status != runstate.StatusCompleted {
		t.Fatalf("driven run ended %v, want completed", res)
	}
	want := []string{"running", "running", "pending_approval", "running", "running", "pending_approval", "running", "completed"}
	if diff := cmp.Diff(want, statuses); diff != "" {
		t.Errorf("statuses (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(counter{"branch": 1, "merge": 1, "release": 1}, c); diff != "" || models != 1 {
		t.Errorf("effects (-want +got):\n%s (model calls %d)", diff, models)
	}
	tr := readFile(t, filepath.Join(state, "runs", "run-driven", runstate.TraceFile))
	if strings.Contains(tr, "tok-secret-value-42") {
		t.Errorf("trace.json holds the secret value")
	}
	if _, err := os.Stat(filepath.Join(state, "runs", "run-driven", runstate.JournalFile)); err == nil {
		t.Errorf("a driven run wrote %s; its engine keeps the journal", runstate.JournalFile)
	}

	local := t.TempDir()
	lo := approvalOpts(t, local, counter{}, new(int))
	lo.Approve = []string{"merge", "release"}
	lo.RunID = "run-driven"
	lres, err := Run(context.Background(), w, Params{"branch": "b1"}, lo)
	if err != nil {
		t.Fatal(err)
	}
	if res.Steps != lres.Steps || res.ToolCalls != lres.ToolCalls || len(res.Receipts) != len(lres.Receipts) {
		t.Errorf("driven run counted %d steps, %d tool calls, %d receipts; local %d, %d, %d",
			res.Steps, res.ToolCalls, len(res.Receipts), lres.Steps, lres.ToolCalls, len(lres.Receipts))
	}
	if diff := cmp.Diff(lres.Output, res.Output); diff != "" {
		t.Errorf("output (-local +driven):\n%s", diff)
	}
}

// TestAdvanceRejectAndChange: a rejected boundary ends the run as
// rejected, and a journal advanced against a changed workflow is refused.
func TestAdvanceRejectAndChange(t *testing.T) {
	w := workflow(t, approvalWorkflow)
	state := t.TempDir()
	c := counter{}
	res, _ := driveToEnd(t, w, approvalOpts(t, state, c, new(int)), Params{"branch": "b1"}, func(p *runstate.Pending) Options {
		return Options{Reject: []string{p.Boundary}}
	})
	if res.Status != runstate.StatusRejected || c["merge"] != 0 {
		t.Errorf("rejected run: status %s, merge ran %d times", res.Status, c["merge"])
	}

	j := NewJournal(w, "run-changed", Params{"branch": "b1"}, nil)
	changed := workflow(t, strings.Replace(approvalWorkflow, `step = "merge"`, `step = "merge2"`, 1))
	if _, _, err := Advance(context.Background(), changed, j, approvalOpts(t, state, c, new(int))); !errors.Is(err, ErrJournal) {
		t.Errorf("Advance of a changed workflow = %v, want ErrJournal", err)
	}
}

// TestTemporalConfig: the [temporal] table's bad values are reported
// together, each naming the file and key.
func TestTemporalConfig(t *testing.T) {
	p := filepath.Join(t.TempDir(), "crystallize.toml")
	if err := os.WriteFile(p, []byte("[temporal]\nstep_timeout = \"soon\"\nbackoff_coefficient = 0.5\nmaximum_attempts = -1\napproval_timeout = \"48h\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := runconfig.LoadConfig(p)
	for _, want := range []string{
		p + `: temporal.step_timeout: "soon" is not a positive duration`,
		p + ": temporal.backoff_coefficient: 0.5, want at least 1",
		p + ": temporal.maximum_attempts: -1",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("LoadConfig = %v, want %q", err, want)
		}
	}
	if err := os.WriteFile(p, []byte("[temporal]\nstep_timeout = \"90s\"\napproval_timeout = \"48h\"\nmaximum_attempts = 3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := runconfig.LoadConfig(p)
	if err != nil {
		t.Fatal(err)
	}
	step, approval, _, _, err := cfg.Temporal.Durations()
	if err != nil || step.String() != "1m30s" || approval.String() != "48h0m0s" {
		t.Errorf("Durations = %v, %v, %v", step, approval, err)
	}
}
