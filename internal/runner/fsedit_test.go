package runner

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/runconfig"
	"github.com/crystallize-dev/crystallize/internal/toolexec"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// TestFSEdit: fs.edit applies exact replacements in order, one or a
// list, and a replacement that does not apply fails the call naming why
// and leaves the file as it was, even when edits before it applied.
func TestFSEdit(t *testing.T) {
	const before = "name = app\nversion = 1.0\n# version history\nversion = 1.0\n"
	tests := []struct {
		name string
		call string // the fs.edit call's arguments after path
		want string // the file after the call
		err  string // what the error says; "" for success
	}{
		{"one edit", `old = "name = app", new = "name = svc"`,
			"name = svc\nversion = 1.0\n# version history\nversion = 1.0\n", ""},
		{"replace_all", `old = "version = 1.0", new = "version = 1.1", replace_all = True`,
			"name = app\nversion = 1.1\n# version history\nversion = 1.1\n", ""},
		{"edits in order, each on the result of the last", `edits = [{"old": "name = app", "new": "name = svc"}, {"old": "svc", "new": "api"}]`,
			"name = api\nversion = 1.0\n# version history\nversion = 1.0\n", ""},
		{"ambiguous", `old = "version = 1.0", new = "version = 1.1"`, before, "old_ambiguous"},
		{"ambiguous without replace_all", `old = "version = 1.0", new = "version = 1.1", replace_all = False`, before, "occurs 2 times"},
		{"not found", `old = "name = web", new = "name = svc"`, before, `old_not_found: the edit of notes.txt: the old text "name = web" is not in the file`},
		{"a later edit fails: none is written", `edits = [{"old": "name = app", "new": "name = svc"}, {"old": "missing", "new": "x"}]`, before, "edits[1] of notes.txt"},
		{"empty old", `old = "", new = "x"`, before, "old is \"\""},
		{"no new", `old = "app"`, before, "new is missing"},
		{"both forms", `old = "a", new = "b", edits = [{"old": "a", "new": "b"}]`, before, "not both"},
		{"empty list", `edits = []`, before, "non-empty list"},
		{"unknown key", `edits = [{"old": "app", "new": "x", "count": 2}]`, before, "edits[0].count is not old, new or replace_all"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			file := filepath.Join(root, "notes.txt")
			if err := os.WriteFile(file, []byte(before), 0o644); err != nil {
				t.Fatal(err)
			}
			cfg := &runconfig.Config{Dir: root, Workspace: runconfig.Workspace{Roots: []string{"."}}, Grants: runconfig.Grants{Capabilities: []string{"fs.write"}}}
			w := workflow(t, "# capabilities: fs.write · secrets: none\ndef wf(ctx):\n    return ctx.tool(\"fs.edit\", path = \"notes.txt\", "+tt.call+")\n")
			res, err := Run(context.Background(), w, nil, opts(t, cfg))
			switch {
			case tt.err == "" && err != nil:
				t.Fatalf("fs.edit(%s) = %v, want success", tt.call, err)
			case tt.err != "" && (!errors.Is(err, toolexec.ErrEdit) || !strings.Contains(err.Error(), tt.err)):
				t.Fatalf("fs.edit(%s) = %v, want ErrEdit saying %q", tt.call, err, tt.err)
			}
			if b, _ := os.ReadFile(file); string(b) != tt.want {
				t.Errorf("after fs.edit(%s) the file is %q, want %q", tt.call, b, tt.want)
			}
			if tt.err != "" {
				return
			}
			// The run records the call as agents' edits are recorded: a
			// file_mutation with a file_write of mutation edit.
			a := readTrace(t, res).Actions[0]
			want := []trace.SideEffect{{Kind: "file_write", Target: "notes.txt", Capability: "fs.write", Mutation: "edit"}}
			if a.Kind != trace.KindFileMutation || len(a.SideEffects) != 1 || a.SideEffects[0].Kind != want[0].Kind ||
				a.SideEffects[0].Target != want[0].Target || a.SideEffects[0].Mutation != want[0].Mutation {
				t.Errorf("recorded %s %s with side effects %+v, want a file_mutation with %+v", a.Kind, a.Name, a.SideEffects, want)
			}
		})
	}
}

