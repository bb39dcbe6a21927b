package source

import (
	"cmp"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"github.com/crystallize-dev/crystallize/internal/trace"
)

// One event is one event. Agents write some sessions again: Claude Code
// replays the conversation into the log of a compaction
// (subagents/agent-acompact-*.jsonl) and of a side question
// (agent-aside_question-*.jsonl), and a forked Codex rollout starts with
// the history of the session it was forked from. The copies keep the
// tool-call ids of the calls they repeat, which are unique to the call
// (toolu_…, call_…), so a call met twice in a load is one call, counted
// where it was first made: mined as two, one session would count as two
// in a candidate's support.
//
// A subagent that does its own work (a Task worker) makes calls of its
// own, with ids of its own, and stays its own trace.

// dropCopies returns the traces of a load without what agent sessions
// repeat of each other, and a note for each session that repeated
// another: a session all of whose calls were made in another is dropped,
// and a session that goes on after the calls it repeats (a fork) keeps
// only its own. isSession says which traces are agent sessions; traces
// of the other formats are never compared, their action ids being only
// unique within a trace.
//
// The session a call was first made in is the original: sessions are
// taken in order of start, those marked as derived (a sidechain, a fork)
// after the others, so that a copy never claims the calls of the
// session it copies. The cost is one map entry per call.
func dropCopies(traces []*trace.Trace, isSession []bool, dir string) ([]*trace.Trace, []Note) {
	type cand struct {
		i       int
		derived bool
		start   time.Time
	}
	var order []cand
	for i, t := range traces {
		if !isSession[i] {
			continue
		}
		c := cand{i: i}
		side, _ := t.Metadata["sidechain"].(bool)
		fork, _ := t.Metadata["forked_from"].(string)
		c.derived = side || fork != ""
		if ts, ok := parseTime(t.StartedAt); ok {
			c.start = ts
		}
		order = append(order, c)
	}
	slices.SortStableFunc(order, func(a, b cand) int {
		if a.derived != b.derived {
			if a.derived {
				return 1
			}
			return -1
		}
		return cmp.Or(a.start.Compare(b.start), cmp.Compare(a.i, b.i))
	})

	owner := map[string]int{} // action id → the trace that made the call
	drop := make([]bool, len(traces))
	var notes []Note
	for _, c := range order {
		t := traces[c.i]
		shared := map[int]int{} // owner → actions of t it made
		n := 0
		for _, a := range t.Actions {
			if o, ok := owner[a.ID]; ok && a.ID != "" {
				shared[o]++
				n++
			}
		}
		if n == 0 {
			for _, a := range t.Actions {
				if a.ID != "" {
					owner[a.ID] = c.i
				}
			}
			continue
		}
		// The session repeated most, to name in the note.
		from := -1
		for o, k := range shared {
			if from < 0 || k > shared[from] || k == shared[from] && o < from {
				from = o
			}
		}
		orig := traces[from]
		where := filepath.Join(dir, filepath.FromSlash(orig.Origin.Path))
		note := Note{Path: filepath.Join(dir, filepath.FromSlash(t.Origin.Path)), Line: t.Origin.Line, Format: agentOf(t), Code: NoteCopy, Detail: orig.ID}
		if n == len(t.Actions) {
			drop[c.i] = true
			note.Message = fmt.Sprintf("session %s only repeats calls of session %s (%s): its %d actions are counted once, as that session's", t.ID, orig.ID, where, n)
			notes = append(notes, note)
			continue
		}
		// A copy repeats a conversation up to a point and goes on from
		// there: what comes before its last repeated call is the
		// copy's too, also a call the format gives no id of its own
		// (a Codex web search, known by its line).
		last := -1
		for j, a := range t.Actions {
			if _, ok := owner[a.ID]; ok && a.ID != "" {
				last = j
			}
		}
		n = last + 1
		if n == len(t.Actions) {
			drop[c.i] = true
			note.Message = fmt.Sprintf("session %s only repeats calls of session %s (%s): its %d actions are counted once, as that session's", t.ID, orig.ID, where, n)
			notes = append(notes, note)
			continue
		}
		own := slices.Clone(t.Actions[n:])
		for _, a := range own {
			if a.ID != "" {
				owner[a.ID] = c.i
			}
		}
		t.Actions = own
		note.Message = fmt.Sprintf("session %s repeats calls of session %s (%s): %d of its actions are counted once, as that session's, and its %d own are kept", t.ID, orig.ID, where, n, len(own))
		notes = append(notes, note)
	}
	if len(notes) == 0 {
		return traces, nil
	}
	kept := traces[:0:0]
	for i, t := range traces {
		if !drop[i] {
			kept = append(kept, t)
		}
	}
	return kept, notes
}

// agentOf returns the agent a session trace was read from.
func agentOf(t *trace.Trace) string {
	a, _ := t.Metadata["agent"].(string)
	return a
}
