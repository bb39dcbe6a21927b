package trace

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// genDoc builds a random, valid trace document: every optional field is
// present or absent (or null) at random, generic values nest, numbers come
// in integer, fraction and exponent forms, and unknown members appear at
// every level. The seed makes each case reproducible.
type genDoc struct{ r *rand.Rand }

func (g genDoc) maybe() bool { return g.r.IntN(3) == 0 }

func (g genDoc) word() string {
	words := []string{"deploy", "docs", "ticket", "OPS-12", "", "ünïcødé", "a/b", "~tilde", "<html>&", "line\nbreak", "quote\"d"}
	return words[g.r.IntN(len(words))]
}

func (g genDoc) number() json.Number {
	forms := []string{"0", "7", "-3", "2.5", "1e3", "1.25E-2", "123456789012345678901234567890", "-0", "0.1"}
	return json.Number(forms[g.r.IntN(len(forms))])
}

func (g genDoc) scalar() any {
	switch g.r.IntN(5) {
	case 0:
		return nil
	case 1:
		return g.r.IntN(2) == 0
	case 2:
		return g.number()
	default:
		return g.word()
	}
}

func (g genDoc) value(depth int) any {
	if depth > 2 {
		return g.scalar()
	}
	switch g.r.IntN(4) {
	case 0:
		arr := []any{}
		for range g.r.IntN(3) {
			arr = append(arr, g.value(depth+1))
		}
		return arr
	case 1:
		return g.object(depth + 1)
	default:
		return g.scalar()
	}
}

func (g genDoc) object(depth int) map[string]any {
	m := map[string]any{}
	for i := range g.r.IntN(3) {
		m[fmt.Sprintf("k%d_%s", i, g.word())] = g.value(depth)
	}
	return m
}

func (g genDoc) strings() []any {
	out := []any{}
	for range g.r.IntN(4) {
		out = append(out, g.word())
	}
	return out
}

func (g genDoc) count() any {
	return []any{json.Number("0"), json.Number("12"), json.Number("3.0"), json.Number("1e2")}[g.r.IntN(4)]
}

func (g genDoc) set(m map[string]any, key string, v func() any) {
	switch g.r.IntN(4) {
	case 0:
	case 1:
		m[key] = nil
	default:
		m[key] = v()
	}
}

func (g genDoc) extras(m map[string]any) {
	if g.maybe() {
		m["x_unknown_"+g.word()] = g.value(0)
	}
}

func (g genDoc) trace() map[string]any {
	doc := map[string]any{}
	g.set(doc, "version", func() any { return json.Number([]string{"0", "1", "1.0"}[g.r.IntN(3)]) })
	g.set(doc, "id", func() any { return g.word() })
	for _, k := range []string{"source", "source_hash", "workflow_id", "started_at", "finished_at"} {
		g.set(doc, k, func() any { return g.word() })
	}
	g.set(doc, "flow", func() any {
		f := map[string]any{}
		for _, k := range []string{"trace_id", "agent_run_id", "transcript_ref"} {
			g.set(f, k, func() any { return g.word() })
		}
		g.set(f, "atom_ids", func() any { return g.strings() })
		g.set(f, "slice_ids", func() any { return g.strings() })
		g.extras(f)
		return f
	})
	actions := []any{}
	for i := range g.r.IntN(5) {
		actions = append(actions, g.action(i))
	}
	doc["actions"] = actions
	g.set(doc, "replay_run", func() any { return g.object(0) })
	g.set(doc, "replay_allowlist", func() any {
		rules := []any{}
		for range g.r.IntN(3) {
			rule := map[string]any{
				"path":   []string{"/run_id", "/a/*/b", "/x~1y/~0z", "/"}[g.r.IntN(4)],
				"reason": "varies per run",
			}
			g.set(rule, "replacement", func() any { return g.value(1) })
			g.extras(rule)
			rules = append(rules, rule)
		}
		return rules
	})
	g.set(doc, "usage", func() any {
		u := map[string]any{}
		for _, k := range []string{"model_calls", "input_tokens", "output_tokens", "wall_ms"} {
			g.set(u, k, g.count)
		}
		g.set(u, "total_cost_usd", func() any { return json.Number("0.125") })
		g.extras(u)
		return u
	})
	g.set(doc, "metadata", func() any { return g.object(0) })
	g.extras(doc)
	return doc
}

