package codegen

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// evalPackCase is the input of an eval pack golden test,
// testdata/evalpack/NAME.json; the output is testdata/evalpack/NAME.toml.
type evalPackCase struct {
	Options struct {
		PackageName  string `json:"package_name"`
		WorkflowName string `json:"workflow_name"`
	} `json:"options"`
	PackageVersion string `json:"package_version"`
	WorkflowPath   string `json:"workflow_path"`
	Fixtures       []struct {
		Path       string `json:"path"`
		TraceID    string `json:"trace_id"`
		SourceHash string `json:"source_hash"`
		Role       string `json:"role"`
	} `json:"fixtures"`
	Candidate *candidate.Candidate `json:"candidate"`
}

func readEvalPackCase(t *testing.T, path string) (*candidate.Candidate, EvalPackInput) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	dec.DisallowUnknownFields()
	var ec evalPackCase
	if err := dec.Decode(&ec); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	in := EvalPackInput{
		Options:        Options{PackageName: ec.Options.PackageName, WorkflowName: ec.Options.WorkflowName},
		PackageVersion: ec.PackageVersion,
		WorkflowPath:   ec.WorkflowPath,
	}
	for _, f := range ec.Fixtures {
		in.Fixtures = append(in.Fixtures, EvalFixture(f))
	}
	return ec.Candidate, in
}

func TestEvalPackGolden(t *testing.T) {
	inputs, err := filepath.Glob("testdata/evalpack/*.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(inputs) == 0 {
		t.Fatal("no golden inputs in testdata/evalpack")
	}
	for _, in := range inputs {
		name := strings.TrimSuffix(filepath.Base(in), ".json")
		t.Run(name, func(t *testing.T) {
			c, input := readEvalPackCase(t, in)
			got, err := EvalPack(c, input)
			if err != nil {
				t.Fatalf("EvalPack: %v", err)
			}
			golden(t, filepath.Join("testdata", "evalpack", name+".toml"), got)

			// The pack reads back with what it was written from.
			m, err := ParseEvalPack(got)
			if err != nil {
				t.Fatalf("ParseEvalPack: %v\n%s", err, got)
			}
			checkRoundTrip(t, c, input, m)
		})
	}
}

// checkRoundTrip compares a parsed pack with the candidate and input it
// was generated from.
func checkRoundTrip(t *testing.T, c *candidate.Candidate, in EvalPackInput, m *EvalManifest) {
	t.Helper()
	fixtures := in.Fixtures
	if fixtures == nil {
		for _, ex := range c.Examples {
			fixtures = append(fixtures, EvalFixture{Path: FixturePath(ex.TraceID), TraceID: ex.TraceID, SourceHash: ex.SourceHash, Role: RoleSource})
		}
	}
	var got []EvalFixture
	var ids []string
	for _, f := range m.Fixtures {
		got = append(got, EvalFixture{Path: f.Path, TraceID: f.TraceID, SourceHash: f.Metadata.SourceHash, Role: f.Metadata.Role})
		ids = append(ids, f.ID)
		if f.Kind != FixtureKindTrace {
			t.Errorf("fixture %q kind = %q, want %q", f.ID, f.Kind, FixtureKindTrace)
		}
	}
	if diff := cmp.Diff(fixtures, got); diff != "" {
		t.Errorf("fixtures (-want +got):\n%s", diff)
	}
	if m.Version != EvalPackVersion || m.Metadata.CandidateID != c.ID || m.Metadata.WorkflowName != FuncName(c, in.Options) ||
		m.Package.Name != in.Options.PackageName || m.Package.Version != in.PackageVersion {
		t.Errorf("header = %+v %+v %+v", m.Version, m.Package, m.Metadata)
	}
	var sources []string
	for _, ex := range c.Examples {
		sources = append(sources, ex.TraceID)
	}
	if diff := cmp.Diff(sources, m.Metadata.SourceTraceIDs); diff != "" {
		t.Errorf("source trace ids (-want +got):\n%s", diff)
	}
	want := []EvalRubric{{
		ID: ShadowRubric, Kind: "deterministic", Description: m.Rubrics[0].Description,
		Assertions: []EvalAssertion{{Kind: ShadowAssertion, Expected: EvalExpected{CandidateID: c.ID, Pass: true, Fixtures: ids}}},
	}}
	if diff := cmp.Diff(want, m.Rubrics); diff != "" {
		t.Errorf("rubrics (-want +got):\n%s", diff)
	}
	if len(m.Cases) != 1 || m.Cases[0].Severity != SeverityBlocking || !slices.Equal(m.Cases[0].Rubrics, []string{ShadowRubric}) {
		t.Errorf("cases = %+v, want one blocking case running %s", m.Cases, ShadowRubric)
	}
}

