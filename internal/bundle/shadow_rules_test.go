package bundle

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/codegen"
)

// TestDiffShadowNamesEachDifference checks that a shadow replay run again
// is compared with the recorded one on every point a reviewer read (the
// verdict, how many traces were compared, how many source examples
// passed, each trace's status), each difference said once, and that a
// passing source example one side counts without listing it is no
// difference.
func TestDiffShadowNamesEachDifference(t *testing.T) {
	tr := func(id, role, status string) candidate.ShadowTrace {
		return candidate.ShadowTrace{TraceID: id, Role: role, Status: status}
	}
	base := func() *candidate.ShadowReport {
		return &candidate.ShadowReport{Pass: true, ComparedTraces: 3, Traces: []candidate.ShadowTrace{
			tr("a", candidate.RoleSource, candidate.StatusPass),
			tr("b", candidate.RoleSource, candidate.StatusPass),
			tr("h", candidate.RoleHeldout, candidate.StatusPass),
		}}
	}
	for _, tt := range []struct {
		name string
		rec  func(*candidate.ShadowReport) *candidate.ShadowReport
		cur  func(*candidate.ShadowReport)
		want []string
	}{
		{"same", nil, func(*candidate.ShadowReport) {}, nil},
		{"nothing recorded", func(*candidate.ShadowReport) *candidate.ShadowReport { return nil }, func(*candidate.ShadowReport) {},
			[]string{"the manifest records no shadow report"}},
		{"verdict", nil, func(c *candidate.ShadowReport) { c.Pass = false },
			[]string{"pass: recorded true, now false"}},
		{"compared count", nil, func(c *candidate.ShadowReport) { c.ComparedTraces = 2 },
			[]string{"compared: recorded 3, now 2"}},
		{"a held-out trace fails", nil, func(c *candidate.ShadowReport) { c.Traces[2].Status = candidate.StatusFail },
			[]string{"heldout trace h: recorded pass, now fail"}},
		{"a source example fails", nil, func(c *candidate.ShadowReport) { c.Traces[1].Status = candidate.StatusFail },
			[]string{"source examples passed: recorded 2, now 1", "source trace b: recorded pass, now fail"}},
		{"a trace no longer compared", nil, func(c *candidate.ShadowReport) { c.Traces = c.Traces[:2] },
			[]string{"heldout trace h: recorded pass, now not compared"}},
		{"a trace not recorded", nil, func(c *candidate.ShadowReport) {
			c.Traces = append(c.Traces, tr("h2", candidate.RoleHeldout, candidate.StatusFail))
		}, []string{"heldout trace h2: not recorded, now fail"}},
		{"same id in another role", nil, func(c *candidate.ShadowReport) { c.Traces[2].Role = candidate.RoleSource },
			[]string{"source examples passed: recorded 2, now 3", "heldout trace h: recorded pass, now not compared", "source trace h: not recorded, now pass"}},
		// A passing source example listed on one side and counted unlisted
		// on the other is the same evidence.
		{"now counted unlisted", nil, func(c *candidate.ShadowReport) {
			c.Traces = c.Traces[1:]
			c.PassedNotListed = 1
		}, nil},
		{"recorded unlisted", func(r *candidate.ShadowReport) *candidate.ShadowReport {
			r.Traces = r.Traces[1:]
			r.PassedNotListed = 1
			return r
		}, func(*candidate.ShadowReport) {}, nil},
		// Unlisted passing examples excuse only passing source examples:
		// a held-out trace or a failing one must still be listed.
		{"unlisted does not excuse a held-out trace", nil, func(c *candidate.ShadowReport) {
			c.Traces = c.Traces[:2]
			c.PassedNotListed = 1
		}, []string{"source examples passed: recorded 2, now 3", "heldout trace h: recorded pass, now not compared"}},
		{"unlisted does not excuse a failing example", func(r *candidate.ShadowReport) *candidate.ShadowReport {
			r.Traces[0].Status = candidate.StatusFail
			return r
		}, func(c *candidate.ShadowReport) {
			c.Traces = c.Traces[1:]
			c.PassedNotListed = 1
		}, []string{"source examples passed: recorded 1, now 2", "source trace a: recorded fail, now not compared"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rec := base()
			if tt.rec != nil {
				rec = tt.rec(rec)
			}
			cur := base()
			tt.cur(cur)
			got := diffShadow(rec, cur)
			if got == nil {
				t.Fatal("diffShadow = nil, want a list")
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("diffShadow =\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(tt.want, "\n  "))
			}
		})
	}
}

// TestShadowAssertionDecides checks that a crystallization-shadow
// assertion passes only when it is about the bundle's candidate, the
// replay ran, every fixture it expects is the bundle's, the replay
// matches the record and its verdict is the one expected; and that a
// failure says which of those it is.
func TestShadowAssertionDecides(t *testing.T) {
	m := &Manifest{CandidateID: "candidate_a"}
	fixtures := map[string]bool{"trace_a": true, "trace_h": true}
	ok := &ShadowCheck{CandidateID: "candidate_a", Compared: 2, Pass: true, Matches: true}
	want := codegen.EvalExpected{CandidateID: "candidate_a", Pass: true, Fixtures: []string{"trace_a", "trace_h"}}
	for _, tt := range []struct {
		name   string
		edit   func(w *codegen.EvalExpected, sc *ShadowCheck) error
		passed bool
		msg    string
	}{
		{"as recorded", func(*codegen.EvalExpected, *ShadowCheck) error { return nil }, true, "compared=2 pass=true, as recorded"},
		{"another candidate", func(w *codegen.EvalExpected, _ *ShadowCheck) error { w.CandidateID = "candidate_b"; return nil }, false, "for candidate candidate_b"},
		{"replay failed", func(*codegen.EvalExpected, *ShadowCheck) error { return errors.New("fixture changed") }, false, "shadow replay failed: fixture changed"},
		{"fixture not in the bundle", func(w *codegen.EvalExpected, _ *ShadowCheck) error {
			w.Fixtures = []string{"trace_a", "trace_x"}
			return nil
		}, false, "trace_x is not in the bundle"},
		{"differs from the record", func(_ *codegen.EvalExpected, sc *ShadowCheck) error {
			sc.Matches, sc.Differences = false, []string{"pass: recorded true, now false"}
			return nil
		}, false, "differs from the recorded result"},
		{"other verdict", func(w *codegen.EvalExpected, _ *ShadowCheck) error { w.Pass = false; return nil }, false, "pass=true, expected pass=false"},
	} {
		w, sc := want, *ok
		w.Fixtures = slices.Clone(want.Fixtures)
		err := tt.edit(&w, &sc)
		passed, msg := shadowAssertion(w, m, &sc, err, fixtures)
		if passed != tt.passed || !strings.Contains(msg, tt.msg) {
			t.Errorf("%s: %v %q, want %v %q", tt.name, passed, msg, tt.passed, tt.msg)
		}
	}
}
