package source

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"slices"
	"sync"

	"github.com/crystallize-dev/crystallize/internal/normalize"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// A load with Options.Summarize keeps of each agent session a summary
// and a thin trace instead of the decoded trace, which is most of a
// load's memory: the arguments, outputs and metadata of every call. What
// it keeps is what the load itself and a hold-out read of a session (its
// id, times and metadata, and until the load ends, of each action its id
// and a digest of its kind, name and parameters, which is all dropCopies
// compares), and where the whole trace is, which Reread reads back.

// ErrThinChanged is returned by a load with Options.Summarize in which
// a session repeated part of another and was cut to its own calls, or
// was named as a part of its session: its summary, made of the session
// as decoded, no longer describes it. Such a corpus is loaded whole.
var ErrThinChanged = errors.New("a session was cut or renamed after it was summarized")

// thinEntries replaces the trace of each session entry with its thin
// copy, after summarize has summarized it and it was written to sp (see
// spool), with buf as scratch space; it returns the scratch space to use
// next time.
func thinEntries(entries []entry, summarize func(*trace.Trace) any, sp *spool, buf []byte) []byte {
	for i := range entries {
		e := &entries[i]
		if e.session && e.trace != nil {
			e.summary = summarize(e.trace)
			e.spooled, buf = sp.put(e.trace, buf)
			e.trace, e.calls = thinTrace(e.trace)
		}
	}
	return buf
}

// thinTrace is t without what no one reads before the trace is decoded
// again: no actions but, when t's started_at is not a time, the first
// action whose timestamp is, with that timestamp only, to date the
// session by; and apart, each action as a thinCall, which is all
// dropCopies and nameParts compare. A thin call takes 48 bytes where an
// action took 250 and more, on a load's largest part of memory.
func thinTrace(t *trace.Trace) (*trace.Trace, []thinCall) {
	thin := *t
	thin.Actions = nil
	if _, ok := parseTime(t.StartedAt); !ok {
		for i := range t.Actions {
			if _, ok := parseTime(t.Actions[i].Timestamp); ok {
				thin.Actions = []trace.Action{{Timestamp: t.Actions[i].Timestamp}}
				break
			}
		}
	}
	calls := make([]thinCall, len(t.Actions))
	var h [sha256.Size]byte
	var b []byte
	for i := range t.Actions {
		a := &t.Actions[i]
		calls[i].id = a.ID
		if a.ID == "" {
			continue // never compared
		}
		b = trace.AppendCanonical(b[:0], a.Parameters)
		d := sha256.New()
		for _, part := range [][]byte{[]byte(a.Kind), []byte(a.Name), b} {
			d.Write(binary.AppendUvarint(nil, uint64(len(part))))
			d.Write(part)
		}
		calls[i].digest = [sha256.Size]byte(d.Sum(h[:0]))
	}
	return &thin, calls
}

// thinCall is what dropCopies and nameParts read of an action of a thin
// trace: its id, and a digest of its kind, name and parameters (the
// parameters as trace.AppendCanonical writes them).
type thinCall struct {
	id     string
	digest [sha256.Size]byte
}

// calls are the actions of a load's traces as dropCopies and nameParts
// read them: a whole trace's, or, for a thin trace, its thinCalls.
type calls struct {
	traces []*trace.Trace
	thin   [][]thinCall // set at the index of a thin trace
	isThin []bool
}

// len is the number of actions of trace i.
func (c *calls) len(i int) int {
	if c.isThin[i] {
		return len(c.thin[i])
	}
	return len(c.traces[i].Actions)
}

// id is the id of action j of trace i.
func (c *calls) id(i, j int) string {
	if c.isThin[i] {
		return c.thin[i][j].id
	}
	return c.traces[i].Actions[j].ID
}

// same reports whether action j of trace i and action l of trace k have
// the same kind, name and parameters.
func (c *calls) same(i, j, k, l int) bool {
	if c.isThin[i] || c.isThin[k] {
		if !c.isThin[i] || !c.isThin[k] {
			return false // a load thins every session or none
		}
		return c.thin[i][j].digest == c.thin[k][l].digest
	}
	a, b := &c.traces[i].Actions[j], &c.traces[k].Actions[l]
	return a.Kind == b.Kind && a.Name == b.Name && reflect.DeepEqual(a.Parameters, b.Parameters)
}

