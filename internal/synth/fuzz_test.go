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
