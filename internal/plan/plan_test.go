package plan

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/crystallize-dev/crystallize/internal/codegen"
)

var update = flag.Bool("update", os.Getenv("CRYSTALLIZE_UPDATE") != "", "rewrite golden files and schemas/task-plan.v1.json (or set CRYSTALLIZE_UPDATE=1)")

const (
	schemaFile  = "../../schemas/task-plan.v1.json"
	fixturesDir = "../../../shared/fixtures/harn/task_plan"
)

// harnFixtures returns the shared task-plan fixtures, skipping the test
// when they are absent (a fresh clone) unless
// CRYSTALLIZE_REQUIRE_CONFORMANCE=1 (CI), where absence fails.
func harnFixtures(t testing.TB) []string {
	t.Helper()
	dir, err := filepath.Abs(fixturesDir)
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "0*.json"))
	if len(files) == 0 {
		if os.Getenv("CRYSTALLIZE_REQUIRE_CONFORMANCE") == "1" {
			t.Fatalf("conformance fixtures missing at %s", dir)
		}
		t.Skipf("conformance fixtures not found at %s (set CRYSTALLIZE_REQUIRE_CONFORMANCE=1 to fail instead)", dir)
	}
	return files
}

// TestConformanceHarnFixtures checks the published example plans: each
// validates with no errors and no warnings, compiles and renders.
func TestConformanceHarnFixtures(t *testing.T) {
	files := harnFixtures(t)
	if len(files) < 3 {
		t.Errorf("found %d fixtures, want at least 3", len(files))
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			v := Validate(data)
			if !v.Valid || len(v.Errors) != 0 || len(v.Warnings) != 0 {
				t.Fatalf("Validate = valid %v, errors %v, warnings %v; want valid with none", v.Valid, v.Errors, v.Warnings)
			}
			p, err := Parse(data, f)
			if err != nil {
				t.Fatal(err)
			}
			g, err := Compile(p)
			if err != nil {
				t.Fatalf("Compile: %v", err)
			}
			if len(g.Nodes) != len(p.Nodes) || g.Entry != p.Entry {
				t.Errorf("Compile: %d nodes, entry %q; want %d, %q", len(g.Nodes), g.Entry, len(p.Nodes), p.Entry)
			}
			for _, n := range p.Nodes {
				if got := g.Nodes[n.ID]["metadata"].(map[string]any)["task_plan_kind"]; got != n.Kind {
					t.Errorf("node %s: metadata.task_plan_kind = %v, want %s", n.ID, got, n.Kind)
				}
			}
			m := Mermaid(p)
			if !strings.HasPrefix(m, "flowchart TD\n") || strings.Count(m, "\n") < len(p.Nodes)+len(p.Edges)+1 {
				t.Errorf("Mermaid =\n%s\nwant a flowchart with every node and edge", m)
			}
		})
	}
}

