package derive

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"go.starlark.net/starlark"
	"go.starlark.net/syntax"
)

func TestParameter(t *testing.T) {
	tests := []struct {
		name     string
		examples []map[string]string
		target   string
		want     string // "" when nothing should be found
	}{
		{
			name: "branch from module and version",
			examples: []map[string]string{
				{"module": "golang.org/x/text", "version": "v0.14.0", "branch": "deps/text-v0.14.0"},
				{"module": "github.com/spf13/cobra", "version": "v1.10.2", "branch": "deps/cobra-v1.10.2"},
				{"module": "go.starlark.net", "version": "v0.0.1", "branch": "deps/go.starlark.net-v0.0.1"},
			},
			target: "branch",
			want:   `"deps/" + module.split("/")[-1] + "-" + version`,
		},
		{
			name: "title from repository and version",
			examples: []map[string]string{
				{"repo": "acme/widgets", "version": "1.2.0", "title": "Release widgets 1.2.0"},
				{"repo": "acme/gadgets", "version": "2.0.1", "title": "Release gadgets 2.0.1"},
				{"repo": "tools/cli", "version": "0.9.0", "title": "Release cli 0.9.0"},
			},
			target: "title",
			want:   `"Release " + repo.split("/")[-1] + " " + version`,
		},
		{
			name: "tag with upper case and replace",
			examples: []map[string]string{
				{"name": "fix-login", "tag": "FIX_LOGIN"},
				{"name": "add-cache", "tag": "ADD_CACHE"},
				{"name": "drop-v1-api", "tag": "DROP_V1_API"},
			},
			target: "tag",
			want:   `name.upper().replace("-", "_")`,
		},
		{
			name: "a plain copy",
			examples: []map[string]string{
				{"a": "x1", "b": "x1"},
				{"a": "y2", "b": "y2"},
				{"a": "z3", "b": "z3"},
			},
			target: "b",
			want:   `a`,
		},
		{
			name: "lower case of a split",
			examples: []map[string]string{
				{"email": "Ann.Lee@Example.com", "user": "ann.lee"},
				{"email": "Bo@Corp.io", "user": "bo"},
				{"email": "cy@example.org", "user": "cy"},
			},
			target: "user",
			want:   `email.lower().split("@")[0]`,
		},
		{
			name: "constant target is not derived",
			examples: []map[string]string{
				{"a": "x", "b": "main"},
				{"a": "y", "b": "main"},
			},
			target: "b",
		},
		{
			name: "unrelated values",
			examples: []map[string]string{
				{"a": "x", "b": "17"},
				{"a": "y", "b": "42"},
			},
			target: "b",
		},
		{
			name: "two values are a guess",
			examples: []map[string]string{
				{"a": "x1", "b": "x1"},
				{"a": "y2", "b": "y2"},
				{"a": "x1", "b": "x1"},
			},
			target: "b",
		},
		{
			// The patch level and a checkout's index agree by accident;
			// one character out of a version is no evidence.
			name: "a one-character piece is a coincidence",
			examples: []map[string]string{
				{"version": "0.8.0", "repo_path": "/work/harn-0"},
				{"version": "0.8.1", "repo_path": "/work/harn-1"},
				{"version": "0.8.2", "repo_path": "/work/harn-2"},
			},
			target: "repo_path",
		},
		{
			name:     "one example is not evidence",
			examples: []map[string]string{{"a": "x", "b": "x"}},
			target:   "b",
		},
		{
			name: "right on all but one example",
			examples: []map[string]string{
				{"v": "1.0", "tag": "v1.0"},
				{"v": "2.0", "tag": "v2.0"},
				{"v": "3.0", "tag": "release-3.0"},
			},
			target: "tag",
		},
		{
			name: "missing target",
			examples: []map[string]string{
				{"a": "x"},
				{"a": "y"},
			},
			target: "b",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, ok := Parameter(tt.examples, tt.target)
			if tt.want == "" {
				if ok {
					t.Fatalf("Parameter = %s, want none", e)
				}
				return
			}
			if !ok {
				t.Fatalf("Parameter found nothing, want %s", tt.want)
			}
			if e.String() != tt.want {
				t.Errorf("Parameter = %s, want %s", e, tt.want)
			}
			for i, ex := range tt.examples {
				if got, ok := e.Eval(ex); !ok || got != ex[tt.target] {
					t.Errorf("example %d: %s = %q, want %q", i, e, got, ex[tt.target])
				}
			}
		})
	}
}

