package skill

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"go.yaml.in/yaml/v3"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/codegen"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

var update = flag.Bool("update", os.Getenv("CRYSTALLIZE_UPDATE") != "", "rewrite golden files (or set CRYSTALLIZE_UPDATE=1)")

// skillCase is the input of a skill golden test, testdata/skillmd/NAME.json:
// options, the gate's trace results and a candidate. The outputs are
// testdata/skillmd/NAME.SKILL.md and NAME.gate.json, which the input glob
// skips.
type skillCase struct {
	Options struct {
		PackageName  string `json:"package_name"`
		WorkflowName string `json:"workflow_name"`
	} `json:"options"`
	GateTraces []GateTrace          `json:"gate_traces"`
	Candidate  *candidate.Candidate `json:"candidate"`
}

func readSkillCase(t *testing.T, path string) (skillCase, codegen.Options) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	dec.DisallowUnknownFields()
	var sc skillCase
	if err := dec.Decode(&sc); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return sc, codegen.Options{PackageName: sc.Options.PackageName, WorkflowName: sc.Options.WorkflowName}
}

// workflowFor is the Workflow every caller of this package passes: the
// function name code generation gives c under opts, and its package.
func workflowFor(c *candidate.Candidate, opts codegen.Options) Workflow {
	return Workflow{Func: codegen.FuncName(c, opts), Package: opts.PackageName}
}

// golden compares got with the file at path, or rewrites it with -update.
func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", path, diff)
	}
}

