package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/crystallize-dev/crystallize/internal/mine"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// session is an agent session with two actions, started at day of June
// 2025 (none when day is 0).
func session(id string, day int) *trace.Trace {
	t := &trace.Trace{ID: id, Metadata: map[string]any{"agent": "claude-code"}}
	if day > 0 {
		t.StartedAt = "2025-06-" + twoDigits(day) + "T09:00:00Z"
	}
	for _, name := range []string{"go test", "git commit"} {
		t.Actions = append(t.Actions, trace.Action{ID: id + "-" + name, Kind: trace.KindToolCall, Name: name})
	}
	return t
}

func twoDigits(n int) string { return string(rune('0'+n/10)) + string(rune('0'+n%10)) }

func ids(ts []*trace.Trace) []string {
	out := []string{}
	for _, t := range ts {
		out = append(out, t.ID)
	}
	return out
}

func TestSplitHoldout(t *testing.T) {
	corpus := func(days ...int) []*trace.Trace {
		var ts []*trace.Trace
		for i, d := range days {
			ts = append(ts, session("s"+string(rune('a'+i)), d))
		}
		return ts
	}
	for _, tc := range []struct {
		name   string
		traces []*trace.Trace
		mode   string
		held   []string
		order  string
	}{
		// The most recent by start time, not the last files.
		{"auto by time", corpus(2, 3, 20, 5, 6, 7, 8), HoldoutAuto, []string{"sc"}, "started_at"},
		{"auto two of ten", corpus(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), HoldoutAuto, []string{"si", "sj"}, "started_at"},
		{"auto below the threshold", corpus(1, 2, 3, 4, 5), HoldoutAuto, nil, ""},
		{"none", corpus(1, 2, 3, 4, 5, 6, 7), HoldoutNone, nil, ""},
		{"empty is none", corpus(1, 2, 3, 4, 5, 6, 7), "", nil, ""},
		// No start time anywhere: the last in corpus order.
		{"file order", corpus(0, 0, 0, 0, 0, 0), HoldoutAuto, []string{"sf"}, "file_order"},
		// A trace without a time is older than every trace with one.
		{"untimed is oldest", corpus(0, 1, 2, 3, 4, 0, 5), "2", []string{"se", "sg"}, "started_at"},
		{"count", corpus(1, 2, 3, 9, 4), "2", []string{"sd", "se"}, "started_at"},
		{"fraction rounds down", corpus(1, 2, 3, 4, 5, 6, 7), "0.3", []string{"sf", "sg"}, "started_at"},
		{"fraction at least one", corpus(1, 2, 3), "0.1", []string{"sc"}, "started_at"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mined, held, rec, err := SplitHoldout(tc.traces, tc.mode, 2)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.held, ids(held), cmpNilEmpty); diff != "" {
				t.Errorf("held out (-want +got):\n%s", diff)
			}
			if len(mined)+len(held) != len(tc.traces) {
				t.Errorf("mined %d + held %d traces of %d", len(mined), len(held), len(tc.traces))
			}
			if tc.held == nil {
				if rec != nil {
					t.Errorf("record = %+v, want nil", rec)
				}
				return
			}
			if rec == nil || rec.Order != tc.order || rec.Mode != tc.mode || rec.Reason == "" {
				t.Fatalf("record = %+v, want order %s, mode %s and a reason", rec, tc.order, tc.mode)
			}
			var recIDs []string
			for _, h := range rec.Traces {
				recIDs = append(recIDs, h.TraceID)
			}
			if diff := cmp.Diff(tc.held, recIDs); diff != "" {
				t.Errorf("record's traces (-want +got):\n%s", diff)
			}
		})
	}
}

var cmpNilEmpty = cmp.Transformer("nilEmpty", func(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
})

