package runner

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/runconfig"
	"github.com/crystallize-dev/crystallize/internal/runstate"
	"github.com/crystallize-dev/crystallize/internal/toolexec"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// showScript prints its arguments one per line; showWorkflow runs it
// through ctx.exec as the codegen would write a mined shell step.
const showScript = "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done\n"

// execWorkspace returns a workspace root holding bin/show.
func execWorkspace(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "bin", "show"), []byte(showScript), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func execOpts(t *testing.T, dir string, grants ...string) Options {
	t.Helper()
	o := opts(t, &runconfig.Config{Dir: dir, Grants: runconfig.Grants{Capabilities: grants}})
	o.Environ = os.Environ()
	return o
}

const showWorkflow = `# capabilities: exec:show · secrets: none
def wf(ctx, b, version):
    return ctx.exec("show it", ["./bin/show", "-b", "{b}", "x/net@{version}"], b = b, version = version)
`

// TestExecDenyByDefault checks that a real run of a workflow whose
// commands are not granted is refused before its first step, with the
// grant to add, and records nothing.
func TestExecDenyByDefault(t *testing.T) {
	w := workflow(t, showWorkflow)
	o := execOpts(t, execWorkspace(t), "fs.read")
	_, err := Run(context.Background(), w, Params{"b": "x", "version": "v1"}, o)
	var ge *GrantError
	if !errors.As(err, &ge) || !errors.Is(err, ErrCapability) {
		t.Fatalf("Run = %v, want a *GrantError", err)
	}
	want := `capability not granted: the workflow runs commands needing exec:show, which crystallize.toml does not grant; add [grants] capabilities = ["fs.read", "exec:show"] (or "shell.exec" for every program)`
	if err.Error() != want {
		t.Errorf("Run error\n got %s\nwant %s", err, want)
	}
	if _, err := os.Stat(filepath.Join(o.StateDir, "runs")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a run refused before its first step recorded something: %v", err)
	}
	cmds := ExecCommands(w, o.Config, nil)
	wantCmds := []ExecCommand{{Name: "show it", Argv: []string{"./bin/show", "-b", "{b}", "x/net@{version}"}, Capability: "exec:show", Declared: true}}
	if diff := cmp.Diff(wantCmds, cmds); diff != "" {
		t.Errorf("ExecCommands (-want +got):\n%s", diff)
	}
}

// TestExecUndeclared checks that a workflow may not run a program it does
// not declare, whatever the grants, even in a dry run.
func TestExecUndeclared(t *testing.T) {
	w := workflow(t, strings.Replace(showWorkflow, "exec:show", "fs.read", 1))
	for _, dry := range []bool{false, true} {
		o := execOpts(t, execWorkspace(t), "exec:show", "shell.exec")
		o.DryRun = dry
		_, err := Run(context.Background(), w, Params{"b": "x", "version": "v1"}, o)
		want := "capability not granted: the workflow runs commands needing exec:show, which it does not declare"
		if err == nil || err.Error() != want {
			t.Errorf("Run(dry run %v) = %v, want %s", dry, err, want)
		}
	}
}