func (g genDoc) action(i int) map[string]any {
	a := map[string]any{
		"kind": []string{"tool_call", "model_call", "human_approval", "custom_kind"}[g.r.IntN(4)],
		"name": fmt.Sprintf("step%d.%s", i, g.word()),
	}
	if g.maybe() {
		a["id"] = fmt.Sprintf("id_%d", i)
	}
	g.set(a, "timestamp", func() any { return g.word() })
	g.set(a, "parameters", func() any { return g.object(0) })
	for _, k := range []string{"inputs", "output", "observed_output"} {
		g.set(a, k, func() any { return g.value(0) })
	}
	g.set(a, "capabilities", func() any { return g.strings() })
	g.set(a, "required_secrets", func() any { return g.strings() })
	g.set(a, "side_effects", func() any {
		effects := []any{}
		for range g.r.IntN(3) {
			se := map[string]any{"kind": "file_write"}
			for _, k := range []string{"target", "capability", "mutation"} {
				g.set(se, k, func() any { return g.word() })
			}
			g.set(se, "metadata", func() any { return g.object(0) })
			g.extras(se)
			effects = append(effects, se)
		}
		return effects
	})
	g.set(a, "approval", func() any {
		ap := map[string]any{}
		for _, k := range []string{"prompt", "approver", "boundary"} {
			g.set(ap, k, func() any { return g.word() })
		}
		g.set(ap, "required", func() any { return g.r.IntN(2) == 0 })
		g.extras(ap)
		return ap
	})
	g.set(a, "cost", func() any {
		c := map[string]any{}
		g.set(c, "model", func() any { return g.word() })
		for _, k := range []string{"model_calls", "input_tokens", "output_tokens", "wall_ms"} {
			g.set(c, k, g.count)
		}
		g.set(c, "total_cost_usd", func() any { return g.number() })
		g.extras(c)
		return c
	})
	g.set(a, "duration_ms", g.count)
	g.set(a, "deterministic", func() any { return g.r.IntN(2) == 0 })
	g.set(a, "fuzzy", func() any { return g.r.IntN(2) == 0 })
	g.set(a, "metadata", func() any { return g.object(0) })
	g.extras(a)
	return a
}

func TestRoundTripGenerated(t *testing.T) {
	for seed := range uint64(500) {
		g := genDoc{rand.New(rand.NewPCG(seed, 17))}
		doc := g.trace()
		// Negative costs are invalid; the generator's number forms
		// include "-3" and "-0", so clamp total_cost_usd to valid ones.
		for _, a := range doc["actions"].([]any) {
			if c, ok := a.(map[string]any)["cost"].(map[string]any); ok {
				if n, ok := c["total_cost_usd"].(json.Number); ok && len(n) > 0 && n[0] == '-' {
					c["total_cost_usd"] = json.Number(n[1:])
				}
			}
		}
		data, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(fmt.Sprint(seed), func(t *testing.T) { checkRoundTrip(t, data) })
	}
}

// TestNormalizeRoundTrip checks that a normalized trace also round-trips
// and that Normalize is idempotent.
func TestNormalizeRoundTrip(t *testing.T) {
	files, _ := filepath.Glob("testdata/valid/*.json")
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		tr, err := Decode(data, f, 0)
		if err != nil {
			t.Fatal(err)
		}
		Normalize(tr)
		enc, err := json.Marshal(tr)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(filepath.Base(f), func(t *testing.T) { checkRoundTrip(t, enc) })
		again, _ := Decode(enc, f, 0)
		Normalize(again)
		enc2, _ := json.Marshal(again)
		if string(enc) != string(enc2) {
			t.Errorf("Normalize is not idempotent on %s:\n%s\n%s", f, enc, enc2)
		}
	}
}
