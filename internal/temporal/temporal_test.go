package temporal

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/crystallize-dev/crystallize/internal/runconfig"
	"github.com/crystallize-dev/crystallize/internal/runner"
	"github.com/crystallize-dev/crystallize/internal/runstate"
	"github.com/crystallize-dev/crystallize/internal/temporal/temporaltest"
	"github.com/crystallize-dev/crystallize/internal/toolexec"
)

const secretValue = "tok-secret-value-42"

// effects counts the calls of the in-process tool "effect" by step.
type effects struct {
	mu sync.Mutex
	n  map[string]int
}

func (e *effects) tools() map[string]toolexec.Tool {
	return map[string]toolexec.Tool{"effect": {Func: func(_ context.Context, args map[string]any) (any, error) {
		e.mu.Lock()
		defer e.mu.Unlock()
		if e.n == nil {
			e.n = map[string]int{}
		}
		e.n[args["step"].(string)]++
		return args, nil
	}}}
}

func (e *effects) counts() map[string]int {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := map[string]int{}
	for k, v := range e.n {
		out[k] = v
	}
	return out
}

func load(t testing.TB, p string) *runner.Workflow {
	t.Helper()
	w, err := runner.Load(p)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func runOptions(state string, e *effects) runner.Options {
	return runner.Options{
		Config:   &runconfig.Config{Dir: ".", Secrets: runconfig.SecretsConfig{Env: []string{"TOKEN"}}},
		Tools:    e.tools(),
		StateDir: state,
		Getenv: func(k string) string {
			if k == "TOKEN" {
				return secretValue
			}
			return ""
		},
	}
}

// temporalAddress is the address of a server for t.
func temporalAddress(t testing.TB) string { return temporaltest.Address(t) }

func dial(t *testing.T) client.Client {
	t.Helper()
	c, err := Dial(DialOptions{Address: temporalAddress(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// waitPending waits until run id waits at boundary.
func waitPending(t *testing.T, c client.Client, id, boundary string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		d, err := describe(context.Background(), c, id)
		if err == nil {
			if p := pendingOf(d.GetWorkflowExecutionInfo().GetMemo().GetFields()); p != nil && p.Boundary == boundary {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("run %s never waited at %s", id, boundary)
}

func startWorker(t testing.TB, c client.Client, queue string, w *runner.Workflow, run runner.Options) func() {
	t.Helper()
	wk, err := NewWorker(c, WorkerOptions{TaskQueue: queue, Bundles: []*runner.Workflow{w}, Run: run})
	if err != nil {
		t.Fatal(err)
	}
	if err := wk.Start(); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	stop := func() { once.Do(wk.Stop) }
	t.Cleanup(stop)
	return stop
}

// TestRunSurvivesWorkerRestart: a run waits at an approval, its worker
// stops, another worker (with no cache of the run: it replays the
// history) takes it over after the approval and the decision, and every
// step has run exactly once. The record is written as a local run's,
// without the secret, and the history replays against the workflow and
// not against a changed one.
func TestRunSurvivesWorkerRestart(t *testing.T) {
	c := dial(t)
	state := t.TempDir()
	w := load(t, "testdata/approval.star")
	e := &effects{}
	queue := "test-restart-" + runner.NewRunID(time.Now())
	stop1 := startWorker(t, c, queue, w, runOptions(state, e))

	id := runner.NewRunID(time.Now())
	ctx := context.Background()
	if _, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: queue}, WorkflowType,
		RunInput{RunID: id, Workflow: w.Name, WorkflowSHA256: w.SHA256, Params: runner.Params{"branch": "b1"}}); err != nil {
		t.Fatal(err)
	}
	waitPending(t, c, id, "merge")
	if _, err := Decide(ctx, c, id, "release", Decision{Approve: true}); !errors.Is(err, ErrNotWaiting) || !strings.Contains(err.Error(), "waits at merge") {
		t.Errorf("Decide(wrong boundary) = %v, want ErrNotWaiting naming merge", err)
	}
	stop1()
	if diff := cmp.Diff(map[string]int{"branch": 1}, e.counts()); diff != "" {
		t.Fatalf("effects before the approval (-want +got):\n%s", diff)
	}

	startWorker(t, c, queue, w, runOptions(state, e))
	if got, err := Decide(ctx, c, id, "merge", Decision{Approve: true}); err != nil || got != "approved merge" {
		t.Fatalf("Decide(merge) = %q, %v", got, err)
	}
	waitPending(t, c, id, "channel")
	if _, err := Decide(ctx, c, id, "channel", Decision{Option: "nightly"}); err == nil || !strings.Contains(err.Error(), `"nightly" is not an option`) {
		t.Errorf("Decide(channel, nightly) = %v, want an error naming the option", err)
	}
	if _, err := Decide(ctx, c, id, "channel", Decision{Option: "beta"}); err != nil {
		t.Fatal(err)
	}
	out, err := Wait(ctx, c, id)
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != runstate.StatusCompleted || out.Dir != filepath.Join(state, "runs", id) {
		t.Errorf("run ended %+v", out)
	}
	if diff := cmp.Diff([]any{"b1", "b1", "beta", true}, out.Output); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]int{"branch": 1, "merge": 1, "release": 1}, e.counts()); diff != "" {
		t.Errorf("effects (-want +got):\n%s", diff)
	}
	tr, err := os.ReadFile(filepath.Join(out.Dir, runstate.TraceFile))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(out.Dir, runstate.SessionFile)); err != nil {
		t.Error(err)
	}
	if strings.Contains(string(tr), secretValue) {
		t.Errorf("trace.json holds the secret value")
	}
	for _, want := range []string{`"approver": "--approve merge"`, `"decision": "beta"`} {
		if !strings.Contains(string(tr), want) {
			t.Errorf("trace.json lacks %s", want)
		}
	}

	hist := history(t, c, id)
	data, err := protojson.Marshal(hist)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), secretValue) {
		t.Errorf("the history holds the secret value")
	}
	replay(t, hist, w, "")
	if os.Getenv("CRYSTALLIZE_UPDATE") == "1" {
		if err := os.WriteFile("testdata/approval-history.json", data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func history(t *testing.T, c client.Client, id string) *historypb.History {
	t.Helper()
	it := c.GetWorkflowHistory(context.Background(), id, "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	h := &historypb.History{}
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		h.Events = append(h.Events, ev)
	}
	return h
}

// replay replays h through the workflow serving w: it must pass when
// wantErr is "", else fail with an error containing it.
func replay(t *testing.T, h *historypb.History, w *runner.Workflow, wantErr string) {
	t.Helper()
	r, err := NewReplayer([]*runner.Workflow{w})
	if err != nil {
		t.Fatal(err)
	}
	err = r.ReplayWorkflowHistory(logger(nil), h)
	switch {
	case wantErr == "" && err != nil:
		t.Errorf("replay: %v", err)
	case wantErr != "" && (err == nil || !strings.Contains(err.Error(), wantErr)):
		t.Errorf("replay = %v, want an error containing %q", err, wantErr)
	}
}

// TestReplay replays the recorded history of a run of
// testdata/approval.star (recorded by TestRunSurvivesWorkerRestart with
// CRYSTALLIZE_UPDATE=1): it replays against the workflow, and a replay
// against a changed workflow fails saying so. No server is needed.
func TestReplay(t *testing.T) {
	data, err := os.ReadFile("testdata/approval-history.json")
	if err != nil {
		t.Fatal(err)
	}
	h := &historypb.History{}
	if err := protojson.Unmarshal(data, h); err != nil {
		t.Fatal(err)
	}
	w := load(t, "testdata/approval.star")
	replay(t, h, w, "")

	src, err := os.ReadFile("testdata/approval.star")
	if err != nil {
		t.Fatal(err)
	}
	changed := filepath.Join(t.TempDir(), "approval.star")
	if err := os.WriteFile(changed, []byte(strings.Replace(string(src), `step = "merge"`, `step = "merged"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	replay(t, h, load(t, changed), fmt.Sprintf("workflow approval changed: the run pinned sha256 %s", w.SHA256))
}

// TestRefusals: a run pinned to a workflow the worker does not hold is
// refused on its first task, and a bundle that is not ready is refused by
// Start before the server sees it.
func TestRefusals(t *testing.T) {
	c := dial(t)
	w := load(t, "testdata/approval.star")
	queue := "test-refuse-" + runner.NewRunID(time.Now())
	startWorker(t, c, queue, w, runOptions(t.TempDir(), &effects{}))
	id := runner.NewRunID(time.Now())
	in := RunInput{RunID: id, Workflow: w.Name, WorkflowSHA256: strings.Repeat("0", 64), Params: runner.Params{"branch": "b1"}}
	if _, err := c.ExecuteWorkflow(context.Background(), client.StartWorkflowOptions{ID: id, TaskQueue: queue}, WorkflowType, in); err != nil {
		t.Fatal(err)
	}
	if _, err := Wait(context.Background(), c, id); err == nil || !strings.Contains(err.Error(), "workflow approval changed") {
		t.Errorf("run of a changed workflow = %v, want a refusal saying it changed", err)
	}
	if _, err := Start(context.Background(), c, w, nil, StartOptions{TaskQueue: queue}); err == nil || !strings.Contains(err.Error(), "not a bundle") {
		t.Errorf("Start(.star) = %v, want a refusal", err)
	}
}
