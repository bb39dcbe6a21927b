package mine

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// releaseCorpus is n traces of a three-step release: create a branch,
// open a pull request from it (the branch bound to the first step's
// output) and tag the version ("v" + version, a derived parameter). odd
// changes the actions of the traces it names.
func releaseCorpus(n int, odd map[int]func(branch, pr, tag *trace.Action)) []*trace.Trace {
	var traces []*trace.Trace
	for i := range n {
		id := fmt.Sprintf("t%02d", i)
		v := fmt.Sprintf("1.%d.0", i)
		branch := act(id+"-b", trace.KindToolCall, "git.create_branch", `{"name":"release-`+v+`"}`)
		branch.Output = decodeAny(`{"branch":"release-` + v + `"}`)
		pr := act(id+"-p", trace.KindToolCall, "github.open_pr", `{"head":"release-`+v+`","title":"Release"}`)
		pr.SideEffects = []trace.SideEffect{{Kind: "pull_request", Target: "main"}}
		tag := act(id+"-t", trace.KindToolCall, "git.tag", `{"version":"`+v+`","name":"v`+v+`"}`)
		if f := odd[i]; f != nil {
			f(&branch, &pr, &tag)
		}
		traces = append(traces, mk(id, noise(id+"-n"), branch, pr, tag))
	}
	return traces
}

// TestSampleDisagreementKinds checks that an example outside the sample
// a candidate was built from rejects it, naming that example once, when
// it differs from the sample in any way the sample decided: whether a
// step needs a person, whether it is fuzzy, its side effects, a binding
// or a derived parameter.
func TestSampleDisagreementKinds(t *testing.T) {
	const n, bound = 12, 5
	picked := sampleIndexes(n, bound)
	var outside []int
	for i := range n {
		if !slices.Contains(picked, i) {
			outside = append(outside, i)
		}
	}
	yes := true
	for _, tc := range []struct {
		name   string
		change func(branch, pr, tag *trace.Action)
		want   string
	}{
		{"approval", func(_, pr, _ *trace.Action) { pr.Approval = &trace.Approval{Required: true} },
			"differs on whether step 2 needs human approval"},
		// A fuzzy step with side effects excludes its trace; the tag has
		// none.
		{"fuzzy", func(_, _, tag *trace.Action) { tag.Fuzzy = &yes },
			"marks step 3 fuzzy, which the sample runs as code"},
		{"side effects", func(_, pr, _ *trace.Action) {
			pr.SideEffects = append(pr.SideEffects, trace.SideEffect{Kind: "label", Target: "release"})
		}, "has other side effects at step 2"},
		{"binding", func(_, pr, _ *trace.Action) { pr.Parameters = decodeMap(`{"head":"hotfix","title":"Release"}`) },
			"does not pass step 2 parameters.head from step 1 output $.branch, as the sample does"},
		{"derived", func(_, _, tag *trace.Action) {
			tag.Parameters["name"] = "unrelated"
		}, `does not give parameter name_step3 the value its expression "v" + version computes`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Two examples outside the sample disagree alike: the
			// first is named, once.
			traces := releaseCorpus(n, map[int]func(_, _, _ *trace.Action){outside[0]: tc.change, outside[1]: tc.change})
			r := mustMine(t, traces, Options{MinExamples: 3, ExampleSample: bound})
			c := longest(append(slices.Clone(r.Candidates), r.RejectedCandidates...))
			if c == nil || len(c.Steps) != 3 {
				t.Fatalf("candidate %+v, want the three-step release", c)
			}
			var found []candidate.Problem
			for _, p := range c.RejectionReasons {
				if p.Code == candidate.CodeSampleDisagreement {
					found = append(found, p)
				}
			}
			wantID := fmt.Sprintf("t%02d", outside[0])
			if len(found) != 1 || found[0].TraceID != wantID || !strings.Contains(found[0].Message, tc.want) {
				t.Fatalf("sample disagreements %+v, want one naming %s: %q", found, wantID, tc.want)
			}
			if c.Safe() {
				t.Error("the candidate is safe")
			}
		})
	}
	// Every example agrees: the same candidate is safe, with its binding
	// and derived parameters.
	r := mustMine(t, releaseCorpus(n, nil), Options{MinExamples: 3, ExampleSample: bound})
	c := longest(r.Candidates)
	if c == nil || len(c.Bindings) != 1 || len(c.DerivedParameters) != 2 {
		t.Fatalf("agreeing examples: candidate %+v, want a safe one with a binding and two derived parameters", c)
	}
}
