package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/crystallize-dev/crystallize/internal/model"
	"github.com/crystallize-dev/crystallize/internal/runconfig"
	"github.com/crystallize-dev/crystallize/internal/runstate"
	"github.com/crystallize-dev/crystallize/internal/toolexec"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// scriptModel answers each call with the next reply of its script and
// records what it was asked.
type scriptModel struct {
	mu      sync.Mutex
	replies []any
	asked   []model.Request
	cost    float64
}

func (m *scriptModel) Complete(_ context.Context, req model.Request) (*model.Response, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.asked = append(m.asked, req)
	if len(m.replies) == 0 {
		return nil, errors.New("script exhausted")
	}
	r := m.replies[0]
	m.replies = m.replies[1:]
	return &model.Response{Output: r, Model: "script", CostUSD: m.cost}, nil
}

// TestAgentCallsTools: the model asks for a tool, gets its result in the
// transcript, is refused a tool outside its list (told, not called), and
// stops at the sentinel; every call is a recorded step.
func TestAgentCallsTools(t *testing.T) {
	var reads atomic.Int64
	w := workflow(t, `# capabilities: repo.read · secrets: none
def wf(ctx):
    return ctx.agent("work", prompt = "Fix it", tools = ["read"], max_iterations = 5, done_sentinel = "DONE")
`)
	m := &scriptModel{replies: []any{
		map[string]any{"tool": "read", "args": map[string]any{"path": "a.go"}},
		map[string]any{"tool": "delete", "args": map[string]any{}},
		"fixed; DONE",
	}}
	o := opts(t, &runconfig.Config{Grants: runconfig.Grants{Capabilities: []string{"repo.read"}}})
	o.Model = m
	o.Tools = map[string]toolexec.Tool{
		"read":   {Func: func(_ context.Context, a map[string]any) (any, error) { reads.Add(1); return "package a", nil }, Capabilities: []string{"repo.read"}},
		"delete": {Func: func(context.Context, map[string]any) (any, error) { t.Error("delete called"); return nil, nil }},
	}
	res, err := Run(context.Background(), w, nil, o)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	want := map[string]any{"output": "fixed; DONE", "done": true, "stopped": "done", "iterations": json.Number("3"), "tool_calls": json.Number("1"), "failures": json.Number("1")}
	if diff := cmp.Diff(want, res.Output); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
	if reads.Load() != 1 || res.ToolCalls != 1 || res.ModelCalls != 3 {
		t.Errorf("reads %d, tool calls %d, model calls %d; want 1, 1, 3", reads.Load(), res.ToolCalls, res.ModelCalls)
	}
	// The second turn saw the tool's result; the third the refusal.
	tr := m.asked[1].Inputs.(map[string]any)["transcript"].([]any)
	if got := tr[1].(map[string]any)["output"]; got != "package a" {
		t.Errorf("turn 2 transcript tool result = %v", got)
	}
	tr = m.asked[2].Inputs.(map[string]any)["transcript"].([]any)
	if got := fmt.Sprint(tr[3].(map[string]any)["error"]); !strings.Contains(got, "not one of this turn's tools") {
		t.Errorf("turn 3 transcript = %v, want the refusal", got)
	}
}

// TestAgentReadOnlyRefusesWriters: a read-only step that reaches a tool
// declaring side effects is refused, and the refusal ends the run.
func TestAgentReadOnlyRefusesWriters(t *testing.T) {
	w := workflow(t, `# capabilities: repo.write · secrets: none
def wf(ctx):
    return ctx.agent("look", tools = ["write"], max_iterations = 2, read_only = True)
`)
	o := opts(t, &runconfig.Config{Grants: runconfig.Grants{Capabilities: []string{"repo.write"}}})
	o.Model = &scriptModel{replies: []any{map[string]any{"tool": "write", "args": map[string]any{}}}}
	o.Tools = map[string]toolexec.Tool{"write": {
		Func:        func(context.Context, map[string]any) (any, error) { t.Error("write called"); return nil, nil },
		SideEffects: []trace.SideEffect{{Kind: "file_write", Capability: "repo.write"}},
	}}
	res, err := Run(context.Background(), w, nil, o)
	if !errors.Is(err, ErrCapability) || !strings.Contains(err.Error(), "read-only") {
		t.Fatalf("Run = %v, want a read-only refusal", err)
	}
	if len(res.Refusals) != 1 || res.Refusals[0].Tool != "write" {
		t.Errorf("refusals = %+v", res.Refusals)
	}
}

// TestAgentStopsAfterFailures: max_failures failed tool calls in a row
// stop the step, which reports it.
func TestAgentStopsAfterFailures(t *testing.T) {
	w := workflow(t, `def wf(ctx):
    return ctx.agent("work", tools = ["flaky"], max_iterations = 10, done_sentinel = "DONE", max_failures = 2)
`)
	call := map[string]any{"tool": "flaky", "args": map[string]any{}}
	o := opts(t, nil)
	o.Model = &scriptModel{replies: []any{call, call, call}}
	o.Tools = map[string]toolexec.Tool{"flaky": {Func: func(context.Context, map[string]any) (any, error) { return nil, errors.New("boom") }}}
	res, err := Run(context.Background(), w, nil, o)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	out := res.Output.(map[string]any)
	if out["stopped"] != "failures" || out["failures"] != json.Number("2") || out["done"] != false {
		t.Errorf("output = %v, want stopped after 2 failures", out)
	}
}