// cut keeps the actions of trace i from j on.
func (c *calls) cut(i, j int) {
	if c.isThin[i] {
		c.thin[i] = slices.Clone(c.thin[i][j:])
		return
	}
	c.traces[i].Actions = slices.Clone(c.traces[i].Actions[j:])
}

// thinShape is what a thin trace must keep for its summary to hold.
type thinShape struct {
	id      string
	actions int
}

// thinShapes records the shape of each trace when the traces are thin.
func thinShapes(c *calls, thin bool) []thinShape {
	if !thin {
		return nil
	}
	out := make([]thinShape, len(c.traces))
	for i, t := range c.traces {
		out[i] = thinShape{t.ID, c.len(i)}
	}
	return out
}

// thinChanged reports whether a kept trace lost actions or changed its
// id since its shape was recorded.
func thinChanged(c *calls, keep []bool, before []thinShape) bool {
	for i, b := range before {
		if keep[i] && (c.traces[i].ID != b.id || c.len(i) != b.actions) {
			return true
		}
	}
	return false
}

// rereader decodes the files of a load again.
type rereader struct {
	files []file
	limit int64
	rules *normalize.Rules
	spool *spool // nil when there is none
}

// Reread returns the traces Traces[idx[i]] decoded whole, in that order:
// a thin session trace is read back from the load's spool, or decoded
// again from its file when the spool does not hold it, as Load decoded
// it; any other is returned as it is. Traces are decoded by
// runtime.GOMAXPROCS workers.
func (r *Result) Reread(ctx context.Context, idx []int) ([]*trace.Trace, error) {
	out := make([]*trace.Trace, len(idx))
	byFile := map[string][]int{} // file → positions in idx
	var order []string
	var spooled []int // positions in idx
	for k, i := range idx {
		if r.reread == nil || !r.thin[i] {
			out[k] = r.Traces[i]
			continue
		}
		if r.spooled[i].n > 0 {
			spooled = append(spooled, k)
			continue
		}
		path := r.Traces[i].Origin.Path
		if _, ok := byFile[path]; !ok {
			order = append(order, path)
		}
		byFile[path] = append(byFile[path], k)
	}
	if len(spooled) > 0 {
		if err := r.rereadSpooled(ctx, spooled, idx, out); err != nil {
			return nil, err
		}
	}
	if len(order) == 0 {
		return out, nil
	}
	files := make(map[string]file, len(order))
	for _, f := range r.reread.files {
		if _, ok := byFile[f.rel]; ok {
			files[f.rel] = f
		}
	}
	jobs := make(chan string)
	errs := make([]error, len(order))
	at := make(map[string]int, len(order))
	for n, p := range order {
		at[p] = n
	}
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(order)) {
		wg.Go(func() {
			var p trace.Parser
			for path := range jobs {
				errs[at[path]] = r.rereadFile(ctx, files[path], byFile[path], idx, out, &p)
			}
		})
	}
	for _, p := range order {
		if ctx.Err() != nil {
			break
		}
		jobs <- p
	}
	close(jobs)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, nil
}

// rereadFile decodes f again and sets out[k], for each k in want, to the
// trace of Traces[idx[k]] that f holds.
func (r *Result) rereadFile(ctx context.Context, f file, want []int, idx []int, out []*trace.Trace, p *trace.Parser) error {
	var entries []entry
	if f.lines {
		entries, _ = decodeLinesFile(ctx, f, r.reread.limit, r.reread.rules, p)
	} else {
		entries = decodeJSONFile(f, r.reread.limit, r.reread.rules, p)
	}
	for _, k := range want {
		thin := r.Traces[idx[k]]
		for _, e := range entries {
			if e.session && e.trace != nil && e.line == thin.Origin.Line && e.trace.ID == thin.ID {
				out[k] = e.trace
				break
			}
		}
		if out[k] == nil {
			return fmt.Errorf("%s: session %s changed since it was read", f.display, thin.ID)
		}
	}
	return nil
}

// ReleaseThin lets go of what a load with Options.Summarize keeps only for
// its caller to read once: Summaries, and the actions of the thin traces,
// which tell copies apart and date a session. After it, a thin trace has
// its id, origin, times and metadata, and no actions; Reread reads it back
// whole as before. A caller that has added the summaries to its miner and
// chosen the sessions to hold out calls it so that neither is kept for
// the rest of the run, a few hundred bytes an action.
func (r *Result) ReleaseThin() {
	r.Summaries = nil
	for i, t := range r.Traces {
		if r.thin[i] {
			thin := *t
			thin.Actions = nil
			r.Traces[i] = &thin
		}
	}
}