// The expression Parameter prints must mean the same in Starlark.
func TestDeriveExprIsStarlark(t *testing.T) {
	ex := []map[string]string{
		{"module": "golang.org/x/text", "version": "v0.14.0", "branch": "deps/text-v0.14.0"},
		{"module": "github.com/spf13/cobra", "version": "v1.10.2", "branch": "deps/cobra-v1.10.2"},
		{"module": "go.starlark.net", "version": "v0.0.1", "branch": "deps/go.starlark.net-v0.0.1"},
	}
	e, ok := Parameter(ex, "branch")
	if !ok {
		t.Fatal("no expression")
	}
	src := "def f(module, version):\n    return " + e.String() + "\n"
	globals, err := starlark.ExecFileOptions(&syntax.FileOptions{}, &starlark.Thread{}, "derive.star", src, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range ex {
		res, err := starlark.Call(&starlark.Thread{}, globals["f"], starlark.Tuple{starlark.String(x["module"]), starlark.String(x["version"])}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := starlark.AsString(res); got != x["branch"] {
			t.Errorf("Starlark %s = %v, want %s", e, res, x["branch"])
		}
	}
}

func BenchmarkParameter(b *testing.B) {
	ex := []map[string]string{
		{"module": "golang.org/x/text", "version": "v0.14.0", "repo": "x/text", "branch": "deps/text-v0.14.0"},
		{"module": "github.com/spf13/cobra", "version": "v1.10.2", "repo": "spf13/cobra", "branch": "deps/cobra-v1.10.2"},
		{"module": "go.starlark.net", "version": "v0.0.1", "repo": "google/starlark-go", "branch": "deps/go.starlark.net-v0.0.1"},
	}
	for b.Loop() {
		if _, ok := Parameter(ex, "branch"); !ok {
			b.Fatal("no expression")
		}
	}
}

// A branch and a title built from a version and a repository name are
// derived; the caller passes only the version and the repository.
func TestParameters(t *testing.T) {
	ex := []map[string]string{
		{"repository": "acme/widgets", "version": "1.2.0", "branch": "release/widgets-1.2.0", "title": "Release widgets 1.2.0"},
		{"repository": "acme/gadgets", "version": "2.0.1", "branch": "release/gadgets-2.0.1", "title": "Release gadgets 2.0.1"},
		{"repository": "tools/cli", "version": "0.9.0", "branch": "release/cli-0.9.0", "title": "Release cli 0.9.0"},
	}
	got := Parameters(ex)
	want := map[string]string{
		"branch": `"release/" + repository.split("/")[-1] + "-" + version`,
		"title":  `"Release " + repository.split("/")[-1] + " " + version`,
	}
	if len(got) != len(want) {
		t.Fatalf("Parameters = %v, want %v", got, want)
	}
	for k, w := range want {
		if got[k] == nil || got[k].String() != w {
			t.Errorf("%s = %v, want %s", k, got[k], w)
		}
		for _, r := range Refs(got[k]) {
			if _, derived := got[r]; derived {
				t.Errorf("%s reads %s, which is derived too", k, r)
			}
		}
	}
	if d := Parameters(ex[:1]); len(d) != 0 {
		t.Errorf("Parameters on one example = %v, want none", d)
	}
	if kept := Kept(ex, got); strings.Join(kept, ",") != "repository,version" {
		t.Errorf("Kept = %v, want repository and version", kept)
	}
	if kept := Kept(nil, nil); kept == nil || len(kept) != 0 {
		t.Errorf("Kept without examples = %#v, want an empty list", kept)
	}
}

// Parse reads back exactly what String prints, and nothing else.
func TestParse(t *testing.T) {
	for _, src := range []string{
		`"deps/" + module.split("/")[-1] + "-" + version`,
		`name.upper().replace("-", "_")`,
		`version`,
		`"a\"b\\c" + x.lower() + y.split(".")[0]`,
	} {
		e, err := Parse(src)
		if err != nil {
			t.Errorf("Parse(%q) = %v", src, err)
			continue
		}
		if e.String() != src {
			t.Errorf("Parse(%q).String() = %q", src, e.String())
		}
	}
	for _, src := range []string{
		``,
		`x +`,
		`x.strip()`,
		`x.split("")[0]`,
		`x.split("/")`,
		`"unterminated`,
		`x + __import__("os")`,
		`x; fail()`,
		`x.lower().upper`,
		`(x)`,
	} {
		if e, err := Parse(src); err == nil {
			t.Errorf("Parse(%q) = %s, want an error", src, e)
		}
	}
}

func TestRename(t *testing.T) {
	e, err := Parse(`"v" + version.split("/")[-1] + module`)
	if err != nil {
		t.Fatal(err)
	}
	got := Rename(e, map[string]string{"version": "version_2"}).String()
	if want := `"v" + version_2.split("/")[-1] + module`; got != want {
		t.Errorf("Rename = %s, want %s", got, want)
	}
	if got := Refs(e); len(got) != 2 || got[0] != "module" || got[1] != "version" {
		t.Errorf("Refs = %v, want [module version]", got)
	}
}

// A composite that holds more than the parameters (a title naming the
// previous version too) cannot be derived, and its parts are not derived
// from it either: a commit message is, from module and version.
func TestParametersNeverFromComposite(t *testing.T) {
	ex := []map[string]string{
		{"module": "golang.org/x/net", "version": "v0.33.0", "title": "Bump golang.org/x/net from v0.31.0 to v0.33.0", "message": "deps: bump golang.org/x/net to v0.33.0"},
		{"module": "google.golang.org/grpc", "version": "v1.64.1", "title": "Bump google.golang.org/grpc from v1.62.0 to v1.64.1", "message": "deps: bump google.golang.org/grpc to v1.64.1"},
		{"module": "go.opentelemetry.io/otel", "version": "v1.31.0", "title": "Bump go.opentelemetry.io/otel from v1.28.0 to v1.31.0", "message": "deps: bump go.opentelemetry.io/otel to v1.31.0"},
	}
	got := map[string]string{}
	for k, e := range Parameters(ex) {
		got[k] = e.String()
	}
	want := map[string]string{"message": `"deps: bump " + module + " to " + version`}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Parameters (-want +got):\n%s", diff)
	}
}
