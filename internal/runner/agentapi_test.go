package runner

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/crystallize-dev/crystallize/internal/runstate"
)

const decisionWorkflow = `def wf(ctx, service):
    ctx.tool("effect", step = "prepare", value = service)
    ctx.notify("prepared " + service, complete = False)
    auth = ctx.request_decision("Which auth strategy?", ["JWT", "Session", "OAuth"], name = "strategy")
    ctx.tool("effect", step = "implement", value = auth)
    store = ctx.request_decision("Where do sessions live?", ["memory", "redis"])
    ctx.notify("Implemented " + auth + " on " + store)
    return [auth, store]
`

// inbox collects the messages a run hands to Options.Inbox.
type inbox []runstate.Message

func (in *inbox) add(m runstate.Message) { *in = append(*in, m) }

func TestRequestDecisionResume(t *testing.T) {
	state := t.TempDir()
	w := workflow(t, decisionWorkflow)
	c := counter{}
	var got inbox
	o := opts(t, nil)
	o.StateDir, o.Tools, o.Inbox = state, c.tools(), got.add
	ctx := context.Background()

	res, err := Run(ctx, w, Params{"service": "api"}, o)
	if !errors.Is(err, ErrPendingApproval) || res.Status != runstate.StatusPendingApproval {
		t.Fatalf("Run = %v (status %s), want a pending decision", err, res.Status)
	}
	want := &runstate.Pending{Step: 2, Boundary: "strategy", Prompt: "Which auth strategy?", Kind: runstate.PendingDecision, Options: []string{"JWT", "Session", "OAuth"}}
	if diff := cmp.Diff(want, res.Pending); diff != "" {
		t.Errorf("pending (-want +got):\n%s", diff)
	}
	if !strings.Contains(err.Error(), `decision pending: strategy (options "JWT", "Session", "OAuth")`) {
		t.Errorf("error = %q", err)
	}
	s := readFile(t, filepath.Join(res.Dir, runstate.SessionFile))
	for _, line := range []string{"> [!info]", "> prepared api", "## Step 2 · decide strategy (pending)", "> [!decision_needed] Which auth strategy?", "> Options: `JWT`, `Session`, `OAuth`"} {
		if !strings.Contains(s, "\n"+line+"\n") {
			t.Errorf("session.md lacks line %q:\n%s", line, s)
		}
	}

	// A choice the decision does not offer fails the resume before any
	// step after the journal runs.
	j, err := ReadJournal(state, "run-test")
	if err != nil {
		t.Fatal(err)
	}
	bad := o
	bad.Decide = "Kerberos"
	if _, err := Resume(ctx, w, j, bad); !errors.Is(err, ErrDecision) {
		t.Errorf("Resume(--decide Kerberos) = %v, want ErrDecision", err)
	}
	if c["implement"] != 0 {
		t.Errorf("a refused choice ran the next step")
	}

	o.Decide = "OAuth"
	res, err = Resume(ctx, w, j, o)
	if !errors.Is(err, ErrPendingApproval) || res.Pending == nil || res.Pending.Step != 4 || res.Pending.Boundary != "where_do_sessions_live" {
		t.Fatalf("first Resume = %v, pending %+v; want the second decision at step 4, named after its question", err, res.Pending)
	}
	j, err = ReadJournal(state, "run-test")
	if err != nil {
		t.Fatal(err)
	}
	o.Decide = "redis"
	res, err = Resume(ctx, w, j, o)
	if err != nil || res.Status != runstate.StatusCompleted {
		t.Fatalf("second Resume = %v (status %s)", err, res.Status)
	}
	if diff := cmp.Diff([]any{"OAuth", "redis"}, res.Output); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(counter{"prepare": 1, "implement": 1}, c); diff != "" {
		t.Errorf("effects (-want +got):\n%s", diff)
	}
	if res.Approvals != 2 {
		t.Errorf("approvals = %d, want the 2 decisions", res.Approvals)
	}
	s = readFile(t, filepath.Join(res.Dir, runstate.SessionFile))
	for _, line := range []string{"> Decided `strategy`: `OAuth` (--decide)", "> Decided `where_do_sessions_live`: `redis` (--decide)", "> [!task_complete]", "> Implemented OAuth on redis"} {
		if !strings.Contains(s, "\n"+line+"\n") {
			t.Errorf("session.md lacks line %q:\n%s", line, s)
		}
	}
	if n := strings.Count(s, "> prepared api"); n != 1 {
		t.Errorf("the notification before the first decision is in session.md %d times, want 1", n)
	}

	// Each message once: the resumes do not repeat what was written
	// before the run was suspended.
	wantInbox := inbox{
		{Type: runstate.MessageInfo, Step: 1, Text: "prepared api"},
		{Type: runstate.MessageDecisionNeeded, Step: 2, Boundary: "strategy", Text: "Which auth strategy?", Options: []string{"JWT", "Session", "OAuth"}},
		{Type: runstate.MessageDecisionNeeded, Step: 4, Boundary: "where_do_sessions_live", Text: "Where do sessions live?", Options: []string{"memory", "redis"}},
		{Type: runstate.MessageTaskComplete, Step: 4, Text: "Implemented OAuth on redis"},
	}
	if diff := cmp.Diff(wantInbox, got); diff != "" {
		t.Errorf("inbox (-want +got):\n%s", diff)
	}
}

