package synth

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/crystallize-dev/crystallize/internal/trace"
)

const goodExperiment = `[claim]
id = "sum-invariant"
text = "Sum should be invariant to row permutation"
acceptance = {}
[spec]
allowed_imports = ["stats"]
resources = { time_s = 5, mem_mb = 256 }
[[spec.properties]]
name = "perm"
transform = "permute_rows"
metric = "total"
[code]
source = "def fit_and_eval(data):\n    return {'total': sum(data)}\n"
[data]
value = [1, 2, 3]
[experiment]
replicates = 2
[[hypotheses]]
name = "metamorphic_check"
verifier = "metamorphic"
`

func TestParseExperiment(t *testing.T) {
	x, err := ParseExperiment([]byte(goodExperiment), "dir/experiment.toml")
	if err != nil {
		t.Fatal(err)
	}
	if x.Claim.ID != "sum-invariant" || x.Dir != "dir" || x.Settings.Replicates != 2 {
		t.Errorf("ParseExperiment = %+v", x)
	}
	if got, want := x.EvidenceDir(), filepath.Join("dir", "evidence", "sum-invariant"); got != want {
		t.Errorf("EvidenceDir = %s, want %s", got, want)
	}
	if diff := cmp.Diff([]any{int64(1), int64(2), int64(3)}, x.Data.Value); diff != "" {
		t.Errorf("data value (-want +got):\n%s", diff)
	}
	if r := x.Spec.Resources.WithDefaults(); r != (Resources{TimeS: 5, MemMB: 256, OutputKB: DefaultOutputKB}) {
		t.Errorf("resources = %+v", r)
	}
}

func TestParseExperimentErrors(t *testing.T) {
	tests := []struct {
		name    string
		replace [2]string // applied to goodExperiment
		want    []string  // every error, as printed
	}{
		{"unknown top-level key", [2]string{"[experiment]", "[experimnt]"}, []string{
			"x.toml:16: experimnt: unknown key \"experimnt\"",
		}},
		{"unknown nested key", [2]string{`metric = "total"`, `metric = "total"` + "\nmetirc = 1"}, []string{
			"x.toml:12: spec.properties[0].metirc: unknown key \"metirc\"",
		}},
		{"wrong type", [2]string{"replicates = 2", `replicates = "two"`}, []string{
			"x.toml:17: experiment.replicates: expected integer, got string",
		}},
		{"wrong type in an inline table", [2]string{"time_s = 5", `time_s = "5"`}, []string{
			"x.toml:7: spec.resources.time_s: expected integer, got string",
		}},
		{"unknown module and verifier", [2]string{`allowed_imports = ["stats"]`, `allowed_imports = ["numpy"]`}, []string{
			`x.toml:6: spec.allowed_imports[0]: unknown module "numpy"; capsules can load json, math, stats, table, time`,
		}},
		{"several problems at once", [2]string{`verifier = "metamorphic"`, `verifier = "vibes"` + "\n[[hypotheses]]\nname = \"metamorphic_check\"\nverifier = \"meets_claim\""}, []string{
			`x.toml:20: hypotheses[0].verifier: unknown verifier "vibes"; want one of metamorphic, meets_claim, within_tolerance, exact_match`,
			`x.toml:21: hypotheses[1].metric: meets_claim needs a metric`,
			`x.toml:22: hypotheses[1].name: duplicate hypothesis "metamorphic_check"`,
		}},
		{"negative hypothesis tolerance", [2]string{`verifier = "metamorphic"`, `verifier = "within_tolerance"` + "\nmetric = \"total\"\nexpected = 6\ntolerance = -1"}, []string{
			"x.toml:23: hypotheses[0].tolerance: tolerance must not be negative",
		}},
		{"no code", [2]string{"source = ", "sorce = "}, []string{
			"x.toml:12: code: set exactly one of file, source and model",
			`x.toml:13: code.sorce: unknown key "sorce"`,
		}},
		{"syntax", [2]string{"[claim]", "[claim"}, []string{
			"x.toml:2: expected '.' or ']' to end table name, but got '\\n' instead",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := strings.Replace(goodExperiment, tt.replace[0], tt.replace[1], 1)
			_, err := ParseExperiment([]byte(src), "x.toml")
			var list trace.ErrorList
			if !errors.As(err, &list) {
				t.Fatalf("ParseExperiment error = %v, want a trace.ErrorList", err)
			}
			var got []string
			for _, e := range list {
				got = append(got, e.Error())
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecodeSpec(t *testing.T) {
	s, err := DecodeSpec([]byte(`{"allowed_imports": ["math"], "properties": [{"name": "p", "transform": "scale", "metric": "m", "tolerance": 0.5, "expect": "scaled", "factor": 3}], "resources": {"time_s": 2}}`), "spec.json")
	if err != nil {
		t.Fatal(err)
	}
	if p := s.Properties[0]; p.tolerance() != 0.5 || p.factor() != 3 || p.Expect != "scaled" {
		t.Errorf("DecodeSpec property = %+v", p)
	}
	_, err = DecodeSpec([]byte(`{"properties": [{"name": "p", "transform": 1, "colour": "red"}], "resources": {"time_s": 1.5}}`), "spec.json")
	want := "spec.json: $.properties[0].colour: unknown key \"colour\"\n" +
		"spec.json: $.properties[0].transform: expected string, got number\n" +
		"spec.json: $.resources.time_s: expected integer, got number\n" +
		"spec.json: $.properties[0].transform: missing transform"
	if err == nil || err.Error() != want {
		t.Errorf("DecodeSpec error =\n%v\nwant\n%s", err, want)
	}
	if _, err := DecodeClaim([]byte(`{"id": "c", "text": "t", "acceptance": {"min_pct": 5}, "extra": true}`), "claim.json"); err == nil || err.Error() != `claim.json: $.extra: unknown key "extra"` {
		t.Errorf("DecodeClaim error = %v", err)
	}
	if _, err := DecodeClaim([]byte("{\"id\": \"c\"}\n{\"id\": \"d\"}"), "claim.json"); err == nil || err.Error() != "claim.json:2:1: invalid JSON: unexpected data after top-level value" {
		t.Errorf("DecodeClaim of two documents: error = %v", err)
	}
	if _, err := DecodeSpec([]byte("{\n  \"allowed_imports\": [\"math\",]\n}"), "spec.json"); err == nil || !strings.HasPrefix(err.Error(), "spec.json:2:30: invalid JSON: ") {
		t.Errorf("DecodeSpec of malformed JSON: error = %v", err)
	}
	if _, err := DecodeClaim([]byte(`[1]`), "claim.json"); err == nil || err.Error() != "claim.json: $: expected object, got array" {
		t.Errorf("DecodeClaim error = %v", err)
	}
}

func FuzzParseExperiment(f *testing.F) {
	f.Add([]byte(goodExperiment))
	f.Add([]byte("[claim]\nid = 1\n[[spec.properties]]\nname = 2\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		x, err := ParseExperiment(data, "f.toml")
		if err == nil && x.Claim.ID == "" {
			t.Error("accepted an experiment without a claim id")
		}
	})
}
