package derive

import "testing"

// A derived expression always reproduces every example it was found on.
func FuzzParameter(f *testing.F) {
	f.Add("golang.org/x/text", "v0.14.0", "deps/text-v0.14.0", "github.com/a/b", "v1.0.0", "deps/b-v1.0.0")
	f.Add("A-b", "x", "a_b", "C-d", "y", "c_d")
	f.Fuzz(func(t *testing.T, a1, b1, t1, a2, b2, t2 string) {
		ex := []map[string]string{{"a": a1, "b": b1, "t": t1}, {"a": a2, "b": b2, "t": t2}}
		e, ok := Parameter(ex, "t")
		if !ok {
			return
		}
		for i, x := range ex {
			if got, ok := e.Eval(x); !ok || got != x["t"] {
				t.Errorf("example %d: %s = %q, want %q", i, e, got, x["t"])
			}
		}
	})
}