// TestExecGranted runs the command for real, granted by its program or by
// shell.exec, and checks the result, the trace and session.md.
func TestExecGranted(t *testing.T) {
	for _, grant := range []string{"exec:show", "shell.exec"} {
		t.Run(grant, func(t *testing.T) {
			dir := execWorkspace(t)
			w := workflow(t, showWorkflow)
			res, err := Run(context.Background(), w, Params{"b": "deps/x y", "version": "v0.33.0"}, execOpts(t, dir, grant))
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			wantOut := map[string]any{"stdout": "-b\ndeps/x y\nx/net@v0.33.0\n", "stderr": "", "exit_code": json.Number("0")}
			if diff := cmp.Diff(wantOut, res.Output); diff != "" {
				t.Errorf("output (-want +got):\n%s", diff)
			}
			argv := []string{filepath.Join(dir, "bin/show"), "-b", "deps/x y", "x/net@v0.33.0"}
			zero := 0
			if diff := cmp.Diff([]Command{{Step: 1, Name: "show it", Argv: argv, Dir: dir, ExitCode: &zero}}, res.Commands); diff != "" {
				t.Errorf("commands (-want +got):\n%s", diff)
			}
			tr := readTrace(t, res)
			a := tr.Actions[0]
			if a.Kind != trace.KindToolCall || a.Name != "show it" || !slices.Equal(a.Capabilities, []string{"exec:show"}) {
				t.Errorf("action = %s %s %v, want tool_call show it [exec:show]", a.Kind, a.Name, a.Capabilities)
			}
			if diff := cmp.Diff(map[string]any{"b": "deps/x y", "version": "v0.33.0"}, a.Parameters); diff != "" {
				t.Errorf("parameters (-want +got):\n%s", diff)
			}
			if got := a.Metadata["argv"]; !cmp.Equal(got, toAny(argv)) {
				t.Errorf("metadata argv = %v, want %v", got, argv)
			}
			if got := a.Metadata["exit_code"]; got == nil || got.(interface{ String() string }).String() != "0" {
				t.Errorf("metadata exit_code = %v, want 0", got)
			}
			md, err := os.ReadFile(filepath.Join(res.Dir, runstate.SessionFile))
			if err != nil {
				t.Fatal(err)
			}
			if want := "- `" + argv[0] + " -b 'deps/x y' x/net@v0.33.0` →"; !strings.Contains(string(md), want) {
				t.Errorf("session.md lacks %q:\n%s", want, md)
			}
		})
	}
}

// TestExecDryRun checks that a dry run needs no grant, runs nothing and
// reports the exact argv.
func TestExecDryRun(t *testing.T) {
	dir := t.TempDir()
	w := workflow(t, `# capabilities: exec:touch · secrets: none
def wf(ctx, name):
    ctx.exec("touch", ["touch", "{name}"], name = name)
`)
	o := opts(t, &runconfig.Config{Dir: dir})
	o.DryRun = true
	res, err := Run(context.Background(), w, Params{"name": "made"}, o)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "made")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the dry run ran touch: %v", err)
	}
	want := []Command{{Step: 1, Name: "touch", Argv: []string{"touch", "made"}, Dir: dir}}
	if diff := cmp.Diff(want, res.Commands); diff != "" {
		t.Errorf("commands (-want +got):\n%s", diff)
	}
	if got := res.Receipts[0].Status; got != ReceiptDryRun {
		t.Errorf("receipt status = %s, want %s", got, ReceiptDryRun)
	}
}

// TestExecList runs a step whose operands are a list parameter, as mining
// writes git add {paths...}: each item is one argument, a dry run shows
// the argv it would run, and an item that is an option is refused before
// the program runs.
func TestExecList(t *testing.T) {
	const src = `# capabilities: exec:show · secrets: none
def wf(ctx, paths):
    return ctx.exec("show", ["./bin/show", "add", "{paths...}"], paths = paths)
`
	w := workflow(t, src)
	dir := execWorkspace(t)
	res, err := Run(context.Background(), w, Params{"paths": []any{"a.go", "dir/b c.go"}}, execOpts(t, dir, "exec:show"))
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if got := res.Output.(map[string]any)["stdout"]; got != "add\na.go\ndir/b c.go\n" {
		t.Errorf("stdout = %q, want the two paths as two arguments", got)
	}
	o := execOpts(t, dir)
	o.DryRun = true
	res, err = Run(context.Background(), w, Params{"paths": []any{"x", "y", "z"}}, o)
	if err != nil {
		t.Fatalf("dry run: %v", err)
	}
	if want := []string{filepath.Join(dir, "bin/show"), "add", "x", "y", "z"}; len(res.Commands) != 1 || !slices.Equal(res.Commands[0].Argv, want) {
		t.Errorf("dry run commands = %+v, want argv %q", res.Commands, want)
	}
	res, err = Run(context.Background(), w, Params{"paths": []any{"x", "--exec=evil"}}, execOpts(t, dir, "exec:show"))
	if !errors.Is(err, toolexec.ErrOptionArgument) || len(res.Refusals) != 1 || res.Commands != nil {
		t.Errorf("Run(option item) = %v, refusals %+v, commands %+v; want ErrOptionArgument refused before the call", err, res.Refusals, res.Commands)
	}
}