// TestFSEditConfinement: fs.edit is confined as fs.write is: the
// workspace roots, the protected set and the fs.write capability; it
// edits only a file that exists, and a dry run changes nothing.
func TestFSEditConfinement(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	write := func(p, data string) {
		t.Helper()
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(outside, "secret.txt"), "old\n")
	write(filepath.Join(root, "in.txt"), "old\n")
	write(filepath.Join(root, "crystallize.toml"), "old\n")
	write(filepath.Join(root, ".git/config"), "old\n")
	symlinks := os.Symlink(outside, filepath.Join(root, "link")) == nil
	src := "# capabilities: fs.write · secrets: none\ndef wf(ctx, path):\n    return ctx.tool(\"fs.edit\", path = path, old = \"old\", new = \"new\")\n"
	w := workflow(t, src)
	cfg := func(caps ...string) *runconfig.Config {
		return &runconfig.Config{Dir: root, File: filepath.Join(root, "crystallize.toml"), Workspace: runconfig.Workspace{Roots: []string{"."}}, Grants: runconfig.Grants{Capabilities: caps}}
	}
	tests := []struct {
		path   string
		cfg    *runconfig.Config
		dryRun bool
		is     error
		skip   bool
	}{
		{path: "../" + filepath.Base(outside) + "/secret.txt", cfg: cfg("fs.write"), is: toolexec.ErrOutsideWorkspace},
		{path: filepath.Join(outside, "secret.txt"), cfg: cfg("fs.write"), is: toolexec.ErrOutsideWorkspace},
		{path: "link/secret.txt", cfg: cfg("fs.write"), is: toolexec.ErrOutsideWorkspace, skip: !symlinks},
		{path: "crystallize.toml", cfg: cfg("fs.write"), is: toolexec.ErrProtected},
		{path: ".git/config", cfg: cfg("fs.write"), is: toolexec.ErrProtected},
		{path: "in.txt", cfg: cfg("fs.read"), is: ErrCapability},
		{path: "missing.txt", cfg: cfg("fs.write"), is: toolexec.ErrEdit},
		{path: "in.txt", cfg: cfg("fs.write"), dryRun: true},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			if tt.skip {
				t.Skip("no symlinks here")
			}
			o := opts(t, tt.cfg)
			o.DryRun = tt.dryRun
			_, err := Run(context.Background(), w, Params{"path": tt.path}, o)
			if tt.is == nil && err != nil {
				t.Fatalf("fs.edit(%q) = %v, want success", tt.path, err)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Fatalf("fs.edit(%q) = %v, want %v", tt.path, err, tt.is)
			}
		})
	}
	for _, f := range []string{filepath.Join(outside, "secret.txt"), filepath.Join(root, "in.txt"), filepath.Join(root, "crystallize.toml"), filepath.Join(root, ".git/config")} {
		if b, _ := os.ReadFile(f); string(b) != "old\n" {
			t.Errorf("%s was edited: %q", f, b)
		}
	}
	if _, err := os.Stat(filepath.Join(root, "missing.txt")); err == nil {
		t.Error("fs.edit created a file")
	}
}

// TestFSEditBuiltinByDefault: fs.edit needs no binding, is named in a
// config as a built-in, and is refused to a read-only step.
func TestFSEditBuiltinByDefault(t *testing.T) {
	if b, ok := toolexec.Resolve(nil, nil, runconfig.ToolFSEdit); !ok || b.Builtin != runconfig.ToolFSEdit {
		t.Fatalf("resolve(fs.edit) = %+v, %v, want the built-in", b, ok)
	}
	if b, _ := toolexec.Resolve(nil, nil, runconfig.ToolFSEdit); strings.Join(b.Capabilities(), ",") != "fs.write" {
		t.Errorf("fs.edit needs %v, want fs.write", b.Capabilities())
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "crystallize.toml")
	os.WriteFile(file, []byte("[tools.\"notes.edit\"]\nbuiltin = \"fs.edit\"\n[tools.\"bad\"]\nbuiltin = \"fs.delete\"\n"), 0o644)
	_, err := runconfig.LoadConfig(file)
	if err == nil || !strings.Contains(err.Error(), `unknown built-in "fs.delete"; want one of fs.read, fs.write, fs.edit`) || strings.Contains(err.Error(), "notes.edit") {
		t.Errorf("LoadConfig = %v, want only the unknown built-in refused", err)
	}

	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "a.txt"), []byte("x"), 0o644)
	w := workflow(t, `# capabilities: fs.write · secrets: none
def wf(ctx):
    return ctx.agent("look", tools = ["fs.edit"], max_iterations = 2, read_only = True)
`)
	o := opts(t, &runconfig.Config{Dir: root, Workspace: runconfig.Workspace{Roots: []string{"."}}, Grants: runconfig.Grants{Capabilities: []string{"fs.write"}}})
	o.Model = &scriptModel{replies: []any{map[string]any{"tool": "fs.edit", "args": map[string]any{"path": "a.txt", "old": "x", "new": "y"}}}}
	_, err = Run(context.Background(), w, nil, o)
	if !errors.Is(err, ErrCapability) || !strings.Contains(err.Error(), "read-only") {
		t.Fatalf("Run = %v, want a read-only refusal", err)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "a.txt")); string(b) != "x" {
		t.Errorf("a read-only step edited the file: %q", b)
	}
}

