package mine

import (
	"fmt"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/trace"
)

// deriveCorpus is n traces that tag a release "v" + version, except in
// trace odd, whose tag is something else.
func deriveCorpus(n, odd int) []*trace.Trace {
	var traces []*trace.Trace
	for i := range n {
		id := fmt.Sprintf("t%02d", i)
		v := fmt.Sprintf("1.%d.0", i)
		tag := "v" + v
		if i == odd {
			tag = "release-" + fmt.Sprint(i*7)
		}
		traces = append(traces, mk(id, noise(id+"-n"),
			act(id+"-a", trace.KindToolCall, "bump", `{"version":"`+v+`"}`),
			act(id+"-b", trace.KindToolCall, "tag", `{"name":"`+tag+`"}`)))
	}
	return traces
}

// TestDerivationCheckedOnEveryExample checks that an expression found on
// the first examples derives a parameter only when every example agrees
// with it: one contradicted by an example past those the search looked
// at leaves the parameter for the caller to pass. The report keeps a few
// of the matching checks as evidence.
func TestDerivationCheckedOnEveryExample(t *testing.T) {
	const n = deriveSearchExamples + 4
	sel := mustMine(t, deriveCorpus(n, -1), Options{ExampleSample: -1}).Selected()
	if sel == nil || len(sel.DerivedParameters) != 1 {
		t.Fatalf("every example agrees: selected %+v, want one derived parameter", sel)
	}
	d := sel.DerivedParameters[0]
	if d.Name != "name" || d.Expression != `"v" + version` || d.SourceChecks != n {
		t.Errorf("derived %s := %s checked on %d examples, want name := \"v\" + version on %d", d.Name, d.Expression, d.SourceChecks, n)
	}
	if len(d.Evidence) != deriveEvidence {
		t.Errorf("%d evidence rows, want the first %d matching checks", len(d.Evidence), deriveEvidence)
	}

	sel = mustMine(t, deriveCorpus(n, n-1), Options{ExampleSample: -1}).Selected()
	if sel == nil {
		t.Fatal("no candidate")
	}
	if len(sel.DerivedParameters) != 0 {
		t.Errorf("the last example contradicts the expression: derived %+v, want none", sel.DerivedParameters)
	}
	var names []string
	for _, p := range sel.Parameters {
		names = append(names, p.Name)
	}
	if len(names) != 2 || names[0] != "version" || names[1] != "name" {
		t.Errorf("parameters %v, want version and name passed by the caller", names)
	}
}
