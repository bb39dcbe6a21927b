package plan

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestConformanceStarlarkFixtures lowers the shared fixture plans: the
// output is deterministic and every node lowers to the call its kind says.
// CRYSTALLIZE_REQUIRE_CONFORMANCE=1 makes missing fixtures a failure.
func TestConformanceStarlarkFixtures(t *testing.T) {
	const glob = "../../../shared/fixtures/harn/task_plan/*.json"
	files, _ := filepath.Glob(glob)
	if len(files) == 0 {
		if os.Getenv("CRYSTALLIZE_REQUIRE_CONFORMANCE") == "1" {
			t.Fatalf("conformance fixtures %s are required (CRYSTALLIZE_REQUIRE_CONFORMANCE=1) and none were found", glob)
		}
		t.Skipf("conformance fixtures %s not found; set CRYSTALLIZE_REQUIRE_CONFORMANCE=1 to require them", glob)
	}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		p, err := Parse(data, filepath.Base(file))
		if err != nil {
			t.Fatalf("Parse(%s): %v", file, err)
		}
		a, err := Starlark(p, nil)
		if err != nil {
			t.Fatalf("Starlark(%s): %v", file, err)
		}
		b, _ := Starlark(p, nil)
		if !bytes.Equal(a, b) {
			t.Errorf("Starlark(%s) is not deterministic", file)
		}
		for _, n := range p.Nodes {
			var want string
			switch n.Kind {
			case "verify":
				want = `ctx.try_tool("plan.verify"`
			case "human_gate":
				want = "ctx.approve("
			case "deterministic_command":
				want = "ctx.try_tool("
			case "join":
				want = "# join:"
			case "compact":
				want = "transcript = compact(transcript,"
			case "workflow_map":
				want = "ctx.map(" + q(n.ID)
			case "read_fact", "search", "context_pack":
				want = "ctx.agent(" + q(n.ID) + ", prompt = " + q(n.Prompt)
				if !strings.Contains(string(a), want) || !strings.Contains(string(a), "read_only = True") {
					want = "read_only = True after " + want
				}
			default:
				want = "ctx.agent(" + q(n.ID)
			}
			if !strings.Contains(string(a), want) {
				t.Errorf("Starlark(%s): node %s (%s) has no %s:\n%s", file, n.ID, n.Kind, want, a)
			}
		}
	}
}

func TestStarlarkBranches(t *testing.T) {
	src := `{"schema_version": "1", "objective": "o", "entry": "v",
	 "nodes": {
	  "v": {"kind": "verify", "purpose": "p", "verify": {"command": "true", "expect_status": 0}},
	  "ok": {"kind": "join", "purpose": "ok"},
	  "bad": {"kind": "compact", "purpose": "bad", "compact": {"threshold_tokens": 10, "preserve_recent": 2}},
	  "cmd": {"kind": "deterministic_command", "purpose": "c", "tools": ["run"], "effects": ["writes_files"],
	          "command": {"tool": "run", "args": ["x={{rev}}", "bare"]}}},
	 "edges": [{"from": "v", "to": "ok", "branch": "pass"}, {"from": "v", "to": "bad", "branch": "fail"},
	           {"from": "ok", "to": "cmd"}],
	 "capabilities": {"tools": ["run"]}}`
	p, err := Parse([]byte(src), "p.json")
	if err != nil {
		t.Fatal(err)
	}
	got, err := Starlark(p, map[string]string{"rev": "7"})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`# capabilities: plan.verify, run · secrets: none`,
		`"v": [("ok", "pass"), ("bad", "fail")],`,
		`r = ctx.try_tool("run", **{"x": "7", "arg1": "bare"})`,
		`transcript = compact(transcript, 10, 2)`,
		`ctx.budget(tool_calls = 128, model_calls = 64)`,
	} {
		if !strings.Contains(string(got), want) {
			t.Errorf("Starlark(p) has no %q:\n%s", want, got)
		}
	}
}

func TestVerifier(t *testing.T) {
	tests := []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"command": "echo ok"}, "pass"},
		{map[string]any{"command": "exit 3", "expect_status": int64(3)}, "pass"},
		// As a workflow passes it: a JSON number.
		{map[string]any{"command": "exit 3", "expect_status": json.Number("3")}, "pass"},
		{map[string]any{"command": "exit 0", "expect_status": json.Number("3")}, "fail"},
		{map[string]any{"command": "exit 1"}, "fail"},
		{map[string]any{"command": "echo nope", "expect_text": "ok"}, "fail"},
		{map[string]any{"command": "echo all ok", "assert_text": "all ok"}, "pass"},
	}
	v := Verifier(t.TempDir(), os.Environ())
	for _, tt := range tests {
		out, err := v(context.Background(), tt.args)
		if err != nil {
			t.Fatalf("Verifier(%v): %v", tt.args, err)
		}
		if got := out.(map[string]any)["branch"]; got != tt.want {
			t.Errorf("Verifier(%v) branch = %v, want %s", tt.args, got, tt.want)
		}
	}
	if _, err := v(context.Background(), map[string]any{}); err == nil {
		t.Error("Verifier(no command) succeeded, want an error")
	}
}

// TestVerifierEnvironment: a verify command is a shell; it must not see
// the tokens of the environment it was started from.
func TestVerifierEnvironment(t *testing.T) {
	v := Verifier(t.TempDir(), []string{"PATH=" + os.Getenv("PATH"), "HOME=/home/x", "GH_TOKEN=ghp_leakleakleakleakleakleakleakleakleak", "AWS_SECRET_ACCESS_KEY=abc"})
	out, err := v(context.Background(), map[string]any{"command": "env"})
	if err != nil {
		t.Fatal(err)
	}
	got := out.(map[string]any)["output"].(string)
	for _, leak := range []string{"GH_TOKEN", "ghp_", "AWS_SECRET"} {
		if strings.Contains(got, leak) {
			t.Errorf("verify command saw %s:\n%s", leak, got)
		}
	}
	if !strings.Contains(got, "HOME=/home/x") {
		t.Errorf("verify command lost HOME:\n%s", got)
	}
}
