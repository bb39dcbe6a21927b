package mine

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// TestMineStepSecretsAndApprovalPoints checks what a built step says it
// needs before it runs: the secrets its actions declared they read,
// besides those its arguments hold (a credential nested in an object is
// one too, and never a literal), and, for a step a person approves
// without a named boundary, an approval point at the step itself.
func TestMineStepSecretsAndApprovalPoints(t *testing.T) {
	var traces []*trace.Trace
	for i := range 3 {
		id := fmt.Sprintf("t%d", i)
		publish := act(id+"-1", trace.KindToolCall, "publish", `{"pkg":"x","auth":{"header":"Bearer ghp_`+strings.Repeat("aB3dE5gH7j", 4)[:36]+`"}}`)
		publish.RequiredSecrets = []string{"NPM_TOKEN"}
		deploy := act(id+"-2", trace.KindToolCall, "deploy", `{"env":"prod"}`)
		deploy.Approval = &trace.Approval{Required: true, Prompt: "Deploy to prod?"}
		traces = append(traces, mk(id, noise(id+"-n"), publish, deploy))
	}
	sel := mustMine(t, traces, Options{}).Selected()
	if sel == nil || len(sel.Steps) != 2 {
		t.Fatalf("selected %+v, want the two-step procedure", sel)
	}
	if diff := cmp.Diff([]string{"AUTH", "NPM_TOKEN"}, sel.Steps[0].RequiredSecrets); diff != "" {
		t.Errorf("step 1 required secrets (-want +got):\n%s", diff)
	}
	if !slices.Contains(sel.RequiredSecrets, "NPM_TOKEN") {
		t.Errorf("candidate required secrets %v lack the one step 1 declared", sel.RequiredSecrets)
	}
	if arg := sel.Steps[0].Arguments[0]; arg.Key != "auth" || arg.Kind != candidate.ArgSecret {
		t.Errorf("step 1 argument %+v, want auth read as a secret", arg)
	}
	b, _ := json.Marshal(sel)
	if strings.Contains(string(b), "ghp_") {
		t.Error("the nested credential appears in the candidate")
	}
	want := []candidate.ApprovalPoint{{Step: 2, Boundary: "deploy", Prompt: "Deploy to prod?", Required: true}}
	if diff := cmp.Diff(want, sel.ApprovalPoints); diff != "" {
		t.Errorf("approval points (-want +got):\n%s", diff)
	}
}

// TestArgvTemplateOfStrings checks that a recorded argv already held as
// strings is read as one decoded from JSON is.
func TestArgvTemplateOfStrings(t *testing.T) {
	params := map[string]any{"version": "1.2.0"}
	got, err := argvTemplate([]string{"git", "tag", "v{version}"}, params)
	if err != nil || !slices.Equal(got, []string{"git", "tag", "v{version}"}) {
		t.Errorf("argvTemplate([]string) = %v, %v; want the argv", got, err)
	}
	if _, err := argvTemplate([]string{"git", "tag", "{missing}"}, params); err == nil {
		t.Error("argvTemplate([]string) naming no parameter: no error")
	}
}
