package session

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestEstimateTokens(t *testing.T) {
	for _, tc := range []struct {
		p    Phase
		want int
	}{
		{Phase{Name: "A"}, 2},                                     // "## A\n": 5 bytes
		{Phase{Name: "Abc"}, 2},                                   // 7 bytes
		{Phase{Name: "Abcd"}, 2},                                  // 8 bytes
		{Phase{Name: "Abcde"}, 3},                                 // 9 bytes
		{Phase{Name: "A", Agent: "x"}, 2},                         // "## A @x\n": 8 bytes
		{Phase{Name: "A", Blocks: []Block{Prose{Text: "hi"}}}, 3}, // "## A\n\nhi\n": 9 bytes
	} {
		if got := EstimateTokens(tc.p); got != tc.want {
			t.Errorf("EstimateTokens(%q) = %d, want %d", renderPhase(tc.p), got, tc.want)
		}
	}
}

// phase returns a phase named name whose estimate is tokens (at least 2),
// with extra blocks appended after the padding.
func phase(t *testing.T, name string, tokens int, extra ...Block) Phase {
	t.Helper()
	p := Phase{Name: name, Blocks: extra}
	base := EstimateTokens(p)
	if tokens > base {
		// Each prose block adds len(text)+2 bytes ("\n\n" separator).
		pad := (tokens-base)*4 - 2
		p.Blocks = append([]Block{Prose{Text: strings.Repeat("x", pad)}}, extra...)
	}
	if got := EstimateTokens(p); got != tokens {
		t.Fatalf("phase(%s, %d) estimates %d tokens", name, tokens, got)
	}
	return p
}

func TestSplitGroups(t *testing.T) {
	decision := Callout{Type: "decision", Title: "use v2"}
	errc := Callout{Type: "Error", Title: "lock held"}
	s := &Session{Phases: []Phase{
		phase(t, "a", 40),
		phase(t, "b", 60),           // a+b = 100: at the limit, same group
		phase(t, "c", 10),           // new group
		phase(t, "d", 250, errc),    // over the limit: its own group
		phase(t, "e", 30, decision), // new group after an over-limit one
		phase(t, "f", 70),           // e+f = 100
		phase(t, "g", 1+EstimateTokens(Phase{Name: "g"})), // 101 would overflow
	}}
	plan, err := Split(s, SplitOptions{MaxTokens: 100})
	if err != nil {
		t.Fatal(err)
	}
	gTokens := EstimateTokens(s.Phases[6])
	want := &SplitPlan{Estimator: Estimator, MaxTokens: 100, Groups: []Group{
		{Phases: []string{"a", "b"}, Tokens: 100, Tier: "fast", Reasons: []string{"routine"}},
		{Phases: []string{"c"}, Tokens: 10, Tier: "fast", Reasons: []string{"routine"}},
		{Phases: []string{"d"}, Tokens: 250, Tier: "strong", Reasons: []string{"d: [!error] → strong"}, OverLimit: true},
		{Phases: []string{"e", "f"}, Tokens: 100, Tier: "strong", Reasons: []string{"e: [!decision] → strong"}},
		{Phases: []string{"g"}, Tokens: gTokens, Tier: "fast", Reasons: []string{"routine"}},
	}}
	if diff := cmp.Diff(want, plan); diff != "" {
		t.Errorf("Split (-want +got):\n%s", diff)
	}
}

func TestSplitMaxTokens(t *testing.T) {
	if _, err := Split(&Session{}, SplitOptions{}); !errors.Is(err, ErrMaxTokens) {
		t.Errorf("Split(MaxTokens: 0) = %v, want ErrMaxTokens", err)
	}
	plan, err := Split(&Session{}, SplitOptions{MaxTokens: 1})
	if err != nil || len(plan.Groups) != 0 {
		t.Errorf("Split(no phases) = %+v, %v, want no groups", plan, err)
	}
}

