package codegen

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

var update = flag.Bool("update", os.Getenv("CRYSTALLIZE_UPDATE") != "", "rewrite golden files (or set CRYSTALLIZE_UPDATE=1)")

// goldenCase is the input of a golden test, testdata/NAME.json: options
// and either a candidate (rendered by Workflow) or a report (rendered by
// NoCandidate). The output is testdata/NAME.star.
type goldenCase struct {
	Options struct {
		PackageName  string `json:"package_name"`
		WorkflowName string `json:"workflow_name"`
	} `json:"options"`
	Candidate *candidate.Candidate `json:"candidate"`
	Report    *candidate.Report    `json:"report"`
}

// readCase decodes a golden input the way the pipeline decodes candidates:
// with UseNumber, so constants hold json.Number.
func readCase(t *testing.T, path string) goldenCase {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	dec.DisallowUnknownFields()
	var gc goldenCase
	if err := dec.Decode(&gc); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return gc
}

func TestGolden(t *testing.T) {
	inputs, err := filepath.Glob("testdata/*.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(inputs) == 0 {
		t.Fatal("no golden inputs in testdata")
	}
	for _, in := range inputs {
		name := strings.TrimSuffix(filepath.Base(in), ".json")
		t.Run(name, func(t *testing.T) {
			gc := readCase(t, in)
			opts := Options{PackageName: gc.Options.PackageName, WorkflowName: gc.Options.WorkflowName}
			var got []byte
			var want string
			switch {
			case gc.Candidate != nil:
				got, err = Workflow(gc.Candidate, opts)
				if err != nil {
					t.Fatalf("Workflow: %v", err)
				}
				want = FuncName(gc.Candidate, opts)
			case gc.Report != nil:
				got = NoCandidate(gc.Report, opts)
				want = FuncName(nil, opts)
			default:
				t.Fatalf("%s: neither candidate nor report", in)
			}
			if err := Check(name+".star", got, want); err != nil {
				t.Fatalf("Check: %v\n%s", err, got)
			}
			golden := filepath.Join("testdata", name+".star")
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			wantSrc, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if diff := cmp.Diff(string(wantSrc), string(got)); diff != "" {
				t.Errorf("%s mismatch (-want +got):\n%s", golden, diff)
			}
		})
	}
}

