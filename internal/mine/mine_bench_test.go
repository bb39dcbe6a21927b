package mine

import (
	"context"
	"fmt"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/trace"
	"github.com/crystallize-dev/crystallize/internal/tracetest"
)

// BenchmarkMine measures mining alone, on decoded traces: interning,
// the suffix array, ranking and candidate construction.
func BenchmarkMine(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		corpus := tracetest.Generate(tracetest.Config{Traces: n, Seed: 1})
		for _, t := range corpus.Traces {
			trace.Normalize(t)
		}
		b.Run(fmt.Sprintf("traces=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Mine(context.Background(), corpus.Traces, Options{MinExamples: 3}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
