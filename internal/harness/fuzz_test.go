package harness

import (
	"bytes"
	"testing"
)

// FuzzParseSuite checks that no suite line makes the parser panic and
// that accepted suites keep their ids unique.
func FuzzParseSuite(f *testing.F) {
	for _, k := range Kits() {
		for _, w := range k.Writes {
			if bytes.HasSuffix([]byte(w.Path), []byte(".jsonl")) {
				f.Add([]byte(w.Content))
			}
		}
	}
	f.Add([]byte(goldenSet))
	f.Add([]byte(`{"id":"x","kind":"k","input":{"command":[]},"assert":[{"type":"exit_code"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		cases, err := ParseSuite(bytes.NewReader(data), "f.jsonl")
		if err != nil {
			return
		}
		seen := map[string]bool{}
		for _, c := range cases {
			if c.ID == "" || seen[c.ID] || len(c.Assert) == 0 {
				t.Fatalf("accepted case %+v", c)
			}
			seen[c.ID] = true
		}
	})
}

// FuzzParseManifest checks that no manifest makes the parser panic and
// that an accepted manifest encodes to one that parses again.
func FuzzParseManifest(f *testing.F) {
	m := &Manifest{Schema: ManifestSchema, Owner: Owner, GeneratedBy: Owner, RiskFamilies: []string{FamilyAgent},
		Commands: []Command{{ID: "go-test", Command: "sh gates/go-test.sh", Phase: "pre_merge", Blocks: true, TimeoutSeconds: 60}}, EvalSuites: []EvalSuite{}}
	f.Add(m.Encode())
	f.Add([]byte(`{"schema":"sf.harness.v1","evalSuites":[{"id":"a","path":"../x","runner":"crystallize-eval","threshold":2}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ParseManifest(data, "m.json")
		if err != nil {
			return
		}
		if _, err := ParseManifest(m.Encode(), "m.json"); err != nil {
			t.Fatalf("re-encoded manifest does not parse: %v", err)
		}
	})
}