// TestWorkerPreset: a worker's prompt, tools and model entry apply, and
// an unknown worker is refused before the first step.
func TestWorkerPreset(t *testing.T) {
	w := workflow(t, `def wf(ctx):
    return ctx.agent("review", prompt = "Review the diff", tools = ["read", "write"], max_iterations = 2, worker = "reviewer")
`)
	m := &scriptModel{replies: []any{map[string]any{"tool": "write", "args": map[string]any{}}, "ok"}}
	cfg := &runconfig.Config{
		Models:  map[string]runconfig.ModelConfig{"strong": {Provider: runconfig.ProviderReplay}},
		Workers: map[string]runconfig.WorkerConfig{"reviewer": {Model: "strong", Prompt: "You are a careful reviewer.", Tools: []string{"read"}}},
	}
	o := opts(t, cfg)
	o.Model = m
	o.Tools = map[string]toolexec.Tool{"read": {Func: echo}, "write": {Func: echo}}
	res, err := Run(context.Background(), w, nil, o)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if !strings.HasPrefix(m.asked[0].Prompt, "You are a careful reviewer.\n\nReview the diff") {
		t.Errorf("prompt = %q, want the preset's first", m.asked[0].Prompt)
	}
	if got := m.asked[0].Inputs.(map[string]any)["tools"]; !cmp.Equal(got, []any{"read"}) {
		t.Errorf("tools offered = %v, want the preset's narrowing [read]", got)
	}
	if res.ToolCalls != 0 {
		t.Errorf("write outside the preset's tools was called")
	}

	for _, dry := range []bool{false, true} {
		o = opts(t, &runconfig.Config{Models: map[string]runconfig.ModelConfig{"default": {Provider: runconfig.ProviderReplay}}})
		o.Tools = map[string]toolexec.Tool{"read": {Func: echo}, "write": {Func: echo}}
		o.DryRun = dry
		res, err = Run(context.Background(), w, nil, o)
		if !errors.Is(err, ErrWorker) || !strings.Contains(err.Error(), "[workers.reviewer]") || res != nil {
			t.Fatalf("unknown worker (dry run %v): Run = %v, %v; want ErrWorker naming [workers.reviewer] before the first step", dry, res, err)
		}
	}
}

// slowModel answers after a delay, counting how many calls overlap.
type slowModel struct {
	in, peak atomic.Int64
}

func (m *slowModel) Complete(_ context.Context, req model.Request) (*model.Response, error) {
	n := m.in.Add(1)
	defer m.in.Add(-1)
	for {
		p := m.peak.Load()
		if n <= p || m.peak.CompareAndSwap(p, n) {
			break
		}
	}
	item, _ := req.Inputs.(map[string]any)["item"].(json.Number).Int64()
	time.Sleep(time.Duration(20-5*item) * time.Millisecond) // later items finish first
	return &model.Response{Output: fmt.Sprint("done ", item)}, nil
}

// TestMapConcurrency: ctx.map runs up to max_concurrency calls at once
// and records the answers in item order whatever order they finish in.
func TestMapConcurrency(t *testing.T) {
	w := workflow(t, `def wf(ctx):
    return ctx.map("each", prompt = "Do", items = [0, 1, 2, 3], max_concurrency = 2)
`)
	m := &slowModel{}
	o := opts(t, nil)
	o.Model = m
	res, err := Run(context.Background(), w, nil, o)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if diff := cmp.Diff([]any{"done 0", "done 1", "done 2", "done 3"}, res.Output); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
	if p := m.peak.Load(); p != 2 {
		t.Errorf("peak concurrency = %d, want 2", p)
	}
	tr := readTrace(t, res)
	for i, a := range tr.Actions {
		if got := a.Inputs.(map[string]any)["inputs"].(map[string]any)["item"]; fmt.Sprint(got) != fmt.Sprint(i) {
			t.Errorf("action %d has item %v; records are not in item order", i, got)
		}
	}
}

