package synth

import "testing"

func FuzzParseData(f *testing.F) {
	f.Add([]byte("[1, 2.5, {\"a\": null}]"), "json")
	f.Add([]byte("{\"x\": 1}\n{\"x\": 2}\n"), "jsonl")
	f.Add([]byte("x,y\n1,\n2.5,a\n"), "csv")
	f.Fuzz(func(t *testing.T, data []byte, format string) {
		v, err := ParseData(data, "f", format)
		if err != nil {
			return
		}
		// Whatever decodes must be givable to a capsule.
		if _, err := toStarlark(v); err != nil {
			t.Errorf("ParseData gave a value Starlark cannot take: %v", err)
		}
	})
}

func FuzzDecodeSpec(f *testing.F) {
	f.Add([]byte(`{"allowed_imports": ["math"], "properties": [{"name": "p", "transform": "scale", "factor": 2}], "resources": {"time_s": 1}}`))
	f.Add([]byte(`{"properties": [{"name": 1}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := DecodeSpec(data, "spec.json")
		if err != nil {
			return
		}
		for _, m := range s.AllowedImports {
			if _, ok := hostModules[m]; !ok {
				t.Errorf("DecodeSpec accepted module %q", m)
			}
		}
	})
}

// A derived expression always reproduces every example it was found on.
func FuzzDeriveParameter(f *testing.F) {
	f.Add("golang.org/x/text", "v0.14.0", "deps/text-v0.14.0", "github.com/a/b", "v1.0.0", "deps/b-v1.0.0")
	f.Add("A-b", "x", "a_b", "C-d", "y", "c_d")
	f.Fuzz(func(t *testing.T, a1, b1, t1, a2, b2, t2 string) {
		ex := []map[string]string{{"a": a1, "b": b1, "t": t1}, {"a": a2, "b": b2, "t": t2}}
		e, ok := DeriveParameter(ex, "t")
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
