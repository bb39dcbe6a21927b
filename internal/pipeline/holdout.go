package pipeline

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/mine"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// Values of CorpusOptions.Holdout besides a count or a fraction.
const (
	// HoldoutNone holds nothing out; it is what an empty Holdout means.
	HoldoutNone = "none"
	// HoldoutAuto holds out one in HoldoutAutoShare of the eligible
	// traces, the most recent, from a corpus of agent sessions with at
	// least HoldoutMinTraces of them.
	HoldoutAuto = "auto"
)

// HoldoutMinTraces is the fewest eligible traces from which HoldoutAuto
// holds any out. A held-out trace proves a procedure only when it
// repeats it, so a procedure must occur in the mined part at least
// --min-examples times (2 by default) and once more among the held-out
// ones: with fewer than six sessions, holding one out costs the miner
// more than the comparison gains.
const HoldoutMinTraces = 6

// HoldoutAutoShare is the share HoldoutAuto holds out: one eligible
// trace in five, rounded down, so one of 6 to 9 and two of 10 to 14.
const HoldoutAutoShare = 5

// HoldoutError is a CorpusOptions.Holdout that is not one of its values.
type HoldoutError struct{ Value string }

func (e *HoldoutError) Error() string { return "corpus options: Holdout " + e.Problem() }

// Problem is the error without the field's name, for a caller that names
// the value by its own name (a flag).
func (e *HoldoutError) Problem() string {
	return fmt.Sprintf("must be auto, none, a count (3) or a fraction between 0 and 1 (0.2), got %q", e.Value)
}

// CheckHoldout reports, as a *HoldoutError, a Holdout value that is not
// "", HoldoutAuto, HoldoutNone, a count of at least 1 or a fraction
// strictly between 0 and 1.
func CheckHoldout(v string) error {
	_, _, err := parseHoldout(v)
	return err
}

// parseHoldout reads a Holdout value: a count (n > 0), a fraction
// (0 < f < 1), or neither for auto and none.
func parseHoldout(v string) (count int, fraction float64, err error) {
	switch v {
	case "", HoldoutNone, HoldoutAuto:
		return 0, 0, nil
	}
	if n, err := strconv.Atoi(v); err == nil && n > 0 {
		return n, 0, nil
	}
	if strings.Contains(v, ".") {
		if f, err := strconv.ParseFloat(v, 64); err == nil && f > 0 && f < 1 {
			return 0, f, nil
		}
	}
	return 0, 0, &HoldoutError{Value: v}
}

// planHoldout decides how many of a corpus's eligible traces the hold-out
// mode holds out, and says why. byAgent is whether an eligible trace
// names the agent that recorded it (metadata.agent): HoldoutAuto holds
// out only from agent sessions, ordinary logs a user has in one
// directory, and not from traces a harness wrote, which come with their
// own held-out runs (--shadow-from). Every road through a corpus (files
// scanned, sessions loaded, the trace store) decides with it, from the
// same counts, so they hold out the same traces. A count or fraction
// that leaves fewer than minExamples traces to mine is an error.
func planHoldout(mode string, eligible int, byAgent bool, minExamples int) (int, string, error) {
	count, fraction, err := parseHoldout(mode)
	if err != nil {
		return 0, "", err
	}
	minExamples = cmp.Or(minExamples, mine.DefaultMinExamples)
	k := count
	switch {
	case mode == "" || mode == HoldoutNone:
		return 0, "", nil
	case mode == HoldoutAuto:
		k = eligible / HoldoutAutoShare
		if !byAgent || eligible < HoldoutMinTraces || eligible-k < minExamples {
			return 0, "", nil
		}
		return k, fmt.Sprintf("auto: %d eligible agent sessions, at least %d, and no --shadow-from: the most recent one in %d is held out of mining and replayed as held-out evidence",
			eligible, HoldoutMinTraces, HoldoutAutoShare), nil
	case fraction > 0:
		k = max(1, int(fraction*float64(eligible)))
	}
	if eligible-k < minExamples {
		return 0, "", &HoldoutTooLargeError{Held: k, Eligible: eligible, MinExamples: minExamples}
	}
	return k, fmt.Sprintf("holdout %s: the %d most recent of %d eligible traces are held out of mining and replayed as held-out evidence", mode, k, eligible), nil
}

// HoldoutTooLargeError is a holdout that leaves fewer traces to mine
// than the examples a procedure needs.
type HoldoutTooLargeError struct {
	Held, Eligible, MinExamples int
}

func (e *HoldoutTooLargeError) Error() string {
	return fmt.Sprintf("holding out %d of %d eligible traces leaves %d to mine, fewer than the %d examples a procedure needs", e.Held, e.Eligible, e.Eligible-e.Held, e.MinExamples)
}

