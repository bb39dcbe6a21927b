package runtime

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/session"
)

func TestCheckDecision(t *testing.T) {
	waiting := &Journal{RunID: "r1", Pending: &Pending{Kind: PendingDecision, Boundary: "strategy", Options: []string{"JWT", "OAuth"}}}
	approval := &Journal{RunID: "r2", Pending: &Pending{Boundary: "merge"}}
	for _, tt := range []struct {
		j       *Journal
		decide  string
		wantErr string
	}{
		{waiting, "", ""},
		{waiting, "JWT", ""},
		{waiting, "Basic", `decision "Basic": not an option of decision strategy (options: JWT, OAuth)`},
		{approval, "JWT", `decision "JWT": run r2 waits for approval of boundary merge, not for a decision`},
		{&Journal{RunID: "r3"}, "JWT", `decision "JWT": run r3 waits for nothing, not for a decision`},
	} {
		err := tt.j.CheckDecision(tt.decide)
		var de *DecisionError
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("CheckDecision(%q) = %v, want nil", tt.decide, err)
		case tt.wantErr != "" && (!errors.As(err, &de) || err.Error() != tt.wantErr):
			t.Errorf("CheckDecision(%q) = %v, want a DecisionError %q", tt.decide, err, tt.wantErr)
		case err != nil && strings.Contains(err.Error(), "--"):
			t.Errorf("CheckDecision(%q) = %v names a flag", tt.decide, err)
		}
	}
}

func TestRunRecord(t *testing.T) {
	run := &session.Session{Meta: session.Meta{SessionID: "run-1", Extra: []session.Field{{Key: "workflow", Value: "wf"}}}}
	id, dir, ok := RunRecord(filepath.Join("st", "runs", "run-1", SessionFile), run)
	if !ok || id != "run-1" || dir != "st" {
		t.Errorf("RunRecord = %q, %q, %v; want run-1 under st", id, dir, ok)
	}
	for _, name := range []string{filepath.Join("st", "runs", "run-2", SessionFile), filepath.Join("st", "logs", "run-1", SessionFile), "notes.md"} {
		if _, _, ok := RunRecord(name, run); ok {
			t.Errorf("RunRecord(%s) = ok, want not a run's log", name)
		}
	}
	if _, _, ok := RunRecord(filepath.Join("st", "runs", "run-1", SessionFile), &session.Session{Meta: session.Meta{SessionID: "run-1"}}); ok {
		t.Error("a log without workflow: is a run's log")
	}
}
