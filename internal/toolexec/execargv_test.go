package toolexec

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/capped"
	"github.com/crystallize-dev/crystallize/internal/runconfig"
)

func TestExecExpand(t *testing.T) {
	e := New(context.Background(), &runconfig.Config{Dir: "/ws"}, Settings{})
	args := map[string]any{
		"b": "deps/x; rm -rf / $(id)", "dash": "-rf", "long": "--upload-pack=evil", "empty": "", "n": 3, "sp": "a b",
		"paths": []any{"a b.go", "{x}", "c;d"}, "none": []any{}, "hostile": []any{"ok.go", "--force", "-x"},
		"nums": []any{json.Number("3"), "x"}, "mixed": []any{"a", true},
		"all": []any{"-A"}, "update": []any{"--update", "docs"}, "allrf": []any{"-A", "-rf"},
	}
	tests := []struct {
		tmpl []string
		want []string
		err  string
	}{
		{tmpl: []string{"git", "checkout", "-b", "{b}"}, want: []string{"git", "checkout", "-b", "deps/x; rm -rf / $(id)"}},
		{tmpl: []string{"go", "get", "{sp}@{n}"}, want: []string{"go", "get", "a b@3"}},
		{tmpl: []string{"gh", "--title={dash}", "x{dash}"}, want: []string{"gh", "--title=-rf", "x-rf"}},
		{tmpl: []string{"echo", "{{b}}", "{not a key}", "{workspace}"}, want: []string{"echo", "{b}", "{not a key}", "/ws"}},
		{tmpl: []string{"rm", "{dash}"}, err: `argument would be read as an option: argv[1] {dash} is "-rf", which starts with "-"`},
		{tmpl: []string{"git", "fetch", "{long}"}, err: `argument would be read as an option: argv[2] {long} is "--upload-pack=evil", which starts with "-"`},
		// An element that starts with a placeholder is an option
		// position however many it holds.
		{tmpl: []string{"git", "ls-remote", "{long}/{b}"}, err: `argument would be read as an option: argv[2] {long}/{b} is "--upload-pack=evil/deps/x; rm -rf / $(id)", which starts with "-"`},
		{tmpl: []string{"git", "{empty}{dash}"}, err: `argument would be read as an option: argv[1] {empty}{dash} is "-rf", which starts with "-"`},
		{tmpl: []string{"git", "{b}/{dash}"}, want: []string{"git", "deps/x; rm -rf / $(id)/-rf"}},
		{tmpl: []string{"git", "{missing}"}, err: `argv[1] "{missing}": the template names {missing}, which the call does not pass`},
		{tmpl: []string{"gh", "--token={secret:GH_TOKEN}"}, err: `argv[1] "--token={secret:GH_TOKEN}": a command reads a secret from a keyword argument, ctx.secret("GH_TOKEN")`},
		{tmpl: []string{"{b}", "x"}, err: `argv[0] "{b}": the program must be literal`},
		// A list placeholder is one element per item, none for an empty
		// list, each item as it is.
		{tmpl: []string{"git", "add", "{paths...}"}, want: []string{"git", "add", "a b.go", "{x}", "c;d"}},
		{tmpl: []string{"git", "add", "{none...}", "-A"}, want: []string{"git", "add", "-A"}},
		{tmpl: []string{"head", "{nums...}"}, want: []string{"head", "3", "x"}},
		{tmpl: []string{"ls", "--color={paths...}"}, want: []string{"ls", "--color={paths...}"}},
		// Every item is checked for an option, not only the first.
		{tmpl: []string{"git", "add", "{hostile...}"}, err: "argument would be read as an option: argv[2] {hostile...} item 1 is \"--force\", which starts with \"-\"\n" +
			"argument would be read as an option: argv[2] {hostile...} item 2 is \"-x\", which starts with \"-\""},
		// A flag that selects a command's operands (git add -A) is one
		// of its operands, as mining keeps it: only that flag, only for
		// that command.
		{tmpl: []string{"git", "add", "{all...}"}, want: []string{"git", "add", "-A"}},
		{tmpl: []string{"/usr/bin/git", "add", "{update...}"}, want: []string{"/usr/bin/git", "add", "--update", "docs"}},
		{tmpl: []string{"git", "add", "{allrf...}"}, err: `argument would be read as an option: argv[2] {allrf...} item 1 is "-rf", which starts with "-"`},
		{tmpl: []string{"git", "rm", "{all...}"}, err: `argument would be read as an option: argv[2] {all...} item 0 is "-A", which starts with "-"`},
		{tmpl: []string{"rm", "{all...}"}, err: `argument would be read as an option: argv[1] {all...} item 0 is "-A", which starts with "-"`},
		// After a literal "--" the program reads no options.
		{tmpl: []string{"git", "add", "--", "{hostile...}"}, want: []string{"git", "add", "--", "ok.go", "--force", "-x"}},
		{tmpl: []string{"rm", "--", "{dash}"}, want: []string{"rm", "--", "-rf"}},
		{tmpl: []string{"git", "add", "{sp...}"}, err: `argv[2] {sp...}: sp is string, want a list of strings, one per argument (from the command line: --param sp='["a","b"]')`},
		{tmpl: []string{"git", "add", "{mixed...}"}, err: `argv[2] {mixed...}: mixed item 1 is bool, want a string`},
		{tmpl: []string{"git", "add", "{gone...}"}, err: `argv[2] {gone...}: the template names {gone...}, which the call does not pass`},
		{tmpl: []string{"{paths...}"}, err: `argv[0] "{paths...}": the program must be literal`},
	}
	for _, tt := range tests {
		got, err := e.ExpandArgv(tt.tmpl, args)
		gotErr := ""
		if err != nil {
			gotErr = err.Error()
		}
		if gotErr != tt.err || !slices.Equal(got, tt.want) {
			t.Errorf("expandArgv(%q) = %q, %q; want %q, %q", tt.tmpl, got, gotErr, tt.want, tt.err)
		}
	}
	if _, err := e.ExpandArgv([]string{"rm", "{dash}"}, args); !errors.Is(err, ErrOptionArgument) {
		t.Errorf("expandArgv(option) = %v, want ErrOptionArgument", err)
	}
}