// TestDeterministic renders a candidate with many map keys repeatedly:
// Go's map order is random, the output must not be.
func TestDeterministic(t *testing.T) {
	obj := map[string]any{}
	for _, k := range strings.Fields("q w e r t y u i o p a s d f g h j k l z x c v b n m") {
		obj[k] = map[string]any{k + "1": k, k + "2": []any{k}}
	}
	c := &candidate.Candidate{
		ID: "candidate_x", Name: "det",
		Steps: []candidate.Step{{Index: 1, Kind: trace.KindToolCall, Name: "t",
			Arguments: []candidate.Argument{{Key: "obj", Kind: candidate.ArgConstant, Value: obj}}}},
	}
	first, err := Workflow(c, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for range 20 {
		got, err := Workflow(c, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, first) {
			t.Fatalf("Workflow output differs between runs (-first +now):\n%s", cmp.Diff(string(first), string(got)))
		}
	}
}

func TestWorkflowErrors(t *testing.T) {
	step := func(index int, args ...candidate.Argument) candidate.Step {
		return candidate.Step{Index: index, Kind: trace.KindToolCall, Name: "t", Arguments: args}
	}
	tests := []struct {
		name string
		c    *candidate.Candidate
		want string
	}{
		{
			name: "nil",
			c:    nil,
			want: "no candidate",
		},
		{
			name: "indexes",
			c:    &candidate.Candidate{ID: "c1", Steps: []candidate.Step{step(1), step(1), step(0)}},
			want: "candidate c1: $.steps[1].index: index 1 does not follow 1; step indexes are 1-based and increasing\n" +
				"candidate c1: $.steps[2].index: index 0 does not follow 1; step indexes are 1-based and increasing",
		},
		{
			name: "arguments",
			c: &candidate.Candidate{
				ID:         "c2",
				Parameters: []candidate.Parameter{{Name: "a"}, {Name: "a"}},
				Steps: []candidate.Step{
					step(1,
						candidate.Argument{Key: "p", Kind: candidate.ArgParameter, Parameter: "missing"},
						candidate.Argument{Key: "b", Kind: candidate.ArgBinding, Binding: &candidate.Binding{FromStep: 1, FromPath: "$"}},
						candidate.Argument{Key: "s", Kind: candidate.ArgSecret},
						candidate.Argument{Key: "k", Kind: "mystery"},
						candidate.Argument{Key: "n", Kind: candidate.ArgConstant, Value: json.Number("01")},
						candidate.Argument{Key: "f", Kind: candidate.ArgConstant, Value: func() {}},
						candidate.Argument{Key: "nb", Kind: candidate.ArgBinding},
					),
					step(2,
						candidate.Argument{Key: "x", Kind: candidate.ArgConstant, Value: 1},
						candidate.Argument{Key: "x", Kind: candidate.ArgConstant, Value: 2},
						candidate.Argument{Key: "y", Kind: candidate.ArgBinding, Binding: &candidate.Binding{FromStep: 1, FromPath: "items[0]"}},
						candidate.Argument{Key: "z", Kind: candidate.ArgBinding, Binding: &candidate.Binding{FromStep: 1, FromPath: "$.a[x]"}},
					),
				},
			},
			want: `candidate c2: $.parameters[1].name: duplicate parameter "a"` + "\n" +
				"candidate c2: $.steps[0].arguments[1].binding.from_step: step 1 does not come before step 1\n" +
				`candidate c2: $.steps[0].arguments[0].parameter: unknown parameter "missing"` + "\n" +
				"candidate c2: $.steps[0].arguments[2].secret: secret argument without a secret id\n" +
				`candidate c2: $.steps[0].arguments[3].kind: unknown argument kind "mystery"` + "\n" +
				`candidate c2: $.steps[0].arguments[4].value: invalid number "01"` + "\n" +
				"candidate c2: $.steps[0].arguments[5].value: value of type func(): json: unsupported type: func()\n" +
				"candidate c2: $.steps[0].arguments[6].binding: binding argument without a binding\n" +
				`candidate c2: $.steps[1].arguments[1].key: duplicate key "x"` + "\n" +
				`candidate c2: $.steps[1].arguments[2].binding.from_path: path "items[0]" does not start with $` + "\n" +
				`candidate c2: $.steps[1].arguments[3].binding.from_path: path "$.a[x]": offset 3: index "x" is not an integer`,
		},
		{
			name: "too deep",
			c: &candidate.Candidate{ID: "c3", Steps: []candidate.Step{
				step(1, candidate.Argument{Key: "v", Kind: candidate.ArgConstant, Value: nest(maxDepth + 1)}),
			}},
			want: "candidate c3: $.steps[0].arguments[0].value: value nested deeper than 64 levels",
		},
		{
			name: "argv",
			c: &candidate.Candidate{ID: "c4", Steps: []candidate.Step{
				{Index: 1, Kind: trace.KindToolCall, Name: "git checkout", Argv: []string{"{b}", "checkout", "-b", "{b}", "{branch}", "{secret:TOKEN}", "{{x}}"},
					Arguments: []candidate.Argument{{Key: "b", Kind: candidate.ArgParameter, Parameter: "b"}}},
				{Index: 2, Kind: trace.KindToolCall, Name: "x", Argv: []string{""}},
			}, Parameters: []candidate.Parameter{{Name: "b", Required: true}}},
			want: `candidate c4: $.steps[0].argv[0]: the program "{b}" must be a literal name or path` + "\n" +
				`candidate c4: $.steps[0].argv[4]: "{branch}" names {branch}, which is not an argument of the step` + "\n" +
				`candidate c4: $.steps[0].argv[5]: "{secret:TOKEN}" names a secret; pass it as an argument read with ctx.secret` + "\n" +
				`candidate c4: $.steps[1].argv[0]: the program "" must be a literal name or path`,
		},
		{
			name: "argv list",
			c: &candidate.Candidate{ID: "c5", Steps: []candidate.Step{
				{Index: 1, Kind: trace.KindToolCall, Name: "git add", Argv: []string{"git", "add", "{paths...}", "{gone...}"},
					Arguments: []candidate.Argument{{Key: "paths", Kind: candidate.ArgConstant, Value: "a.go"}}},
			}},
			want: `candidate c5: $.steps[0].argv[2]: "{paths...}" takes a list, but the step's argument paths is string` + "\n" +
				`candidate c5: $.steps[0].argv[3]: "{gone...}" names {gone}, which is not an argument of the step`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src, err := Workflow(tt.c, Options{})
			if err == nil {
				t.Fatalf("Workflow succeeded, want error %q; output:\n%s", tt.want, src)
			}
			if got := err.Error(); got != tt.want {
				t.Errorf("Workflow error (-want +got):\n%s", cmp.Diff(tt.want, got))
			}
		})
	}
}