// TestExecOptionRefused checks that an option-like value is refused
// before the program runs, and recorded as a refusal.
func TestExecOptionRefused(t *testing.T) {
	dir := t.TempDir()
	w := workflow(t, `# capabilities: exec:touch · secrets: none
def wf(ctx, name):
    ctx.exec("touch", ["touch", "{name}"], name = name)
`)
	res, err := Run(context.Background(), w, Params{"name": "--help"}, execOpts(t, dir, "exec:touch"))
	if !errors.Is(err, toolexec.ErrOptionArgument) {
		t.Fatalf("Run = %v, want ErrOptionArgument", err)
	}
	if len(res.Refusals) != 1 || res.Refusals[0].Tool != "touch" || res.Commands != nil {
		t.Errorf("refusals %+v, commands %+v; want one refusal and no command", res.Refusals, res.Commands)
	}
}

// TestExecFailure checks that a non-zero exit ends the run with the
// program's stderr, and its output is still recorded.
func TestExecFailure(t *testing.T) {
	dir := t.TempDir()
	w := workflow(t, `# capabilities: exec:ls · secrets: none
def wf(ctx, path):
    ctx.exec("ls", ["ls", "{path}"], path = path)
    ctx.exec("ls", ["ls"])
`)
	res, err := Run(context.Background(), w, Params{"path": "missing"}, execOpts(t, dir, "exec:ls"))
	if err == nil || !strings.Contains(err.Error(), "exec ls: ls: exit status 2: ") || !strings.Contains(err.Error(), "missing") {
		t.Fatalf("Run = %v, want the exit status and stderr of ls", err)
	}
	if res.Steps != 1 || res.Status != runstate.StatusFailed {
		t.Errorf("steps %d, status %s; want 1, failed", res.Steps, res.Status)
	}
	out := readTrace(t, res).Actions[0].Output.(map[string]any)
	if out["exit_code"].(interface{ String() string }).String() != "2" || !strings.Contains(out["stderr"].(string), "missing") {
		t.Errorf("recorded output = %v, want exit code 2 and stderr", out)
	}
}

// TestExecEnvironment checks that a command sees only the documented
// variables of the environment.
func TestExecEnvironment(t *testing.T) {
	w := workflow(t, `# capabilities: exec:env · secrets: none
def wf(ctx):
    return ctx.exec("env", ["env"])["stdout"]
`)
	o := execOpts(t, t.TempDir(), "exec:env")
	o.Environ = []string{"PATH=" + os.Getenv("PATH"), "HOME=/home/u", "LANG=C.UTF-8", "GITHUB_TOKEN=ghp_x", "AWS_SECRET_ACCESS_KEY=y", "TMPDIR=/tmp/u", "PS1=$"}
	res, err := Run(context.Background(), w, nil, o)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	got := strings.Fields(res.Output.(string))
	slices.Sort(got)
	want := []string{"HOME=/home/u", "LANG=C.UTF-8", "PATH=" + os.Getenv("PATH"), "TMPDIR=/tmp/u"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("environment (-want +got):\n%s", diff)
	}
}

// TestExecBindingOverrides checks that a [tools] binding of the step's
// name runs instead of the template, with the binding's capabilities.
func TestExecBindingOverrides(t *testing.T) {
	w := workflow(t, showWorkflow)
	cfg := &runconfig.Config{Dir: t.TempDir(), Tools: map[string]runconfig.ToolBinding{
		"show it": {Command: []string{os.Args[0], "{b}", "{version}"}, Env: map[string]string{"RUNTIME_TEST_HELPER": "argv"}},
	}}
	o := opts(t, cfg)
	o.Environ = os.Environ()
	res, err := Run(context.Background(), w, Params{"b": "x", "version": "v1"}, o)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if diff := cmp.Diff([]any{"x", "v1"}, res.Output); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
	if res.Commands != nil {
		t.Errorf("commands = %+v, want none: the binding ran", res.Commands)
	}
	if got := ExecCommands(w, cfg, nil)[0].Binding; got != "show it" {
		t.Errorf("ExecCommands binding = %q, want show it", got)
	}
	if err := CheckExec(w, cfg, nil, false); err != nil {
		t.Errorf("CheckExec = %v, want nil: the binding needs no exec grant", err)
	}
}

