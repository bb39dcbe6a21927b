package candidate

import (
	"context"
	"testing"
)

// memVerdicts is an ExampleVerdicts in memory: what a store keeps, without
// the store.
type memVerdicts map[VerdictKey]Verdict

func (m memVerdicts) Passed(_ context.Context, keys []VerdictKey) ([]*Example, error) {
	out := make([]*Example, len(keys))
	for i, k := range keys {
		if v, ok := m[k]; ok && v.Passed {
			ex := v.Example
			out[i] = &ex
		}
	}
	return out, nil
}

func (m memVerdicts) Record(_ context.Context, verdicts []Verdict) error {
	for _, v := range verdicts {
		m[v.Key] = v
	}
	return nil
}

var _ ExampleVerdicts = memVerdicts{}

func TestFingerprint(t *testing.T) {
	base := func() *Candidate {
		return &Candidate{
			ID:                "candidate_a",
			SequenceSignature: []string{"tool_call:read", "tool_call:write"},
			Steps: []Step{
				{Index: 1, Name: "read", Arguments: []Argument{{Key: "path", Kind: ArgConstant, Value: "a.txt"}}},
				{Index: 2, Name: "write", Arguments: []Argument{{Key: "v", Kind: ArgParameter, Parameter: "v"}}},
			},
			Parameters: []Parameter{{Name: "v", SourcePaths: []string{"steps[2].parameters.v"}, Examples: []any{"1"}}},
			Examples:   []Example{{TraceID: "t1", SourceHash: "sha256:1"}},
		}
	}
	want, err := Fingerprint(base())
	if err != nil {
		t.Fatal(err)
	}
	// What does not decide a verdict: the id, the examples, the name, the
	// parameters' example values.
	same := base()
	same.ID, same.Name = "candidate_b", "other"
	same.Examples = append(same.Examples, Example{TraceID: "t2", SourceHash: "sha256:2"})
	same.Parameters[0].Examples = []any{"2", "3"}
	if got, _ := Fingerprint(same); got != want {
		t.Errorf("fingerprint changed with the id, name, examples or parameter examples: %s, want %s", got, want)
	}
	// What does.
	for name, edit := range map[string]func(c *Candidate){
		"constant":       func(c *Candidate) { c.Steps[0].Arguments[0].Value = "b.txt" },
		"signature":      func(c *Candidate) { c.SequenceSignature[1] = "tool_call:delete" },
		"receipts":       func(c *Candidate) { c.ExpectedReceipts = []any{map[string]any{"sha256": "x"}} },
		"parameter path": func(c *Candidate) { c.Parameters[0].SourcePaths = []string{"steps[1].parameters.v"} },
		"derived": func(c *Candidate) {
			c.DerivedParameters = []DerivedParameter{{Parameter: Parameter{Name: "w"}, Expression: `v + "x"`, Refs: []string{"v"}}}
		},
		"gapped": func(c *Candidate) { c.Examples[0].Positions = []int{0, 2} },
	} {
		c := base()
		edit(c)
		if got, _ := Fingerprint(c); got == want {
			t.Errorf("%s: fingerprint did not change", name)
		}
	}

	// The in-memory cache gives back a passing example only.
	m := memVerdicts{}
	ctx := context.Background()
	pass := VerdictKey{Candidate: want, SourceHash: "sha256:1", StartIndex: 0}
	fail := VerdictKey{Candidate: want, SourceHash: "sha256:2", StartIndex: 3}
	if err := m.Record(ctx, []Verdict{{Key: pass, Example: Example{TraceID: "t1", SourceHash: "sha256:1", ActionIDs: []string{"a", "b"}}, Passed: true}, {Key: fail, Passed: false}}); err != nil {
		t.Fatal(err)
	}
	got, err := m.Passed(ctx, []VerdictKey{pass, fail, {Candidate: "other", SourceHash: "sha256:1"}})
	if err != nil {
		t.Fatal(err)
	}
	if got[0] == nil || got[0].TraceID != "t1" || got[1] != nil || got[2] != nil {
		t.Errorf("Passed = %v, want only the first key's example", got)
	}
}

// TestFingerprintCoversRules checks that verdicts remembered under other
// verdict rules cannot match: the rules are part of the fingerprint.
func TestFingerprintCoversRules(t *testing.T) {
	c := &Candidate{SequenceSignature: []string{"a", "b"}, Steps: []Step{{Index: 1}, {Index: 2}}}
	now, err := fingerprint(c, VerdictRules)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := Fingerprint(c); got != now {
		t.Fatalf("Fingerprint = %s, fingerprint under VerdictRules = %s", got, now)
	}
	other, err := fingerprint(c, VerdictRules+1)
	if err != nil {
		t.Fatal(err)
	}
	if other == now {
		t.Fatalf("fingerprints under rules %d and %d are both %s", VerdictRules, VerdictRules+1, now)
	}
}
