package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/mine"
	"github.com/crystallize-dev/crystallize/internal/replay"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// TestMinedExamplesReplay is a property test of the gap rule
// (candidate.MayInterleave) that mining and shadow replay share: on
// random small sessions, in which procedures are interleaved with reads,
// failures, writes and actions that need a person, every example the
// gapped miner picks replays on its own trace, whatever sat in the gaps
// of the trace's other occurrences.
func TestMinedExamplesReplay(t *testing.T) {
	candidates := 0
	for seed := range uint64(60) {
		r := rand.New(rand.NewPCG(seed, 11))
		traces := randomSessions(r)
		rep, err := mine.Mine(context.Background(), traces, mine.Options{Mode: mine.ModeGapped, MinExamples: 2, MaxGap: 1 + r.IntN(4)})
		if err != nil {
			t.Fatalf("seed %d: Mine: %v", seed, err)
		}
		for i := range rep.Candidates {
			c := &rep.Candidates[i]
			candidates++
			sh := replay.Shadow(c, traces, nil)
			for _, st := range sh.Traces {
				if st.Status != candidate.StatusPass {
					t.Errorf("seed %d: candidate %s: source example %s: %s %v", seed, c.Name, st.TraceID, st.Status, st.Details)
				}
			}
		}
	}
	if candidates < 20 {
		t.Errorf("only %d candidates over all seeds: the property is barely tested", candidates)
	}
}

// randomSessions returns a few sessions that each do a three-step
// procedure a couple of times, with random actions around and between
// its steps.
func randomSessions(r *rand.Rand) []*trace.Trace {
	var traces []*trace.Trace
	for i := range 6 + r.IntN(5) {
		id := fmt.Sprintf("s%d", i)
		var actions []trace.Action
		filler := func() {
			for range r.IntN(3) {
				var a trace.Action
				switch r.IntN(5) {
				case 0:
					a = trace.Action{Kind: trace.KindObservation, Name: "Read", Parameters: map[string]any{"file_path": "f.go"}}
				case 1:
					a = trace.Action{Kind: trace.KindToolCall, Name: fmt.Sprintf("Write%d", r.IntN(3)), Parameters: map[string]any{"file_path": "m.txt"},
						SideEffects: []trace.SideEffect{{Kind: "file_write", Target: "m.txt", Capability: "fs.write"}}}
				case 2:
					a = trace.Action{Kind: trace.KindToolCall, Name: "deploy", Approval: &trace.Approval{Required: true}}
				case 3:
					a = trace.Action{Kind: trace.KindToolCall, Name: fmt.Sprintf("tool%d", r.IntN(4)), Metadata: map[string]any{"exit_code": json.Number("1"), "error": true}}
				default:
					a = trace.Action{Kind: trace.KindToolCall, Name: fmt.Sprintf("tool%d", r.IntN(4))}
				}
				actions = append(actions, a)
			}
		}
		for range 1 + r.IntN(2) {
			filler()
			for _, name := range []string{"git add", "git push", "gh pr create"} {
				actions = append(actions, trace.Action{Kind: trace.KindToolCall, Name: name, Capabilities: []string{"exec:git"}})
				filler()
			}
		}
		for j := range actions {
			actions[j].ID = fmt.Sprintf("%s-%d", id, j)
		}
		traces = append(traces, &trace.Trace{ID: id, Source: id + ".json", SourceHash: "sha256:" + id, Actions: actions,
			Metadata: map[string]any{"agent": "claude-code", "goal": "Open a pull request"}})
	}
	return traces
}