// TestSchemaFile checks that the published schema is the one the
// validator applies. -update rewrites the published copy.
func TestSchemaFile(t *testing.T) {
	if *update {
		if err := os.WriteFile(schemaFile, Schema(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(schemaFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, Schema()) {
		t.Errorf("%s differs from the embedded schema; run go test ./internal/plan -update", schemaFile)
	}
	var doc map[string]any
	if err := json.Unmarshal(got, &doc); err != nil {
		t.Fatal(err)
	}
	if doc["$schema"] != "https://json-schema.org/draft/2020-12/schema" || doc["$id"] != SchemaID {
		t.Errorf("$schema, $id = %v, %v; want draft 2020-12 and %s", doc["$schema"], doc["$id"], SchemaID)
	}
	if _, err := compiledSchema(); err != nil {
		t.Errorf("schema does not compile: %v", err)
	}
}

// base is a small valid plan that each case below breaks in one way.
const base = `{
  "schema_version": "1",
  "objective": "o",
  "entry": "a",
  "nodes": {
    "a": {"kind": "read_fact", "prompt": "p", "tools": ["read"]},
    "b": {"kind": "agent_loop", "prompt": "p", "tools": ["read", "edit"], "effects": ["writes_files"], "agent_loop": {"max_iterations": 2}},
    "v": {"kind": "verify", "verify": {"command": "true", "expect_status": 0}}
  },
  "edges": [{"from": "a", "to": "b"}, {"from": "b", "to": "v"}],
  "capabilities": {"tools": ["read", "edit", "run"], "side_effect_level": "writes_files"}
}`

// mutate returns base changed by f.
func mutate(t *testing.T, f func(m map[string]any)) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(base), &m); err != nil {
		t.Fatal(err)
	}
	f(m)
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func nodes(m map[string]any) map[string]any { return m["nodes"].(map[string]any) }

func node(m map[string]any, id string) map[string]any { return nodes(m)[id].(map[string]any) }

func addEdge(m map[string]any, e map[string]any) { m["edges"] = append(m["edges"].([]any), e) }

// addLeaf adds node c after v.
func addLeaf(m map[string]any, c map[string]any) {
	nodes(m)["c"] = c
	addEdge(m, map[string]any{"from": "v", "to": "c"})
}

type found struct{ Code, Path string }

// TestValidateCodes breaks the base plan once per code and asserts the
// exact problems: code and path, errors then warnings.
func TestValidateCodes(t *testing.T) {
	budget := func(k string, v any) func(m map[string]any) {
		return func(m map[string]any) { m["budgets"] = map[string]any{k: v} }
	}
	failures := func(v any) func(m map[string]any) { return budget("consecutive_failures", v) }
	tests := []struct {
		name     string
		raw      string // used instead of mutate when set
		f        func(m map[string]any)
		errors   []found
		warnings []found
	}{
		{name: "base", f: func(map[string]any) {}},
		{name: "invalid_json", raw: `{"nodes": `, errors: []found{{"invalid_json", "$"}}},
		{name: "not_a_dict", raw: `["a"]`, errors: []found{{"not_a_dict", "$"}}},
		{name: "shape unknown member", f: func(m map[string]any) { node(m, "a")["bogus"] = 1 }, errors: []found{{"shape", "$.nodes.a.bogus"}}},
		{name: "shape type", f: func(m map[string]any) { node(m, "a")["tools"] = "read" }, errors: []found{{"shape", "$.nodes.a.tools"}}},
		{name: "shape missing edge end", f: func(m map[string]any) { addEdge(m, map[string]any{"from": "a"}) }, errors: []found{{"shape", "$.edges[2].to"}}},
		{name: "extension allowed", f: func(m map[string]any) { node(m, "a")["x-note"] = 1; m["x-owner"] = "me" }},
		{name: "schema_version_mismatch", f: func(m map[string]any) { m["schema_version"] = "2" }, errors: []found{{"schema_version_mismatch", "$.schema_version"}}},
		{name: "schema_version missing", f: func(m map[string]any) { delete(m, "schema_version") }, errors: []found{{"schema_version_mismatch", "$.schema_version"}}},
		{name: "no_nodes", f: func(m map[string]any) { m["nodes"] = map[string]any{}; delete(m, "edges") }, errors: []found{{"no_nodes", "$.nodes"}}},
		{name: "entry_missing", f: func(m map[string]any) { delete(m, "entry") }, errors: []found{{"entry_missing", "$.entry"}}},
		{name: "entry_not_found", f: func(m map[string]any) { m["entry"] = "zz" }, errors: []found{{"entry_not_found", "$.entry"}}},
		{name: "node_id_mismatch", f: func(m map[string]any) { node(m, "a")["id"] = "other" }, errors: []found{{"node_id_mismatch", "$.nodes.a.id"}}},
		{name: "unknown_kind", f: func(m map[string]any) { node(m, "a")["kind"] = "frob" }, errors: []found{{"unknown_kind", "$.nodes.a.kind"}}},
		{name: "unknown_kind missing", f: func(m map[string]any) { delete(node(m, "a"), "kind") }, errors: []found{{"unknown_kind", "$.nodes.a.kind"}}},
		{name: "edge_from_unknown", f: func(m map[string]any) { addEdge(m, map[string]any{"from": "zz", "to": "a"}) }, errors: []found{{"edge_from_unknown", "$.edges[2].from"}}},
		{name: "edge_to_unknown", f: func(m map[string]any) { addEdge(m, map[string]any{"from": "a", "to": "zz"}) }, errors: []found{{"edge_to_unknown", "$.edges[2].to"}}},
		{name: "duplicate_edge", f: func(m map[string]any) { addEdge(m, map[string]any{"from": "a", "to": "b"}) }, errors: []found{{"duplicate_edge", "$.edges[2]"}}},
		{name: "cycle", f: func(m map[string]any) { addEdge(m, map[string]any{"from": "v", "to": "a"}) }, errors: []found{{"cycle", "$.edges[0]"}}},
		{name: "cycle self loop", f: func(m map[string]any) { addEdge(m, map[string]any{"from": "b", "to": "b"}) }, errors: []found{{"cycle", "$.edges[2]"}}},
		{name: "cycle through branch allowed", f: func(m map[string]any) { addEdge(m, map[string]any{"from": "v", "to": "a", "branch": "fail"}) }},
		{name: "agent_loop_missing_prompt", f: func(m map[string]any) { delete(node(m, "b"), "prompt") }, errors: []found{{"agent_loop_missing_prompt", "$.nodes.b.prompt"}}},
		{name: "sub_agent_missing_worker", f: func(m map[string]any) {
			addLeaf(m, map[string]any{"kind": "sub_agent", "sub_agent": map[string]any{"preset": "x"}})
		}, errors: []found{{"sub_agent_missing_worker", "$.nodes.c.sub_agent.worker_name"}}},
		{name: "command_missing_tool", f: func(m map[string]any) {
			addLeaf(m, map[string]any{"kind": "deterministic_command", "command": map[string]any{"args": []any{"x"}}})
		}, errors: []found{{"command_missing_tool", "$.nodes.c.command.tool"}}},
		{name: "human_gate_missing_approval", f: func(m map[string]any) { addLeaf(m, map[string]any{"kind": "human_gate"}) },
			errors: []found{{"human_gate_missing_approval", "$.nodes.c.human_gate.approval_id"}}},
		{name: "human_gate_missing_approval empty block", f: func(m map[string]any) {
			addLeaf(m, map[string]any{"kind": "human_gate", "human_gate": map[string]any{"prompt": "ok?"}})
		}, errors: []found{{"human_gate_missing_approval", "$.nodes.c.human_gate.approval_id"}}},
		{name: "human_gate canonical block", f: func(m map[string]any) {
			addLeaf(m, map[string]any{"kind": "human_gate", "human_gate": map[string]any{"approval_id": "ship", "prompt": "Ship?", "skippable": true}})
		}},
		{name: "human_gate_missing_approval alias", f: func(m map[string]any) {
			addLeaf(m, map[string]any{"kind": "human_gate", "approval": map[string]any{"prompt": "ok?"}})
		}, errors: []found{{"human_gate_missing_approval", "$.nodes.c.approval.id"}}},
		{name: "human_gate alias accepted", f: func(m map[string]any) {
			addLeaf(m, map[string]any{"kind": "human_gate", "approval": map[string]any{"id": "ship"}})
		}},
		{name: "human_gate_conflict", f: func(m map[string]any) {
			addLeaf(m, map[string]any{"kind": "human_gate", "approval": map[string]any{"id": "a"}, "human_gate": map[string]any{"approval_id": "b"}})
		}, errors: []found{{"human_gate_conflict", "$.nodes.c.approval"}}},
		{name: "shape human_gate unknown member", f: func(m map[string]any) {
			addLeaf(m, map[string]any{"kind": "human_gate", "human_gate": map[string]any{"approval_id": "a", "id": "a"}})
		}, errors: []found{{"shape", "$.nodes.c.human_gate.id"}}},
		{name: "map_missing_inputs", f: func(m map[string]any) {
			addLeaf(m, map[string]any{"kind": "workflow_map", "map": map[string]any{"max_concurrency": 2}})
		}, errors: []found{{"map_missing_inputs", "$.nodes.c.map.items"}}},
		{name: "node_tool_not_granted", f: func(m map[string]any) { node(m, "a")["tools"] = []any{"read", "curl"} },
			errors: []found{{"node_tool_not_granted", "$.nodes.a.tools[1]"}}},
		{name: "node_tool_not_granted command", f: func(m map[string]any) {
			addLeaf(m, map[string]any{"kind": "deterministic_command", "command": map[string]any{"tool": "deploy"}})
		}, errors: []found{{"node_tool_not_granted", "$.nodes.c.command.tool"}}},
		{name: "node_tool_not_granted without capabilities", f: func(m map[string]any) { delete(m, "capabilities"); delete(node(m, "b"), "effects") },
			errors: []found{{"node_tool_not_granted", "$.nodes.a.tools[0]"}, {"node_tool_not_granted", "$.nodes.b.tools[0]"}, {"node_tool_not_granted", "$.nodes.b.tools[1]"}}},
		{name: "verification_primary_unknown", f: func(m map[string]any) { m["verification"] = map[string]any{"primary": "zz"} },
			errors: []found{{"verification_primary_unknown", "$.verification.primary"}}},
		{name: "unknown_resolver_unknown", f: func(m map[string]any) {
			m["unknowns"] = []any{map[string]any{"id": "u", "resolved_by_node": "zz"}}
		}, errors: []found{{"unknown_resolver_unknown", "$.unknowns[0].resolved_by_node"}}},
		{name: "budget_max_nodes", f: budget("max_nodes", 2), errors: []found{{"budget_max_nodes", "$.budgets.max_nodes"}}},
		{name: "budget_max_nodes invalid", f: budget("max_nodes", 0), errors: []found{{"budget_max_nodes", "$.budgets.max_nodes"}}},
		{name: "budget_max_depth", f: budget("max_depth", 2), errors: []found{{"budget_max_depth", "$.budgets.max_depth"}}},
		// steps (node runs): 3; tool calls: a 1 + b (2 turns, the last offers none) 1 + v 1 = 3;
		// model calls: a 2 (a turn for its tool, one to answer) + b 2 = 4.
		{name: "budget_max_steps", f: budget("max_steps", 2), errors: []found{{"budget_max_steps", "$.budgets.max_steps"}}},
		{name: "budget_max_model_calls default", f: func(m map[string]any) { node(m, "b")["agent_loop"] = map[string]any{"max_iterations": 70} },
			errors: []found{{"budget_max_model_calls", "$.budgets.max_model_calls"}}},
		{name: "budget_max_tool_calls", f: budget("max_tool_calls", 2), errors: []found{{"budget_max_tool_calls", "$.budgets.max_tool_calls"}}},
		{name: "budget_max_model_calls", f: budget("max_model_calls", 2), errors: []found{{"budget_max_model_calls", "$.budgets.max_model_calls"}}},
		{name: "budget_wall_clock_ms", f: budget("wall_clock_ms", 0), errors: []found{{"budget_wall_clock_ms", "$.budgets.wall_clock_ms"}}},
		{name: "budget_total_cost_usd", f: budget("total_cost_usd", -1), errors: []found{{"budget_total_cost_usd", "$.budgets.total_cost_usd"}}},
		{name: "budget_consecutive_failures", f: failures("3"), errors: []found{{"budget_consecutive_failures", "$.budgets.consecutive_failures"}}},
		{name: "budget_consecutive_failures_max", f: failures(map[string]any{"max": 0}), errors: []found{{"budget_consecutive_failures_max", "$.budgets.consecutive_failures.max"}}},
		{name: "budget_consecutive_failures_kinds", f: failures(map[string]any{"max": 1, "kinds": []any{}}), errors: []found{{"budget_consecutive_failures_kinds", "$.budgets.consecutive_failures.kinds"}}},
		{name: "budget_consecutive_failures_kinds twice", f: failures(map[string]any{"max": 1, "kinds": []any{"verify", "verify"}}), errors: []found{{"budget_consecutive_failures_kinds", "$.budgets.consecutive_failures.kinds"}}},
		{name: "budget_consecutive_failures_kind", f: failures(map[string]any{"max": 1, "kinds": []any{"verify", "nope"}}), errors: []found{{"budget_consecutive_failures_kind", "$.budgets.consecutive_failures.kinds[1]"}}},
		{name: "budget_consecutive_failures_pause", f: failures(map[string]any{"max": 1, "pause": "yes"}), errors: []found{{"budget_consecutive_failures_pause", "$.budgets.consecutive_failures.pause"}}},
		{name: "promotion_negative_shadow_runs", f: func(m map[string]any) { m["promotion_policy"] = map[string]any{"shadow_runs_required": -1} },
			errors: []found{{"promotion_negative_shadow_runs", "$.promotion_policy.shadow_runs_required"}}},
		{name: "promotion_invalid_pass_rate", f: func(m map[string]any) { m["promotion_policy"] = map[string]any{"min_pass_rate": 1.5} },
			errors: []found{{"promotion_invalid_pass_rate", "$.promotion_policy.min_pass_rate"}}},
		// A command alone is a contract: exit status 0 is expected.
		{name: "verify command without expectations", f: func(m map[string]any) { node(m, "v")["verify"] = map[string]any{"command": "true"} }},
		{name: "verify_no_contract", f: func(m map[string]any) { node(m, "v")["verify"] = map[string]any{"expect_status": 0} },
			warnings: []found{{"verify_no_contract", "$.nodes.v.verify"}}},
		{name: "writes_without_capability", f: func(m map[string]any) {
			m["capabilities"].(map[string]any)["side_effect_level"] = "read_only"
		}, warnings: []found{{"writes_without_capability", "$.nodes.b.effects"}}},
		{name: "writes_without_capability command", f: func(m map[string]any) {
			m["capabilities"].(map[string]any)["tools"] = []any{"read", "edit", "git.commit"}
			addLeaf(m, map[string]any{"kind": "deterministic_command", "tools": []any{"git.commit"}, "command": map[string]any{"tool": "git.commit"}})
			m["capabilities"].(map[string]any)["side_effect_level"] = "read_only"
		}, warnings: []found{{"writes_without_capability", "$.nodes.b.effects"}, {"writes_without_capability", "$.nodes.c.command"}}},
		{name: "command granted by its tool", f: func(m map[string]any) {
			m["capabilities"].(map[string]any)["tools"] = []any{"read", "edit", "git.commit"}
			addLeaf(m, map[string]any{"kind": "deterministic_command", "tools": []any{"git.commit"}, "command": map[string]any{"tool": "git.commit"}})
		}},
		{name: "node_unreachable", f: func(m map[string]any) { nodes(m)["c"] = map[string]any{"kind": "read_fact"} },
			warnings: []found{{"node_unreachable", "$.nodes.c"}}},
		{name: "join_single_input", f: func(m map[string]any) { addLeaf(m, map[string]any{"kind": "join"}) },
			warnings: []found{{"join_single_input", "$.nodes.c"}}},
		{name: "non-identifier id", f: func(m map[string]any) { nodes(m)["c d"] = map[string]any{"kind": "read_fact", "tools": []any{"curl"}} },
			errors: []found{{"node_tool_not_granted", `$.nodes["c d"].tools[0]`}}, warnings: []found{{"node_unreachable", `$.nodes["c d"]`}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := []byte(tt.raw)
			if tt.raw == "" {
				data = mutate(t, tt.f)
			}
			v := Validate(data)
			got := struct{ Errors, Warnings []found }{pick(v.Errors), pick(v.Warnings)}
			want := struct{ Errors, Warnings []found }{tt.errors, tt.warnings}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Validate(%s) problems (-want +got):\n%s\nfull: %v %v", data, diff, v.Errors, v.Warnings)
			}
			if v.Valid != (len(tt.errors) == 0) {
				t.Errorf("Validate(%s).Valid = %v, want %v", data, v.Valid, len(tt.errors) == 0)
			}
			for _, p := range append(v.Errors, v.Warnings...) {
				if p.Message == "" {
					t.Errorf("%s: empty message", p.Code)
				}
			}
		})
	}
}

func pick(ps []Problem) []found {
	var out []found
	for _, p := range ps {
		out = append(out, found{p.Code, p.Path})
	}
	return out
}

// TestValidateSummaries pins the summaries of the golden plan.
func TestValidateSummaries(t *testing.T) {
	data, err := os.ReadFile("testdata/all_kinds.json")
	if err != nil {
		t.Fatal(err)
	}
	v := Validate(data)
	three, cost, wall := int64(3), 2.5, int64(1800000)
	want := &Validation{
		Valid:         true,
		SchemaVersion: "1",
		Errors:        []Problem{},
		Warnings:      []Problem{},
		GraphStats: GraphStats{NodeCount: 11, EdgeCount: 13, ReachableCount: 11, MaxDepth: 9, KindCounts: map[string]int{
			"read_fact": 1, "search": 1, "context_pack": 1, "agent_loop": 1, "sub_agent": 1, "workflow_map": 1,
			"join": 1, "compact": 1, "deterministic_command": 1, "verify": 1, "human_gate": 1,
		}},
		CapabilitySummary: CapabilitySummary{
			Declared: true, Tools: []string{"read", "grep", "edit", "run"}, SideEffectLevel: "writes_files",
			ToolsUsed: []string{"edit", "grep", "read", "run"}, Ungranted: []string{}, WritingNodes: []string{"implement", "format"},
		},
		BudgetSummary: BudgetSummary{
			MaxNodes: Budget{12, 11, false}, MaxDepth: Budget{10, 9, false},
			// tool calls: discover 2, search 1, pack 1, implement 4×3, map 2×1, format 1, verify 1.
			MaxToolCalls: Budget{128, 9, true}, MaxModelCalls: Budget{64, 14, true}, MaxSteps: Budget{20, 11, false},
			WallClockMS: &wall, TotalCostUSD: &cost,
			ConsecutiveFailures: &ConsecutiveFailuresBudget{Max: three, Kinds: []string{"agent_loop", "verify"}, Pause: true},
		},
		PromotionSummary: PromotionSummary{Declared: true, ShadowRunsRequired: 2, HumanReviewRequired: true, MinPassRate: ptr(0.9)},
	}
	if diff := cmp.Diff(want, v); diff != "" {
		t.Errorf("Validate(all_kinds.json) (-want +got):\n%s", diff)
	}
}

func ptr[T any](v T) *T { return &v }

// TestGolden pins Compile and Mermaid of testdata/all_kinds.json, which
// uses every kind, a branch loop, overrides and escape-worthy labels.
// go test -update rewrites the golden files.
func TestGolden(t *testing.T) {
	data, err := os.ReadFile("testdata/all_kinds.json")
	if err != nil {
		t.Fatal(err)
	}
	p, err := Parse(data, "testdata/all_kinds.json")
	if err != nil {
		t.Fatal(err)
	}
	g, err := Compile(p)
	if err != nil {
		t.Fatal(err)
	}
	var compiled bytes.Buffer
	enc := json.NewEncoder(&compiled)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(g); err != nil {
		t.Fatal(err)
	}
	for name, got := range map[string][]byte{
		"all_kinds.compile.golden.json": compiled.Bytes(),
		"all_kinds.mermaid.golden.mmd":  []byte(Mermaid(p)),
	} {
		path := filepath.Join("testdata", name)
		if *update {
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test -update to create it)", err)
		}
		if diff := cmp.Diff(string(want), string(got)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", name, diff)
		}
	}
}

