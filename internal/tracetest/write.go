package tracetest

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"

	"github.com/crystallize-dev/crystallize/internal/trace"
)

// FileName returns the name WriteDir gives trace t: its id plus ".json".
func FileName(t *trace.Trace) string { return t.ID + ".json" }

// WriteDir writes every trace of the corpus to dir, one compact JSON file
// per trace named by FileName (trace-000001.json, ...), creating dir if
// needed and replacing files of the same name. The planted manifest is not
// written: a miner reading dir would take it for a trace.
//
// Each file holds the bytes trace.Trace's MarshalJSON gives for the
// trace (its canonical form). Files are written in parallel; the bytes do not
// depend on the order. When writes fail, the
// error of the first failing trace in corpus order is returned.
func (c *Corpus) WriteDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("writing corpus: %w", err)
	}
	errs := make([]error, len(c.Traces))
	workers := min(runtime.GOMAXPROCS(0), max(len(c.Traces), 1))
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < len(c.Traces); i += workers {
				errs[i] = writeTrace(filepath.Join(dir, FileName(c.Traces[i])), c.Traces[i])
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return fmt.Errorf("writing corpus: %w", err)
		}
	}
	return nil
}

func writeTrace(path string, t *trace.Trace) error {
	data, err := t.MarshalJSON()
	if err != nil {
		return fmt.Errorf("encoding %s: %w", t.ID, err)
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}

// WriteJSONL writes every trace of the corpus to the file at path, one
// compact JSON trace per line in corpus order (the bytes WriteDir writes
// to the trace's file), replacing the file if it exists.
func (c *Corpus) WriteJSONL(path string) (err error) {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("writing corpus: %w", err)
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("writing corpus: %w", cerr)
		}
	}()
	w := bufio.NewWriterSize(f, 1<<20)
	for _, t := range c.Traces {
		data, err := t.MarshalJSON()
		if err != nil {
			return fmt.Errorf("writing corpus: encoding %s: %w", t.ID, err)
		}
		w.Write(append(data, '\n')) // a write error sticks; Flush reports it
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("writing corpus: %w", err)
	}
	return nil
}