func TestEvalPackErrors(t *testing.T) {
	c := &candidate.Candidate{ID: "c1", Name: "flow"}
	in := EvalPackInput{Fixtures: []EvalFixture{
		{Path: "fixtures/a.json", TraceID: "a"},
		{Path: "fixtures/../../a.json", TraceID: "a"},
		{Path: "/etc/passwd", TraceID: ""},
		{Path: "", TraceID: "b", Role: "sibling"},
		{Path: "../x.json", TraceID: "c"},
		{Path: `fixtures\d.json`, TraceID: "d"},
	}}
	_, err := EvalPack(c, in)
	want := `candidate c1: fixtures[1].trace_id: duplicate trace id "a"` + "\n" +
		`candidate c1: fixtures[1].path: path "fixtures/../../a.json" is not clean (want "../a.json")` + "\n" +
		"candidate c1: fixtures[2].trace_id: empty trace id\n" +
		`candidate c1: fixtures[2].path: path "/etc/passwd" is absolute; want a path relative to the bundle` + "\n" +
		"candidate c1: fixtures[3].path: empty path\n" +
		`candidate c1: fixtures[3].role: role "sibling"; want "source" or "heldout"` + "\n" +
		`candidate c1: fixtures[4].path: path "../x.json" leaves the bundle` + "\n" +
		`candidate c1: fixtures[5].path: path "fixtures\\d.json" has a backslash, white space or a control character`
	if err == nil {
		t.Fatalf("EvalPack succeeded, want error")
	}
	if diff := cmp.Diff(want, err.Error()); diff != "" {
		t.Errorf("EvalPack error (-want +got):\n%s", diff)
	}
	if _, err := EvalPack(nil, EvalPackInput{}); err == nil || err.Error() != "no candidate" {
		t.Errorf("EvalPack(nil) error = %v, want \"no candidate\"", err)
	}
}

func TestFixturePath(t *testing.T) {
	tests := []struct{ id, want string }{
		{"release_0", "fixtures/release_0.json"},
		{"trace-1.v2", "fixtures/trace-1.v2.json"},
		{"../../etc/passwd", "fixtures/etc-passwd-" + hashOf("../../etc/passwd") + ".json"},
		{".hidden", "fixtures/hidden-" + hashOf(".hidden") + ".json"},
		{"名前", "fixtures/trace-" + hashOf("名前") + ".json"},
		{"", "fixtures/trace-" + hashOf("") + ".json"},
	}
	for _, tt := range tests {
		got := FixturePath(tt.id)
		if got != tt.want {
			t.Errorf("FixturePath(%q) = %q, want %q", tt.id, got, tt.want)
		}
		if msg := checkRelPath(got); msg != "" || !strings.HasPrefix(got, "fixtures/") || strings.Count(got, "/") != 1 {
			t.Errorf("FixturePath(%q) = %q, not a file directly under fixtures/ (%s)", tt.id, got, msg)
		}
	}
}

func hashOf(id string) string { return strings.TrimPrefix(candidate.SkillID(id, ""), "skill_")[:12] }

