package codify

import "testing"

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
