package trace

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// FuzzDecode checks that Decode never panics, that every failure is a
// non-empty ErrorList, and that every success round-trips through
// MarshalJSON to an equal trace. The seed corpus is every valid and invalid
// document under testdata/.
func FuzzDecode(f *testing.F) {
	for _, dir := range []string{"testdata/valid", "testdata/invalid"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.json"))
		if err != nil {
			f.Fatal(err)
		}
		for _, file := range files {
			data, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(data, 0)
		}
	}
	f.Add([]byte(`{"actions":[{"kind":"k","name":"n"}]}`), 3)
	f.Fuzz(func(t *testing.T, data []byte, line int) {
		line = max(0, line%1000) // JSON Lines line numbers are small and non-negative
		tr, err := Decode(data, "fuzz.json", line)
		if err != nil {
			var list ErrorList
			if !errors.As(err, &list) || len(list) == 0 {
				t.Fatalf("Decode error %T %v is not a non-empty ErrorList", err, err)
			}
			if tr != nil {
				t.Fatal("Decode returned both a trace and an error")
			}
			return
		}
		enc, err := json.Marshal(tr)
		if err != nil {
			t.Fatalf("Marshal(Decode(%q)): %v", data, err)
		}
		again, err := Decode(enc, "fuzz.json", line)
		if err != nil {
			t.Fatalf("Decode(Marshal(Decode(%q))) = %v\nencoded: %s", data, err, enc)
		}
		if diff := cmp.Diff(tr, again); diff != "" {
			t.Fatalf("round trip of %q (-first +second):\n%s", data, diff)
		}
		Normalize(tr) // must not panic on any decoded trace
		tr.PolicyViolation()
		for i := range tr.Actions {
			tr.Actions[i].Signature()
			tr.Actions[i].NondeterministicSideEffect()
		}
	})
}
