package membudget

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"runtime/metrics"
	"sync/atomic"
	"time"
)

// The memory budget.
//
// Starlark bounds a workflow's time (the step budget) but not its memory:
// [0] * 1000000000 is one step and 16 GB. A run's memory budget
// (the runner's Options.MaxMemory, default DefaultMaxMemory) is the heap growth the
// workflow may cause, measured as the bytes occupied by heap objects over
// what they were when it started, less what the run's own records hold
// (the runner's recordBytes: the action, receipt, journal entry and session lines of
// every call, so a hundred thousand calls are not charged to the
// workflow; the records are bounded by the step budget and the per-call
// limits, not by this one). It is enforced twice:
//
//   - before an allocation: every construct that can allocate more than
//     the heap held before it (repetition, concatenation and % of
//     strings, bytes, lists and tuples, a product of ints, the built-ins
//     that materialise an iterable, f(*x), join, replace, format, split,
//     str, repr, print, json.encode, json.decode, json.indent, and the
//     workflow's result, which is written out twice after the workflow
//     returns) reserves an upper bound of what it will allocate, and a
//     bound that does not fit in what is left of the budget fails the
//     run with ErrMemoryBudget before anything is allocated
//     (allocguard.go);
//   - after the fact: every memoryPoll while the workflow runs, the heap
//     is measured, and a run over its budget once a garbage collection
//     has left only live data is cancelled with ErrMemoryBudget.
//
// So the heap grows by at most the budget plus what allocations under
// reserveFloor, and copies no larger than a value the workflow already
// holds (s.upper(), a list's copy, a dict's items), add between two
// measurements: about twice the budget at worst. The measure is of the
// whole process (two runs in one process share it); it stops a runaway
// workflow long before the machine does, and it is not an exact account.
//

const (
	// DefaultMaxMemory is the heap growth a run may cause.
	DefaultMaxMemory = 256 << 20
	// memoryPoll is how often the heap is measured.
	memoryPoll = 2 * time.Millisecond
	// confirmEvery is how often at most the heap watch collects garbage
	// to confirm the workflow is over its budget.
	confirmEvery = 20 * time.Millisecond
	// reserveFloor is the smallest allocation checked before it is made.
	reserveFloor = 64 << 10
)

var (
	// ErrMemoryBudget: the workflow made the heap grow by more than its
	// budget.
	ErrMemoryBudget = errors.New("memory budget exceeded")
)

// HeapBytes is the memory occupied by heap objects, live or not yet
// swept.
func HeapBytes() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// Budget is a run's memory budget: what the workflow has made the
// heap grow by since it started, less what the run's own records hold.
type Budget struct {
	max, base uint64
	// own is what the run's records hold (see recordBytes): they grow
	// with every call the workflow makes, but they are the run's, not the
	// workflow's, so they are not charged to it.
	own atomic.Uint64
	// cancel ends the run with the budget's error.
	cancel func(error)
}

func New(max uint64, cancel func(error)) *Budget {
	return &Budget{max: max, base: HeapBytes(), cancel: cancel}
}

// AddOwn adds n bytes to what the run's records hold.
func (m *Budget) AddOwn(n uint64) { m.own.Add(n) }

// used is the heap growth charged to the workflow.
func (m *Budget) used() uint64 {
	now, floor := HeapBytes(), m.base+m.own.Load()
	if now <= floor {
		return 0
	}
	return now - floor
}

// Limit is the most a single check needs to count to before it knows it
// refuses.
func (m *Budget) Limit() uint64 { return m.max }

// Reserve refuses, with ErrMemoryBudget, an allocation of n bytes the
// heap has no room for under the budget, and ends the run; what names the
// allocation in the error. An allocation under reserveFloor is not
// checked: the heap watch is enough for it. When the heap looks too full,
// a garbage collection tells what is live before refusing.
func (m *Budget) Reserve(n uint64, what string) error {
	if n < reserveFloor {
		return nil
	}
	used := m.used()
	if n <= m.max && used <= m.max-n {
		return nil
	}
	if n <= m.max {
		runtime.GC()
		if used = m.used(); used <= m.max-n {
			return nil
		}
	}
	// n is an upper bound, and one counted only until it passed the
	// budget when larger.
	err := fmt.Errorf("%w: memory_budget: %s would take up to %s, and the workflow has %s left of its %d MiB (Options.MaxMemory)", ErrMemoryBudget, what, byteSize(n), byteSize(m.max-min(used, m.max)), m.max>>20)
	if n > m.max {
		err = fmt.Errorf("%w: memory_budget: %s would take more than the whole %d MiB (Options.MaxMemory)", ErrMemoryBudget, what, m.max>>20)
	}
	m.cancel(err)
	return err
}

// byteSize writes n in the largest binary unit it has at least one of.
func byteSize(n uint64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// Watch cancels the run when the workflow's heap growth is over the
// budget, measured every memoryPoll until done is closed or the run ends.
func (m *Budget) Watch(ctx context.Context, done <-chan struct{}) {
	t := time.NewTicker(memoryPoll)
	var collected time.Time // the last collection the watch asked for
	go func() {
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				// What is over may be garbage the collector has not
				// reached yet (the records' live heap lets it wait for
				// as much again): only what a collection leaves counts.
				if m.used() <= m.max || time.Since(collected) < confirmEvery {
					continue
				}
				runtime.GC()
				collected = time.Now()
				if used := m.used(); used > m.max {
					m.cancel(fmt.Errorf("%w: memory_budget: the workflow made the heap grow by %d MiB, more than its %d MiB (Options.MaxMemory)", ErrMemoryBudget, used>>20, m.max>>20))
					return
				}
			}
		}
	}()
}