// TestExecSecretArgument checks that a secret passed to a command is
// replaced in the recorded argv.
func TestExecSecretArgument(t *testing.T) {
	w := workflow(t, `# capabilities: exec:show · secrets: TOKEN
def wf(ctx):
    ctx.exec("show it", ["./bin/show", "--token={token}"], token = ctx.secret("TOKEN"))
`)
	o := execOpts(t, execWorkspace(t), "exec:show")
	o.Config.Secrets.Env = []string{"TOKEN"}
	o.Getenv = func(k string) string { return map[string]string{"TOKEN": "s3cr3t-value"}[k] }
	res, err := Run(context.Background(), w, nil, o)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	data, err := os.ReadFile(filepath.Join(res.Dir, runstate.TraceFile))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), "s3cr3t-value") {
		t.Errorf("trace.json holds the secret:\n%s", data)
	}
	if got := res.Commands[0].Argv[1]; strings.Contains(got, "s3cr3t") {
		t.Errorf("result argv holds the secret: %q", got)
	}
}

// TestExecResume checks that a resumed run answers commands that ran
// before the approval from the journal instead of running them again:
// mkdir would fail the second time.
func TestExecResume(t *testing.T) {
	dir := t.TempDir()
	w := workflow(t, `# capabilities: exec:mkdir, exec:ls · secrets: none
def wf(ctx, d):
    ctx.exec("mkdir", ["mkdir", "{d}"], d = d)
    ctx.approve("list")
    return ctx.exec("ls", ["ls", "-a", "{d}"], d = d)["stdout"]
`)
	o := execOpts(t, dir, "exec:mkdir", "exec:ls")
	if _, err := Run(context.Background(), w, Params{"d": "made"}, o); !errors.Is(err, ErrPendingApproval) {
		t.Fatalf("Run = %v, want a pending approval", err)
	}
	j, err := ReadJournal(o.StateDir, o.RunID)
	if err != nil {
		t.Fatal(err)
	}
	o.Approve = []string{"list"}
	res, err := Resume(context.Background(), w, j, o)
	if err != nil {
		t.Fatalf("Resume: %v", err)
	}
	if res.Output != ".\n..\n" {
		t.Errorf("output = %q, want the empty directory's listing", res.Output)
	}
	if len(res.Commands) != 1 || res.Commands[0].Name != "ls" {
		t.Errorf("commands = %+v, want only ls run on resume", res.Commands)
	}
}

// TestExecFromCandidate checks that a command step is recorded as the
// candidate step it performs (kind, capabilities, side effects with a
// parameterized target), so a run's trace mines with its source traces,
// and that a dry run answers a later step's data flow with the expected
// output the traces agreed on.
func TestExecFromCandidate(t *testing.T) {
	dir := t.TempDir()
	w := workflow(t, `# capabilities: exec:touch, fs.write · secrets: none
def wf(ctx, name):
    made = ctx.exec("touch", ["touch", "{arg1}"], arg1 = name)
    ctx.log("made " + made["file"])
`)
	w.Candidate = &candidate.Candidate{Steps: []candidate.Step{{
		Index: 1, Kind: trace.KindToolCall, Name: "touch", Capabilities: []string{"exec:touch"},
		SideEffects:    []trace.SideEffect{{Kind: "file_write", Target: "{arg1}", Capability: "fs.write", Metadata: map[string]any{"target_parameter": "arg1"}}},
		ExpectedOutput: map[string]any{"file": "recorded"},
	}}}
	o := opts(t, &runconfig.Config{Dir: dir})
	o.DryRun = true
	res, err := Run(context.Background(), w, Params{"name": "made.txt"}, o)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	a := readTrace(t, res).Actions[0]
	wantEffects := []trace.SideEffect{{Kind: "file_write", Target: "made.txt", Capability: "fs.write"}}
	if !cmp.Equal(a.SideEffects, wantEffects) || !slices.Equal(a.Capabilities, []string{"exec:touch", "fs.write"}) {
		t.Errorf("recorded capabilities %v, side effects %+v; want [exec:touch fs.write], %+v", a.Capabilities, a.SideEffects, wantEffects)
	}
	if diff := cmp.Diff(map[string]any{"file": "recorded"}, a.Output); diff != "" {
		t.Errorf("dry-run answer (-want +got):\n%s", diff)
	}
}

