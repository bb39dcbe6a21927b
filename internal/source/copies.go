package source

import (
	"cmp"
	"fmt"
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

// dropCopies reports which traces of a load to keep, dropping what agent
// sessions repeat of each other, and returns a note for each session that
// repeated another: a session all of whose calls were made in another is
// dropped, and a session that goes on after the calls it repeats (a
// fork, a resumed session) keeps only its own. isSession says which
// traces are agent sessions; traces of the other formats are never
// compared, their action ids being only unique within a trace. display
// names each trace's file in messages.
//
// The session a call was first made in is the original: sessions are
// taken in order of start, those marked as derived (a sidechain, a fork)
// after the others, so that a copy never claims the calls of the session
// it copies; of two that start together (two copies of one log, the
// older cut short), the one with more calls, then the one that went on
// longer, first, so that the older is the copy.
// The cost is one map entry per call.
//
// acts are the traces' actions, those of thin traces as thinCalls; a
// session cut to its own calls is cut in acts.
func dropCopies(acts *calls, isSession []bool, display []string) ([]bool, []Note) {
	traces := acts.traces
	keep := make([]bool, len(traces))
	for i := range keep {
		keep[i] = true
	}
	type cand struct {
		i          int
		derived    bool
		start, end time.Time
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
		if ts, ok := parseTime(t.FinishedAt); ok {
			c.end = ts
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
		return cmp.Or(a.start.Compare(b.start), cmp.Compare(acts.len(b.i), acts.len(a.i)),
			b.end.Compare(a.end), cmp.Compare(a.i, b.i))
	})

	// owner maps a call's action id to the trace that made it and the
	// action. A call is repeated when another session has an action of
	// its id with the same kind, name and parameters; under one id,
	// different calls are not a copy, and are left to the duplicate-id
	// check.
	type made struct{ trace, action int }
	n := 0
	for _, c := range order {
		n += acts.len(c.i)
	}
	owner := make(map[string]made, n)
	repeated := func(i, j int) (int, bool) {
		id := acts.id(i, j)
		m, ok := owner[id]
		if !ok || id == "" || !acts.same(i, j, m.trace, m.action) {
			return 0, false
		}
		return m.trace, true
	}
	claim := func(i int) {
		for j := range acts.len(i) {
			if id := acts.id(i, j); id != "" {
				if _, taken := owner[id]; !taken {
					owner[id] = made{i, j}
				}
			}
		}
	}
	var notes []Note
	for _, c := range order {
		t := traces[c.i]
		var shared map[int]int // owner → actions of t it made; most sessions repeat none
		n := 0
		for j := range acts.len(c.i) {
			if o, ok := repeated(c.i, j); ok {
				if shared == nil {
					shared = map[int]int{}
				}
				shared[o]++
				n++
			}
		}
		if n == 0 {
			claim(c.i)
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
		where := trace.Origin{Path: display[from], Line: orig.Origin.Line}.String()
		note := Note{Path: display[c.i], Line: t.Origin.Line, Format: agentOf(t), Code: NoteCopy, Detail: orig.ID, ID: t.ID}
		if n == acts.len(c.i) {
			keep[c.i] = false
			note.Message = fmt.Sprintf("session %s only repeats calls of session %s (%s): its %d actions are counted once, as that session's", t.ID, orig.ID, where, n)
			notes = append(notes, note)
			continue
		}
		// A copy repeats a conversation up to a point and goes on from
		// there: what comes before its last repeated call is the
		// copy's too, also a call the format gives no id of its own
		// (a Codex web search, known by its line).
		last := -1
		for j := range acts.len(c.i) {
			if _, ok := repeated(c.i, j); ok {
				last = j
			}
		}
		n = last + 1
		if n == acts.len(c.i) {
			keep[c.i] = false
			note.Message = fmt.Sprintf("session %s only repeats calls of session %s (%s): its %d actions are counted once, as that session's", t.ID, orig.ID, where, n)
			notes = append(notes, note)
			continue
		}
		acts.cut(c.i, n)
		claim(c.i)
		note.Code = NoteRepeats
		note.Message = fmt.Sprintf("session %s repeats calls of session %s (%s): %d of its actions are counted once, as that session's, and its %d own are kept", t.ID, orig.ID, where, n, acts.len(c.i))
		notes = append(notes, note)
	}
	return keep, notes
}

// agentOf returns the agent a session trace was read from.
func agentOf(t *trace.Trace) string {
	a, _ := t.Metadata["agent"].(string)
	return a
}

// nameParts names the parts of a session written to several files.
// Gemini CLI writes a session's chat to a new file, under the same
// session id, each time the chat starts over (the user cleared it, a
// subagent ran): the files share no call, and each is a conversation of
// its own. Among the kept sessions (keep, once dropCopies has dropped
// what files repeat of each other) of one id, taken in order of start,
// a session that shares no call with the earlier ones is such a part:
// it becomes the trace <id>.part-<n>, the n-th of its session, with the
// session as its parent (metadata parent_session_id), so that it is held
// out with it. A session that shares a call with an earlier one of its
// id, or that has no call ids to tell, is left as it is, for the
// duplicate-id check to name both files.
func nameParts(acts *calls, isSession, keep []bool) {
	traces := acts.traces
	byID := map[string][]int{}
	var ids []string
	for i, t := range traces {
		if isSession[i] && keep[i] {
			if len(byID[t.ID]) == 0 {
				ids = append(ids, t.ID)
			}
			byID[t.ID] = append(byID[t.ID], i)
		}
	}
	for _, id := range ids {
		group := byID[id]
		if len(group) < 2 {
			continue
		}
		start := func(i int) time.Time { ts, _ := parseTime(traces[i].StartedAt); return ts }
		slices.SortStableFunc(group, func(a, b int) int { return start(a).Compare(start(b)) })
		var earlier []map[string]bool
		for _, i := range group {
			t := traces[i]
			calls := make(map[string]bool, acts.len(i))
			for j := range acts.len(i) {
				if id := acts.id(i, j); id != "" {
					calls[id] = true
				}
			}
			if len(earlier) > 0 && !sharesCall(calls, earlier) {
				t.ID = fmt.Sprintf("%s.part-%d", id, len(earlier)+1)
				if t.Metadata == nil {
					t.Metadata = map[string]any{}
				}
				if _, ok := t.Metadata["parent_session_id"]; !ok {
					t.Metadata["parent_session_id"] = id
				}
			}
			earlier = append(earlier, calls)
		}
	}
}

// sharesCall reports whether calls has a call of one of earlier, or
// whether that cannot be told, one of them having no call ids.
func sharesCall(calls map[string]bool, earlier []map[string]bool) bool {
	if len(calls) == 0 {
		return true
	}
	for _, seen := range earlier {
		if len(seen) == 0 {
			return true
		}
		for c := range calls {
			if seen[c] {
				return true
			}
		}
	}
	return false
}