// validPack is an eval pack ParseEvalPack accepts; the broken cases below
// change one thing each.
const validPack = `version = 1
id = "p-crystallization"

[[fixtures]]
id = "a"
kind = "jsonl-trace"
path = "fixtures/a.json"
[fixtures.metadata]
role = "heldout"

[[rubrics]]
id = "shadow-determinism"
kind = "deterministic"

[[rubrics.assertions]]
kind = "crystallization-shadow"
expected = { candidate_id = "c1", pass = true, fixtures = ["a"] }

[[cases]]
id = "flow-shadow"
rubrics = ["shadow-determinism"]
severity = "blocking"

[metadata]
candidate_id = "c1"
workflow_name = "flow"
source_trace_ids = ["a"]
`

func TestParseEvalPack(t *testing.T) {
	m, err := ParseEvalPack([]byte(validPack))
	if err != nil {
		t.Fatalf("ParseEvalPack(valid): %v", err)
	}
	if got := m.Rubrics[0].Assertions[0].Expected; !got.Pass || got.CandidateID != "c1" {
		t.Errorf("expected = %+v", got)
	}
	edit := func(old, new string) string {
		if !strings.Contains(validPack, old) {
			t.Fatalf("valid pack lacks %q", old)
		}
		return strings.Replace(validPack, old, new, 1)
	}
	tests := []struct {
		name, src string
		want      trace.ErrorList
	}{
		{"syntax", edit(`id = "p-crystallization"`, `id = "p`),
			trace.ErrorList{{Line: 2, Col: 8, Msg: "invalid TOML: strings cannot contain newlines"}}},
		{"no version", strings.Replace(validPack, "version = 1\n", "", 1),
			trace.ErrorList{{Path: "$.version", Msg: "missing version"}}},
		{"string version", edit("version = 1", `version = "1"`),
			trace.ErrorList{{Path: "$.version", Msg: "expected integer, got string"}}},
		{"future version", edit("version = 1", "version = 2\nnew_thing = true"),
			trace.ErrorList{{Path: "$.version", Msg: "unsupported eval pack version 2; this build reads version 1"}}},
		{"unknown and mistyped keys", edit(`severity = "blocking"`, "severty = \"blocking\"\ntrials = 3\nrubrics = \"x\"\n\"odd key\" = 1"),
			trace.ErrorList{
				{Path: `$.cases[0]["odd key"]`, Msg: "unknown key"},
				{Path: "$.cases[0].rubrics", Msg: "expected array of strings, got string"},
				{Path: "$.cases[0].severty", Msg: "unknown key"},
				{Path: "$.cases[0].trials", Msg: "unknown key"},
			}},
		{"mistyped nested", edit("pass = true, fixtures = [\"a\"]", "pass = \"yes\", fixtures = [\"a\", 2]"),
			trace.ErrorList{
				{Path: "$.rubrics[0].assertions[0].expected.fixtures[1]", Msg: "expected string, got integer"},
				{Path: "$.rubrics[0].assertions[0].expected.pass", Msg: "expected boolean, got string"},
			}},
		{"table expected", strings.NewReplacer("version = 1", "version = 1\npackage = 3\ncases = [{id = \"x\"}, 1]",
			"[[cases]]\nid = \"flow-shadow\"\nrubrics = [\"shadow-determinism\"]\nseverity = \"blocking\"", "").Replace(validPack),
			trace.ErrorList{
				{Path: "$.cases", Msg: "expected array of tables, got array"},
				{Path: "$.package", Msg: "expected table, got integer"},
			}},
		{"semantics", strings.NewReplacer(
			`id = "p-crystallization"`, `id = ""`,
			`path = "fixtures/a.json"`, `path = "../a.json"`,
			`role = "heldout"`, `role = "other"`,
			`candidate_id = "c1", pass`, `candidate_id = "c2", pass`,
			`fixtures = ["a"]`, `fixtures = ["a", "b"]`,
			`rubrics = ["shadow-determinism"]`, `rubrics = ["nope"]`,
			`severity = "blocking"`, `severity = "fatal"`,
		).Replace(validPack),
			trace.ErrorList{
				{Path: "$.id", Msg: "missing id"},
				{Path: "$.fixtures[0].path", Msg: `path "../a.json" leaves the bundle`},
				{Path: "$.fixtures[0].metadata.role", Msg: `role "other"; want "source" or "heldout"`},
				{Path: "$.rubrics[0].assertions[0].expected.candidate_id", Msg: `candidate "c2" differs from $.metadata.candidate_id "c1"`},
				{Path: "$.rubrics[0].assertions[0].expected.fixtures[1]", Msg: `unknown fixture "b"`},
				{Path: "$.cases[0].rubrics[0]", Msg: `unknown rubric "nope"`},
				{Path: "$.cases[0].severity", Msg: `severity "fatal"; want "blocking", "warning" or "informational"`},
			}},
		{"duplicates", edit("[[rubrics]]", "[[fixtures]]\nid = \"a\"\nkind = \"\"\n\n[[rubrics]]"),
			trace.ErrorList{
				{Path: "$.fixtures[1].id", Msg: `duplicate fixture id "a"`},
				{Path: "$.fixtures[1].kind", Msg: "missing kind"},
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := ParseEvalPack([]byte(tt.src))
			if err == nil {
				t.Fatalf("ParseEvalPack succeeded: %+v", m)
			}
			var got trace.ErrorList
			if !errors.As(err, &got) {
				t.Fatalf("ParseEvalPack error %v is not a trace.ErrorList", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseEvalPack errors (-want +got):\n%s", diff)
			}
		})
	}
}

// TestEvalPackSchema keeps evalPackSchema, which ParseEvalPack checks
// keys and types against, in step with the toml tags of EvalManifest.
func TestEvalPackSchema(t *testing.T) {
	var walk func(p string, typ reflect.Type, schema map[string]tomlField)
	walk = func(p string, typ reflect.Type, schema map[string]tomlField) {
		seen := map[string]bool{}
		for i := range typ.NumField() {
			f := typ.Field(i)
			key := strings.Split(f.Tag.Get("toml"), ",")[0]
			if key == "-" {
				continue // decoded from other keys, never written
			}
			seen[key] = true
			sf, ok := schema[key]
			if !ok {
				t.Errorf("%s.%s: in EvalManifest but not in evalPackSchema", p, key)
				continue
			}
			var want tomlType
			elem := f.Type
			switch {
			case f.Type.Kind() == reflect.String:
				want = tomlString
			case f.Type.Kind() == reflect.Int:
				want = tomlInt
			case f.Type.Kind() == reflect.Bool:
				want = tomlBool
			case f.Type.Kind() == reflect.Slice && f.Type.Elem().Kind() == reflect.String:
				want = tomlStrings
			case f.Type.Kind() == reflect.Slice:
				want, elem = tomlTables, f.Type.Elem()
			default:
				want = tomlTable
			}
			if sf.typ != want {
				t.Errorf("%s.%s: schema type %s, struct type %s", p, key, sf.typ, want)
			}
			// A table with its own check is the harness case format,
			// decoded through its JSON field names rather than keys.
			if (want == tomlTable || want == tomlTables) && !(sf.check != nil && sf.keys == nil) {
				walk(p+"."+key, elem, sf.keys)
			}
		}
		for key := range schema {
			if !seen[key] {
				t.Errorf("%s.%s: in evalPackSchema but not in EvalManifest", p, key)
			}
		}
	}
	walk("$", reflect.TypeFor[EvalManifest](), evalPackSchema)
}

func FuzzParseEvalPack(f *testing.F) {
	seeds, err := filepath.Glob("testdata/evalpack/*.toml")
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range seeds {
		data, err := os.ReadFile(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(validPack))
	f.Add([]byte(checkPack))
	f.Add([]byte("version = 1\nfixtures = [1, {a = 2}]\n"))
	f.Add([]byte("version = 9223372036854775807"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ParseEvalPack(data)
		if err != nil {
			var list trace.ErrorList
			if !errors.As(err, &list) || len(list) == 0 {
				t.Fatalf("error %v is not a non-empty trace.ErrorList", err)
			}
			return
		}
		if m.Version != EvalPackVersion {
			t.Fatalf("accepted version %d", m.Version)
		}
	})
}

// FuzzEvalPack renders packs from hostile names and ids: the result always
// reads back.
func FuzzEvalPack(f *testing.F) {
	f.Add("release", "release_0", "sha256:ab", "pkg")
	f.Add("\"\"\"\n[x]", "../../etc", "\x00\xff", "a\"]]\n[[b")
	f.Add("", "", "", "")
	f.Fuzz(func(t *testing.T, name, traceID, hash, pkg string) {
		c := &candidate.Candidate{ID: "candidate_" + hash, Name: name,
			Examples: []candidate.Example{{TraceID: traceID, SourceHash: hash}, {TraceID: traceID + "2", SourceHash: hash}}}
		in := EvalPackInput{Options: Options{PackageName: pkg, WorkflowName: name}, PackageVersion: hash, WorkflowPath: "workflow.star"}
		out, err := EvalPack(c, in)
		if traceID == "" {
			if err == nil {
				t.Fatal("EvalPack accepted an empty trace id")
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ParseEvalPack(out); err != nil {
			t.Fatalf("ParseEvalPack: %v\n%s", err, out)
		}
	})
}

// checkPack is a hand-written pack whose cases use assertions of the
// harness case format besides the shadow one.
const checkPack = `version = 1
id = "notes-checks"

[[rubrics]]
id = "output-shape"
kind = "deterministic"

[[rubrics.assertions]]
kind = "json_schema"
[rubrics.assertions.schema]
type = "object"
required = ["title"]

[[rubrics.assertions]]
kind = "json_schema"
schema = '{"type": "object", "properties": {"title": {"type": "string"}}}'

[[rubrics]]
id = "tools"
kind = "agent"

[[rubrics.assertions]]
kind = "tool_call_f1"
threshold = 0.8
calibrated = true

[[rubrics.assertions]]
kind = "trajectory_goal_success"
expected = ["git checkout", "gh pr create"]

[[cases]]
id = "note-json"
rubrics = ["output-shape"]
severity = "blocking"
[cases.input]
output = '{"title": "Release 1.2"}'

[[cases]]
id = "pr-flow"
rubrics = ["tools"]
severity = "blocking"
[cases.input]
trace = "fixtures/t1.json"
expected_tool_calls = [{name = "git checkout", arguments = {b = "fix"}}, {name = "gh pr create"}]
`

func TestParseEvalPackChecks(t *testing.T) {
	m, err := ParseEvalPack([]byte(checkPack))
	if err != nil {
		t.Fatalf("ParseEvalPack: %v", err)
	}
	a := m.Rubrics[0].Assertions
	if a[0].Check == nil || a[0].Check.Type != "json_schema" || string(a[0].Check.Schema) != `{"required":["title"],"type":"object"}` {
		t.Errorf("table schema = %+v", a[0].Check)
	}
	if a[1].Check == nil || !strings.Contains(string(a[1].Check.Schema), `"properties"`) {
		t.Errorf("string schema = %+v", a[1].Check)
	}
	tools := m.Rubrics[1].Assertions
	if c := tools[0].Check; c == nil || c.Type != "tool_call_f1" || c.Threshold == nil || *c.Threshold != 0.8 || !c.Calibrated {
		t.Errorf("tool_call_f1 = %+v", c)
	}
	if c := tools[1].Check; c == nil || !slices.Equal(c.Expected, []string{"git checkout", "gh pr create"}) {
		t.Errorf("trajectory_goal_success = %+v", c)
	}
	if in := m.Cases[0].Input; in == nil || in.Output == nil || *in.Output != `{"title": "Release 1.2"}` {
		t.Errorf("case 0 input = %+v", in)
	}
	in := m.Cases[1].Input
	if in == nil || in.Trace != "fixtures/t1.json" || len(in.ExpectedToolCalls) != 2 || in.ExpectedToolCalls[0].Arguments["b"] != "fix" {
		t.Errorf("case 1 input = %+v", in)
	}

	edit := func(pairs ...string) string {
		for i := 0; i < len(pairs); i += 2 {
			if !strings.Contains(checkPack, pairs[i]) {
				t.Fatalf("check pack lacks %q", pairs[i])
			}
		}
		return strings.NewReplacer(pairs...).Replace(checkPack)
	}
	tests := []struct {
		name, src string
		want      trace.ErrorList
	}{
		{"unknown and mistyped keys", edit("threshold = 0.8", "threshold = \"high\"\nweight = 2\ntype = \"mrr\""),
			trace.ErrorList{
				{Path: "$.rubrics[1].assertions[0].type", Msg: "unknown key (kind names the assertion type)"},
				{Path: "$.rubrics[1].assertions[0].weight", Msg: "unknown key"},
			}},
		{"mistyped value", edit("threshold = 0.8", `threshold = "high"`),
			trace.ErrorList{{Path: "$.rubrics[1].assertions[0].threshold", Msg: "expected float, got string"}}},
		{"threshold range", edit("threshold = 0.8", "threshold = 1.5"),
			trace.ErrorList{{Path: "$.rubrics[1].assertions[0].threshold", Msg: "threshold 1.5 outside [0, 1]"}}},
		{"schema not JSON", edit(`schema = '{"type"`, `schema = '{type`),
			trace.ErrorList{{Path: "$.rubrics[0].assertions[1].schema", Msg: "schema is not JSON: invalid character 't' looking for beginning of object key string"}}},
		{"input", edit(`trace = "fixtures/t1.json"`, "trace = \"../t1.json\"\ntrajectory = [{name = \"x\"}]\ncommand = \"make\"\ntimeout_seconds = 3"),
			trace.ErrorList{
				{Path: "$.cases[1].input.command", Msg: "a bundle's eval runs no commands; record the output in output or output_file"},
				{Path: "$.cases[1].input.timeout_seconds", Msg: "a bundle's eval runs no commands, so nothing times out"},
				{Path: "$.cases[1].input", Msg: "both trace and trajectory"},
				{Path: "$.cases[1].input.trace", Msg: `path "../t1.json" leaves the bundle`},
			}},
		{"unknown input key", edit(`output = '{"title"`, `outptu = '{"title"`),
			trace.ErrorList{{Path: "$.cases[0].input.outptu", Msg: "unknown key"}}},
		{"mistyped input", edit(`{name = "gh pr create"}]`, `{name = 3}]`),
			trace.ErrorList{{Path: "$.cases[1].input.expected_tool_calls.name", Msg: "expected string, got number"}}},
		// encoding/json would take "Name" for "name".
		{"case-folded nested key", edit(`{name = "gh pr create"}]`, `{Name = "gh pr create"}]`),
			trace.ErrorList{{Path: "$.cases[1].input.expected_tool_calls[1].Name", Msg: `key "Name" is not "name": names are case-sensitive`}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := ParseEvalPack([]byte(tt.src))
			var got trace.ErrorList
			if !errors.As(err, &got) {
				t.Fatalf("ParseEvalPack = %+v, %v; want a trace.ErrorList", m, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseEvalPack errors (-want +got):\n%s", diff)
			}
		})
	}
}