// TestBindingList runs a command binding with a list placeholder, as a
// [tools] entry overriding a mined git add {paths...} step would: one
// argument per item, and an item that is an option refused before the
// call, in a dry run too.
func TestBindingList(t *testing.T) {
	dir := execWorkspace(t)
	cfg := &runconfig.Config{Dir: dir, Tools: map[string]runconfig.ToolBinding{"show": {Command: []string{"./bin/show", "add", "{paths...}"}}}}
	w := workflow(t, "def wf(ctx, paths):\n    return ctx.tool(\"show\", paths = paths)\n")
	o := opts(t, cfg)
	o.Environ = os.Environ()
	res, err := Run(context.Background(), w, Params{"paths": []any{"a.go", "b c.go"}}, o)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if got, _ := res.Output.(string); strings.TrimSpace(got) != "add\na.go\nb c.go" {
		t.Errorf("output = %#v, want each path as one argument", res.Output)
	}
	for _, dry := range []bool{false, true} {
		o.DryRun = dry
		res, err := Run(context.Background(), w, Params{"paths": []any{"a.go", "--exec=x"}}, o)
		if !errors.Is(err, toolexec.ErrOptionArgument) || len(res.Refusals) != 1 || res.ToolCalls != 0 {
			t.Errorf("dry run %v: Run = %v with %d refusals, %d tool calls; want ErrOptionArgument refused before the call", dry, err, len(res.Refusals), res.ToolCalls)
		}
	}
}

// TestBindingOptionPosition: which elements of a command binding take a
// parameter where the program may read an option, and the refusal of a
// value starting with "-" there.
func TestBindingOptionPosition(t *testing.T) {
	tests := []struct {
		cmd   []string
		allow []string
		want  []int
	}{
		{[]string{"git", "checkout", "{ref}"}, nil, []int{2}},
		{[]string{"git", "checkout", "--", "{ref}"}, nil, nil},
		{[]string{"git", "checkout", "{ref}"}, []string{"ref"}, nil},
		{[]string{"git", "commit", "--message={msg}", "{workspace}"}, nil, nil},
		{[]string{"{tool}", "x"}, nil, nil}, // the program is not an option position
		{[]string{"cp", "{src}", "{dst}"}, nil, []int{1, 2}},
		{[]string{"gh", "pr", "create", "--title", "{title}"}, nil, []int{4}},
		{[]string{"git", "add", "{paths...}"}, nil, []int{2}},
		{[]string{"git", "add", "--", "{paths...}"}, nil, nil},
		{[]string{"git", "clone", "{owner}/{repo}"}, nil, []int{2}},
		{[]string{"echo", "{a}{b}"}, []string{"a"}, nil},
		{[]string{"echo", "x{a}", "{{a}}"}, nil, nil},
	}
	for _, tt := range tests {
		b := &runconfig.ToolBinding{Command: tt.cmd, AllowOptions: tt.allow}
		var got []int
		for i := range tt.cmd {
			if _, ok := toolexec.OptionPosition(b, i); ok {
				got = append(got, i)
			}
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("OptionPosition(%q, allow %q) at %v, want %v", tt.cmd, tt.allow, got, tt.want)
		}
	}
	cfg := &runconfig.Config{Tools: map[string]runconfig.ToolBinding{"git.checkout": {Command: []string{"git", "checkout", "{ref}"}}}}
	w := workflow(t, "def wf(ctx, ref):\n    ctx.tool(\"git.checkout\", ref = ref)\n")
	for _, dry := range []bool{false, true} {
		o := opts(t, cfg)
		o.DryRun = dry
		res, err := Run(context.Background(), w, Params{"ref": "--output=/tmp/x"}, o)
		if !errors.Is(err, toolexec.ErrOptionArgument) || len(res.Refusals) != 1 || res.ToolCalls != 0 {
			t.Errorf("dry run %v: Run = %v with %d refusals, %d tool calls; want ErrOptionArgument refused before the call", dry, err, len(res.Refusals), res.ToolCalls)
		}
	}
	if ws := OptionWarnings(w, cfg, nil); len(ws) != 1 || ws[0].Parameter != "ref" || ws[0].Index != 2 {
		t.Errorf("OptionWarnings = %+v, want ref at argv[2]", ws)
	}
}
