package runtime

import (
	"errors"
	"fmt"
	"runtime/metrics"
	"time"
)

// Size and memory budgets.
//
// Starlark bounds a workflow's time (the step budget) but not its memory:
// s = s + s forty times is forty steps and a terabyte. Starlark has no
// allocation hook, so the run watches the process's heap instead: every
// memoryPoll while the workflow runs, the bytes occupied by heap objects
// are compared with what they were when it started, and a run whose heap
// grew by more than Options.MaxMemory (default DefaultMaxMemory) is
// cancelled with ErrMemoryBudget. The check is coarse on purpose: one
// Starlark step can allocate up to twice what the heap held before it (a
// string concatenation), so the heap can reach about twice the budget
// before the run stops, and the measure is of the whole process (two runs
// in one process share it). It stops a runaway workflow long before the
// machine does; it is not an accounting.
//
// What a single call may carry is bounded where it enters or leaves the
// host: the arguments of a tool call (MaxArgumentBytes of canonical JSON),
// what fs.read reads and fs.write writes (MaxFileBytes), what a command
// binding prints (MaxFileBytes), and what a run records of any one string
// (maxRecordedString; the receipts' digests are of the whole values).

const (
	// DefaultMaxMemory is the heap growth a run may cause.
	DefaultMaxMemory = 256 << 20
	// MaxArgumentBytes bounds the canonical JSON of a tool call's
	// arguments.
	MaxArgumentBytes = 16 << 20
	// MaxFileBytes bounds a file fs.read reads or fs.write writes, and
	// the stdout of a command binding.
	MaxFileBytes = 8 << 20
	// maxRecordedString is the longest string a run record keeps whole;
	// a longer one is cut and says how much was cut.
	maxRecordedString = 64 << 10
	// memoryPoll is how often the heap is measured.
	memoryPoll = 2 * time.Millisecond
)

var (
	// ErrMemoryBudget: the workflow made the heap grow by more than its
	// budget.
	ErrMemoryBudget = errors.New("memory budget exceeded")
	// ErrTooLarge: an argument, a file or an output is over its size
	// limit.
	ErrTooLarge = errors.New("size limit exceeded")
)

// heapBytes is the memory occupied by heap objects, live or not yet
// swept.
func heapBytes() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// watchMemory cancels the run when the heap grows by more than max bytes
// over what it held when watchMemory was called, until done is closed.
func (h *host) watchMemory(max uint64, done <-chan struct{}) {
	base := heapBytes()
	t := time.NewTicker(memoryPoll)
	go func() {
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-h.ctx.Done():
				return
			case <-t.C:
				if now := heapBytes(); now > base && now-base > max {
					h.cancel(fmt.Errorf("%w: memory_budget: the workflow made the heap grow by %d MiB, more than its %d MiB (Options.MaxMemory)", ErrMemoryBudget, (now-base)>>20, max>>20))
					return
				}
			}
		}
	}()
}

// checkArgumentSize refuses a call whose arguments are over
// MaxArgumentBytes of canonical JSON.
func checkArgumentSize(name string, args map[string]any) error {
	var buf [512]byte
	if n := len(appendCanonicalTo(buf[:0], args)); n > MaxArgumentBytes {
		return fmt.Errorf("%w: arguments_too_large: the arguments of %s are %d bytes of JSON, more than %d", ErrTooLarge, name, n, MaxArgumentBytes)
	}
	return nil
}

// clipRecorded returns v with every string longer than maxRecordedString
// cut, for a run record; v is not changed. A value with no such string is
// returned as it is: what is recorded is the scrubber's copy, which
// nothing changes after.
func clipRecorded(v any) any {
	if !needsClip(v) {
		return v
	}
	switch v := v.(type) {
	case string:
		if len(v) > maxRecordedString {
			cut := maxRecordedString
			for cut > 0 && v[cut]&0xC0 == 0x80 { // not inside a UTF-8 sequence
				cut--
			}
			return fmt.Sprintf("%s…[%d more bytes not recorded]", v[:cut], len(v)-cut)
		}
		return v
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = clipRecorded(e)
		}
		return out
	case map[string]any:
		if v == nil {
			return v
		}
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = clipRecorded(e)
		}
		return out
	}
	return v
}

// needsClip reports whether v holds a string clipRecorded cuts.
func needsClip(v any) bool {
	switch v := v.(type) {
	case string:
		return len(v) > maxRecordedString
	case []any:
		for _, e := range v {
			if needsClip(e) {
				return true
			}
		}
	case map[string]any:
		for _, e := range v {
			if needsClip(e) {
				return true
			}
		}
	}
	return false
}