func TestSkillGolden(t *testing.T) {
	inputs, err := filepath.Glob("testdata/skillmd/*.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(inputs) == 0 {
		t.Fatal("no golden inputs in testdata/skillmd")
	}
	for _, in := range inputs {
		if strings.HasSuffix(in, ".gate.json") {
			continue // an output
		}
		name := strings.TrimSuffix(filepath.Base(in), ".json")
		t.Run(name, func(t *testing.T) {
			sc, opts := readSkillCase(t, in)
			c := sc.Candidate
			g := NewGate(c, workflowFor(c, opts), sc.GateTraces)
			md, err := Render(c, g, workflowFor(c, opts))
			if err != nil {
				t.Fatalf("Skill: %v", err)
			}
			gate, err := GateJSON(g)
			if err != nil {
				t.Fatalf("GateJSON: %v", err)
			}
			golden(t, filepath.Join("testdata", "skillmd", name+".SKILL.md"), md)
			golden(t, filepath.Join("testdata", "skillmd", name+".gate.json"), gate)

			// A generated SKILL.md passes every specification check; the
			// only finding, for a rejected gate, is the rejection.
			var want []string
			if !g.Accepted() {
				want = []string{CodeGateRejected}
			}
			dir := filepath.Join("skill", candidate.SkillName(c))
			if diff := cmp.Diff(want, codes(Check(dir, md, gate))); diff != "" {
				t.Errorf("Check codes (-want +got):\n%s\n%v", diff, Check(dir, md, gate))
			}
			if diff := cmp.Diff(want, codes(Check(dir, md, nil))); diff != "" {
				t.Errorf("Check without gate codes (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSkillGoldenDecisions pins which golden case is accepted, so that a
// change to the gate rule cannot silently turn every golden into the same
// decision.
func TestSkillGoldenDecisions(t *testing.T) {
	want := map[string]string{
		"accepted": GateAccepted, "hostile": GateAccepted, "rejected": GateRejected,
		"exec": GateAccepted,
		// Its traces are all sources: without a held-out trace the gate
		// refuses it, and the golden shows a rejected skill's rendering.
		"decision": GateRejected,
	}
	inputs, err := filepath.Glob(filepath.Join("testdata", "skillmd", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range inputs {
		if name := strings.TrimSuffix(filepath.Base(in), ".json"); !strings.HasSuffix(in, ".gate.json") && want[name] == "" {
			t.Errorf("golden case %s has no decision pinned here", name)
		}
	}
	for name, decision := range want {
		sc, opts := readSkillCase(t, filepath.Join("testdata", "skillmd", name+".json"))
		if g := NewGate(sc.Candidate, workflowFor(sc.Candidate, opts), sc.GateTraces); g.Decision != decision {
			t.Errorf("NewGate(%s).Decision = %q, want %q; reasons %v", name, g.Decision, decision, g.RejectionReasons)
		}
	}
}

func TestNewSkillGate(t *testing.T) {
	safe := &candidate.Candidate{ID: "c1", Name: "flow"}
	unsafe := &candidate.Candidate{ID: "c2", Name: "flow", RejectionReasons: []candidate.Problem{{Code: "divergent_side_effects"}}}
	src := GateTrace{TraceID: "s", Role: RoleSource, Status: candidate.StatusPass}
	held := GateTrace{TraceID: "h", Role: RoleHeldout, Status: candidate.StatusPass}
	tests := []struct {
		name   string
		c      *candidate.Candidate
		traces []GateTrace
		want   []string // rejection codes; none means accepted
	}{
		{"accepted", safe, []GateTrace{held, src}, nil},
		{"unmatched heldout does not reject", safe, []GateTrace{src, held, {TraceID: "u", Role: RoleHeldout, Status: candidate.StatusUnmatched}}, nil},
		{"no heldout", safe, []GateTrace{src}, []string{CodeHeldoutMissing}},
		{"only unmatched heldout", safe, []GateTrace{src, {TraceID: "u", Role: RoleHeldout, Status: candidate.StatusUnmatched}}, []string{CodeHeldoutMissing}},
		{"heldout drift", safe, []GateTrace{src, held, {TraceID: "d", Role: RoleHeldout, Status: candidate.StatusFail}}, []string{CodeHeldoutReplayFailed}},
		{"source fails", safe, []GateTrace{{TraceID: "s", Role: RoleSource, Status: candidate.StatusFail}, held}, []string{CodeSourceReplayFailed}},
		{"no source", safe, []GateTrace{held}, []string{CodeSourceReplayMissing}},
		{"unsafe candidate", unsafe, []GateTrace{src, held}, []string{CodeCandidateRejected}},
		{"bad role", safe, []GateTrace{src, held, {TraceID: "x", Role: "sibling"}}, []string{CodeGateTraceInvalid}},
		{"nothing", nil, nil, []string{CodeCandidateRejected, CodeSourceReplayMissing, CodeHeldoutMissing}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewGate(tt.c, workflowFor(tt.c, codegen.Options{}), tt.traces)
			if diff := cmp.Diff(tt.want, codes(g.RejectionReasons)); diff != "" {
				t.Errorf("rejection codes (-want +got):\n%s", diff)
			}
			wantDecision := GateAccepted
			if len(tt.want) > 0 {
				wantDecision = GateRejected
			}
			if g.Decision != wantDecision || g.Accepted() != (len(tt.want) == 0) {
				t.Errorf("Decision = %q, Accepted() = %v, want %q", g.Decision, g.Accepted(), wantDecision)
			}
		})
	}
}

func TestSkillGateTally(t *testing.T) {
	c := &candidate.Candidate{ID: "c", Name: "flow"}
	g := NewGate(c, workflowFor(c, codegen.Options{WorkflowName: "Other Name"}), []GateTrace{
		{TraceID: "h2", Role: RoleHeldout, Status: candidate.StatusUnmatched},
		{TraceID: "h1", Role: RoleHeldout, Status: candidate.StatusFail},
		{TraceID: "s1", Role: RoleSource, Status: candidate.StatusPass},
		{TraceID: "h0", Role: RoleHeldout, Status: candidate.StatusPass},
	})
	if g.SourceReplay != (GateReplay{Compared: 1, Passed: 1}) || g.HeldoutReplay != (GateHeldout{Compared: 2, Passed: 1, Unmatched: 1}) {
		t.Errorf("tallies = %+v %+v", g.SourceReplay, g.HeldoutReplay)
	}
	var order []string
	for _, tr := range g.ComparedTraces {
		order = append(order, tr.TraceID)
	}
	if diff := cmp.Diff([]string{"s1", "h0", "h1", "h2"}, order); diff != "" {
		t.Errorf("compared trace order (-want +got):\n%s", diff)
	}
	if want := candidate.SkillID("c", "other_name"); g.SkillID != want {
		t.Errorf("SkillID = %q, want %q (the workflow name from the options)", g.SkillID, want)
	}
}

func TestSkillGateMismatch(t *testing.T) {
	c := &candidate.Candidate{ID: "c1", Name: "flow"}
	good := NewGate(c, workflowFor(c, codegen.Options{}), nil)
	tests := []struct {
		name string
		gate func(g Gate) Gate
		want string
	}{
		{"candidate", func(g Gate) Gate { g.WorkflowCandidateID = "c2"; return g },
			`skill for candidate c1: gate is for candidate "c2", not "c1"`},
		{"skill id", func(g Gate) Gate { g.SkillID = "skill_x"; return g },
			`skill for candidate c1: gate skill id "skill_x", want "` + good.SkillID + `"`},
		{"skill name", func(g Gate) Gate { g.SkillName = "other"; return g },
			`skill for candidate c1: gate skill name "other", want "flow"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Render(c, tt.gate(good), workflowFor(c, codegen.Options{}))
			if err == nil || err.Error() != tt.want {
				t.Errorf("Skill error = %v, want %q", err, tt.want)
			}
		})
	}
	if _, err := Render(nil, good, workflowFor(nil, codegen.Options{})); err == nil || err.Error() != "no candidate" {
		t.Errorf("Render(nil) error = %v, want \"no candidate\"", err)
	}
	// A skill names its workflow; without the name there is no skill id
	// to check the gate against.
	if _, err := Render(c, good, Workflow{}); err == nil || err.Error() != "skill for candidate c1: no workflow function name" {
		t.Errorf("Render(Workflow{}) error = %v, want the missing function name", err)
	}
}

// TestSkillLicense covers the license key, which Render leaves out until
// Workflow has a license.
func TestSkillLicense(t *testing.T) {
	c := &candidate.Candidate{ID: "c1", Name: "flow"}
	g := NewGate(c, workflowFor(c, codegen.Options{}), nil)
	md, err := renderSkill(c, g, workflowFor(c, codegen.Options{}), "Apache-2.0\n")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "\nlicense: \"Apache-2.0\"\n") {
		t.Errorf("renderSkill with a license lacks it:\n%s", md)
	}
	md, err = Render(c, g, workflowFor(c, codegen.Options{}))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(md), "license:") {
		t.Errorf("Skill without a license writes one:\n%s", md)
	}
}

// TestSkillLimits renders a candidate whose every text is far beyond the
// specification's limits.
func TestSkillLimits(t *testing.T) {
	long := strings.Repeat("word ", 400)
	var steps []candidate.Step
	var params []candidate.Parameter
	for i := range 200 {
		name := "tool_" + strings.Repeat("x", 50) + string(rune('a'+i%26)) + strings.Repeat("y", i)
		steps = append(steps, candidate.Step{Index: i + 1, Kind: trace.KindToolCall, Name: name})
		params = append(params, candidate.Parameter{Name: "p" + strings.Repeat("q", i)})
	}
	c := &candidate.Candidate{ID: "c", Name: long, Steps: steps, Parameters: params, Capabilities: []string{long}}
	g := NewGate(c, workflowFor(c, codegen.Options{}), []GateTrace{{TraceID: "s", Role: RoleSource, Status: candidate.StatusPass}, {TraceID: "h", Role: RoleHeldout, Status: candidate.StatusPass}})
	md, err := Render(c, g, workflowFor(c, codegen.Options{}))
	if err != nil {
		t.Fatal(err)
	}
	gate, _ := GateJSON(g)
	if probs := Check(candidate.SkillName(c), md, gate); len(probs) > 0 {
		t.Errorf("Check = %v", probs)
	}
	fm, err := parseFrontmatter(md)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range fm {
		switch p.key {
		case "description":
			if n := utf8.RuneCountInString(p.val.str); n > MaxDescriptionLen {
				t.Errorf("description has %d runes, more than %d", n, MaxDescriptionLen)
			}
		case "compatibility":
			if n := utf8.RuneCountInString(p.val.str); n != MaxCompatibilityLen {
				t.Errorf("compatibility has %d runes, want it cut to %d", n, MaxCompatibilityLen)
			}
		}
	}
}

// accepted is a SKILL.md and gate.json that pass Check; the broken
// cases below each change one thing.
const acceptedSkill = `---
name: "flow"
description: "Runs the flow procedure. Use it when a task asks for it."
compatibility: "crystallize workflow runtime; tools: a.b"
metadata:
  gate_decision: "accepted"
  skill_id: "skill_1"
  workflow_candidate_id: "c1"
allowed-tools: "a.b"
---

# flow
`

const acceptedGate = `{"schema": "crystallize.skill.gate", "schema_version": 1, "skill_id": "skill_1",
 "skill_name": "flow", "workflow_candidate_id": "c1", "decision": "accepted", "rejection_reasons": []}`

func TestCheckSkill(t *testing.T) {
	if probs := Check("skills/flow", []byte(acceptedSkill), []byte(acceptedGate)); len(probs) > 0 {
		t.Fatalf("Check(accepted) = %v", probs)
	}
	edit := func(old, new string) string {
		if !strings.Contains(acceptedSkill, old) {
			t.Fatalf("accepted skill lacks %q", old)
		}
		return strings.Replace(acceptedSkill, old, new, 1)
	}
	tests := []struct {
		name string
		dir  string
		src  string
		gate string // "-" for no gate
		want []candidate.Problem
	}{
		{"no frontmatter", "flow", "# flow\n", "-",
			[]candidate.Problem{{Code: CodeFrontmatter, Message: `line 1: no frontmatter: SKILL.md must start with a "---" line`}}},
		{"not closed", "flow", "---\nname: flow\n", "-",
			[]candidate.Problem{{Code: CodeFrontmatter, Message: `line 1: frontmatter is not closed by a "---" line`}}},
		{"plain value with colon", "flow", edit(`description: "Runs the flow procedure. Use it when a task asks for it."`, "description: Use when: always"), "-",
			[]candidate.Problem{{Code: CodeFrontmatter, Message: `line 3: mapping values are not allowed in this context`}}},
		{"duplicate key", "flow", edit("allowed-tools", "name: \"flow\"\nallowed-tools"), "-",
			[]candidate.Problem{{Code: CodeFrontmatter, Message: `line 9: duplicate key "name"`}}},
		{"anchor", "flow", edit(`name: "flow"`, `name: &n "flow"`), "-",
			[]candidate.Problem{{Code: CodeFrontmatter, Message: "line 2: anchors, aliases and tags are not supported"}}},
		{"alias", "flow", edit(`allowed-tools: "a.b"`, `allowed-tools: &t "a.b"`+"\nx: *t"), "-",
			[]candidate.Problem{{Code: CodeFrontmatter, Message: "line 9: anchors, aliases and tags are not supported"}}},
		{"undefined alias", "flow", edit(`name: "flow"`, "name: *flow"), "-",
			[]candidate.Problem{{Code: CodeFrontmatter, Message: "unknown anchor 'flow' referenced"}}},
		{"tag", "flow", edit(`name: "flow"`, `name: !!str flow`), "-",
			[]candidate.Problem{{Code: CodeFrontmatter, Message: "line 2: anchors, aliases and tags are not supported"}}},
		{"complex key", "flow", edit(`allowed-tools: "a.b"`, "? [a, b]\n: c"), "-",
			[]candidate.Problem{{Code: CodeFrontmatter, Message: "line 9: complex keys are not supported"}}},
		{"tab indentation", "flow", edit(`  skill_id: "skill_1"`, "\tskill_id: \"skill_1\""), "-",
			[]candidate.Problem{{Code: CodeFrontmatter, Message: "line 7: found character that cannot start any token"}}},
		{"unknown key", "flow", edit("allowed-tools", "when_to_use: \"x\"\nallowed-tools"), "-",
			[]candidate.Problem{{Code: CodeUnknownKey, Path: "when_to_use", Message: `line 9: unknown top-level key "when_to_use"; the specification allows name, description, license, compatibility, metadata and allowed-tools (put other fields under metadata)`}}},
		{"name pattern", "Flow_1", edit(`name: "flow"`, `name: "Flow_1"`), "-",
			[]candidate.Problem{{Code: CodeName, Path: "name", Message: `line 2: name "Flow_1" is not lowercase letters and digits in groups joined by single hyphens`}}},
		{"name double hyphen", "a--b", edit(`name: "flow"`, `name: a--b`), "-",
			[]candidate.Problem{{Code: CodeName, Path: "name", Message: `line 2: name "a--b" is not lowercase letters and digits in groups joined by single hyphens`}}},
		{"name too long", "", edit(`name: "flow"`, "name: "+strings.Repeat("a", 65)), "-",
			[]candidate.Problem{{Code: CodeName, Path: "name", Message: "line 2: name has 65 characters; at most 64 are allowed"}}},
		{"name number", "", edit(`name: "flow"`, "name: 42"), "-",
			[]candidate.Problem{{Code: CodeName, Path: "name", Message: "line 2: name is a number, not a string"}}},
		{"name missing", "", strings.Replace(acceptedSkill, "name: \"flow\"\n", "", 1), "-",
			[]candidate.Problem{{Code: CodeName, Path: "name", Message: "missing name"}}},
		{"name dir mismatch", "skills/other", acceptedSkill, "-",
			[]candidate.Problem{{Code: CodeNameDirMismatch, Path: "name", Message: `name "flow" differs from its directory "other"`}}},
		{"description empty", "flow", edit(`description: "Runs the flow procedure. Use it when a task asks for it."`, `description: ""`), "-",
			[]candidate.Problem{{Code: CodeDescription, Path: "description", Message: "line 3: description is empty"}}},
		{"description too long", "flow", edit(`description: "Runs the flow procedure. Use it when a task asks for it."`, "description: >\n  "+strings.Repeat("é", 1025)), "-",
			[]candidate.Problem{{Code: CodeDescription, Path: "description", Message: "line 3: description has 1026 characters; at most 1024 are allowed"}}},
		{"description list", "flow", edit(`description: "Runs the flow procedure. Use it when a task asks for it."`, "description:\n  - a\n  - b"), "-",
			[]candidate.Problem{{Code: CodeDescription, Path: "description", Message: "line 3: description is a sequence, not a string"}}},
		{"compatibility too long", "flow", edit(`compatibility: "crystallize workflow runtime; tools: a.b"`, "compatibility: '"+strings.Repeat("x", 501)+"'"), "-",
			[]candidate.Problem{{Code: CodeCompatibility, Path: "compatibility", Message: "line 4: compatibility has 501 characters; it must have 1 to 500"}}},
		{"license not string", "flow", edit("allowed-tools", "license: true\nallowed-tools"), "-",
			[]candidate.Problem{{Code: CodeFrontmatter, Path: "license", Message: "line 9: license is a boolean, not a string"}}},
		{"allowed-tools list", "flow", edit(`allowed-tools: "a.b"`, "allowed-tools: [a.b, c]"), "-",
			[]candidate.Problem{{Code: CodeAllowedTools, Path: "allowed-tools", Message: "line 9: allowed-tools is a sequence; it must be one space-separated string"}}},
		{"metadata number", "flow", edit(`  skill_id: "skill_1"`, "  skill_id: \"skill_1\"\n  version: 1.0"), "-",
			[]candidate.Problem{{Code: CodeMetadata, Path: "metadata.version", Message: `line 8: metadata value "version" is a number, not a string (quote it)`}}},
		{"metadata nested", "flow", edit(`  skill_id: "skill_1"`, "  skill_id: \"skill_1\"\n  paths:\n    - a"), "-",
			[]candidate.Problem{{Code: CodeMetadata, Path: "metadata.paths", Message: `line 8: metadata value "paths" is a sequence, not a string (quote it)`}}},
		{"metadata scalar", "flow", "---\nname: flow\ndescription: d\nmetadata: x\n---\n", "-",
			[]candidate.Problem{{Code: CodeMetadata, Path: "metadata", Message: "line 4: metadata is a string, not a mapping"}}},
		{"gate other skill id", "flow", acceptedSkill, strings.Replace(acceptedGate, `"skill_id": "skill_1"`, `"skill_id": "skill_2"`, 1),
			[]candidate.Problem{{Code: CodeGateMismatch, Path: "metadata.skill_id", Message: `SKILL.md metadata.skill_id is "skill_1" but gate.json skill_id is "skill_2"`}}},
		{"gate other candidate", "flow", acceptedSkill, strings.Replace(acceptedGate, `"workflow_candidate_id": "c1"`, `"workflow_candidate_id": "c9"`, 1),
			[]candidate.Problem{{Code: CodeGateMismatch, Path: "metadata.workflow_candidate_id", Message: `SKILL.md metadata.workflow_candidate_id is "c1" but gate.json workflow_candidate_id is "c9"`}}},
		{"gate not json", "flow", acceptedSkill, "{",
			[]candidate.Problem{{Code: CodeGateMismatch, Path: "gate.json", Message: "gate.json: unexpected end of JSON input"}}},
		{"gate case-folded name", "flow", acceptedSkill, strings.Replace(acceptedGate, `"decision": "accepted"`, `"decision": "accepted", "Decision": "rejected"`, 1),
			[]candidate.Problem{{Code: CodeGateMismatch, Path: "gate.json:$.Decision", Message: `gate.json:2: key "Decision" is not "decision": names are case-sensitive`}}},
		{"gate schema", "flow", acceptedSkill, `{"schema": "x", "schema_version": 1}`,
			[]candidate.Problem{{Code: CodeGateMismatch, Path: "gate.json:$.schema", Message: `gate.json is "x" version 1, not "crystallize.skill.gate" version 1`}}},
		{"gate rejected", "flow", acceptedSkill, strings.Replace(acceptedGate, `"decision": "accepted"`, `"decision": "rejected"`, 1),
			[]candidate.Problem{
				{Code: CodeGateMismatch, Path: "metadata.gate_decision", Message: `SKILL.md metadata.gate_decision is "accepted" but gate.json decision is "rejected"`},
				{Code: CodeGateRejected, Path: "gate.json:$.decision", Message: `gate.json decision is "rejected" with 0 rejection reasons; only accepted skills ship`},
			}},
		{"metadata rejected", "flow", edit(`gate_decision: "accepted"`, `gate_decision: "rejected"`), "-",
			[]candidate.Problem{{Code: CodeGateRejected, Path: "metadata.gate_decision", Message: `the skill's replay gate decision is "rejected", not "accepted"`}}},
	}
	seen := map[string]bool{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var gate []byte
			if tt.gate != "-" {
				gate = []byte(tt.gate)
			}
			got := Check(tt.dir, []byte(tt.src), gate)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Check (-want +got):\n%s\nsource:\n%s", diff, tt.src)
			}
		})
		for _, p := range tt.want {
			seen[p.Code] = true
		}
	}
	for _, code := range []string{CodeFrontmatter, CodeUnknownKey, CodeName, CodeNameDirMismatch,
		CodeDescription, CodeCompatibility, CodeAllowedTools, CodeMetadata, CodeGateMismatch, CodeGateRejected} {
		if !seen[code] {
			t.Errorf("no broken case for code %s", code)
		}
	}
}

// TestFrontmatterSubset checks that YAML forms hand-written skills use are
// read as YAML reads them.
func TestFrontmatterSubset(t *testing.T) {
	src := "---\r\n" +
		"# a comment\r\n" +
		"name: my-skill   # trailing comment\r\n" +
		"description: >-\r\n" +
		"  Folded text\r\n" +
		"  on two lines.\r\n" +
		"\r\n" +
		"  New paragraph.\r\n" +
		"license: 'it''s MIT'\r\n" +
		"compatibility: |\r\n" +
		"  line one\r\n" +
		"    indented\r\n" +
		"metadata:\r\n" +
		"  \"quoted key\": \"a\\tb\\u00e9\\x41\\U0001F680\\\\\\\"\"\r\n" +
		"  plain: continues\r\n" +
		"    on the next line\r\n" +
		"  flow: {a: 1,\r\n" +
		"    b: 2}\r\n" +
		"  nothing:\r\n" +
		"allowed-tools: Read Grep\r\n" +
		"---\r\nbody\r\n"
	pairs, err := parseFrontmatter([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	var walk func(prefix string, pairs []yamlPair)
	walk = func(prefix string, pairs []yamlPair) {
		for _, p := range pairs {
			got[prefix+p.key] = string(p.val.typ) + ":" + p.val.str
			walk(prefix+p.key+".", p.val.pairs)
		}
	}
	walk("", pairs)
	want := map[string]string{
		"name":                "string:my-skill",
		"description":         "string:Folded text on two lines.\nNew paragraph.",
		"license":             "string:it's MIT",
		"compatibility":       "string:line one\n  indented\n",
		"metadata":            "mapping:",
		"metadata.quoted key": "string:a\tbéA🚀\\\"",
		"metadata.plain":      "string:continues on the next line",
		"metadata.flow":       "mapping:",
		"metadata.flow.a":     "number:1",
		"metadata.flow.b":     "number:2",
		"metadata.nothing":    "null:",
		"allowed-tools":       "string:Read Grep",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("parseFrontmatter (-want +got):\n%s", diff)
	}
}

func TestYAMLQuoteRoundTrip(t *testing.T) {
	for _, s := range []string{
		"", "plain", `"quoted" \ back`, "new\nline\r\ttab", "\x00\x07\x1b\x7f", "\u0085\u2028\u2029\ufeff\u202e",
		"é 日本 🚀", "--- \n---", "key: value # not a comment", "\U0010FFFF", "\xff invalid",
	} {
		q := yamlQuote(s)
		if strings.ContainsAny(q, "\n\r") {
			t.Errorf("yamlQuote(%q) = %q spans lines", s, q)
		}
		var doc yaml.Node
		if err := yaml.Unmarshal([]byte("k: "+q), &doc); err != nil || len(doc.Content) == 0 || len(doc.Content[0].Content) != 2 {
			t.Errorf("yaml.Unmarshal(k: yamlQuote(%q)) = %v; want one key back", s, err)
			continue
		}
		got := doc.Content[0].Content[1].Value
		if want := string([]rune(s)); got != want {
			t.Errorf("yaml reads yamlQuote(%q) as %q, want %q", s, got, want)
		}
	}
}

func TestTruncateRunes(t *testing.T) {
	tests := []struct {
		s    string
		n    int
		want string
	}{
		{"abc", 3, "abc"},
		{"abcd", 3, "ab…"},
		{"ab cd", 4, "ab…"},
		{"ééééé", 4, "ééé…"},
	}
	for _, tt := range tests {
		if got := truncateRunes(tt.s, tt.n); got != tt.want {
			t.Errorf("truncateRunes(%q, %d) = %q, want %q", tt.s, tt.n, got, tt.want)
		}
	}
}

func TestMarkdownEscapes(t *testing.T) {
	tests := []struct {
		f        func(string) string
		in, want string
	}{
		{mdCode, "plain", "`plain`"},
		{mdCode, "a`b", "``a`b``"},
		{mdCode, "`x`", "`` `x` ``"},
		{mdCode, "", "`\"\"`"},
		{mdCode, "two\nlines", "`two lines`"},
		{mdCell, "a|b", "`a\\|b`"},
		{mdText, "<script>*x*</script>\n# h", `\<script\>\*x\*\</script\> \# h`},
	}
	for _, tt := range tests {
		if got := tt.f(tt.in); got != tt.want {
			t.Errorf("escape(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func FuzzSkill(f *testing.F) {
	f.Add("release_package_maintenance", "git.checkout", "repo_path", "sha256:ab", "release-workflows")
	f.Add("\"\"\"\n---\nname: x", "a b\tc", "key: value", "---", "evil\npkg")
	f.Add("名前 Ünïcödé", "\u202etool", "\u2028", "\x00", "")
	f.Add(strings.Repeat("x_", 80), "`|<b>|`", "#", "'", "\\")
	// Invalid UTF-8 in the candidate id: each byte must become U+FFFD in
	// SKILL.md as it does in gate.json.
	f.Add("0", "0", "0", "\xe3\xc8", "0")
	f.Fuzz(func(t *testing.T, name, stepName, key, value, pkg string) {
		c := &candidate.Candidate{
			ID:         "candidate_" + value,
			Name:       name,
			Parameters: []candidate.Parameter{{Name: key, Key: key, SourcePaths: []string{value}, Type: value, Required: true}},
			Steps: []candidate.Step{
				{
					Index: 1, Kind: trace.KindToolCall, Name: stepName,
					Arguments: []candidate.Argument{
						{Key: key, Kind: candidate.ArgParameter, Parameter: key},
						{Key: value, Kind: candidate.ArgConstant, Value: value},
						{Key: "path", Kind: candidate.ArgConstant, Value: value},
					},
					SideEffects:  []trace.SideEffect{{Kind: key, Target: value, Capability: name}},
					Capabilities: []string{value},
					Approval:     &trace.Approval{Boundary: value, Prompt: stepName, Required: true},
				},
				{
					Index: 2, Kind: trace.Kind(key), Name: value, Segment: candidate.Fuzzy, ReviewNotes: []string{name},
					Arguments: []candidate.Argument{
						{Key: stepName, Kind: candidate.ArgBinding, Binding: &candidate.Binding{FromStep: 1, FromPath: value}},
						{Key: name, Kind: candidate.ArgSecret, Secret: value},
					},
				},
			},
			Examples:     []candidate.Example{{TraceID: name, SourceHash: value}, {TraceID: stepName}},
			Capabilities: []string{key, value},
			Warnings:     []candidate.Problem{{Code: key, Message: value, Step: 1}},
		}
		opts := codegen.Options{PackageName: pkg, WorkflowName: key}
		g := NewGate(c, workflowFor(c, opts), []GateTrace{
			{TraceID: name, SourceHash: value, Role: RoleSource, Status: candidate.StatusPass},
			{TraceID: value, SourceHash: key, Role: RoleHeldout, Status: candidate.StatusPass},
		})
		if !g.Accepted() {
			t.Fatalf("gate rejected: %v", g.RejectionReasons)
		}
		md, err := Render(c, g, workflowFor(c, opts))
		if err != nil {
			t.Fatal(err)
		}
		gate, err := GateJSON(g)
		if err != nil {
			t.Fatal(err)
		}
		sn := candidate.SkillName(c)
		if !skillNamePattern.MatchString(sn) || len(sn) > candidate.MaxSkillNameLen {
			t.Fatalf("candidate.SkillName(%q) = %q", name, sn)
		}
		if probs := Check("skill/"+sn, md, gate); len(probs) > 0 {
			t.Fatalf("Check = %v\n%s", probs, md)
		}
		// The frontmatter reads back as written: no text can end a
		// scalar early or add a key.
		pairs, err := parseFrontmatter(md)
		if err != nil {
			t.Fatal(err)
		}
		var keys []string
		for _, p := range pairs {
			keys = append(keys, p.key)
		}
		if diff := cmp.Diff([]string{"name", "description", "compatibility", "metadata", "allowed-tools"}, dropMissing(keys, "allowed-tools")); diff != "" {
			t.Fatalf("frontmatter keys (-want +got):\n%s", diff)
		}
		for _, p := range pairs {
			if p.key == "metadata" {
				for _, m := range p.val.pairs {
					if m.key == "workflow_candidate_id" && m.val.str != string([]rune(c.ID)) {
						t.Fatalf("workflow_candidate_id = %q, want %q", m.val.str, c.ID)
					}
				}
			}
		}
		// Body lines never start a new frontmatter or a heading from
		// untrusted text.
		body := string(md)[strings.Index(string(md)[4:], "\n---\n")+9:]
		for _, line := range strings.Split(body, "\n") {
			if line == "---" {
				t.Fatalf("body has a --- line:\n%s", md)
			}
		}
	})
}

// dropMissing returns keys with want appended when it is absent, so that
// the optional allowed-tools (left out when no tool name is usable) does
// not fail the key order check.
func dropMissing(keys []string, want string) []string {
	for _, k := range keys {
		if k == want {
			return keys
		}
	}
	return append(keys, want)
}

func codes(ps []candidate.Problem) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Code)
	}
	return out
}

// The goal a person gave the agent is the end of the description, on one
// line, within the specification's limit.
func TestSkillDescriptionGoal(t *testing.T) {
	for _, goal := range []string{
		"Tidy the module,\nrun the tests\tand push.",
		strings.Repeat("Run every test again and push the fix. ", 60), // 2,340 characters
	} {
		c := &candidate.Candidate{ID: "c", Name: "go_test_git_push", Description: goal,
			Steps: []candidate.Step{{Index: 1, Kind: trace.KindToolCall, Name: "go test"}, {Index: 2, Kind: trace.KindToolCall, Name: "git push"}}}
		g := NewGate(c, workflowFor(c, codegen.Options{}), []GateTrace{{TraceID: "s", Role: RoleSource, Status: candidate.StatusPass}, {TraceID: "h", Role: RoleHeldout, Status: candidate.StatusPass}})
		md, err := Render(c, g, workflowFor(c, codegen.Options{}))
		if err != nil {
			t.Fatal(err)
		}
		gate, _ := GateJSON(g)
		if probs := Check(candidate.SkillName(c), md, gate); len(probs) > 0 {
			t.Errorf("Check = %v", probs)
		}
		fm, err := parseFrontmatter(md)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, p := range fm {
			if p.key != "description" {
				continue
			}
			found = true
			flat := strings.Join(strings.Fields(goal), " ")
			want := " Goal: " + flat
			if n := utf8.RuneCountInString(p.val.str); n > MaxDescriptionLen {
				t.Errorf("description has %d runes, more than %d", n, MaxDescriptionLen)
			}
			if len(want) < 200 && !strings.HasSuffix(p.val.str, want) {
				t.Errorf("description = %q, want it to end with %q", p.val.str, want)
			}
			if len(want) > 200 && !strings.Contains(p.val.str, " Goal: Run every test again") {
				t.Errorf("description = %q, want the goal's start", p.val.str)
			}
		}
		if !found {
			t.Error("no description")
		}
	}
}