func TestSplitRoute(t *testing.T) {
	route, err := ParseRoute("route.toml", []byte(`
default = "cheap"

[[tiers]]
name = "cheap"
model = "small-1"

[[tiers]]
name = "mid"
model = "mid-2"

[[tiers]]
name = "top"
model = "big-3"

[[rules]]
tier = "mid"
agent = "deploy*"

[[rules]]
tier = "top"
tool = "kubectl"

[[rules]]
tier = "mid"
callout = "user"
`))
	if err != nil {
		t.Fatal(err)
	}
	kubectl := ToolCalls{Calls: []ToolCall{{Tool: "git", Args: "status", Result: "ok"}, {Tool: "kubectl", Args: "apply", Result: "ok"}}}
	s := &Session{Phases: []Phase{
		{Name: "Plan", Blocks: []Block{Callout{Type: "error", Title: "x"}}},
		{Name: "Ship", Agent: "deployer", Blocks: []Block{Callout{Type: "user", Title: "go"}}},
		{Name: "Apply", Blocks: []Block{kubectl}},
	}}
	plan, err := Split(s, SplitOptions{MaxTokens: 1, Route: route})
	if err != nil {
		t.Fatal(err)
	}
	want := []Group{
		{Phases: []string{"plan"}, Tier: "cheap", Model: "small-1", Reasons: []string{"routine"}},
		{Phases: []string{"ship"}, Tier: "mid", Model: "mid-2", Reasons: []string{"ship: @deployer → mid", "ship: [!user] → mid"}},
		{Phases: []string{"apply"}, Tier: "top", Model: "big-3", Reasons: []string{"apply: tool kubectl → top"}},
	}
	for i := range plan.Groups {
		plan.Groups[i].Tokens, plan.Groups[i].OverLimit = 0, false
	}
	if diff := cmp.Diff(want, plan.Groups); diff != "" {
		t.Errorf("Split groups (-want +got):\n%s", diff)
	}
}

func TestParseRouteDefaults(t *testing.T) {
	// A file that sets only models keeps the default rules.
	route, err := ParseRoute("r.toml", []byte("[[tiers]]\nname = \"fast\"\nmodel = \"haiku\"\n[[tiers]]\nname = \"strong\"\nmodel = \"opus\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(DefaultRoute().Rules, route.Rules); diff != "" {
		t.Errorf("ParseRoute rules (-want +got):\n%s", diff)
	}
}

func TestParseRouteErrors(t *testing.T) {
	for _, tc := range []struct {
		name, src, want string
	}{
		{"syntax", "default = \"fast\"\nx = = 2\n", "r.toml:2:5: invalid TOML: expected value but found '=' instead"},
		{"type", "default = 3\n", "r.toml:1: $.default: incompatible types: TOML value has type int64; destination has type string"},
		{"unknown key", "colour = \"red\"\n", "r.toml: $.colour: unknown key"},
		{"unknown tier", "[[rules]]\ntier = \"huge\"\ncallout = \"error\"\n", "r.toml: $.rules[0].tier: unknown tier \"huge\""},
		{"no condition", "[[rules]]\ntier = \"fast\"\n", "r.toml: $.rules[0]: rule without callout, agent or tool"},
		{"bad pattern", "[[rules]]\ntier = \"fast\"\ntool = \"[\"\n", "r.toml: $.rules[0].tool: bad pattern \"[\""},
		{"default", "default = \"slow\"\n", "r.toml: $.default: unknown tier \"slow\""},
		{"tiers", "[[tiers]]\nname = \"a\"\n[[tiers]]\nname = \"a\"\n[[tiers]]\n", "r.toml: $.tiers[1].name: tier \"a\" defined twice\nr.toml: $.tiers[2].name: empty tier name\nr.toml: $.rules[0].tier: unknown tier \"strong\"\nr.toml: $.rules[1].tier: unknown tier \"strong\"\nr.toml: $.rules[2].tier: unknown tier \"strong\"\nr.toml: $.rules[3].tier: unknown tier \"strong\""},
	} {
		_, err := ParseRoute("r.toml", []byte(tc.src))
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s: ParseRoute(%q) = %v, want %s", tc.name, tc.src, err, tc.want)
		}
	}
}
