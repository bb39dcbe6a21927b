package source

import (
	"context"
	"flag"
	"os"
	"runtime"
	"runtime/pprof"
	"testing"
)

var corpusDir = flag.String("corpus", "", "corpus directory for TestZZHeap")
var heapOut = flag.String("heapout", "", "write heap profile")

func TestZZHeap(t *testing.T) {
	if *corpusDir == "" {
		t.Skip("no -corpus")
	}
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	res, err := Load(context.Background(), *corpusDir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&after)
	if *heapOut != "" {
		f, _ := os.Create(*heapOut)
		pprof.Lookup("heap").WriteTo(f, 0)
		f.Close()
	}
	n := 0
	for _, tr := range res.Traces {
		n += len(tr.Actions)
	}
	t.Logf("traces %d actions %d live heap %.1f MB (HeapAlloc %d -> %d), TotalAlloc %.1f MB, Sys %.1f MB",
		len(res.Traces), n, float64(after.HeapAlloc-before.HeapAlloc)/1e6, before.HeapAlloc, after.HeapAlloc,
		float64(after.TotalAlloc-before.TotalAlloc)/1e6, float64(after.Sys)/1e6)
	runtime.KeepAlive(res)
}