// SplitHoldout holds out of traces, a corpus in corpus order, the most
// recent eligible sessions as mode says (planHoldout, counting sessions:
// a subagent's trace belongs to its parent's): it returns the traces
// to mine, in corpus order and with the excluded ones still among them
// (mining lists them), the held-out ones, in corpus order, and the
// record the report keeps, nil when none is held out.
//
// A trace's time is its started_at, else the timestamp of its first
// action that has one (RFC 3339); a session's is its earliest trace's. A trace without a time counts as older
// than every trace with one; when no trace has a time, the last traces
// in corpus order are the most recent. Ties keep corpus order, so the
// choice is the same on every run.
func SplitHoldout(traces []*trace.Trace, mode string, minExamples int) (mined, held []*trace.Trace, rec *candidate.Holdout, err error) {
	out, rec, err := planSplit(traces, func(i int) bool { _, ex := mine.Excluded(traces[i]); return ex }, mode, minExamples)
	if err != nil || out == nil {
		return traces, nil, nil, err
	}
	for i, t := range traces {
		if out[i] {
			held = append(held, t)
		} else {
			mined = append(mined, t)
		}
	}
	return mined, held, rec, nil
}

// planSplit is SplitHoldout's choice: which of traces it holds out (nil
// when none), and its record. excluded says whether traces[i] is
// excluded from mining; the traces need only their ids, times and
// metadata, so a load's thin traces do (source.Options.Summarize).
func planSplit(traces []*trace.Trace, excluded func(int) bool, mode string, minExamples int) (out []bool, rec *candidate.Holdout, err error) {
	// Sessions, not traces, are held out: a subagent's trace
	// (metadata.parent_session_id) goes with the session that started
	// it, so a held-out session is checked on everything it did and no
	// part of it is mined beside the part that checks the candidate.
	type session struct {
		key     string
		members []int
		at      time.Time
		ok      bool
	}
	var sessions []*session
	byKey := map[string]*session{}
	byAgent := false
	for i, t := range traces {
		if excluded(i) {
			continue
		}
		if _, ok := t.Metadata["agent"]; ok {
			byAgent = true
		}
		key := mine.Session(t)
		s := byKey[key]
		if s == nil {
			s = &session{key: key}
			byKey[key] = s
			sessions = append(sessions, s)
		}
		s.members = append(s.members, i)
		// A session started when its first trace did.
		if at, ok := startTime(t); ok && (!s.ok || at.Before(s.at)) {
			s.at, s.ok = at, true
		}
	}
	k, why, err := planHoldout(mode, len(sessions), byAgent, minExamples)
	if err != nil || k == 0 {
		return nil, nil, err
	}
	order := slices.Clone(sessions)
	anyTime := false
	for _, s := range order {
		anyTime = anyTime || s.ok
	}
	slices.SortStableFunc(order, func(a, b *session) int {
		if a.ok != b.ok {
			if a.ok {
				return 1
			}
			return -1
		}
		return a.at.Compare(b.at)
	})
	out = make([]bool, len(traces))
	for _, s := range order[len(order)-k:] {
		for _, i := range s.members {
			out[i] = true
		}
	}
	rec = &candidate.Holdout{Mode: mode, Reason: why, Order: "file_order", Traces: []candidate.HeldoutTrace{}}
	if anyTime {
		rec.Order = "started_at"
	}
	for i, t := range traces {
		if !out[i] {
			continue
		}
		at := t.StartedAt
		if _, ok := parseTime(at); !ok {
			at = ""
			if first, ok := firstActionTime(t); ok {
				at = first
			}
		}
		rec.Traces = append(rec.Traces, candidate.HeldoutTrace{TraceID: t.ID, StartedAt: at})
	}
	return out, rec, nil
}

// startTime is the time a trace started: started_at, else its first
// action's timestamp.
func startTime(t *trace.Trace) (time.Time, bool) {
	if at, ok := parseTime(t.StartedAt); ok {
		return at, true
	}
	if s, ok := firstActionTime(t); ok {
		return parseTime(s)
	}
	return time.Time{}, false
}

// firstActionTime is the timestamp of the first action that has one
// that parses.
func firstActionTime(t *trace.Trace) (string, bool) {
	for i := range t.Actions {
		if _, ok := parseTime(t.Actions[i].Timestamp); ok {
			return t.Actions[i].Timestamp, true
		}
	}
	return "", false
}

func parseTime(s string) (time.Time, bool) {
	if s == "" {
		return time.Time{}, false
	}
	at, err := time.Parse(time.RFC3339Nano, s)
	return at, err == nil
}
