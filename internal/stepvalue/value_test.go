package stepvalue

import (
	"encoding/json"
	"math/rand/v2"
	"testing"
)

// TestCanonicalMatchesEncodingJSON holds Canonical's direct encoder to
// encoding/json, whose bytes every recorded digest is of, on random
// generic values with hostile strings and keys, numbers of every form
// and types it leaves to encoding/json.
func TestCanonicalMatchesEncodingJSON(t *testing.T) {
	strs := []string{"", "a", "<b>&'", "\"\\/", "\x00\x01\x08\x0c\n\r\t\x1f\x7f", "\u2028\u2029", "é✓😀", "\xff", "a\xc3", "\xed\xa0\x80", "x y"}
	nums := []json.Number{"", "0", "-0", "12", "-3.5", "1e10", "1E+2", "2.5e-3", "01", "1.", ".5", "+1", "1e", "-", "0x10", "NaN"}
	r := rand.New(rand.NewPCG(3, 4))
	var gen func(depth int) any
	gen = func(depth int) any {
		switch n := r.IntN(12); {
		case n == 0:
			return nil
		case n == 1:
			return r.IntN(2) == 0
		case n == 2:
			return r.IntN(2000) - 1000
		case n == 3:
			return int64(r.Int64())
		case n == 4:
			return nums[r.IntN(len(nums))]
		case n == 5 && r.IntN(4) == 0:
			return r.Float64() * 1e21 // left to encoding/json
		case n == 6 && r.IntN(4) == 0:
			return []string{"x"} // left to encoding/json
		case n == 7 && depth < 4:
			if r.IntN(5) == 0 {
				return []any(nil)
			}
			l := make([]any, r.IntN(4))
			for i := range l {
				l[i] = gen(depth + 1)
			}
			return l
		case n >= 8 && depth < 4:
			if r.IntN(6) == 0 {
				return map[string]any(nil)
			}
			m := map[string]any{}
			for range r.IntN(5) {
				m[strs[r.IntN(len(strs))]+strs[r.IntN(len(strs))]] = gen(depth + 1)
			}
			return m
		}
		return strs[r.IntN(len(strs))] + strs[r.IntN(len(strs))]
	}
	direct := 0
	for range 20000 {
		v := gen(0)
		if _, ok := appendCompact(nil, v); ok {
			direct++
		}
		if got, want := string(Canonical(v)), string(canonicalJSON(v)); got != want {
			t.Fatalf("Canonical(%#v) = %s, encoding/json writes %s", v, got, want)
		}
	}
	if direct < 10000 {
		t.Fatalf("only %d of 20000 values were written directly; the test checks too little", direct)
	}
}