// TestCompileLowering spells out the lowering table on the golden plan,
// so a wrong golden file cannot be accepted by -update unnoticed.
func TestCompileLowering(t *testing.T) {
	data, err := os.ReadFile("testdata/all_kinds.json")
	if err != nil {
		t.Fatal(err)
	}
	p, err := Parse(data, "all_kinds.json")
	if err != nil {
		t.Fatal(err)
	}
	g, err := Compile(p)
	if err != nil {
		t.Fatal(err)
	}
	type row struct{ Kind, Mode any }
	got := map[string]row{}
	for id, n := range g.Nodes {
		got[id] = row{n["kind"], n["mode"]}
	}
	want := map[string]row{
		"discover": {"stage", "llm"}, "search_usages": {"stage", "llm"}, "pack": {"stage", "llm"},
		"implement": {"stage", "agent"}, "docs": {"subagent", "llm"}, "per_package": {"map", "llm"},
		"verify": {"verify", "llm"}, "review": {"stage", "manual"}, "format": {"stage", "command"},
		"sync": {"join", nil}, "trim": {"stage", "compact"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("kind and mode (-want +got):\n%s", diff)
	}
	md := func(id string) map[string]any { return g.Nodes[id]["metadata"].(map[string]any) }
	checks := []struct {
		what      string
		got, want any
	}{
		{"implement.done_sentinel", g.Nodes["implement"]["done_sentinel"], "DONE"},
		{"implement.retry_policy (override)", g.Nodes["implement"]["retry_policy"], map[string]any{"max_attempts": json.Number("2")}},
		{"docs.worker_name", md("docs")["worker_name"], "doc-writer"},
		{"docs.worker_preset", md("docs")["worker_preset"], "writer"},
		{"docs.worker_task_label", md("docs")["worker_task_label"], "document the option"},
		{"per_package.map_policy", g.Nodes["per_package"]["map_policy"], map[string]any{"items": []any{"core", "cli"}, "max_concurrency": json.Number("2")}},
		{"review.human_gate", md("review")["human_gate"], true},
		{"review.approval_id", md("review")["approval_id"], "release-review"},
		{"format.command_tool", md("format")["command_tool"], "run"},
		{"format.command_args", md("format")["command_args"], []any{"gofmt", "-w", "."}},
		{"trim.auto_compact", g.Nodes["trim"]["auto_compact"], map[string]any{"enabled": true, "token_threshold": json.Number("6000")}},
		{"trim.compact_preserve_recent (plan default)", md("trim")["compact_preserve_recent"], json.Number("4")},
		{"pack.model_policy", g.Nodes["pack"]["model_policy"], map[string]any{"tier": "small"}},
		{"verify.verify", g.Nodes["verify"]["verify"], map[string]any{"command": "go test ./...", "expect_status": json.Number("0"), "expect_text": "ok"}},
		{"model_policy", g.ModelPolicy, map[string]any{"provider": "anthropic"}},
		{"capability_policy.side_effect_level", g.CapabilityPolicy["side_effect_level"], "writes_files"},
		{"edges[12].branch", g.Edges[12].Branch, "fail [retry]"},
	}
	for _, c := range checks {
		if diff := cmp.Diff(c.want, c.got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", c.what, diff)
		}
	}
	if _, ok := g.Nodes["review"]["x-owner"]; ok {
		t.Errorf("extension member x-owner leaked into the lowered node")
	}
}

// TestMermaidEscaping puts every character that could break a Mermaid
// label into ids, purposes and branches, and checks that each line still
// has exactly one quoted label with nothing raw inside it.
func TestMermaidEscaping(t *testing.T) {
	nasty := "a \"quote\" ]) }} )) /] [x] {y} (z) |p| <b>#quot; & ; `tick`\nline2\r\nline3\x01"
	p := &Plan{Entry: "end", Nodes: []*Node{
		{ID: "end", Kind: "read_fact", Purpose: nasty},
		{ID: "x y\"]", Kind: "verify", Purpose: nasty},
		{ID: "g", Kind: "human_gate", Purpose: nasty},
		{ID: "j", Kind: "join", Purpose: nasty},
		{ID: "c", Kind: "deterministic_command", Purpose: nasty},
	}, Edges: []Edge{{From: "end", To: "x y\"]", Branch: nasty}, {From: "x y\"]", To: "g"}, {From: "g", To: "j"}, {From: "j", To: "c"}}}
	out := Mermaid(p)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 1+5+4+2 {
		t.Fatalf("Mermaid: %d lines, want 12 (one per node and edge):\n%s", len(lines), out)
	}
	safe := `[^"\[\]{}()|<>\n\r\x00-\x1f;&]*`
	label := `"` + safe + `"`
	nodeLine := regexp.MustCompile(`^    (n_end|n1|n_g|n_j|n_c)(\[|\{\{|\(\(|\(\[|\[/)` + label + `(\]|\}\}|\)\)|\]\)|/\])$`)
	edgeLine := regexp.MustCompile(`^    n[_a-z0-9]+ -->(\|` + label + `\|)? n[_a-z0-9]+$`)
	for i, l := range lines[1:] {
		l = strings.ReplaceAll(l, "<br/>", "")
		l = regexp.MustCompile(`#[0-9a-z]+;`).ReplaceAllString(l, "")
		re := nodeLine
		if i >= 5 {
			re = edgeLine
		}
		if i >= 9 {
			continue // classDef and class lines
		}
		if !re.MatchString(l) {
			t.Errorf("line %d not safe: %q", i+1, l)
		}
	}
	for _, want := range []string{`n_end["end · read_fact<br/>a #quot;quote#quot; #93;#41; `, "line2<br/>line3 ", `n1{{"x y#quot;#93; · verify`, `#35;quot#59;`, `n_g((`, `n_j([`, `n_c[/`} {
		if !strings.Contains(out, want) {
			t.Errorf("Mermaid output lacks %q:\n%s", want, out)
		}
	}
}

// TestParseInvalid checks that Parse refuses an invalid plan with the
// whole validation.
func TestParseInvalid(t *testing.T) {
	_, err := Parse([]byte(`{"schema_version": "1", "entry": "a", "nodes": {"a": {"kind": "frob"}}}`), "p.json")
	var inv *InvalidError
	if !errors.As(err, &inv) || len(inv.Validation.Errors) != 1 {
		t.Fatalf("Parse = %v, want an *InvalidError with one error", err)
	}
	if want := `p.json: invalid task plan: $.nodes.a.kind: unknown_kind: `; !strings.HasPrefix(err.Error(), want) {
		t.Errorf("Parse error = %q, want prefix %q", err, want)
	}
	if _, err := Compile(nil); err == nil {
		t.Error("Compile(nil) = nil error")
	}
}

// FuzzValidate feeds arbitrary bytes to Validate, and what validates to
// Parse, Compile and Mermaid: none may panic, Validate always returns a
// result whose Valid agrees with its errors, and a valid plan always
// compiles.
func FuzzValidate(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/*.json")
	if fx, err := filepath.Glob(filepath.Join(fixturesDir, "*.json")); err == nil {
		seeds = append(seeds, fx...)
	}
	for _, s := range seeds {
		if strings.Contains(s, "golden") {
			continue
		}
		data, err := os.ReadFile(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(base))
	f.Add([]byte(`{"nodes": {"a": 1}, "edges": [1, {"from": 2}], "budgets": {"consecutive_failures": {"kinds": [{}, {}]}}}`))
	f.Add([]byte(`{"schema_version": 1, "entry": [], "nodes": [], "unknowns": {}, "verification": []}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, data []byte) {
		v := Validate(data)
		if v == nil {
			t.Fatal("Validate returned nil")
		}
		if v.Valid != (len(v.Errors) == 0) {
			t.Fatalf("Valid = %v with %d errors", v.Valid, len(v.Errors))
		}
		for _, p := range append(v.Errors, v.Warnings...) {
			if p.Code == "" || !strings.HasPrefix(p.Path, "$") || p.Message == "" {
				t.Fatalf("malformed problem %+v", p)
			}
		}
		if _, err := json.Marshal(v); err != nil {
			t.Fatalf("marshaling validation: %v", err)
		}
		p, err := Parse(data, "fuzz.json")
		if (err == nil) != v.Valid {
			t.Fatalf("Parse error %v, Validate valid %v", err, v.Valid)
		}
		if err != nil {
			return
		}
		g, err := Compile(p)
		if err != nil {
			t.Fatalf("Compile of a valid plan: %v", err)
		}
		if _, err := json.Marshal(g); err != nil {
			t.Fatalf("marshaling graph: %v", err)
		}
		if m := Mermaid(p); !strings.HasPrefix(m, "flowchart TD\n") {
			t.Fatalf("Mermaid = %q", m)
		}
		// Whatever the plan's ids, purposes and prompts hold, its
		// workflow parses and resolves as a workflow must.
		src, err := Starlark(p, map[string]string{"x": "\"'\n"})
		if err != nil {
			t.Fatalf("Starlark of a valid plan: %v", err)
		}
		if err := codegen.Check("plan.star", src, "plan"); err != nil {
			t.Fatalf("lowered workflow does not check: %v\n%s", err, src)
		}
	})
}

// TestProducerShapes checks a plan written with every member the IR's
// producer documents (the human_gate block, system, model, metadata,
// stop_after_successful_tools, edge labels, workspace_roots,
// recursion_limit, runs_commands, a compaction strategy): it validates
// with no errors and no warnings and lowers each member where the IR's
// lowering table puts it.
func TestProducerShapes(t *testing.T) {
	data, err := os.ReadFile("testdata/producer_shapes.json")
	if err != nil {
		t.Fatal(err)
	}
	v := Validate(data)
	if !v.Valid || len(v.Errors) != 0 || len(v.Warnings) != 0 {
		t.Fatalf("Validate = valid %v, errors %v, warnings %v; want valid with none", v.Valid, v.Errors, v.Warnings)
	}
	p, err := Parse(data, "producer_shapes.json")
	if err != nil {
		t.Fatal(err)
	}
	g, err := Compile(p)
	if err != nil {
		t.Fatal(err)
	}
	md := func(id string) map[string]any { return g.Nodes[id]["metadata"].(map[string]any) }
	checks := []struct {
		what      string
		got, want any
	}{
		{"sign_off.human_gate", md("sign_off")["human_gate"], true},
		{"sign_off.approval_id", md("sign_off")["approval_id"], "rename_agreed"},
		{"sign_off.approval_prompt", md("sign_off")["approval_prompt"], "Rename max_conns to max_connections?"},
		{"sign_off.approval_skippable", md("sign_off")["approval_skippable"], false},
		{"find.system", g.Nodes["find"]["system"], "You are terse. List paths only."},
		{"find.model_policy", g.Nodes["find"]["model_policy"], map[string]any{
			"provider": "anthropic", "model": "claude-x", "model_tier": "small",
			"temperature": json.Number("0.0"), "max_tokens": json.Number("512")}},
		{"find.metadata.owner", md("find")["owner"], "platform"},
		{"find.metadata.task_plan_kind", md("find")["task_plan_kind"], "search"},
		{"tidy.metadata.agent_loop", md("tidy")["agent_loop"], map[string]any{
			"max_iterations": json.Number("5"), "done_sentinel": "BUILT", "stop_after_successful_tools": []any{"run"}}},
		{"tests_note.worker_preset", md("tests_note")["worker_preset"], "writer"},
		{"rename.map_policy", g.Nodes["rename"]["map_policy"], map[string]any{"item_artifact_kind": "matched_file", "max_concurrency": json.Number("3")}},
		{"shrink.auto_compact", g.Nodes["shrink"]["auto_compact"], map[string]any{"enabled": true, "token_threshold": json.Number("4000")}},
		{"shrink.compact_preserve_recent", md("shrink")["compact_preserve_recent"], json.Number("6")},
		{"edges[0].label", g.Edges[0].Label, "paths found"},
		{"capability_policy.recursion_limit", g.CapabilityPolicy["recursion_limit"], json.Number("2")},
		{"capability_policy.workspace_roots", g.CapabilityPolicy["workspace_roots"], []any{"."}},
		{"metadata.ticket", g.Metadata["ticket"], "CFG-12"},
	}
	for _, c := range checks {
		if diff := cmp.Diff(c.want, c.got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", c.what, diff)
		}
	}
}

// TestHumanGateAlias checks that the older "approval" block lowers
// exactly like the human_gate block it stands for.
func TestHumanGateAlias(t *testing.T) {
	compile := func(gate string) map[string]any {
		t.Helper()
		data := []byte(`{"schema_version": "1", "entry": "g", "nodes": {"g": {"kind": "human_gate", ` + gate + `}}}`)
		p, err := Parse(data, "gate.json")
		if err != nil {
			t.Fatal(err)
		}
		g, err := Compile(p)
		if err != nil {
			t.Fatal(err)
		}
		return g.Nodes["g"]
	}
	canonical := compile(`"human_gate": {"approval_id": "ship", "prompt": "Ship?", "skippable": true}`)
	alias := compile(`"approval": {"id": "ship", "prompt": "Ship?", "skippable": true}`)
	if diff := cmp.Diff(canonical, alias); diff != "" {
		t.Errorf("alias lowering (-human_gate +approval):\n%s", diff)
	}
	if got := canonical["metadata"].(map[string]any)["approval_id"]; got != "ship" {
		t.Errorf("metadata.approval_id = %v, want ship", got)
	}
}

// TestValidateSizeLimits: a plan over MaxPlanBytes is refused before it
// is decoded, a string over MaxStringBytes with its path, and ReadFile
// opens only a regular file of at most MaxPlanBytes.
func TestValidateSizeLimits(t *testing.T) {
	data, err := os.ReadFile("testdata/all_kinds.json")
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Replace(string(data), `"objective": "`, `"objective": "`+strings.Repeat("o", MaxStringBytes+1), 1)
	if long == string(data) {
		t.Fatal("all_kinds.json has no objective to lengthen")
	}
	huge := string(data) + strings.Repeat(" ", MaxPlanBytes)
	for _, tt := range []struct {
		name, doc, code, path string
	}{
		{"long string", long, CodeStringTooLarge, "$.objective"},
		{"large file", huge, CodeTooLarge, "$"},
	} {
		v := Validate([]byte(tt.doc))
		if v.Valid || !slices.ContainsFunc(v.Errors, func(p Problem) bool { return p.Code == tt.code && p.Path == tt.path }) {
			t.Errorf("%s: errors %v, want %s at %s", tt.name, v.Errors, tt.code, tt.path)
		}
	}
	if v := Validate(data); !v.Valid {
		t.Errorf("all_kinds.json: %v", v.Errors)
	}

	dir := t.TempDir()
	big := filepath.Join(dir, "big.json")
	os.WriteFile(big, []byte(huge), 0o644)
	if _, err := ReadFile(big); err == nil || !strings.Contains(err.Error(), CodeTooLarge) {
		t.Errorf("ReadFile(big) = %v, want %s", err, CodeTooLarge)
	}
	if _, err := ReadFile(dir); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("ReadFile(dir) = %v, want not a regular file", err)
	}
	if got, err := ReadFile("testdata/all_kinds.json"); err != nil || string(got) != string(data) {
		t.Errorf("ReadFile(all_kinds.json) = %v", err)
	}
}
