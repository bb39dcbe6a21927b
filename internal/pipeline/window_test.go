package pipeline

import (
	"context"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/mine"
	"github.com/crystallize-dev/crystallize/internal/replay"
	"github.com/crystallize-dev/crystallize/internal/trace"
	"github.com/crystallize-dev/crystallize/internal/tracetest"
)

// TestWindowVerdictsMatchWholeTraces checks what mining's sample check
// relies on when it reads only the window of an example's steps: shadow
// replay passes an example on that window only if it passes it on the
// whole trace. Every example of every candidate of a generated corpus is
// judged both ways, as mined and with a step's output changed in some of
// them, so that both verdicts occur.
func TestWindowVerdictsMatchWholeTraces(t *testing.T) {
	corpus := tracetest.Generate(tracetest.Config{Traces: 200, Seed: 11})
	r, err := mine.Mine(context.Background(), corpus.Traces, mine.Options{MinExamples: 2, GeneratedAt: "2026-01-01T00:00:00Z"})
	if err != nil {
		t.Fatal(err)
	}
	byHash := map[string]*trace.Trace{}
	for _, tr := range corpus.Traces {
		byHash[tr.ID] = tr
	}
	verifier := replay.NewVerifier(replay.Options{})
	var passes, fails int
	for _, c := range append(append([]candidate.Candidate(nil), r.Candidates...), r.RejectedCandidates...) {
		if len(c.Examples) == 0 || c.Examples[0].Positions != nil {
			continue
		}
		check := verifier.Check(&c)
		for e := range c.Examples {
			ex := c.Examples[e]
			whole := byHash[ex.TraceID]
			if e%3 == 1 && len(c.Steps) > 1 {
				// Another output at the second step: the example fails.
				changed := *whole
				changed.Actions = append([]trace.Action(nil), whole.Actions...)
				changed.Actions[ex.StartIndex+1].Output = map[string]any{"changed": e}
				whole = &changed
			}
			w := trace.Window{Lo: ex.StartIndex, Hi: ex.StartIndex + len(c.Steps)}
			shifted := ex
			shifted.StartIndex = 0
			onWindow := check([]*candidate.Example{&shifted}, []*trace.Trace{whole.Window(w)})[0]
			onWhole := check([]*candidate.Example{&ex}, []*trace.Trace{whole})[0]
			if onWindow && !onWhole {
				t.Errorf("candidate %s example %d (%s): passes on its window, fails on its trace", c.Name, e, ex.TraceID)
			}
			if onWhole {
				passes++
			} else {
				fails++
			}
		}
	}
	if passes == 0 || fails == 0 {
		t.Fatalf("%d passing and %d failing examples: want both", passes, fails)
	}
}