func TestRequestDecisionDryRun(t *testing.T) {
	w := workflow(t, decisionWorkflow)
	o := opts(t, nil)
	o.Tools, o.DryRun = counter{}.tools(), true
	res, err := Run(context.Background(), w, Params{"service": "api"}, o)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]any{"JWT", "memory"}, res.Output); diff != "" {
		t.Errorf("a dry run takes the first options (-want +got):\n%s", diff)
	}
}

func TestAgentAPIBadArguments(t *testing.T) {
	tests := []struct{ call, want string }{
		{`ctx.request_decision("Pick?", ["only"])`, "1 options, want at least 2"},
		{`ctx.request_decision("Pick?", ["a", 1])`, "options[1] is a int, want a string"},
		{`ctx.request_decision("Pick?", ["a", " "])`, "options[1] is empty"},
		{`ctx.request_decision("Pick?", ["a", "a"])`, `options[1] "a" repeats an earlier option`},
		{`ctx.request_decision("", ["a", "b"])`, "empty question"},
		{`ctx.request_decision("Pick?", "a,b")`, "for parameter options: got string, want list"},
		{`ctx.notify("  ")`, "notify: empty text"},
		{`ctx.request_approval("")`, "request_approval: empty text"},
	}
	for _, tt := range tests {
		w := workflow(t, "def wf(ctx):\n    "+tt.call+"\n")
		_, err := Run(context.Background(), w, nil, opts(t, nil))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want it to say %q", tt.call, err, tt.want)
		}
	}
}

func TestRequestApproval(t *testing.T) {
	src := `def wf(ctx):
    ctx.request_approval("About to delete 47 files")
    ctx.tool("effect", step = "delete")
`
	w := workflow(t, src)
	ctx := context.Background()
	for _, tt := range []struct {
		name   string
		decide func(*Options)
		status string
		calls  int
	}{
		{"approved", func(o *Options) { o.Approve = []string{"about_to_delete_47_files"} }, runstate.StatusCompleted, 1},
		{"rejected", func(o *Options) { o.Reject = []string{"about_to_delete_47_files"} }, runstate.StatusRejected, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := counter{}
			var got inbox
			o := opts(t, nil)
			o.Tools, o.Inbox = c.tools(), got.add
			res, err := Run(ctx, w, nil, o)
			if !errors.Is(err, ErrPendingApproval) {
				t.Fatalf("Run = %v, want pending", err)
			}
			if p := res.Pending; p.Kind != "" || p.Boundary != "about_to_delete_47_files" || p.Prompt != "About to delete 47 files" {
				t.Errorf("pending = %+v, want an approval of about_to_delete_47_files", p)
			}
			s := readFile(t, filepath.Join(res.Dir, runstate.SessionFile))
			if !strings.Contains(s, "\n> [!approval_required] About to delete 47 files\n") || strings.Contains(s, "> [!decision]\n> Waiting") {
				t.Errorf("session.md does not ask with [!approval_required]:\n%s", s)
			}
			if diff := cmp.Diff(inbox{{Type: runstate.MessageApprovalRequired, Step: 1, Boundary: "about_to_delete_47_files", Text: "About to delete 47 files"}}, got); diff != "" {
				t.Errorf("inbox (-want +got):\n%s", diff)
			}
			j, err := ReadJournal(o.StateDir, "run-test")
			if err != nil {
				t.Fatal(err)
			}
			tt.decide(&o)
			res, _ = Resume(ctx, w, j, o)
			if res.Status != tt.status || c["delete"] != tt.calls {
				t.Errorf("Resume: status %s, deletes %d; want %s, %d", res.Status, c["delete"], tt.status, tt.calls)
			}
			// The same decision record as ctx.approve.
			tr := readFile(t, filepath.Join(res.Dir, runstate.TraceFile))
			if !strings.Contains(tr, `"kind": "human_approval"`) || !strings.Contains(tr, `"boundary": "about_to_delete_47_files"`) {
				t.Errorf("trace lacks the approval action:\n%s", tr)
			}
		})
	}
}

