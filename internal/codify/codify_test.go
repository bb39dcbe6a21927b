package codify

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/bundle"
	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/normalize"
	"github.com/crystallize-dev/crystallize/internal/pipeline"
	"github.com/crystallize-dev/crystallize/internal/runconfig"
	"github.com/crystallize-dev/crystallize/internal/session"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// deploySession builds, migrates (with a recovery), restarts and sets an
// image after a [!user] intervention.
const deploySession = "../session/testdata/learn/deploy.md"

func readSource(t *testing.T, name string) Source {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	s, err := session.Parse(name, data)
	if err != nil {
		t.Fatal(err)
	}
	return Source{File: name, Session: s}
}

func TestRun(t *testing.T) {
	d, err := Run(context.Background(), []Source{readSource(t, deploySession)}, Options{WorkflowName: "deploy", GeneratedAt: "2026-01-01T00:00:00Z"})
	if err != nil {
		t.Fatal(err)
	}
	sel := d.Report.Selected()
	if sel == nil {
		t.Fatal("Run(deploy) selected no candidate")
	}
	if sel.Name != "deploy" || d.Report.GeneratedAt != "2026-01-01T00:00:00Z" {
		t.Errorf("Run(deploy) = candidate %s generated at %s, want the options' name and time", sel.Name, d.Report.GeneratedAt)
	}
	if len(d.Traces) != 1 || d.Traces[0].Origin.Path != deploySession {
		t.Errorf("Run(deploy) traces = %d, origin %v", len(d.Traces), d.Traces[0].Origin)
	}
	// One session is the workflow: every tool call a step.
	if d.Mine.MinExamples != 0 || len(sel.Steps) != len(sel.Examples[0].ActionIDs) {
		t.Errorf("Run(one session) mined with MinExamples %d into %d steps", d.Mine.MinExamples, len(sel.Steps))
	}
}

