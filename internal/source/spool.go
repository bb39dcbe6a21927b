package source

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/crystallize-dev/crystallize/internal/trace"
)

// A load with Options.Summarize writes each session's trace, as decoded,
// to a spool: a temporary file of traces in trace's spool form, which
// Reread decodes instead of the session's log. Decoding an agent's log
// again (every record parsed, every tool call normalized, shell commands
// parsed) costs as much as the first load, and the traces read again
// (the examples of every candidate and every held-out session) are most
// of a corpus; the spool form is read back for a fraction of that. The
// file is removed as soon as it is created, so that nothing is left
// behind whatever ends the process: it lives as long as its descriptor,
// which is closed when the Result is no longer reachable. The spool
// takes no memory: its pages are the operating system's to keep or let
// go. A trace the spool cannot hold (a generic value of an unknown type,
// a failed write) is decoded from its file again, as without a spool.

// spool is the temporary file of a load's spooled traces.
type spool struct {
	f    *os.File
	size atomic.Int64 // bytes reserved so far
	// failed is set once a write failed: later traces are not spooled.
	failed atomic.Bool
}

// spoolRef is where a trace is in the spool; n is 0 for a trace that
// is not spooled.
type spoolRef struct {
	off int64
	n   int
}

// newSpool creates a load's spool, or returns nil when no temporary
// file can be created, and the load reads its files again instead.
func newSpool() *spool {
	f, err := os.CreateTemp("", "crystallize-spool-*")
	if err != nil {
		return nil
	}
	// Where an open file cannot be removed, it is removed once closed.
	removed := os.Remove(f.Name()) == nil
	s := &spool{f: f}
	runtime.AddCleanup(s, func(f *os.File) {
		f.Close()
		if !removed {
			os.Remove(f.Name())
		}
	}, f)
	return s
}

// put writes t to the spool, with buf as scratch space, and returns
// where it is and the scratch space to use next time.
func (s *spool) put(t *trace.Trace, buf []byte) (spoolRef, []byte) {
	if s == nil || s.failed.Load() {
		return spoolRef{}, buf
	}
	data, err := trace.AppendSpool(buf[:0], t)
	if err != nil || len(data) == 0 {
		return spoolRef{}, buf
	}
	off := s.size.Add(int64(len(data))) - int64(len(data))
	if _, err := s.f.WriteAt(data, off); err != nil {
		s.failed.Store(true)
		return spoolRef{}, data
	}
	return spoolRef{off: off, n: len(data)}, data
}

// get reads back the trace at r, with buf as scratch space.
func (s *spool) get(r spoolRef, buf []byte) (*trace.Trace, []byte, error) {
	if cap(buf) < r.n {
		buf = make([]byte, r.n)
	}
	buf = buf[:r.n]
	if _, err := s.f.ReadAt(buf, r.off); err != nil {
		return nil, buf, fmt.Errorf("reading the spool of the load: %w", err)
	}
	t, err := trace.DecodeSpool(buf)
	return t, buf, err
}

// rereadSpooled sets out[k] for each k in want from the spool, by
// runtime.GOMAXPROCS workers.
func (r *Result) rereadSpooled(ctx context.Context, want []int, idx []int, out []*trace.Trace) error {
	s := r.reread.spool
	var (
		wg   sync.WaitGroup
		next atomic.Int64
		mu   sync.Mutex
		errs []error
	)
	for range min(runtime.GOMAXPROCS(0), len(want)) {
		wg.Go(func() {
			var buf []byte
			for {
				n := int(next.Add(1)) - 1
				if n >= len(want) || ctx.Err() != nil {
					return
				}
				k := want[n]
				var (
					t   *trace.Trace
					err error
				)
				t, buf, err = s.get(r.spooled[idx[k]], buf)
				if err == nil && (t.ID != r.Traces[idx[k]].ID || t.Origin != r.Traces[idx[k]].Origin) {
					err = errors.New("spooled trace " + t.ID + " is not " + r.Traces[idx[k]].ID)
				}
				if err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
					return
				}
				out[k] = t
			}
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return err
	}
	return errors.Join(errs...)
}