func TestBoundarySlug(t *testing.T) {
	for in, want := range map[string]string{
		"About to delete 47 files": "about_to_delete_47_files",
		"  Which auth strategy?  ": "which_auth_strategy",
		"???":                      "decision",
		strings.Repeat("ab ", 30):  "ab_ab_ab_ab_ab_ab_ab_ab_ab_ab_ab_ab_ab_a", // 40 characters
	} {
		if got := boundarySlug(in); got != want {
			t.Errorf("boundarySlug(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestOnStart: OnStart is called once with the run id when the run is
// admitted, and not for a run refused before its first step.
func TestOnStart(t *testing.T) {
	w := workflow(t, "def wf(ctx, x):\n    ctx.log(x)\n")
	var started []string
	o := opts(t, nil)
	o.OnStart = func(id string) { started = append(started, id) }
	if _, err := Run(context.Background(), w, Params{"y": "1"}, o); err == nil {
		t.Fatal("Run with an unknown parameter = nil error")
	}
	if len(started) != 0 {
		t.Errorf("a refused run called OnStart with %v", started)
	}
	if _, err := Run(context.Background(), w, Params{"x": "1"}, o); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"run-test"}, started); diff != "" {
		t.Errorf("OnStart calls (-want +got):\n%s", diff)
	}
}

// TestApprovalActions: ctx.approve and ctx.request_decision record their
// decisions as human_approval actions of the same shape, the decision's
// options added to its metadata.
func TestApprovalActions(t *testing.T) {
	w := workflow(t, `def wf(ctx):
    ctx.approve("deploy", prompt = "Ship it?")
    return ctx.request_decision("Which region?", ["eu", "us"], name = "region")
`)
	o := opts(t, nil)
	o.Approve, o.DryRun = []string{"deploy"}, true
	res, err := Run(context.Background(), w, nil, o)
	if err != nil {
		t.Fatal(err)
	}
	var tr struct {
		Actions []map[string]any `json:"actions"`
	}
	if err := json.Unmarshal([]byte(readFile(t, filepath.Join(res.Dir, runstate.TraceFile))), &tr); err != nil {
		t.Fatal(err)
	}
	if len(tr.Actions) != 2 {
		t.Fatalf("%d actions, want 2", len(tr.Actions))
	}
	for _, a := range tr.Actions {
		delete(a, "timestamp")
	}
	want := []map[string]any{{
		"id": "run-test-a01", "kind": "human_approval", "name": "deploy", "duration_ms": 0.0,
		"approval": map[string]any{"prompt": "Ship it?", "approver": "--approve deploy", "required": true, "boundary": "deploy"},
		"output":   map[string]any{"approved": true},
		"metadata": map[string]any{"step": 1.0, "status": "ok"},
	}, {
		"id": "run-test-a02", "kind": "human_approval", "name": "region", "duration_ms": 0.0,
		"approval": map[string]any{"prompt": "Which region?", "approver": "dry run", "required": true, "boundary": "region"},
		"output":   map[string]any{"decision": "eu"},
		"metadata": map[string]any{"step": 2.0, "status": "ok", "options": []any{"eu", "us"}},
	}}
	if diff := cmp.Diff(want, tr.Actions); diff != "" {
		t.Errorf("approval actions (-want +got):\n%s", diff)
	}
}
