package mine

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// TestPromptTemplateReadsVaryingArguments checks that an approval prompt
// is templated only from arguments that vary (parameters and bindings):
// a constant argument every example passed, whose value the prompt also
// names, stays literal text of the prompt, as does the part of the
// prompt an argument value some example left empty would match.
func TestPromptTemplateReadsVaryingArguments(t *testing.T) {
	var traces []*trace.Trace
	for i, v := range []string{"0.1.1", "0.1.2", "0.2.0"} {
		id := fmt.Sprintf("t%d", i)
		set := act(id+"-1", trace.KindToolCall, "cargo.set_version", fmt.Sprintf(`{"version": %q, "registry": "crates.io", "note": %q}`, v, []string{"", "x", "y"}[i]))
		gate := act(id+"-2", trace.KindHumanApproval, "confirm_release", fmt.Sprintf(`{"version": %q}`, v))
		gate.Approval = &trace.Approval{Required: true, Boundary: "publish", Prompt: "Publish " + v + " to crates.io?"}
		traces = append(traces, mk(id, set, gate))
	}
	sel := mustMine(t, traces, Options{}).Selected()
	if sel == nil {
		t.Fatal("no candidate selected")
	}
	want := []candidate.PromptPart{{Text: "Publish "}, {Step: 1, Key: "version"}, {Text: " to crates.io?"}}
	if diff := cmp.Diff(want, sel.Steps[1].PromptTemplate); diff != "" {
		t.Errorf("templated prompt (-want +got):\n%s", diff)
	}
}