// auto holds out only agent sessions' traces, and counts only eligible
// ones: traces a harness wrote come with their own held-out runs, and an
// excluded trace proves nothing.
func TestSplitHoldoutAutoEligibleAgentSessions(t *testing.T) {
	var harness []*trace.Trace
	for i := range 8 {
		s := session("h"+string(rune('a'+i)), i+1)
		delete(s.Metadata, "agent")
		harness = append(harness, s)
	}
	if _, held, _, _ := SplitHoldout(harness, HoldoutAuto, 2); len(held) != 0 {
		t.Errorf("auto held out %v of traces that name no agent", ids(held))
	}
	// Six sessions, of which one broke policy: five eligible, below the
	// threshold.
	var sessions []*trace.Trace
	for i := range 6 {
		sessions = append(sessions, session("s"+string(rune('a'+i)), i+1))
	}
	sessions[5].Metadata["unresolved_policy_violation"] = true
	if _, excluded := mine.Excluded(sessions[5]); !excluded {
		t.Fatal("a session that broke policy is not excluded; pick another exclusion")
	}
	if _, held, _, _ := SplitHoldout(sessions, HoldoutAuto, 2); len(held) != 0 {
		t.Errorf("auto held out %v of 5 eligible sessions", ids(held))
	}
	// Seven eligible sessions and --min-examples 7: holding one out
	// would leave six to mine.
	sessions = append(sessions[:5], session("sf", 6), session("sg", 7))
	if _, held, _, _ := SplitHoldout(sessions, HoldoutAuto, 6); len(held) != 1 {
		t.Errorf("auto held out %v of 7 sessions, want one", ids(held))
	}
	if _, held, _, _ := SplitHoldout(sessions, HoldoutAuto, 7); len(held) != 0 {
		t.Errorf("auto held out %v leaving fewer than --min-examples", ids(held))
	}
}

func TestSplitHoldoutErrors(t *testing.T) {
	ts := []*trace.Trace{session("a", 1), session("b", 2), session("c", 3)}
	_, _, _, err := SplitHoldout(ts, "2", 2)
	if err == nil || !strings.Contains(err.Error(), "holding out 2 of 3 eligible traces leaves 1 to mine, fewer than the 2 examples") {
		t.Errorf("SplitHoldout(3 traces, 2) error = %v", err)
	}
	for _, v := range []string{"0", "-1", "1.5", "0.0", "1.0", "x", "auto ", "20%", "1e-1"} {
		var he *HoldoutError
		if err := CheckHoldout(v); !errors.As(err, &he) {
			t.Errorf("CheckHoldout(%q) = %v, want a *HoldoutError", v, err)
		}
	}
	for _, v := range []string{"", "auto", "none", "1", "12", "0.2", "0.99"} {
		if err := CheckHoldout(v); err != nil {
			t.Errorf("CheckHoldout(%q) = %v", v, err)
		}
	}
}

