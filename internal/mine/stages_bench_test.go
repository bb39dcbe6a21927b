package mine

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/trace"
	"github.com/crystallize-dev/crystallize/internal/tracetest"
)

// stageSizes are the corpus sizes of BenchmarkStage: 1,000 and 10,000
// traces of ~50 actions, or CRYSTALLIZE_BENCH_TRACES ("10000,30000").
func stageSizes() []int {
	sizes := []int{1000, 10000}
	if s := os.Getenv("CRYSTALLIZE_BENCH_TRACES"); s != "" {
		sizes = nil
		for _, f := range strings.Split(s, ",") {
			if n, err := strconv.Atoi(strings.TrimSpace(f)); err == nil && n > 0 {
				sizes = append(sizes, n)
			}
		}
	}
	return sizes
}

// BenchmarkStage times each step of exact mining on its own, on decoded
// traces, so that a regression shows in the step that caused it:
// summarize (exclusion and signatures, on the decoding workers in a
// run), intern (symbols, in corpus order), repeats (suffix array, LCP,
// ranked repeats) and build (the ranked repeats into candidates, until
// the report is full). ns/action divides by the corpus's actions.
func BenchmarkStage(b *testing.B) {
	for _, n := range stageSizes() {
		corpus := tracetest.Generate(tracetest.Config{Traces: n, Seed: 1})
		for _, t := range corpus.Traces {
			trace.Normalize(t)
		}
		opts := Options{MinExamples: 3}
		sums := make([]Summary, n)
		actions := 0
		for i, t := range corpus.Traces {
			sums[i] = Summarize(t)
			actions += len(t.Actions)
		}
		perAction := func(b *testing.B) {
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(actions), "ns/action")
		}
		b.Run(fmt.Sprintf("traces=%d/stage=summarize", n), func(b *testing.B) {
			for b.Loop() {
				for _, t := range corpus.Traces {
					Summarize(t)
				}
			}
			perAction(b)
		})
		scan := func() *Scan {
			s, err := NewScan(opts)
			if err != nil {
				b.Fatal(err)
			}
			for _, sum := range sums {
				s.Add(sum)
			}
			return s
		}
		b.Run(fmt.Sprintf("traces=%d/stage=intern", n), func(b *testing.B) {
			for b.Loop() {
				scan()
			}
			perAction(b)
		})
		s := scan()
		b.Run(fmt.Sprintf("traces=%d/stage=repeats", n), func(b *testing.B) {
			for b.Loop() {
				NewIndex(s.seqs).Repeats(opts.minExamples(), 2)
			}
			perAction(b)
		})
		b.Run(fmt.Sprintf("traces=%d/stage=build", n), func(b *testing.B) {
			idx := NewIndex(s.seqs)
			repeats := idx.Repeats(opts.minExamples(), 2)
			r := &repeatRanking{idx: idx, repeats: repeats, shapes: symbolShapes(s.symbols)}
			batch := r.next(len(repeats), 2*DefaultMaxCandidates)
			bld := builder{traces: corpus.Traces, eligible: n, prices: opts.prices()}
			for b.Loop() {
				for _, p := range batch {
					bld.build(p.all, p.length)
				}
			}
			perAction(b)
		})
		b.Run(fmt.Sprintf("traces=%d/stage=mine", n), func(b *testing.B) {
			for b.Loop() {
				if _, err := Mine(context.Background(), corpus.Traces, opts); err != nil {
					b.Fatal(err)
				}
			}
			perAction(b)
		})
	}
}
