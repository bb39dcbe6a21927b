package runner

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/crystallize-dev/crystallize/internal/model"
	"github.com/crystallize-dev/crystallize/internal/runconfig"
	"github.com/crystallize-dev/crystallize/internal/runstate"
	"github.com/crystallize-dev/crystallize/internal/statekey"
	"github.com/crystallize-dev/crystallize/internal/toolexec"
)

// approvalWorkflow has side effects before, between and after two
// approval boundaries, a model step and a secret whose value flows
// through a journaled output.
const approvalWorkflow = `# capabilities: none · secrets: TOKEN
def wf(ctx, branch):
    tok = ctx.secret("TOKEN")
    a = ctx.tool("effect", step = "branch", value = branch, token = tok)
    ctx.log("branch made: " + a["value"])
    m = ctx.model("describe", inputs = {"branch": branch})
    ctx.approve("merge", prompt = "Merge " + branch + "?")
    b = ctx.tool("effect", step = "merge", value = a["token"])
    ctx.approve("release", prompt = "Release?")
    c = ctx.tool("effect", step = "release", value = m)
    return [a["value"], b["value"] == tok, c["value"]]
`

type counter map[string]int

func (c counter) tools() map[string]toolexec.Tool {
	return map[string]toolexec.Tool{"effect": {Func: func(_ context.Context, args map[string]any) (any, error) {
		c[args["step"].(string)]++
		return args, nil
	}}}
}

type fixedModel struct{ calls *int }

func (m fixedModel) Complete(context.Context, model.Request) (*model.Response, error) {
	*m.calls++
	return &model.Response{Output: "desc", Model: "fixed", InputTokens: 3, OutputTokens: 2}, nil
}

func approvalOpts(t *testing.T, state string, c counter, modelCalls *int) Options {
	o := opts(t, &runconfig.Config{Secrets: runconfig.SecretsConfig{Env: []string{"TOKEN"}}})
	o.StateDir = state
	o.Tools = c.tools()
	o.Model = fixedModel{modelCalls}
	o.Getenv = func(k string) string {
		if k == "TOKEN" {
			return "tok-secret-value-42"
		}
		return ""
	}
	return o
}