// TestFileBuiltinGrants: the built-in file tools, like ctx.exec's
// commands, run with no binding, so what they need is their grant: a dry
// run needs it declared only, a real run without it is refused before
// its first step, and the preflight check lists it.
func TestFileBuiltinGrants(t *testing.T) {
	const steps = `def wf(ctx):
    ctx.tool("first")
    ctx.tool("fs.write", path = "notes.md", content = "TODO\n")
    ctx.tool("fs.edit", path = "notes.md", old = "TODO", new = "done")
`
	declared := workflow(t, "# capabilities: fs.write · secrets: none\n"+steps)
	undeclared := workflow(t, "# capabilities: none · secrets: none\n"+steps)
	for _, tt := range []struct {
		name   string
		w      *Workflow
		grants []string
		dryRun bool
		err    string // "" for success
		calls  int    // the tool calls made (in a dry run, recorded)
	}{
		{"dry run, declared, not granted", declared, nil, true, "", 3},
		{"dry run, not declared", undeclared, nil, true, "the workflow runs steps needing fs.write, which it does not declare", 0},
		{"real run, not granted", declared, nil, false, `the workflow runs steps needing fs.write, which crystallize.toml does not grant; add [grants] capabilities = ["fs.write"]`, 0},
		{"real run, granted", declared, []string{"fs.write"}, false, "", 3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			o := opts(t, &runconfig.Config{Dir: root, Workspace: runconfig.Workspace{Roots: []string{"."}}, Grants: runconfig.Grants{Capabilities: tt.grants}})
			o.DryRun = tt.dryRun
			o.Tools = map[string]toolexec.Tool{"first": {Func: func(context.Context, map[string]any) (any, error) { return nil, nil }}}
			res, err := Run(context.Background(), tt.w, nil, o)
			switch {
			case tt.err == "" && err != nil:
				t.Fatalf("Run = %v, want success", err)
			case tt.err != "" && (!errors.Is(err, ErrCapability) || !strings.Contains(err.Error(), tt.err) || strings.Contains(err.Error(), "shell.exec")):
				t.Fatalf("Run = %v, want ErrCapability saying %q and offering no shell.exec", err, tt.err)
			}
			calls := 0
			if res != nil {
				calls = res.ToolCalls
			}
			if calls != tt.calls {
				t.Errorf("%d tool calls, want %d", calls, tt.calls)
			}
			b, readErr := os.ReadFile(filepath.Join(root, "notes.md"))
			if wrote := readErr == nil; wrote != (tt.err == "" && !tt.dryRun) {
				t.Errorf("notes.md written: %v (%q)", wrote, b)
			} else if wrote && string(b) != "done\n" {
				t.Errorf("notes.md = %q, want the edited file", b)
			}
		})
	}

	r, err := Preflight(context.Background(), declared, &runconfig.Config{Dir: t.TempDir()}, map[string]toolexec.Tool{"first": {}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(r.Grants, []string{"fs.write"}) || !slices.Equal(r.MissingGrants, []string{"fs.write"}) || len(r.Unbound) != 0 || r.Err() == nil {
		t.Errorf("Preflight = grants %v, missing %v, unbound %v, err %v; want fs.write needed and missing, nothing unbound", r.Grants, r.MissingGrants, r.Unbound, r.Err())
	}
}

// TestDryRunRehearsedWrite: in a dry run, a file an earlier fs.write
// would have created exists for a later step's file_exists check, as a
// mined write-then-edit needs; a file nothing wrote still does not.
func TestDryRunRehearsedWrite(t *testing.T) {
	w := workflow(t, `# capabilities: fs.write · secrets: none
def wf(ctx):
    ctx.tool("fs.write", path = "notes/new.md", content = "TODO\n")
    ctx.check("file_exists", path = "notes/new.md")
    ctx.tool("fs.edit", path = "notes/new.md", old = "TODO", new = "done")
    ctx.check("file_exists", path = "notes/other.md")
`)
	root := t.TempDir()
	o := opts(t, &runconfig.Config{Dir: root, Workspace: runconfig.Workspace{Roots: []string{"."}}})
	o.DryRun = true
	var log strings.Builder
	o.Log = &log
	if _, err := Run(context.Background(), w, nil, o); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if strings.Contains(log.String(), "notes/new.md does not exist") || !strings.Contains(log.String(), "file notes/other.md does not exist") {
		t.Errorf("dry run log:\n%s\nwant only notes/other.md missing", log.String())
	}
	if _, err := os.Stat(filepath.Join(root, "notes")); err == nil {
		t.Error("a dry run wrote a file")
	}
}

// TestFSHomePath: a mined path under the traces' home directory is written
// "~/…"; the file built-ins read it as the home directory of the run
// (Options.Environ), never as a directory named "~" in the workspace. A
// home inside a workspace root is written; one outside every root is
// refused as outside the workspace; with no home in the environment the
// call fails saying so, and nothing is written anywhere.
func TestFSHomePath(t *testing.T) {
	const src = "# capabilities: fs.write · secrets: none\ndef wf(ctx):\n    return ctx.tool(\"fs.write\", path = \"~/notes.txt\", content = \"hi\\n\")\n"
	run := func(t *testing.T, root string, environ []string) error {
		cfg := &runconfig.Config{Dir: root, Workspace: runconfig.Workspace{Roots: []string{"."}}, Grants: runconfig.Grants{Capabilities: []string{"fs.write"}}}
		o := opts(t, cfg)
		o.Environ = environ
		_, err := Run(context.Background(), workflow(t, src), nil, o)
		return err
	}
	t.Run("home inside the workspace", func(t *testing.T) {
		root := t.TempDir()
		home := filepath.Join(root, "home")
		if err := os.Mkdir(home, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := run(t, root, []string{"HOME=" + home}); err != nil {
			t.Fatalf("fs.write ~/notes.txt = %v, want it written in HOME", err)
		}
		if b, err := os.ReadFile(filepath.Join(home, "notes.txt")); err != nil || string(b) != "hi\n" {
			t.Errorf("HOME/notes.txt = %q, %v; want hi", b, err)
		}
		if _, err := os.Stat(filepath.Join(root, "~")); err == nil {
			t.Errorf("a directory named ~ was created in the workspace")
		}
		// The check that precedes a mined edit looks where the edit will.
		check := "# capabilities: fs.write · secrets: none\ndef wf(ctx):\n    ctx.check(\"file_exists\", path = \"~/notes.txt\")\n"
		cfg := &runconfig.Config{Dir: root, Workspace: runconfig.Workspace{Roots: []string{"."}}, Grants: runconfig.Grants{Capabilities: []string{"fs.write"}}}
		o := opts(t, cfg)
		o.Environ = []string{"HOME=" + home}
		if _, err := Run(context.Background(), workflow(t, check), nil, o); err != nil {
			t.Errorf("file_exists ~/notes.txt after writing it = %v, want it to hold", err)
		}
	})
	t.Run("home outside the workspace", func(t *testing.T) {
		root, home := t.TempDir(), t.TempDir()
		err := run(t, root, []string{"HOME=" + home})
		if !errors.Is(err, toolexec.ErrOutsideWorkspace) {
			t.Fatalf("fs.write ~/notes.txt = %v, want ErrOutsideWorkspace", err)
		}
		if _, err := os.Stat(filepath.Join(home, "notes.txt")); err == nil {
			t.Errorf("the file was written outside the workspace")
		}
	})
	t.Run("no home", func(t *testing.T) {
		root := t.TempDir()
		err := run(t, root, []string{"PATH=/usr/bin"})
		if !errors.Is(err, toolexec.ErrOutsideWorkspace) || !strings.Contains(err.Error(), "HOME is not set") {
			t.Fatalf("fs.write ~/notes.txt with no HOME = %v, want ErrOutsideWorkspace saying HOME is not set", err)
		}
		if _, err := os.Stat(filepath.Join(root, "~")); err == nil {
			t.Errorf("a directory named ~ was created in the workspace")
		}
	})
}
