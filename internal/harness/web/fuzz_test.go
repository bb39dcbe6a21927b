package web

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzParseScenario: any input is a scenario or an error, never a panic,
// and an accepted scenario has one action per step.
func FuzzParseScenario(f *testing.F) {
	files, _ := filepath.Glob("testdata/scenarios/*.json")
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"name":"a","url":"http://x/","steps":[{"click":{"role":"button"},"press":"Enter"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ParseScenario(data, "fuzz.json")
		if err != nil {
			return
		}
		for i, st := range s.Steps {
			if st.action == "" {
				t.Fatalf("step %d accepted without an action", i)
			}
		}
	})
}

func TestScenarioFiles(t *testing.T) {
	files, _ := filepath.Glob("testdata/scenarios/*.json")
	if len(files) == 0 {
		t.Fatal("no scenario in testdata/scenarios")
	}
	for _, file := range files {
		if _, err := LoadScenario(file); err != nil {
			t.Error(err)
		}
	}
}