func TestApply(t *testing.T) {
	ctx := context.Background()
	d, err := Run(ctx, []Source{readSource(t, deploySession)}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	sel := d.Report.Selected()
	steps := len(sel.Steps)
	dropped := sel.Steps[2].Name
	before := len(d.Traces[0].Actions)
	got, err := Apply(ctx, d, &Review{Drop: []int{3}, Params: []ParamEdit{{Step: 1, Key: "args", Name: "target"}}})
	if err != nil {
		t.Fatalf("Apply: %v", err)
	}
	if len(d.Traces[0].Actions) != before {
		t.Errorf("Apply changed the draft's trace")
	}
	gsel := got.Report.Selected()
	if len(gsel.Steps) != steps-1 {
		t.Errorf("Apply(drop 3) = %d steps, want %d", len(gsel.Steps), steps-1)
	}
	if len(gsel.Parameters) == 0 || gsel.Parameters[0].Name != "target" {
		t.Errorf("Apply(p args target) parameters = %+v, want target first", gsel.Parameters)
	}
	want := "dropped step 3 " + dropped + "; made args of step 1 go build the parameter target"
	if !slices.ContainsFunc(got.Report.Warnings, func(p candidate.Problem) bool {
		return p.Code == CodeReviewed && strings.HasSuffix(p.Message, want)
	}) {
		t.Errorf("Apply warnings = %+v, want %s ending %q", got.Report.Warnings, CodeReviewed, want)
	}

	if same, err := Apply(ctx, d, &Review{}); err != nil || same != d {
		t.Errorf("Apply(empty review) = %v, %v, want the draft unchanged", same, err)
	}
	if _, err := Apply(ctx, d, &Review{Params: []ParamEdit{{Step: 1, Key: "nope", Name: "x"}}}); err == nil || !strings.Contains(err.Error(), `applying the review: step 1 has no literal argument "nope"`) {
		t.Errorf("Apply(unknown argument) = %v", err)
	}
}

func TestNameArgs(t *testing.T) {
	cfg := &runconfig.Config{Tools: map[string]runconfig.ToolBinding{
		"deploy": {Command: []string{"deploy.sh", "{env}", "--fast", "x{tag}"}},
	}}
	tr := &trace.Trace{Actions: []trace.Action{
		{Name: "deploy", Parameters: map[string]any{"arg1": "prod", "arg2": "--fast", "arg3": "v1"}},
		{Name: "other", Parameters: map[string]any{"arg1": "prod"}},
	}}
	NameArgs(tr, cfg)
	if got := tr.Actions[0].Parameters; got["env"] != "prod" || got["arg1"] != nil || got["arg3"] != "v1" {
		t.Errorf("NameArgs(deploy) = %v, want arg1 named env and arg3 (not a bare placeholder) kept", got)
	}
	if got := tr.Actions[1].Parameters; got["arg1"] != "prod" {
		t.Errorf("NameArgs(unbound tool) = %v, want it unchanged", got)
	}
}

func TestNewRefiner(t *testing.T) {
	if _, err := NewRefiner(nil, os.Getenv, nil); !errors.Is(err, ErrNoModel) {
		t.Errorf("NewRefiner(no config) = %v, want ErrNoModel", err)
	}
}

// TestNewParamEdit checks what a reviewer may make a parameter: a literal
// argument, named after its key unless named; not a missing argument,
// not a name that is no identifier; and that a review keeps one step.
func TestNewParamEdit(t *testing.T) {
	d, err := Run(context.Background(), []Source{readSource(t, deploySession)}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := d.Report.Selected()
	if e, err := NewParamEdit(c, 0, "args", ""); err != nil || e != (ParamEdit{Step: 1, Key: "args", Name: "args"}) {
		t.Errorf("NewParamEdit(args) = %+v, %v", e, err)
	}
	if e, err := NewParamEdit(c, 0, "args", "target"); err != nil || e.Name != "target" {
		t.Errorf("NewParamEdit(args target) = %+v, %v", e, err)
	}
	for _, tc := range []struct{ key, name, want string }{
		{"nope", "", `step 1 has no argument "nope" (it has `},
		{"args", "not-a-name", `"not-a-name" cannot name a parameter (try not_a_name)`},
	} {
		if _, err := NewParamEdit(c, 0, tc.key, tc.name); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("NewParamEdit(%s, %q) = %v, want %q", tc.key, tc.name, err, tc.want)
		}
	}
	for i, st := range c.Steps {
		if st.Kind == trace.KindHumanApproval {
			if _, err := NewParamEdit(c, i, "prompt", ""); err == nil || !strings.Contains(err.Error(), "is an approval") {
				t.Errorf("NewParamEdit(approval step %d) = %v", st.Index, err)
			}
		}
	}
	rv := &Review{}
	for range len(c.Steps) - 1 {
		if !rv.CanDrop(c) {
			t.Fatalf("CanDrop refused with %d of %d steps dropped", len(rv.Drop), len(c.Steps))
		}
		rv.Drop = append(rv.Drop, len(rv.Drop)+1)
	}
	if rv.CanDrop(c) {
		t.Error("CanDrop allows dropping the last step")
	}
	if got := ArgumentSource(candidate.Argument{Kind: candidate.ArgParameter, Parameter: "env"}); got != "parameter env" {
		t.Errorf("ArgumentSource(parameter) = %q", got)
	}
	long := strings.Repeat("x", 100)
	if got := ArgumentSource(candidate.Argument{Kind: candidate.ArgConstant, Value: long}); len([]rune(got)) != 72 || !strings.HasSuffix(got, "…") {
		t.Errorf("ArgumentSource(long literal) = %q, want 72 characters ending in …", got)
	}
}

// TestReadSourcesAndPublish reads a session log, codifies it and
// publishes the draft: the workflow and report are written, the report
// has been shadow-replayed against the session, and a bundle asks for one
// example; a log with problems is the error.
func TestReadSourcesAndPublish(t *testing.T) {
	ctx := context.Background()
	sources, err := ReadSources([]string{deploySession})
	if err != nil || len(sources) != 1 || sources[0].File != deploySession {
		t.Fatalf("ReadSources = %+v, %v", sources, err)
	}
	d, err := Run(ctx, sources, Options{WorkflowName: "deploy", GeneratedAt: "2026-01-01T00:00:00Z"})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	o := pipeline.Outputs{
		Out: filepath.Join(dir, "deploy.star"), Report: filepath.Join(dir, "report.json"), Bundle: filepath.Join(dir, "bundle"),
		BundleOptions: bundle.Options{GeneratedAt: "2026-01-01T00:00:00Z"},
	}
	pub, err := d.Publish(ctx, o, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{o.Out, o.Report} {
		if _, err := os.Stat(f); err != nil {
			t.Error(err)
		}
	}
	if sel := d.Report.Selected(); sel == nil || sel.Shadow == nil {
		t.Errorf("the published report was not shadow-replayed: %+v", sel)
	}
	if pub.Manifest == nil || pub.Manifest.Promotion.Criteria.MinExamples != 1 {
		t.Errorf("bundle manifest = %+v; want promotion asking for one example", pub.Manifest)
	}

	bad := filepath.Join(t.TempDir(), "bad.md")
	if err := os.WriteFile(bad, []byte("no frontmatter\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var list trace.ErrorList
	if _, err := ReadSources([]string{deploySession, bad}); !errors.As(err, &list) || list[0].File != bad {
		t.Errorf("ReadSources with a bad log = %v; want its problems", err)
	}
}

// TestNormalizeCommands checks which session tool calls are read as
// shell commands: a program's command line is, with its phase metadata,
// approval and declared side effects kept; a step crystallize run wrote,
// a tool the configuration binds and a dotted or MCP tool name are not.
func TestNormalizeCommands(t *testing.T) {
	approval := &trace.Approval{Required: true, Prompt: "ok?", Boundary: "user_intervention"}
	tr := &trace.Trace{Actions: []trace.Action{
		{ID: "a1", Kind: trace.KindToolCall, Name: "git", Approval: approval,
			Metadata:    map[string]any{"args": `add a.go && git commit -m "fix it"`, "phase": "p1"},
			SideEffects: []trace.SideEffect{{Kind: "git_commit", Target: "HEAD"}}},
		{ID: "a2", Kind: trace.KindToolCall, Name: "repo.commit", Metadata: map[string]any{"args": "-m x"}},
		{ID: "a3", Kind: trace.KindToolCall, Name: "git", Metadata: map[string]any{"args": "push", "command": "git push"}},
		{ID: "a4", Kind: trace.KindToolCall, Name: "deploy", Metadata: map[string]any{"args": "prod"}},
		{ID: "a5", Kind: trace.KindToolCall, Name: "mcp__gh__create_issue", Metadata: map[string]any{"args": "x"}},
	}}
	cfg := &runconfig.Config{Tools: map[string]runconfig.ToolBinding{"deploy": {Command: []string{"deploy.sh", "{env}"}}}}
	normalizeCommands(tr, normalize.Default(), cfg)
	var names []string
	for _, a := range tr.Actions {
		names = append(names, a.ID+" "+a.Name)
	}
	want := []string{"a1 git add", "a1.2 git commit", "a2 repo.commit", "a3 git", "a4 deploy", "a5 mcp__gh__create_issue"}
	if !slices.Equal(names, want) {
		t.Fatalf("normalizeCommands = %q, want %q", names, want)
	}
	add, commit := tr.Actions[0], tr.Actions[1]
	if add.Approval != approval || commit.Approval != nil {
		t.Errorf("approval on %v and %v, want the first action only", add.Approval, commit.Approval)
	}
	if len(commit.SideEffects) != 1 || len(add.SideEffects) != 0 {
		t.Errorf("side effects %v and %v, want the declared one on the last action", add.SideEffects, commit.SideEffects)
	}
	if commit.Parameters["message"] != "fix it" || commit.Metadata["phase"] != "p1" || commit.Metadata["argv"] == nil {
		t.Errorf("git commit = %+v, want parameter message, the phase and an argv template", commit)
	}
}