// A corpus of session logs with enough sessions mines all but the most
// recent and compares the candidates with it, as a --shadow-from trace.
func TestMineDirAutoHoldout(t *testing.T) {
	dir := t.TempDir()
	for i := range 7 {
		id := "s" + string(rune('1'+i))
		day := []int{2, 3, 20, 5, 6, 7, 8}[i]
		var b strings.Builder
		ts := "2025-06-" + twoDigits(day) + "T09:00:0"
		b.WriteString(`{"type":"user","sessionId":"` + id + `","timestamp":"` + ts + `1Z","message":{"role":"user","content":"Release v1.` + string(rune('0'+i)) + `"}}` + "\n")
		for j, cmd := range []string{"go test ./...", "git push origin main"} {
			tid := "toolu_" + id + "_" + string(rune('0'+j))
			b.WriteString(`{"type":"assistant","sessionId":"` + id + `","timestamp":"` + ts + string(rune('2'+2*j)) + `Z","message":{"id":"m` + tid + `","role":"assistant","model":"m","content":[{"type":"tool_use","id":"` + tid + `","name":"Bash","input":{"command":"` + cmd + `"}}]}}` + "\n")
			b.WriteString(`{"type":"user","sessionId":"` + id + `","timestamp":"` + ts + string(rune('3'+2*j)) + `Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"` + tid + `","content":"ok","is_error":false}]}}` + "\n")
		}
		if err := os.WriteFile(filepath.Join(dir, id+".jsonl"), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r, _, err := MineDir(context.Background(), MineDirOptions{Corpus: CorpusOptions{Dir: dir, Holdout: HoldoutAuto}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Holdout == nil || len(r.Holdout.Traces) != 1 || r.Holdout.Traces[0].TraceID != "s3" {
		t.Fatalf("holdout = %+v, want s3, the most recent", r.Holdout)
	}
	if r.SourceTraceCount != 6 {
		t.Errorf("source traces = %d, want 6", r.SourceTraceCount)
	}
	sel := r.Selected()
	if sel == nil || sel.Shadow == nil {
		t.Fatalf("no selected candidate with a shadow report: %+v", r.Warnings)
	}
	if tally := sel.Shadow.Tally(); tally.Heldout != 1 || tally.HeldoutPassed != 1 {
		t.Errorf("shadow tally = %+v, want the held-out session compared and passing", tally)
	}
	for _, ex := range sel.Examples {
		if ex.TraceID == "s3" {
			t.Error("the held-out session is an example of the candidate")
		}
	}
	// none mines every session.
	r, _, err = MineDir(context.Background(), MineDirOptions{Corpus: CorpusOptions{Dir: dir, Holdout: HoldoutNone}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Holdout != nil || r.SourceTraceCount != 7 {
		t.Errorf("--holdout none: holdout %+v, %d source traces", r.Holdout, r.SourceTraceCount)
	}
}

// Trace files, which are scanned rather than loaded, are held out of as
// sessions are when they name their agent: the scan counts them and the
// corpus is read again whole.
func TestMineDirAutoHoldoutScanned(t *testing.T) {
	dir := t.TempDir()
	for i, day := range []int{2, 3, 20, 5, 6, 7, 8} {
		tr := session("t"+string(rune('1'+i)), day)
		tr.Version = trace.SchemaVersion
		data, err := json.Marshal(tr)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, tr.ID+".json"), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, passes := range []string{PassesOne, PassesTwo} {
		r, _, err := MineDir(context.Background(), MineDirOptions{Corpus: CorpusOptions{Dir: dir, Holdout: HoldoutAuto, Passes: passes}})
		if err != nil {
			t.Fatal(err)
		}
		if r.Holdout == nil || len(r.Holdout.Traces) != 1 || r.Holdout.Traces[0].TraceID != "t3" {
			t.Fatalf("passes %s: holdout = %+v, want t3, the most recent", passes, r.Holdout)
		}
		if sel := r.Selected(); sel == nil || sel.Support != 6 {
			t.Errorf("passes %s: selected %+v, want a candidate from the six others", passes, sel)
		}
	}
}

// TestSplitHoldoutSessions checks that a subagent's trace is held out
// with its session and counts toward no session of its own: six traces of
// which three are one session's subagents are four sessions, below the
// threshold of auto, and with a count of one the newest session goes out
// whole, subagents included, however new the subagents are.
func TestSplitHoldoutSessions(t *testing.T) {
	sub := func(id, parent string, day int) *trace.Trace {
		s := session(id, day)
		s.Metadata["parent_session_id"] = parent
		return s
	}
	corpus := []*trace.Trace{
		session("a", 1), session("b", 2), session("c", 3), session("d", 10),
		sub("c.agent-1", "c", 30), sub("c.agent-2", "c", 31),
	}
	mined, held, _, err := SplitHoldout(corpus, HoldoutAuto, 2)
	if err != nil || len(held) != 0 || len(mined) != len(corpus) {
		t.Fatalf("auto on 4 sessions held out %v (err %v), want none: subagents are not sessions", ids(held), err)
	}
	// Session c started on day 3; d on day 10 is the newest session.
	_, held, _, err = SplitHoldout(corpus, "1", 2)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"d"}, ids(held)); diff != "" {
		t.Errorf("held out (-want +got):\n%s", diff)
	}
	_, held, _, err = SplitHoldout(corpus, "2", 2)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"c", "d", "c.agent-1", "c.agent-2"}, ids(held)); diff != "" {
		t.Errorf("held out (-want +got):\n%s", diff)
	}
}
