package replay

import (
	"fmt"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// benchCorpus builds a 20-step candidate and n traces of about 50 actions:
// 15 unrelated actions, the procedure, 15 more. Four in five traces hold
// the procedure exactly, one in ten misses a step, one in twenty has an
// extra action inside it and one in twenty is another procedure. The
// traces share 1,024 action slices (Shadow only reads them), so building
// 100,000 of them is cheap while their contents still vary.
func benchCorpus(n int) (c *candidate.Candidate, traces []*trace.Trace, matched int) {
	const steps = 20
	c = &candidate.Candidate{ID: "candidate_bench"}
	proc := make([]trace.Action, steps)
	for i := range steps {
		a := trace.Action{
			Kind:       trace.KindToolCall,
			Name:       fmt.Sprintf("tool.step_%02d", i),
			Parameters: map[string]any{"path": "p", "version": "1.0"},
		}
		s := candidate.Step{Index: i + 1, Kind: a.Kind, Name: a.Name}
		switch i % 4 {
		case 0:
			a.SideEffects = []trace.SideEffect{{Kind: "file_write", Target: "p", Capability: "fs.write"}}
			s.SideEffects = []trace.SideEffect{{Kind: "file_write", Target: "{path}", Capability: "fs.write", Metadata: map[string]any{"target_parameter": "path"}}}
		case 1:
			a.SideEffects = []trace.SideEffect{{Kind: "git_ref", Target: "release", Capability: "git.write"}}
			s.SideEffects = []trace.SideEffect{{Kind: "git_ref", Target: "release", Capability: "git.write"}}
		}
		proc[i] = a
		c.SequenceSignature = append(c.SequenceSignature, a.Signature())
		c.Steps = append(c.Steps, s)
	}
	noise := func(v, i int) trace.Action {
		return trace.Action{Kind: trace.KindModelCall, Name: fmt.Sprintf("model.think_%d", (v+i)%37), Parameters: map[string]any{"prompt": "x"}}
	}
	const variants = 1024
	shapes := make([][]trace.Action, variants)
	for v := range variants {
		var acts []trace.Action
		for i := range 15 {
			acts = append(acts, noise(v, i))
		}
		switch {
		case v%20 == 0: // another procedure
			for i := range steps {
				acts = append(acts, noise(v, 100+i))
			}
		case v%20 == 1: // an extra action inside
			acts = append(acts, proc[:10]...)
			acts = append(acts, noise(v, 50))
			acts = append(acts, proc[10:]...)
		case v%10 == 2: // a missing step
			acts = append(acts, proc[:v%steps]...)
			acts = append(acts, proc[v%steps+1:]...)
		default:
			acts = append(acts, proc...)
		}
		for i := range 15 {
			acts = append(acts, noise(v, 200+i))
		}
		for i := range acts {
			acts[i].ID = fmt.Sprintf("a%d", i)
		}
		shapes[v] = acts
	}
	traces = make([]*trace.Trace, n)
	for i := range traces {
		traces[i] = &trace.Trace{Version: 1, ID: fmt.Sprintf("trace_%06d", i), SourceHash: "sha256:bench", Actions: shapes[i%variants]}
		if i%variants%20 != 0 {
			matched++
		}
	}
	return c, traces, matched
}

func BenchmarkShadow(b *testing.B) {
	c, traces, matched := benchCorpus(100_000)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		rep := Shadow(c, nil, traces)
		if rep.ComparedTraces != matched {
			b.Fatalf("ComparedTraces = %d, want %d", rep.ComparedTraces, matched)
		}
	}
}

// BenchmarkShadowSources shadows a candidate whose examples are every
// trace of the corpus: finding each example's trace must cost the same
// per example at 10,000 traces as at 30,000 (it was a scan of the
// sources per example, quadratic in the corpus).
func BenchmarkShadowSources(b *testing.B) {
	for _, n := range []int{10_000, 30_000} {
		c, traces, _ := benchCorpus(n)
		c.Examples = make([]candidate.Example, n)
		for i, t := range traces {
			c.Examples[i] = candidate.Example{TraceID: t.ID, SourceHash: t.SourceHash, StartIndex: 15}
		}
		b.Run(fmt.Sprintf("traces=%d", n), func(b *testing.B) {
			for b.Loop() {
				if rep := Shadow(c, traces, nil); len(rep.Traces) != n {
					b.Fatalf("%d traces compared, want %d", len(rep.Traces), n)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/example")
		})
	}
}
