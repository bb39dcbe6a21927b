package codegen

import (
	"errors"
	"slices"
	"testing"

	"go.starlark.net/resolve"
	"go.starlark.net/starlark"
	"go.starlark.net/syntax"

	"github.com/crystallize-dev/crystallize/internal/candidate"
)

func TestCheck(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want string // "" for no error
	}{
		{
			name: "ok",
			src:  "def wf(ctx, a):\n    return json.encode(struct(a = a, n = len([a])))\n",
		},
		{
			name: "undeclared global",
			src:  "def wf(ctx):\n    return os.system(\"rm\")\n",
			want: "wf.star:2:12: undefined: os",
		},
		{
			name: "several undeclared",
			src:  "def wf(ctx):\n    foo()\n    bar()\n",
			want: "wf.star:2:5: undefined: foo\nwf.star:3:5: undefined: bar",
		},
		{
			name: "syntax error",
			src:  "def wf(ctx)\n    pass\n",
			want: "wf.star:2:1: got newline, want ':'",
		},
		{
			name: "unterminated string",
			src:  "def wf(ctx):\n    ctx.tool(\"x)\n",
			want: "wf.star:2:14: unexpected newline in string",
		},
		{
			name: "set is not in the dialect",
			src:  "def wf(ctx):\n    return set([1])\n",
			want: "wf.star:2:12: this Starlark dialect does not support sets",
		},
		{
			name: "no function",
			src:  "x = 1\n",
			want: "wf.star:1:1: no top-level function; a workflow defines one, def wf(ctx, ...)",
		},
		{
			name: "two functions",
			src:  "def wf(ctx):\n    pass\n\ndef helper(ctx):\n    pass\n",
			want: "wf.star:4:1: second top-level function helper; a workflow defines exactly one",
		},
		{
			name: "wrong name",
			src:  "def other(ctx):\n    pass\n",
			want: "wf.star:1:5: function other, want wf",
		},
		{
			name: "no parameters",
			src:  "def wf():\n    pass\n",
			want: "wf.star:1:5: function wf has no parameters, want ctx first",
		},
		{
			name: "ctx not first",
			src:  "def wf(a, ctx):\n    pass\n",
			want: "wf.star:1:8: first parameter of wf is not ctx",
		},
		{
			name: "exec",
			src:  "def wf(ctx, b):\n    ctx.exec(\"git checkout\", [\"git\", \"checkout\", \"-b\", \"{b}\"], b = b, **{\"x y\": 1})\n",
		},
		{
			name: "exec argv not literal",
			src:  "def wf(ctx, b, argv):\n    ctx.exec(\"git\", argv)\n    ctx.exec(\"git\", [\"git\", b, 3])\n    ctx.exec(b, [])\n",
			want: "wf.star:2:21: ctx.exec: the argv must be a list literal of string literals\n" +
				"wf.star:3:29: ctx.exec: argv element 1 is not a string literal\n" +
				"wf.star:3:32: ctx.exec: argv element 2 is not a string literal\n" +
				"wf.star:4:14: ctx.exec: the name must be a string literal\n" +
				"wf.star:4:17: ctx.exec: the argv is empty",
		},
		{
			name: "exec program",
			src:  "def wf(ctx, p):\n    ctx.exec(\"run\", [\"{p}\", \"x\"], p = p)\n    ctx.exec(\"run\", [\"\"])\n",
			want: "wf.star:2:22: ctx.exec: the program \"{p}\" must be a literal name or path\n" +
				"wf.star:3:22: ctx.exec: the program \"\" must be a literal name or path",
		},
		{
			name: "exec arguments",
			src:  "def wf(ctx, a, kw):\n    ctx.exec(\"run\")\n    ctx.exec(\"run\", [\"x\"], \"y\")\n    ctx.exec(\"run\", *a)\n    ctx.exec(\"run\", [\"x\"], **kw)\n",
			want: "wf.star:2:5: ctx.exec: takes a name and an argv list before its keyword arguments, got 1 positional arguments\n" +
				"wf.star:3:5: ctx.exec: takes a name and an argv list before its keyword arguments, got 3 positional arguments\n" +
				"wf.star:4:21: ctx.exec: *args would hide the name or the argv; write them out\n" +
				"wf.star:4:5: ctx.exec: takes a name and an argv list before its keyword arguments, got 1 positional arguments",
		},
		{
			name: "ctx with default",
			src:  "def wf(ctx = None):\n    pass\n",
			want: "wf.star:1:8: first parameter of wf is not ctx",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Check("wf.star", []byte(tt.src), "wf")
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Errorf("Check(%q) = %q, want %q", tt.src, got, tt.want)
			}
		})
	}
}

// TestCheckErrorTypes checks the documented error types.
func TestCheckErrorTypes(t *testing.T) {
	err := Check("wf.star", []byte("def wf(ctx):\n    x = (\n"), "wf")
	var serr syntax.Error
	if !errors.As(err, &serr) || serr.Pos.Line != 3 {
		t.Errorf("Check(syntax error) = %#v, want a syntax.Error on line 3", err)
	}
	err = Check("wf.star", []byte("def wf(ctx):\n    foo()\n"), "wf")
	var rerr resolve.Error
	if !errors.As(err, &rerr) || rerr.Pos.Line != 2 {
		t.Errorf("Check(undefined name) = %#v, want a resolve.Error on line 2", err)
	}
}

// TestCheckAnyName checks that an empty want accepts any function name.
func TestCheckAnyName(t *testing.T) {
	if err := Check("wf.star", []byte("def anything(ctx):\n    pass\n"), ""); err != nil {
		t.Errorf("Check(want \"\") = %v, want nil", err)
	}
}

func TestPredeclared(t *testing.T) {
	p := Predeclared()
	if !slices.Equal(p, []string{"json", "struct"}) {
		t.Errorf("Predeclared() = %q, want [json struct]", p)
	}
	p[0] = "changed"
	if Predeclared()[0] != "json" {
		t.Error("Predeclared returns shared state")
	}
}

// TestIdentifierAvoidsUniverse keeps candidate.Identifier's reserved names
// in step with go.starlark.net: no identifier it returns may shadow a
// universal or predeclared name.
func TestIdentifierAvoidsUniverse(t *testing.T) {
	for _, name := range append(starlark.Universe.Keys(), Predeclared()...) {
		if got := candidate.Identifier(name); got == name {
			t.Errorf("candidate.Identifier(%q) = %q, a name the universe or host binds", name, got)
		}
	}
}

// TestIsIdentifierScans checks candidate.IsIdentifier against the Starlark
// scanner: a name it accepts must work as a keyword argument, and every
// keyword and reserved word must be refused.
func TestIsIdentifierScans(t *testing.T) {
	words := []string{
		"and", "break", "continue", "def", "elif", "else", "for", "if", "in",
		"lambda", "load", "not", "or", "pass", "return", "while", "as",
		"async", "await", "class", "del", "except", "finally", "from",
		"global", "import", "is", "nonlocal", "raise", "try", "with", "yield",
		"x", "None", "True", "len", "ctx", "_", "_1", "A_b", "ifx", "r", "b", "rb",
	}
	for _, w := range words {
		_, err := fileOptions().ParseExpr("x.star", "f("+w+" = 1)", 0)
		if ok := candidate.IsIdentifier(w); ok && err != nil {
			t.Errorf("candidate.IsIdentifier(%q) = true, but f(%s = 1) does not parse: %v", w, w, err)
		} else if !ok && err == nil {
			t.Errorf("candidate.IsIdentifier(%q) = false, but f(%s = 1) parses", w, w)
		}
	}
}
