package session

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

const (
	caseSchemaFile = "../../schemas/learning-case.v1.json"
	caseSchemaID   = "https://crystallize.dev/schemas/learning-case.v1.json"
)

// TestLearnCorpus checks that every [!error] of the corpus gives exactly
// one failure case, and that every case is valid under the schema.
func TestLearnCorpus(t *testing.T) {
	data, err := os.ReadFile(caseSchemaFile)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(caseSchemaID, doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile(caseSchemaID)
	if err != nil {
		t.Fatalf("compiling %s: %v", caseSchemaFile, err)
	}
	files, _ := filepath.Glob("testdata/learn/*.md")
	if len(files) == 0 {
		t.Fatal("no corpus in testdata/learn")
	}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		s, err := Parse(file, data)
		if err != nil {
			t.Fatalf("Parse(%s): %v", file, err)
		}
		cases := Learn(s, file)
		var failures []string
		for _, c := range cases {
			if c.Kind == KindFailure {
				failures = append(failures, c.Signal)
			}
			b, err := json.Marshal(c)
			if err != nil {
				t.Fatal(err)
			}
			inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
			if err != nil {
				t.Fatal(err)
			}
			if err := sch.Validate(inst); err != nil {
				t.Errorf("%s: case %s does not match the schema: %v", file, c.ID, err)
			}
		}
		var want []string
		for _, p := range s.Phases {
			for _, b := range p.Blocks {
				if c, ok := b.(Callout); ok && c.Is(CalloutError) {
					want = append(want, c.Text())
				}
			}
		}
		if len(want) == 0 {
			t.Errorf("%s has no [!error]: not a learn corpus file", file)
		}
		if diff := cmp.Diff(want, failures); diff != "" {
			t.Errorf("%s: failure signals (-want +got):\n%s", file, diff)
		}
	}
}

func TestLearn(t *testing.T) {
	data, err := os.ReadFile("testdata/learn/deploy.md")
	if err != nil {
		t.Fatal(err)
	}
	s, err := Parse("deploy.md", data)
	if err != nil {
		t.Fatal(err)
	}
	type brief struct {
		ID, Kind, Phase, Signal string
		Attempt, Fix            []string
		Notes                   []string
		Resolved                bool
	}
	tools := func(cs []ToolCall) []string {
		var out []string
		for _, c := range cs {
			out = append(out, strings.TrimSpace(c.Tool+" "+c.Args))
		}
		return out
	}
	var got []brief
	for _, c := range Learn(s, "deploy.md") {
		got = append(got, brief{c.ID, c.Kind, c.Phase, c.Signal, tools(c.Attempt), tools(c.Fix.ToolCalls), c.Fix.Notes, c.Resolved})
	}
	want := []brief{
		{"deploy-fix#1", KindFailure, "migrate", "The migration lock is held by a crashed run.",
			[]string{"migrate up --env=prod"}, []string{"migrate unlock --env=prod", "migrate up --env=prod"},
			[]string{"Release the stale lock: the run that held it is gone."}, true},
		{"deploy-fix#2", KindCorrection, "release", "Not a restart: roll out the new image tag.",
			[]string{"kubectl rollout restart deploy/billing"}, []string{"kubectl set image deploy/billing billing=billing:v2"}, []string{}, true},
		{"deploy-fix#3", KindFailure, "release", "Rollout timed out waiting for readiness.",
			[]string{"kubectl set image deploy/billing billing=billing:v2"}, nil, []string{}, false},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Learn(deploy.md) (-want +got):\n%s", diff)
	}
}
