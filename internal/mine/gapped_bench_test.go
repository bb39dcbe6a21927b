package mine

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/trace"
)

// sessionCorpus builds n agent-like sessions of about 60 actions: five
// procedures of four to seven steps, each planted in a fifth of the
// sessions, among reads (about 40 % of the actions), edits, builds, test
// runs that fail and are retried, and commands from a vocabulary of 60
// heads.
func sessionCorpus(n int, seed uint64) []*trace.Trace {
	r := rand.New(rand.NewPCG(seed, 11))
	procs := make([][]string, 5)
	for p := range procs {
		procs[p] = make([]string, 4+p%4)
		for k := range procs[p] {
			procs[p][k] = fmt.Sprintf("proc%d step%d", p, k)
		}
	}
	out := make([]*trace.Trace, n)
	for i := range out {
		var actions []trace.Action
		filler := func() {
			switch x := r.IntN(10); {
			case x < 4:
				actions = append(actions, obs("", "Read", fmt.Sprintf(`{"file_path":"f%d.go"}`, r.IntN(100))))
			case x < 5:
				actions = append(actions, edit("", fmt.Sprintf("f%d.go", r.IntN(100))))
			case x < 6:
				actions = append(actions, cmd("", "go build", `{"arg1":"./..."}`))
			case x < 7:
				actions = append(actions, failing(cmd("", "go test", `{"arg1":"./..."}`)), edit("", "x.go"), cmd("", "go test", `{"arg1":"./..."}`))
			default:
				actions = append(actions, cmd("", fmt.Sprintf("tool%d", r.IntN(60)), fmt.Sprintf(`{"arg1":"v%d"}`, r.IntN(5))))
			}
		}
		for len(actions) < 60 {
			filler()
			if r.IntN(12) == 0 {
				p := procs[r.IntN(len(procs))]
				for _, name := range p {
					actions = append(actions, cmd("", name, fmt.Sprintf(`{"value":"v%d"}`, r.IntN(1000))))
					for range r.IntN(3) {
						filler()
					}
				}
			}
		}
		out[i] = session(fmt.Sprintf("s%06d", i), actions...)
	}
	return out
}

// BenchmarkMineGapped measures the gapped miner alone on decoded
// sessions: preprocessing, the search, the noise rule and candidate
// construction. Run it with -benchtime=1x.
func BenchmarkMineGapped(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		corpus := sessionCorpus(n, 1)
		b.Run(fmt.Sprintf("sessions=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				r, err := Mine(context.Background(), corpus, Options{MinExamples: 3})
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(r.Mining.PatternsSearched), "patterns")
				b.ReportMetric(float64(len(r.Candidates)), "candidates")
			}
		})
	}
}