// TestExecExpandHome checks that a "~" that starts an argument, as mined
// workflows write the traces' home directory, reaches the program as the
// home directory of the environment the workflow runs in.
func TestExecExpandHome(t *testing.T) {
	args := map[string]any{"C": "~/shop", "home": "~", "user": "~bob/x", "inside": "a~/b"}
	tmpl := []string{"make", "-C", "{C}", "{home}", "{user}", "{inside}", "--dir=~/x"}
	tests := []struct {
		environ []string
		want    []string
	}{
		{[]string{"HOME=/home/alice"}, []string{"make", "-C", "/home/alice/shop", "/home/alice", "~bob/x", "a~/b", "--dir=~/x"}},
		{[]string{`USERPROFILE=C:\Users\alice`}, []string{"make", "-C", `C:\Users\alice/shop`, `C:\Users\alice`, "~bob/x", "a~/b", "--dir=~/x"}},
		{nil, []string{"make", "-C", "~/shop", "~", "~bob/x", "a~/b", "--dir=~/x"}},
	}
	for _, tt := range tests {
		e := New(context.Background(), &runconfig.Config{Dir: "/ws"}, Settings{Environ: tt.environ})
		got, err := e.ExpandArgv(tmpl, args)
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("with %q: expandArgv(%q) = %q, %v; want %q", tt.environ, tmpl, got, err, tt.want)
		}
	}
}

// FuzzExecPlaceholders checks that candidate.ArgvPlaceholders, which
// mining and code generation use to read a template, finds exactly the
// placeholders expandWith substitutes: given a value for each, expansion
// succeeds and leaves none; without one, it fails.
func FuzzExecPlaceholders(f *testing.F) {
	for _, s := range []string{"{b}", "{module}@{version}", "--title={title}", "{{b}}", "{x{y}", "{a b}", "{secret:T}", "}{", "{workspace}", "{1}"} {
		f.Add(s)
	}
	e := New(context.Background(), &runconfig.Config{Dir: "/ws"}, Settings{DryRun: true})
	f.Fuzz(func(t *testing.T, el string) {
		args := map[string]any{}
		var idents []string
		for _, n := range candidate.ArgvPlaceholders(el) {
			if !strings.HasPrefix(n, "secret:") {
				args[n] = "V"
				idents = append(idents, n)
			}
		}
		if _, err := e.expandWith(el, args, nil, nil); err != nil {
			t.Fatalf("expandWith(%q, %v) = %v, want success", el, args, err)
		}
		for _, n := range idents {
			if n == "workspace" {
				continue // the workspace root stands in for a missing one
			}
			less := maps.Clone(args)
			delete(less, n)
			if _, err := e.expandWith(el, less, nil, nil); err == nil {
				t.Fatalf("expandWith(%q) without %s succeeded, want a missing-argument error", el, n)
			}
		}
	})
}

// TestCappedBuffer: a command's output is kept up to the cap, across
// writes of any size, and the text says how much was dropped.
func TestCappedBuffer(t *testing.T) {
	tests := []struct {
		writes []string
		want   string
	}{
		{[]string{"ab", "c"}, "abc"},
		{[]string{"abcd"}, "abcd"},
		{[]string{"abcdef"}, "abcd\n[2 more bytes not kept]"},
		{[]string{"ab", "cdef", "gh"}, "abcd\n[4 more bytes not kept]"},
		{[]string{"abcd", "", "e"}, "abcd\n[1 more bytes not kept]"},
	}
	for _, tt := range tests {
		b := &capped.Buffer{Max: 4}
		for _, w := range tt.writes {
			if n, err := b.Write([]byte(w)); n != len(w) || err != nil {
				t.Fatalf("Write(%q) = %d, %v; a capped command must not see a short write", w, n, err)
			}
		}
		if got := b.String(); got != tt.want {
			t.Errorf("writes %q: String() = %q, want %q", tt.writes, got, tt.want)
		}
	}
	if maxExecOutput != 1<<20 {
		t.Errorf("maxExecOutput = %d; the documentation promises 1 MiB per stream", maxExecOutput)
	}
}

// TestStderrTail: a failing command's error quotes the end of its stderr,
// never splitting a character.
func TestStderrTail(t *testing.T) {
	if got := stderrTail("  short\n"); got != "short" {
		t.Errorf("stderrTail(short) = %q", got)
	}
	long := "é" + strings.Repeat("x", maxStderr-4) + "end" // the cut falls inside é
	got := stderrTail(long)
	if !utf8.ValidString(got) || !strings.HasSuffix(got, "end") || len(got) > len("…")+maxStderr {
		t.Errorf("stderrTail of %d bytes = %q…, %d bytes, valid UTF-8 %v", len(long), got[:10], len(got), utf8.ValidString(got))
	}
}