func TestPendingApprovalResume(t *testing.T) {
	state := t.TempDir()
	w := workflow(t, approvalWorkflow)
	c := counter{}
	models := 0
	res, err := Run(context.Background(), w, Params{"branch": "b1"}, approvalOpts(t, state, c, &models))
	if !errors.Is(err, ErrPendingApproval) || res.Status != runstate.StatusPendingApproval {
		t.Fatalf("Run = %v (status %s), want a pending approval", err, res.Status)
	}
	if diff := cmp.Diff(&runstate.Pending{Step: 3, Boundary: "merge", Prompt: "Merge b1?"}, res.Pending); diff != "" {
		t.Errorf("pending (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(counter{"branch": 1}, c); diff != "" || models != 1 {
		t.Errorf("effects before the boundary (-want +got):\n%s (model calls %d)", diff, models)
	}
	s := readFile(t, filepath.Join(res.Dir, runstate.SessionFile))
	for _, want := range []string{"status: pending_approval", "resume_point: step-3", "## Step 3 · approve merge (pending)", "crystallize resume run-test --state-dir " + state + " --approve merge"} {
		if !strings.Contains(s, want) {
			t.Errorf("session.md lacks %q:\n%s", want, s)
		}
	}

	// Resuming without a decision leaves it pending and runs nothing.
	j, err := ReadJournal(state, "run-test")
	if err != nil {
		t.Fatal(err)
	}
	if _, err = Resume(context.Background(), w, j, approvalOpts(t, state, c, &models)); !errors.Is(err, ErrPendingApproval) || len(c) != 1 || c["branch"] != 1 || models != 1 {
		t.Fatalf("Resume without a decision = %v, effects %v, models %d", err, c, models)
	}

	// Approving merge runs the merge step once and stops at release.
	j, _ = ReadJournal(state, "run-test")
	o := approvalOpts(t, state, c, &models)
	o.Approve = []string{"merge"}
	res, err = Resume(context.Background(), w, j, o)
	if !errors.Is(err, ErrPendingApproval) || res.Pending.Boundary != "release" {
		t.Fatalf("Resume --approve merge = %v, pending %+v", err, res.Pending)
	}
	if diff := cmp.Diff(counter{"branch": 1, "merge": 1}, c); diff != "" || models != 1 {
		t.Errorf("effects after approving merge (-want +got):\n%s (model calls %d)", diff, models)
	}

	// Approving release completes the run; no step ran twice.
	j, _ = ReadJournal(state, "run-test")
	o = approvalOpts(t, state, c, &models)
	o.Approve = []string{"release"}
	res, err = Resume(context.Background(), w, j, o)
	if err != nil {
		t.Fatalf("Resume --approve release = %v", err)
	}
	if diff := cmp.Diff(counter{"branch": 1, "merge": 1, "release": 1}, c); diff != "" || models != 1 {
		t.Errorf("effects (-want +got):\n%s (model calls %d)", diff, models)
	}
	// The secret-bearing output was journaled redacted and restored.
	if diff := cmp.Diff([]any{"b1", true, "desc"}, res.Output); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
	if res.Steps != 6 || res.ToolCalls != 3 || res.ModelCalls != 1 || res.Approvals != 2 || len(res.Receipts) != 4 || res.TokensUsed != 5 {
		t.Errorf("counts: steps %d tools %d models %d approvals %d receipts %d tokens %d", res.Steps, res.ToolCalls, res.ModelCalls, res.Approvals, len(res.Receipts), res.TokensUsed)
	}
	tr := readTrace(t, res)
	var names []string
	for _, a := range tr.Actions {
		names = append(names, string(a.Kind)+" "+a.Name)
	}
	want := []string{"tool_call effect", "model_call describe", "human_approval merge", "tool_call effect", "human_approval release", "tool_call effect"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("trace actions (-want +got):\n%s", diff)
	}
	s = readFile(t, filepath.Join(res.Dir, runstate.SessionFile))
	for _, want := range []string{"status: completed", "> [!user]", "> Approved boundary `release` (--approve release)"} {
		if !strings.Contains(s, want) {
			t.Errorf("session.md lacks %q:\n%s", want, s)
		}
	}
	if n := strings.Count(s, "branch made: b1"); n != 1 {
		t.Errorf("session.md logs the replayed line %d times, want 1", n)
	}
	noSecret(t, state, "tok-secret-value-42")

	// A completed run cannot be resumed again.
	j, _ = ReadJournal(state, "run-test")
	if _, err := Resume(context.Background(), w, j, approvalOpts(t, state, c, &models)); !errors.Is(err, ErrJournal) || !strings.Contains(err.Error(), "is completed, not pending_approval") {
		t.Errorf("second Resume = %v, want ErrJournal", err)
	}
}

func TestResumeReject(t *testing.T) {
	state := t.TempDir()
	w := workflow(t, approvalWorkflow)
	c := counter{}
	models := 0
	if _, err := Run(context.Background(), w, Params{"branch": "b1"}, approvalOpts(t, state, c, &models)); !errors.Is(err, ErrPendingApproval) {
		t.Fatal(err)
	}
	j, _ := ReadJournal(state, "run-test")
	o := approvalOpts(t, state, c, &models)
	o.Reject = []string{"merge"}
	res, err := Resume(context.Background(), w, j, o)
	if !errors.Is(err, ErrRejected) || res.Status != runstate.StatusRejected {
		t.Fatalf("Resume --reject = %v (status %s), want a rejected run", err, res.Status)
	}
	if diff := cmp.Diff(counter{"branch": 1}, c); diff != "" {
		t.Errorf("effects (-want +got):\n%s", diff)
	}
	s := readFile(t, filepath.Join(res.Dir, runstate.SessionFile))
	if !strings.Contains(s, "status: rejected") || !strings.Contains(s, "> Rejected boundary `merge` (--reject merge)") {
		t.Errorf("session.md:\n%s", s)
	}
}

func TestResumeChangedWorkflow(t *testing.T) {
	state := t.TempDir()
	c := counter{}
	models := 0
	w := workflow(t, approvalWorkflow)
	Run(context.Background(), w, Params{"branch": "b1"}, approvalOpts(t, state, c, &models))
	j, err := ReadJournal(state, "run-test")
	if err != nil {
		t.Fatal(err)
	}
	w2 := workflow(t, strings.Replace(approvalWorkflow, `step = "branch"`, `step = "other"`, 1))
	if _, err := Resume(context.Background(), w2, j, approvalOpts(t, state, c, &models)); !errors.Is(err, ErrJournal) || !strings.Contains(err.Error(), "the workflow changed") {
		t.Errorf("Resume(changed workflow) = %v", err)
	}
	// Same bytes, but the journal no longer matches the call (as if the
	// inputs changed): refused before anything runs.
	j.Calls[0].ArgumentsSHA256 = "sha256:0"
	o := approvalOpts(t, state, c, &models)
	o.Approve = []string{"merge"}
	if _, err := Resume(context.Background(), w, j, o); !errors.Is(err, ErrJournal) || !strings.Contains(err.Error(), "step 1 is tool effect") {
		t.Errorf("Resume(diverging journal) = %v", err)
	}
	if c["branch"] != 1 || c["merge"] != 0 {
		t.Errorf("effects = %v", c)
	}
	if _, err := ReadJournal(state, "../x"); !errors.Is(err, ErrJournal) {
		t.Errorf("ReadJournal(../x) = %v", err)
	}
	if _, err := ReadJournal(state, "nope"); !errors.Is(err, ErrJournal) || !strings.Contains(err.Error(), "no run nope") {
		t.Errorf("ReadJournal(nope) = %v", err)
	}
}

type decide bool

func (a decide) Ask(context.Context, string, string) (bool, error) { return bool(a), nil }

func TestPrompter(t *testing.T) {
	w := workflow(t, "def wf(ctx):\n    ctx.approve(\"merge\", prompt = \"Merge?\")\n    return 1\n")
	o := opts(t, nil)
	o.Prompter = decide(true)
	res, err := Run(context.Background(), w, nil, o)
	if err != nil || res.Approvals != 1 {
		t.Fatalf("Run(yes) = %v", err)
	}
	if s := readFile(t, filepath.Join(res.Dir, runstate.SessionFile)); !strings.Contains(s, "> [!user]\n> Approved boundary `merge` (interactive)") {
		t.Errorf("session.md:\n%s", s)
	}
	if _, err := os.Stat(filepath.Join(res.Dir, runstate.JournalFile)); err == nil {
		t.Error("a run that was never suspended wrote a journal")
	}
	o = opts(t, nil)
	o.Prompter = decide(false)
	if res, err := Run(context.Background(), w, nil, o); !errors.Is(err, ErrRejected) || res.Status != runstate.StatusRejected {
		t.Fatalf("Run(no) = %v", err)
	}
}

// TestJournalForged: a journal the run did not write, or one changed after
// it was written, is not resumed; its allow_unapproved, max_steps and step
// outputs are never read.
func TestJournalForged(t *testing.T) {
	suspend := func(t *testing.T) (state, dir string) {
		state = t.TempDir()
		models := 0
		res, err := Run(context.Background(), workflow(t, approvalWorkflow), Params{"branch": "b1"}, approvalOpts(t, state, counter{}, &models))
		if !errors.Is(err, ErrPendingApproval) {
			t.Fatalf("Run = %v, want a pending approval", err)
		}
		st, err := os.Stat(filepath.Join(state, StateKeyFile))
		if err != nil || st.Mode().Perm() != 0o600 {
			t.Fatalf("state key: %v, mode %v; want a 0600 file", err, st)
		}
		return state, res.Dir
	}
	tests := []struct {
		name   string
		forge  func(t *testing.T, state, dir string)
		runID  string
		reason string
	}{
		{"options changed", func(t *testing.T, _, dir string) {
			edit(t, filepath.Join(dir, runstate.JournalFile), `"allow_unapproved": false`, `"allow_unapproved": true`)
		}, "run-test", "journal_unauthenticated"},
		{"output changed", func(t *testing.T, _, dir string) {
			edit(t, filepath.Join(dir, runstate.JournalFile), `"value": "b1"`, `"value": "main"`)
		}, "run-test", "journal_unauthenticated"},
		{"mac removed", func(t *testing.T, _, dir string) {
			if err := os.Remove(filepath.Join(dir, journalMACFile)); err != nil {
				t.Fatal(err)
			}
		}, "run-test", "journal_unauthenticated"},
		{"key replaced", func(t *testing.T, state, _ string) {
			os.Remove(filepath.Join(state, StateKeyFile))
			if _, err := stateKey(state, true); err != nil {
				t.Fatal(err)
			}
		}, "run-test", "journal_unauthenticated"},
		{"key removed", func(t *testing.T, state, _ string) {
			os.Remove(filepath.Join(state, StateKeyFile))
		}, "run-test", "journal_unauthenticated"},
		{"key readable by others", func(t *testing.T, state, _ string) {
			os.Chmod(filepath.Join(state, StateKeyFile), 0o644)
		}, "run-test", "unusable state key"},
		{"moved to another run", func(t *testing.T, state, dir string) {
			other := filepath.Join(state, "runs", "run-other")
			if err := os.Rename(dir, other); err != nil {
				t.Fatal(err)
			}
		}, "run-other", "journal_unauthenticated"},
		{"duplicate key", func(t *testing.T, state, dir string) {
			// Re-MACed with the real key: whoever holds the key is
			// trusted, but a duplicate member is still refused.
			p := filepath.Join(dir, runstate.JournalFile)
			edit(t, p, `"allow_unapproved": false`, `"allow_unapproved": false, "allow_unapproved": true`)
			key, _ := stateKey(state, false)
			os.WriteFile(filepath.Join(dir, journalMACFile), []byte(statekey.MAC(key, "journal", "run-test", []byte(readFile(t, p)))), 0o600)
		}, "run-test", `duplicate key "allow_unapproved"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			state, dir := suspend(t)
			if _, err := ReadJournal(state, "run-test"); err != nil {
				t.Fatalf("ReadJournal before the forgery: %v", err)
			}
			tt.forge(t, state, dir)
			_, err := ReadJournal(state, tt.runID)
			if !errors.Is(err, ErrJournal) || !strings.Contains(err.Error(), tt.reason) {
				t.Errorf("ReadJournal = %v, want %v with %q", err, ErrJournal, tt.reason)
			}
		})
	}
}

func edit(t *testing.T, p, old, new string) {
	t.Helper()
	s := readFile(t, p)
	if !strings.Contains(s, old) {
		t.Fatalf("%s lacks %q:\n%s", p, old, s)
	}
	if err := os.WriteFile(p, []byte(strings.Replace(s, old, new, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestReadParams: a parameters file is one JSON object, read only from a
// regular file, and a parameter named twice is refused with its line.
func TestReadParams(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct {
		content, want string
	}{
		{`{"branch": "main", "n": 2}`, ""},
		{"{\"branch\": \"main\",\n \"branch\": \"--force\"}", `p.json:2: $.branch: duplicate key "branch"`},
		{`["main"]`, "not a JSON object of parameters"},
		{`{"a": 1} {"b": 2}`, "data after the JSON object"},
	} {
		p := filepath.Join(dir, "p.json")
		os.WriteFile(p, []byte(tt.content), 0o644)
		got, err := ReadParams(p)
		switch {
		case tt.want == "" && (err != nil || got["branch"] != "main"):
			t.Errorf("ReadParams(%s) = %v, %v", tt.content, got, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("ReadParams(%s) = %v, want %q", tt.content, err, tt.want)
		}
	}
	if _, err := ReadParams(dir); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("ReadParams(dir) = %v", err)
	}
}

// TestResumeLogsOnce checks that a line logged between the last step
// before an approval and the approval itself is written once, not again
// when the resumed run replays up to the boundary.
func TestResumeLogsOnce(t *testing.T) {
	state := t.TempDir()
	w := workflow(t, `# capabilities: none · secrets: none
def wf(ctx, branch):
    ctx.tool("effect", step = "branch", value = branch)
    ctx.log("asking to merge " + branch)
    ctx.approve("merge")
    ctx.tool("effect", step = "merge", value = branch)
`)
	c := counter{}
	models := 0
	if _, err := Run(context.Background(), w, Params{"branch": "b1"}, approvalOpts(t, state, c, &models)); !errors.Is(err, ErrPendingApproval) {
		t.Fatal(err)
	}
	j, _ := ReadJournal(state, "run-test")
	o := approvalOpts(t, state, c, &models)
	o.Approve = []string{"merge"}
	res, err := Resume(context.Background(), w, j, o)
	if err != nil {
		t.Fatalf("Resume: %v", err)
	}
	if n := strings.Count(readFile(t, filepath.Join(res.Dir, runstate.SessionFile)), "asking to merge b1"); n != 1 {
		t.Errorf("session.md logs the line before the boundary %d times, want 1", n)
	}
}

// TestJournalCrash: a run killed while writing its journal leaves one
// that resume refuses with a clear error, never one it half trusts; a
// suspended run's journal is on disk before Run returns, and a run that
// completes syncs nothing.
func TestJournalCrash(t *testing.T) {
	syncs := 0
	sync := syncFile
	syncFile = func(f *os.File) error { syncs++; return sync(f) }
	t.Cleanup(func() { syncFile = sync })

	state := t.TempDir()
	models := 0
	res, err := Run(context.Background(), workflow(t, approvalWorkflow), Params{"branch": "b1"}, approvalOpts(t, state, counter{}, &models))
	if !errors.Is(err, ErrPendingApproval) {
		t.Fatalf("Run = %v, want a pending approval", err)
	}
	// The new state key and its directory, the journal and its MAC and
	// the directory holding them.
	if syncs != 6 {
		t.Errorf("suspending synced %d times, want 6", syncs)
	}
	p := filepath.Join(res.Dir, runstate.JournalFile)
	data := readFile(t, p)
	if _, err := ReadJournal(state, "run-test"); err != nil {
		t.Fatalf("ReadJournal of the whole journal: %v", err)
	}
	// Killed part way through writing the journal: every prefix is
	// refused (the MAC is of the whole).
	for _, n := range []int{0, 1, len(data) / 3, len(data) / 2, len(data) - 2, len(data) - 1} {
		if err := os.WriteFile(p, []byte(data[:n]), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := ReadJournal(state, "run-test")
		if !errors.Is(err, ErrJournal) || !strings.Contains(err.Error(), "journal_unauthenticated") {
			t.Errorf("journal cut at %d of %d bytes: ReadJournal = %v, want %v journal_unauthenticated", n, len(data), err, ErrJournal)
		}
	}
	// Killed between the journal and its MAC.
	if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(res.Dir, journalMACFile)); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadJournal(state, "run-test"); !errors.Is(err, ErrJournal) || !strings.Contains(err.Error(), "has no "+journalMACFile) {
		t.Errorf("journal without its MAC: ReadJournal = %v, want %v saying it has no %s", err, ErrJournal, journalMACFile)
	}
	// No temporary file is left behind.
	entries, err := os.ReadDir(res.Dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("the run directory holds %s", e.Name())
		}
	}

	syncs = 0
	w := workflow(t, "def wf(ctx):\n    ctx.tool(\"effect\", step = \"x\")\n")
	o := opts(t, nil)
	o.Tools = counter{}.tools()
	if _, err := Run(context.Background(), w, nil, o); err != nil {
		t.Fatal(err)
	}
	if syncs != 0 {
		t.Errorf("a completed run synced %d times, want 0", syncs)
	}
}

// TestReadJournalWrongShape: an authenticated journal that does not decode
// is refused as a run that cannot be resumed, naming the file.
func TestReadJournalWrongShape(t *testing.T) {
	state := t.TempDir()
	key, err := stateKey(state, true)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(state, "runs", "r1")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	data := []byte(`{"run_id": 5}`)
	if err := writeDurable(filepath.Join(dir, runstate.JournalFile), data); err != nil {
		t.Fatal(err)
	}
	if err := writeDurable(filepath.Join(dir, journalMACFile), []byte(statekey.MAC(key, "journal", "r1", data)+"\n")); err != nil {
		t.Fatal(err)
	}
	_, err = ReadJournal(state, "r1")
	if !errors.Is(err, ErrJournal) || !strings.Contains(err.Error(), filepath.Join(dir, runstate.JournalFile)) {
		t.Errorf("ReadJournal = %v, want ErrJournal naming %s", err, runstate.JournalFile)
	}

	// An authentic journal whose member names only fold onto the
	// journal's is refused too: encoding/json would read "Target" as
	// the target a reader of "target" did not see.
	data = []byte(`{"run_id": "r1", "target": "a", "Target": "b"}`)
	if err := writeDurable(filepath.Join(dir, runstate.JournalFile), data); err != nil {
		t.Fatal(err)
	}
	if err := writeDurable(filepath.Join(dir, journalMACFile), []byte(statekey.MAC(key, "journal", "r1", data)+"\n")); err != nil {
		t.Fatal(err)
	}
	_, err = ReadJournal(state, "r1")
	if want := filepath.Join(dir, runstate.JournalFile) + `:1: $.Target: key "Target" is not "target"`; !errors.Is(err, ErrJournal) || !strings.Contains(err.Error(), want) {
		t.Errorf("ReadJournal = %v, want ErrJournal with %s", err, want)
	}
}

// TestJournalCrashBetweenWrites: the journal and its MAC are two files, so
// rewriting them is two renames. A run killed between them (the write hook
// failing stands for the kill) leaves a pair ReadJournal accepts, the old
// journal or the new one, and never a refusal that reads like tampering.
func TestJournalCrashBetweenWrites(t *testing.T) {
	state := t.TempDir()
	w := workflow(t, approvalWorkflow)
	models := 0
	res, err := Run(context.Background(), w, Params{"branch": "b1"}, approvalOpts(t, state, counter{}, &models))
	if !errors.Is(err, ErrPendingApproval) {
		t.Fatalf("Run = %v, want a pending approval", err)
	}
	macPath := filepath.Join(res.Dir, journalMACFile)
	if n := strings.Count(readFile(t, macPath), "\n"); n != 1 {
		t.Fatalf("journal.mac holds %d lines after a whole write, want 1", n)
	}
	crashAt := func(at string) {
		journalWriteStep = func(step string) error {
			if step == at {
				return errors.New("killed")
			}
			return nil
		}
	}
	t.Cleanup(func() { journalWriteStep = func(string) error { return nil } })
	resume := func(approve string) (*Result, error) {
		j, err := ReadJournal(state, "run-test")
		if err != nil {
			t.Fatalf("ReadJournal = %v", err)
		}
		o := approvalOpts(t, state, counter{}, &models)
		o.Approve = []string{approve}
		return Resume(context.Background(), w, j, o)
	}
	pendingAt := func(want string) {
		t.Helper()
		j, err := ReadJournal(state, "run-test")
		if err != nil {
			t.Fatalf("ReadJournal = %v, want the journal pending at %s", err, want)
		}
		if j.Status != runstate.StatusPendingApproval || j.Pending == nil || j.Pending.Boundary != want {
			t.Fatalf("journal is %s pending %+v, want pending at %s", j.Status, j.Pending, want)
		}
	}

	// Killed after the MAC file, before the journal: the old journal
	// (pending at merge) is still the run's.
	crashAt("mac")
	if _, err := resume("merge"); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("Resume = %v, want the kill", err)
	}
	pendingAt("merge")

	// Killed after the journal, before the MAC file is trimmed: the new
	// journal (pending at release) is the run's.
	crashAt("journal")
	if _, err := resume("merge"); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("Resume = %v, want the kill", err)
	}
	if n := strings.Count(readFile(t, macPath), "\n"); n != 2 {
		t.Fatalf("journal.mac holds %d lines after a rewrite killed before its trim, want 2", n)
	}
	pendingAt("release")
	// Reading it finished the rewrite: only the new journal's MAC is
	// left, so the journal pending at merge is refused if put back.
	if n := strings.Count(readFile(t, macPath), "\n"); n != 1 {
		t.Errorf("journal.mac holds %d lines after the journal was read, want 1", n)
	}

	// Completed: the journal says so and only its MAC is left, so the
	// journal pending at release, should anyone keep a copy, is refused.
	pending := readFile(t, filepath.Join(res.Dir, runstate.JournalFile))
	crashAt("")
	if res, err := resume("release"); err != nil || res.Status != runstate.StatusCompleted {
		t.Fatalf("Resume = %v, want completed", err)
	}
	if n := strings.Count(readFile(t, macPath), "\n"); n != 1 {
		t.Errorf("journal.mac holds %d lines after a whole write, want 1", n)
	}
	j, err := ReadJournal(state, "run-test")
	if err != nil || j.Status != runstate.StatusCompleted {
		t.Fatalf("ReadJournal = %v, %v; want the completed journal", j, err)
	}
	if err := os.WriteFile(filepath.Join(res.Dir, runstate.JournalFile), []byte(pending), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadJournal(state, "run-test"); !errors.Is(err, ErrJournal) || !strings.Contains(err.Error(), "journal_unauthenticated") {
		t.Errorf("an earlier journal put back: ReadJournal = %v, want journal_unauthenticated", err)
	}
}

// TestJournalRewriteKeepsNoForgery: a rewrite keeps the old journal's MAC
// only when the old journal is authentic, so a journal changed on disk is
// not made valid by a rewrite killed part way.
func TestJournalRewriteKeepsNoForgery(t *testing.T) {
	state := t.TempDir()
	key, err := stateKey(state, true)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(state, "runs", "r1")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := writeJournalPair(dir, key, "r1", []byte(`{"run_id": "r1", "status": "pending_approval"}`)); err != nil {
		t.Fatal(err)
	}
	forged := []byte(`{"run_id": "r1", "status": "pending_approval", "allow_unapproved": true}`)
	if err := os.WriteFile(filepath.Join(dir, runstate.JournalFile), forged, 0o600); err != nil {
		t.Fatal(err)
	}
	journalWriteStep = func(step string) error {
		if step == "mac" {
			return errors.New("killed")
		}
		return nil
	}
	t.Cleanup(func() { journalWriteStep = func(string) error { return nil } })
	if err := writeJournalPair(dir, key, "r1", []byte(`{"run_id": "r1", "status": "completed"}`)); err == nil {
		t.Fatal("the kill was not reported")
	}
	if _, err := ReadJournal(state, "r1"); !errors.Is(err, ErrJournal) || !strings.Contains(err.Error(), "journal_unauthenticated") {
		t.Errorf("a changed journal after a killed rewrite: ReadJournal = %v, want journal_unauthenticated", err)
	}
}