// nest returns a list nested depth levels deep.
func nest(depth int) any {
	var v any = "x"
	for range depth {
		v = []any{v}
	}
	return v
}

// TestMaxDepthParses shows the nesting limit is safe: the deepest constant
// Workflow accepts still passes Check.
func TestMaxDepthParses(t *testing.T) {
	deep := map[string]any{"a": nest(maxDepth - 1)}
	c := &candidate.Candidate{ID: "c", Name: "deep", Steps: []candidate.Step{{
		Index: 1, Kind: trace.KindModelCall, Name: "m",
		Arguments: []candidate.Argument{{Key: "v", Kind: candidate.ArgConstant, Value: deep}},
	}}}
	src, err := Workflow(c, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := Check("deep.star", src, "deep"); err != nil {
		t.Fatal(err)
	}
}

// TestManyKeywords checks the keyword-argument limit of the Starlark
// compiler: arguments past it go into **{…}.
func TestManyKeywords(t *testing.T) {
	var args []candidate.Argument
	for i := range 300 {
		args = append(args, candidate.Argument{Key: "k" + strings.Repeat("x", i/26) + string(rune('a'+i%26)), Kind: candidate.ArgConstant, Value: i})
	}
	c := &candidate.Candidate{ID: "c", Name: "many", Steps: []candidate.Step{{Index: 1, Kind: trace.KindToolCall, Name: "t", Arguments: args}}}
	src, err := Workflow(c, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := Check("many.star", src, "many"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(src), "**{") {
		t.Errorf("Workflow with 300 keyword arguments has no **{…}:\n%s", src)
	}
}

// TestParameterDefaults checks that optional parameters get a default only
// where Starlark allows one.
func TestParameterDefaults(t *testing.T) {
	c := &candidate.Candidate{ID: "c", Name: "defaults", Parameters: []candidate.Parameter{
		{Name: "a", Required: false}, {Name: "b", Required: true}, {Name: "c", Required: false}, {Name: "d", Required: false},
	}}
	src, err := Workflow(c, Options{})
	if err != nil {
		t.Fatal(err)
	}
	const want = "def defaults(ctx, a, b, c = None, d = None):\n"
	if !strings.Contains(string(src), want) {
		t.Errorf("Workflow output lacks %q:\n%s", want, src)
	}
	if err := Check("defaults.star", src, "defaults"); err != nil {
		t.Fatal(err)
	}
}

func TestFuncName(t *testing.T) {
	tests := []struct {
		c    *candidate.Candidate
		opts Options
		want string
	}{
		{&candidate.Candidate{Name: "release-flow"}, Options{}, "release_flow"},
		{&candidate.Candidate{Name: "if"}, Options{}, "if_"},
		{&candidate.Candidate{}, Options{}, "workflow"},
		{&candidate.Candidate{Name: "x"}, Options{WorkflowName: "Version Bump"}, "version_bump"},
		{nil, Options{}, "no_safe_candidate"},
		{nil, Options{WorkflowName: "version_bump"}, "version_bump"},
	}
	for _, tt := range tests {
		if got := FuncName(tt.c, tt.opts); got != tt.want {
			t.Errorf("FuncName(%+v, %+v) = %q, want %q", tt.c, tt.opts, got, tt.want)
		}
	}
}

func TestNoCandidateNil(t *testing.T) {
	src := NoCandidate(nil, Options{})
	const want = `# no_safe_candidate — mining found no safe crystallization candidate
# traces: 0 read, 0 excluded · candidates: 0 safe, 0 rejected
def no_safe_candidate(ctx):
    """Fails: mining found no safe crystallization candidate."""
    ctx.fail("no safe crystallization candidate")
`
	if diff := cmp.Diff(want, string(src)); diff != "" {
		t.Errorf("NoCandidate(nil) mismatch (-want +got):\n%s", diff)
	}
	if err := Check("none.star", src, "no_safe_candidate"); err != nil {
		t.Fatal(err)
	}
}

func FuzzWorkflow(f *testing.F) {
	f.Add("release", "git.checkout", "repo_path", "value", "param", "$.a[0]", "1.5")
	f.Add("\"\"\"\n", "if", "if", "\x00\\\"", "ctx", `$["odd key"]`, "-0")
	f.Add("", "", "", "", "", "$", "1e999")
	f.Add("lambda", "a\u202eb", "repo-path", "\r\n#", "step1", "$['x\\'y'][-1]", "123456789012345678901234567890")
	f.Fuzz(func(t *testing.T, name, stepName, key, value, param, path, num string) {
		// Keep the inputs valid where the candidate contract requires it,
		// so the fuzzer exercises rendering rather than validation:
		// a malformed number becomes a string, a malformed path "$".
		var numValue any = num
		if trace.IsNumber(num) {
			numValue = json.Number(num)
		}
		if _, err := selector(path); err != nil {
			path = "$"
		}
		c := &candidate.Candidate{
			ID:         "candidate_" + value,
			Name:       name,
			Parameters: []candidate.Parameter{{Name: param, Key: key, Required: true}, {Name: key, Key: param}},
			Steps: []candidate.Step{
				{
					Index: 1, Kind: trace.Kind(stepName), Name: stepName, ResultUsed: true,
					Arguments: []candidate.Argument{
						{Key: key, Kind: candidate.ArgConstant, Value: map[string]any{key: []any{value, numValue}, value: nil}},
						{Key: key + "_", Kind: candidate.ArgParameter, Parameter: param},
					},
					SideEffects:  []trace.SideEffect{{Kind: key, Target: value, Capability: name}},
					Capabilities: []string{value},
					Approval:     &trace.Approval{Boundary: value, Prompt: stepName, Required: true},
					ReviewNotes:  []string{value},
				},
				{
					Index: 2, Kind: trace.KindModelCall, Name: value, Segment: candidate.Fuzzy,
					Arguments: []candidate.Argument{
						{Key: value, Kind: candidate.ArgBinding, Binding: &candidate.Binding{FromStep: 1, FromPath: path}},
						{Key: key, Kind: candidate.ArgSecret, Secret: value + "x"},
					},
				},
				{
					Index: 3, Kind: trace.KindHumanApproval, Name: name,
					Arguments: []candidate.Argument{{Key: param, Kind: candidate.ArgParameter, Parameter: key}},
				},
			},
			Examples: []candidate.Example{{TraceID: name, Source: stepName, SourceHash: value}},
			Warnings: []candidate.Problem{{Code: key, Message: value, Step: 1}},
		}
		// Duplicate parameters and keys are the only invalid inputs left;
		// otherwise Workflow must succeed.
		valid := param != key && quote(key) != quote(value) && quote(key) != quote(key+"_")
		opts := Options{PackageName: value}
		src, err := Workflow(c, opts)
		switch {
		case err == nil:
			if err := Check("fuzz.star", src, FuncName(c, opts)); err != nil {
				t.Fatalf("Workflow output fails Check: %v\n%s", err, src)
			}
		case valid:
			t.Fatalf("Workflow: %v", err)
		}
		r := &candidate.Report{RejectedCandidates: []candidate.Candidate{*c}}
		opts.WorkflowName = name
		if err := Check("none.star", NoCandidate(r, opts), FuncName(nil, opts)); err != nil {
			t.Fatalf("NoCandidate output fails Check: %v", err)
		}
	})
}