// TestBudgets: a cost ceiling stops the run after the call that passed
// it; a wall clock ceiling cancels a call in flight; both are ErrBudget.
func TestBudgets(t *testing.T) {
	w := workflow(t, `def wf(ctx):
    ctx.budget(cost_usd = 0.05)
    for i in range(10):
        ctx.model("step")
`)
	m := &scriptModel{replies: []any{"a", "b", "c", "d"}, cost: 0.02}
	o := opts(t, nil)
	o.Model = m
	res, err := Run(context.Background(), w, nil, o)
	if !errors.Is(err, ErrBudget) || res.ModelCalls != 3 || res.Status != runstate.StatusFailed {
		t.Fatalf("cost: Run = %v after %d model calls (status %s), want ErrBudget after 3", err, res.ModelCalls, res.Status)
	}

	w = workflow(t, `def wf(ctx):
    ctx.budget(wall_clock_ms = 50)
    ctx.tool("sleep")
`)
	o = opts(t, nil)
	o.Tools = map[string]toolexec.Tool{"sleep": {Func: func(ctx context.Context, _ map[string]any) (any, error) {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(5 * time.Second):
			return "slept", nil
		}
	}}}
	start := time.Now()
	res, err = Run(context.Background(), w, nil, o)
	if !errors.Is(err, ErrBudget) || !strings.Contains(err.Error(), "wall clock budget of 50 ms") {
		t.Fatalf("wall clock: Run = %v, want ErrBudget", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("the call in flight was not cancelled (%v)", d)
	}
	if res.Status != runstate.StatusFailed {
		t.Errorf("status = %s, want failed", res.Status)
	}
}

// TestTryToolResume: a tolerant failure is journaled, so a run resumed
// after an approval sees the same failure without calling the tool
// again.
func TestTryToolResume(t *testing.T) {
	var calls atomic.Int64
	w := workflow(t, `def wf(ctx):
    r = ctx.try_tool("flaky")
    ctx.approve("go")
    return r
`)
	o := opts(t, nil)
	o.Tools = map[string]toolexec.Tool{"flaky": {Func: func(context.Context, map[string]any) (any, error) {
		calls.Add(1)
		return nil, errors.New("boom")
	}}}
	res, err := Run(context.Background(), w, nil, o)
	if !errors.Is(err, ErrPendingApproval) {
		t.Fatalf("Run = %v, want pending", err)
	}
	j, err := ReadJournal(o.StateDir, res.RunID)
	if err != nil {
		t.Fatal(err)
	}
	o.Approve = []string{"go"}
	res, err = Resume(context.Background(), w, j, o)
	if err != nil {
		t.Fatalf("Resume: %v", err)
	}
	want := map[string]any{"ok": false, "error": "tool flaky: boom"}
	if diff := cmp.Diff(want, res.Output); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
	if calls.Load() != 1 {
		t.Errorf("flaky called %d times, want once", calls.Load())
	}
}

// TestCallCeilings: ctx.budget's call counts stop the run before the call
// that would pass them; a resumed run does not count its replayed calls
// twice; a second ctx.budget is an error.
func TestCallCeilings(t *testing.T) {
	w := workflow(t, `def wf(ctx):
    ctx.budget(tool_calls = 2, model_calls = 1)
    ctx.tool("t")
    ctx.model("m")
    ctx.approve("go")
    ctx.tool("t")
    ctx.tool("t")
`)
	var calls atomic.Int64
	o := opts(t, nil)
	o.Model = &scriptModel{replies: []any{"a"}}
	o.Tools = map[string]toolexec.Tool{"t": {Func: func(context.Context, map[string]any) (any, error) { calls.Add(1); return "ok", nil }}}
	res, err := Run(context.Background(), w, nil, o)
	if !errors.Is(err, ErrPendingApproval) {
		t.Fatalf("Run = %v, want pending", err)
	}
	j, err := ReadJournal(o.StateDir, res.RunID)
	if err != nil {
		t.Fatal(err)
	}
	o.Approve = []string{"go"}
	res, err = Resume(context.Background(), w, j, o)
	// The journal answers the first tool and model call; the second tool
	// call is the run's second, the third passes the ceiling.
	if !errors.Is(err, ErrBudget) || !strings.Contains(err.Error(), "may make 2 tool calls, and has made 2") {
		t.Fatalf("Resume = %v, want ErrBudget at the third tool call", err)
	}
	if calls.Load() != 2 || res.ToolCalls != 2 {
		t.Errorf("tool executed %d times, %d recorded; want 2", calls.Load(), res.ToolCalls)
	}

	w = workflow(t, `def wf(ctx):
    ctx.budget(cost_usd = 1)
    ctx.budget(cost_usd = 2)
`)
	if _, err := Run(context.Background(), w, nil, opts(t, nil)); err == nil || !strings.Contains(err.Error(), "already set") {
		t.Errorf("second ctx.budget: Run = %v, want an error", err)
	}
}

// TestWorkerConfigErrors: a worker preset whose model nothing answers,
// or with a negative max_iterations, is refused with its TOML path.
func TestWorkerConfigErrors(t *testing.T) {
	p := filepath.Join(t.TempDir(), "crystallize.toml")
	os.WriteFile(p, []byte(`[models.strong]
provider = "replay"

[workers.reviewer]
model = "missing"
max_iterations = -1
`), 0o644)
	_, err := runconfig.LoadConfig(p)
	for _, want := range []string{
		p + ": workers.reviewer.model: no [models.missing] and no [models.default] answers this worker",
		p + ": workers.reviewer.max_iterations: negative",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("LoadConfig = %v, want %q", err, want)
		}
	}
}
