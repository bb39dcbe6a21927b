package source

import (
	"context"
	"encoding/json"
	"runtime"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/trace"
)

func liveMB() float64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return float64(m.HeapAlloc) / 1e6
}

type expIntern struct {
	s map[string]string
	v map[string]any
	n map[string]any
}

func (in *expIntern) str(s string) string {
	if t, ok := in.s[s]; ok {
		return t
	}
	in.s[s] = s
	return s
}

func (in *expIntern) val(v any, keys, vals bool) any {
	switch x := v.(type) {
	case map[string]any:
		if keys {
			m := make(map[string]any, len(x))
			for k, e := range x {
				m[in.str(k)] = in.val(e, keys, vals)
			}
			return m
		}
		for k, e := range x {
			x[k] = in.val(e, keys, vals)
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = in.val(e, keys, vals)
		}
		return x
	case string:
		if !vals || len(x) > 32 {
			return v
		}
		if t, ok := in.v[x]; ok {
			return t
		}
		in.v[x] = v
		return v
	case json.Number:
		if !vals {
			return v
		}
		if t, ok := in.n[string(x)]; ok {
			return t
		}
		in.n[string(x)] = v
		return v
	}
	return v
}

func TestZZExp(t *testing.T) {
	if *corpusDir == "" {
		t.Skip("no -corpus")
	}
	base := liveMB()
	res, err := Load(context.Background(), *corpusDir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("loaded: %.1f MB", liveMB()-base)
	in := &expIntern{map[string]string{}, map[string]any{}, map[string]any{}}
	for _, tr := range res.Traces {
		for i := range tr.Actions {
			a := &tr.Actions[i]
			a.Kind = trace.Kind(in.str(string(a.Kind)))
			a.Name = in.str(a.Name)
			for j := range a.Capabilities {
				a.Capabilities[j] = in.str(a.Capabilities[j])
			}
			for j := range a.SideEffects {
				se := &a.SideEffects[j]
				se.Kind, se.Target, se.Capability, se.Mutation = in.str(se.Kind), in.str(se.Target), in.str(se.Capability), in.str(se.Mutation)
			}
			if a.Cost != nil {
				a.Cost.Model = in.str(a.Cost.Model)
			}
		}
	}
	in2 := in
	in = nil
	t.Logf("named fields interned: %.1f MB (interner %d)", liveMB()-base, len(in2.s))
	in = &expIntern{map[string]string{}, map[string]any{}, map[string]any{}}
	for _, tr := range res.Traces {
		for i := range tr.Actions {
			a := &tr.Actions[i]
			a.Output = in.val(a.Output, false, true)
			if a.Parameters != nil {
				a.Parameters = in.val(a.Parameters, false, true).(map[string]any)
			}
		}
	}
	t.Logf("values interned: %.1f MB (strs %d nums %d)", liveMB()-base, len(in.v), len(in.n))
	in = &expIntern{map[string]string{}, map[string]any{}, map[string]any{}}
	for _, tr := range res.Traces {
		for i := range tr.Actions {
			a := &tr.Actions[i]
			a.Output = in.val(a.Output, true, true)
			if a.Parameters != nil {
				a.Parameters = in.val(a.Parameters, true, true).(map[string]any)
			}
		}
	}
	t.Logf("keys interned: %.1f MB (keys %d)", liveMB()-base, len(in.s))
	in = nil
	t.Logf("after dropping interner: %.1f MB", liveMB()-base)
	runtime.KeepAlive(res)
	runtime.KeepAlive(in2)
}
