package mine

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/trace"
	"github.com/crystallize-dev/crystallize/internal/tracetest"
)

// TestMineRecoversPlantedProcedures plants procedures of 2 to 40 steps
// among random noise and checks that mining finds every one of them as a
// candidate with the right steps, examples, parameters and bindings.
func TestMineRecoversPlantedProcedures(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		t.Run(fmt.Sprintf("seed%d", seed), func(t *testing.T) {
			corpus := tracetest.Generate(tracetest.Config{Traces: 300, Seed: seed, Procedures: 8, MinLen: 2, MaxLen: 40, Support: 0.04})
			for _, tr := range corpus.Traces {
				trace.Normalize(tr)
			}
			r, err := Mine(context.Background(), corpus.Traces, Options{MinExamples: 3, MaxCandidates: 40})
			if err != nil {
				t.Fatal(err)
			}
			bySig := map[string]*candidate.Candidate{}
			for i := range r.Candidates {
				c := &r.Candidates[i]
				bySig[strings.Join(c.SequenceSignature, "|")] = c
			}
			for _, p := range corpus.Planted {
				c, ok := bySig[strings.Join(p.Signatures, "|")]
				if !ok {
					t.Errorf("planted %s (%d steps in %d traces) not found among %d candidates", p.Name, len(p.Signatures), len(p.TraceIDs), len(r.Candidates))
					continue
				}
				var ids []string
				for _, ex := range c.Examples {
					ids = append(ids, ex.TraceID)
				}
				sort.Strings(ids)
				if diff := cmp.Diff(p.TraceIDs, ids); diff != "" {
					t.Errorf("%s examples (-planted +mined):\n%s", p.Name, diff)
				}
				var varying []string
				for _, param := range c.Parameters {
					varying = append(varying, param.SourcePaths...)
				}
				// The generator builds many values from one occurrence
				// counter, so mining derives them; they vary all the same.
				for _, d := range c.DerivedParameters {
					varying = append(varying, d.SourcePaths...)
				}
				sort.Strings(varying)
				want := append([]string{}, p.Varying...)
				sort.Strings(want)
				if diff := cmp.Diff(want, varying, cmpEmpty); diff != "" {
					t.Errorf("%s parameters (-planted +mined):\n%s", p.Name, diff)
				}
				var bound []string
				for _, b := range c.Bindings {
					bound = append(bound, fmt.Sprintf("steps[%d].%s", b.Step, b.Path))
				}
				sort.Strings(bound)
				wantBound := append([]string{}, p.Bindings...)
				sort.Strings(wantBound)
				if diff := cmp.Diff(wantBound, bound, cmpEmpty); diff != "" {
					t.Errorf("%s bindings (-planted +mined):\n%s", p.Name, diff)
				}
				var constants []string
				for _, k := range c.Constants {
					constants = append(constants, fmt.Sprintf("steps[%d].%s", k.Step, k.Path))
				}
				sort.Strings(constants)
				wantConst := append([]string{}, p.Constant...)
				sort.Strings(wantConst)
				if diff := cmp.Diff(wantConst, constants, cmpEmpty); diff != "" {
					t.Errorf("%s constants (-planted +mined):\n%s", p.Name, diff)
				}
			}
		})
	}
}

// cmpEmpty treats nil and empty slices alike.
var cmpEmpty = cmp.Transformer("nonNil", func(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
})
