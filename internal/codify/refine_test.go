package codify

import (
	"strings"
	"testing"
)

func TestStripFence(t *testing.T) {
	for in, want := range map[string]string{
		"def f(ctx):\n    pass":                 "def f(ctx):\n    pass\n",
		"```python\ndef f(ctx):\n    pass\n```": "def f(ctx):\n    pass\n",
		"```\ndef f(ctx):\n    pass\n```\n\n":   "def f(ctx):\n    pass\n",
	} {
		if got := stripFence(in); got != want {
			t.Errorf("stripFence(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestPromptNamesEveryCall: the model is told to keep every kind of ctx
// call a draft holds, the ctx.exec and ctx.check of shell commands
// included, or it may reword what the equivalence check then refuses.
func TestPromptNamesEveryCall(t *testing.T) {
	p := prompt([]byte("def f(ctx):\n    pass\n"), "f")
	for _, call := range []string{"ctx.tool", "ctx.exec", "ctx.check", "ctx.model", "ctx.approve"} {
		if !strings.Contains(p, call) {
			t.Errorf("the refine prompt does not name %s:\n%s", call, p)
		}
	}
}
