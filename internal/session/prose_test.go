package session

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// proseLines are the lines the plainProse tests build prose from: the
// shapes a run writes (paragraphs starting with a letter, "---") and
// lines that open or continue every other kind of block.
var proseLines = []string{
	"", "", "---", "---", "Receipt `r-01`: arguments sha256:ab, result sha256:cd.", "a", "Steps: 3 (3 tool calls).",
	"Z -", "x\\", "a  ", "é", "a\r", " a", "\ta", "    code", "# h", "## phase", "- item", "* item", "+ item",
	"1. x", "1) x", "> [!note]", "> quote", "**Tool calls:**", "===", "--", "----", "- - -", "___", "***", "```",
	"~~~", "<div>", "<!--", "[x]: /u", "a <b> `c", "Model `m`: 1 input + 2 output tokens, $0.000001.",
}

func randomProse(r *rand.Rand) string {
	n := 1 + r.IntN(6)
	lines := make([]string, n)
	for i := range lines {
		lines[i] = proseLines[r.IntN(len(proseLines))]
	}
	return strings.Join(lines, "\n")
}

// TestPlainProse holds the shortcut to what it stands for: prose it
// accepts without a parse is prose the full check accepts in every place
// a block can stand, and that a session reads back unchanged there.
func TestPlainProse(t *testing.T) {
	for md, want := range map[string]bool{
		"Receipt `r`: a.":             true,
		"Receipt `r`: a.\n\n---":      true,
		"a\n\n---\n\nSteps: 1.":       true,
		"a\nb\n\n\nc":                 true,
		"a\n---":                      false, // a setext heading
		"---\n\na":                    false,
		"a\n\n---\nb":                 false,
		"a\n":                         false,
		"\na":                         false,
		"":                            false,
		"- a":                         false,
		"1. a":                        false,
		"# a":                         false,
		"> [!note]":                   false,
		"a\n    b":                    false,
		"a\xff":                       false,
		"a\r\nb":                      false,
		"**Tool calls:**\n- `x` → y":  false,
		"Receipt\n\n<!--\n\nunclosed": false,
	} {
		if got := plainProse(md); got != want {
			t.Errorf("plainProse(%q) = %v, want %v", md, got, want)
		}
	}

	r := rand.New(rand.NewPCG(1, 2))
	accepted := 0
	for range 20000 {
		md := randomProse(r)
		if !plainProse(md) {
			continue
		}
		accepted++
		for _, c := range []struct{ first, afterCalls, last bool }{
			{false, false, false}, {true, false, false}, {false, true, false}, {false, false, true}, {true, false, true}, {false, true, true},
		} {
			v := &validator{}
			v.prose("p", md, c.first, c.afterCalls, c.last)
			if len(v.errs) > 0 {
				t.Fatalf("plainProse(%q) = true, but prose(first=%v, afterCalls=%v, last=%v) = %v", md, c.first, c.afterCalls, c.last, v.errs)
			}
		}
		calls := ToolCalls{Calls: []ToolCall{{Tool: "t", Args: "a=1", Result: "`{}` (ok, 0 ms)"}}}
		s := &Session{
			Meta:   Meta{SessionID: "s", Status: "completed"},
			Blocks: []Block{Prose{Text: md}},
			Phases: []Phase{
				{Name: "Step 1", Blocks: []Block{calls, Prose{Text: md}, Callout{Type: "error", Body: []string{"x"}}}},
				{Name: "Step 2", Blocks: []Block{Callout{Type: "user", Body: []string{"y"}}, Prose{Text: md}}},
			},
		}
		data, err := Format(s)
		if err != nil {
			t.Fatalf("Format with prose %q: %v", md, err)
		}
		got, err := Parse("s.md", data)
		if err != nil {
			t.Fatalf("Parse(Format(s)) with prose %q: %v\n%s", md, err, data)
		}
		if diff := cmp.Diff(s, got, equate); diff != "" {
			t.Fatalf("Parse(Format(s)) with prose %q (-want +got):\n%s\n%s", md, diff, data)
		}
	}
	if accepted < 500 {
		t.Fatalf("plainProse accepted %d random proses; the test checks too little", accepted)
	}
}

// TestFormatBody checks that FormatBody is what Format writes after the
// frontmatter, and that FormatAs formats only the session of the body.
func TestFormatBody(t *testing.T) {
	s := &Session{
		Meta:   Meta{SessionID: "s", Status: "completed"},
		Title:  "T",
		Blocks: []Block{Prose{Text: "a"}},
		Phases: []Phase{{Name: "P", Agent: "x", Blocks: []Block{ToolCalls{Calls: []ToolCall{{Tool: "t", Result: "r", SideEffects: []string{"write f"}}}}}}},
	}
	data, err := Format(s)
	if err != nil {
		t.Fatal(err)
	}
	body := FormatBody(s)
	want := "# T\n\na\n\n## P @x\n\n**Tool calls:**\n- `t` → r\n- side effect: write f\n"
	if body != want {
		t.Fatalf("FormatBody = %q, want %q", body, want)
	}
	if !strings.HasSuffix(string(data), "---\n\n"+body) {
		t.Fatalf("Format does not end with the body:\n%s", data)
	}
	if got := FormatBody(&Session{Meta: s.Meta}); got != "" {
		t.Fatalf("FormatBody of an empty body = %q", got)
	}
	if as, ok, err := FormatAs(s, want); !ok || err != nil || string(as) != string(data) {
		t.Fatalf("FormatAs(s, its body) = %q, %v, %v", as, ok, err)
	}
	if _, ok, err := FormatAs(s, want+"\nmore\n"); ok || err != nil {
		t.Fatalf("FormatAs(s, another body) = %v, %v; want false", ok, err)
	}
	bad := *s
	bad.Meta.Status = "x"
	if _, ok, err := FormatAs(&bad, want); !ok || err == nil {
		t.Fatalf("FormatAs of an invalid session = %v, %v; want its problems", ok, err)
	}
}
