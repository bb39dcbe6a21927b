package mine

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/crystallize-dev/crystallize/internal/trace"
)

// TestSingleRunParameterNamesDistinct checks that the parameters a
// one-run candidate gets from the run's declared values have distinct
// names: declared keys that make the same identifier, and two steps of
// one name whose same argument is made from them, are numbered; a
// declared value only a number, or only part of an argument, holds makes
// no parameter; and an output that names a value in a list is no
// expected output of the next run.
func TestSingleRunParameterNamesDistinct(t *testing.T) {
	first := act("a1", trace.KindToolCall, "prepare", `{"release-version":"1.5.0","release_version":"2.0.0","attempts":3}`)
	first.ObservedOutput = decodeAny(`{"tags":["v0.9.0",["v1.5.0"]]}`)
	first.Capabilities = []string{"git.write"}
	notes := act("a2", trace.KindToolCall, "notes", `{"title":"Release 1.5.0"}`)
	notesAgain := act("a3", trace.KindToolCall, "notes", `{"title":"Release 2.0.0"}`)
	tr := mk("run", first, notes, notesAgain)
	trace.Normalize(tr)
	declared := map[string]string{"release-version": "1.5.0", "release_version": "2.0.0", "unused": "nothing-passes-this", "attempts": "3"}
	r, err := Single(context.Background(), tr, Options{RunParameters: declared})
	if err != nil {
		t.Fatal(err)
	}
	c := r.Selected()
	if c == nil {
		t.Fatalf("Single selected nothing: %+v", r.RejectedCandidates)
	}
	var params []string
	for _, p := range c.Parameters {
		params = append(params, p.Name+"="+p.Key)
	}
	if diff := cmp.Diff([]string{"release_version=release-version", "release_version_2=release_version"}, params); diff != "" {
		t.Errorf("parameters (-want +got):\n%s", diff)
	}
	derived := map[string]string{}
	for _, d := range c.DerivedParameters {
		derived[d.Name] = d.Expression
	}
	want := map[string]string{
		"notes_title":   `"Release " + release_version`,
		"notes_title_2": `"Release " + release_version_2`,
	}
	if diff := cmp.Diff(want, derived); diff != "" {
		t.Errorf("derived parameters (-want +got):\n%s", diff)
	}
	if c.Steps[0].ExpectedOutput != nil {
		t.Errorf("step 1 expected output %v, want none: it names a declared value", c.Steps[0].ExpectedOutput)
	}

	// No step passes a declared value whole: no parameter at all.
	r, err = Single(context.Background(), tr, Options{RunParameters: map[string]string{"unused": "nothing-passes-this"}})
	if err != nil {
		t.Fatal(err)
	}
	if c := r.Selected(); c == nil || len(c.Parameters) != 0 || len(c.DerivedParameters) != 0 {
		t.Errorf("no declared value passed whole: %+v, want no parameters", c)
	}
}
