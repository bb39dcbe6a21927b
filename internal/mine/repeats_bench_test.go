package mine

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
)

// benchSeqs returns nseq deterministic sequences of length symbols that
// look like interned traces: background actions drawn from a vocabulary of
// 200 symbols with a Zipf distribution (a few actions are very common), and
// planted procedures, runs of 2 to 40 symbols, each in 1-10% of the
// sequences at a random offset.
func benchSeqs(nseq, length int) [][]int32 {
	const noise = 200
	r := rand.New(rand.NewPCG(7, 8))
	zipf := rand.NewZipf(r, 1.2, 4, noise-1)
	type motif struct {
		run  []int32
		frac float64
	}
	var motifs []motif
	for i, n := range []int{2, 3, 4, 6, 8, 12, 16, 24, 32, 40} {
		run := make([]int32, n)
		for j := range run {
			// Procedures mix common actions with their own.
			if r.IntN(2) == 0 {
				run[j] = int32(zipf.Uint64())
			} else {
				run[j] = int32(noise + r.IntN(60))
			}
		}
		motifs = append(motifs, motif{run, 0.01 + 0.01*float64(i)})
	}
	seqs := make([][]int32, nseq)
	for i := range seqs {
		s := make([]int32, length)
		for j := range s {
			s[j] = int32(zipf.Uint64())
		}
		for _, m := range motifs {
			if r.Float64() < m.frac && len(m.run) <= length {
				copy(s[r.IntN(length-len(m.run)+1):], m.run)
			}
		}
		seqs[i] = s
	}
	return seqs
}

// liveHeap returns the bytes of heap in use after a full collection.
func liveHeap() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// BenchmarkIndex measures building the index and enumerating its repeats
// at the parameters Mine uses (two traces, two actions). Besides time and
// allocation (B/op, the total allocated, bounds the peak from above) it
// reports index-B, the heap the built index keeps live, and the number of
// repeats found.
func BenchmarkIndex(b *testing.B) {
	for _, nseq := range []int{10_000, 100_000} {
		seqs := benchSeqs(nseq, 50)
		b.Run(fmt.Sprintf("build/%dx50", nseq), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				NewIndex(seqs) // b.Loop keeps the call from being optimized away
			}
			before := liveHeap()
			x := NewIndex(seqs)
			after := liveHeap()
			runtime.KeepAlive(x)
			b.ReportMetric(float64(int64(after)-int64(before)), "index-B")
		})
		b.Run(fmt.Sprintf("repeats/%dx50", nseq), func(b *testing.B) {
			x := NewIndex(seqs)
			b.ReportAllocs()
			var rs []Repeat
			for b.Loop() {
				rs = x.Repeats(2, 2)
			}
			b.ReportMetric(float64(len(rs)), "repeats")
		})
	}
}
