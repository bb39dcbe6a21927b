package runner

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/runconfig"
	"github.com/crystallize-dev/crystallize/internal/runstate"
	"github.com/crystallize-dev/crystallize/internal/session"
)

func TestCheckDecision(t *testing.T) {
	waiting := &Journal{RunID: "r1", Pending: &runstate.Pending{Kind: runstate.PendingDecision, Boundary: "strategy", Options: []string{"JWT", "OAuth"}}}
	approval := &Journal{RunID: "r2", Pending: &runstate.Pending{Boundary: "merge"}}
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
	id, dir, ok := RunRecord(filepath.Join("st", "runs", "run-1", runstate.SessionFile), run)
	if !ok || id != "run-1" || dir != "st" {
		t.Errorf("RunRecord = %q, %q, %v; want run-1 under st", id, dir, ok)
	}
	for _, name := range []string{filepath.Join("st", "runs", "run-2", runstate.SessionFile), filepath.Join("st", "logs", "run-1", runstate.SessionFile), "notes.md"} {
		if _, _, ok := RunRecord(name, run); ok {
			t.Errorf("RunRecord(%s) = ok, want not a run's log", name)
		}
	}
	if _, _, ok := RunRecord(filepath.Join("st", "runs", "run-1", runstate.SessionFile), &session.Session{Meta: session.Meta{SessionID: "run-1"}}); ok {
		t.Error("a log without workflow: is a run's log")
	}
}

// TestOpenRunLog checks what a run's session log is to a caller that
// would continue it: suspended (with its journal), ended for good, or
// only a context to resume.
func TestOpenRunLog(t *testing.T) {
	state := t.TempDir()
	c := counter{}
	models := 0
	res, err := Run(context.Background(), workflow(t, approvalWorkflow), Params{"branch": "b1"}, approvalOpts(t, state, c, &models))
	if !errors.Is(err, ErrPendingApproval) {
		t.Fatalf("Run = %v, want a pending approval", err)
	}
	name := filepath.Join(res.Dir, runstate.SessionFile)
	s, err := session.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	r, err := OpenRunLog(name, s)
	if err != nil || r == nil || r.Journal == nil || r.RunID != res.RunID || r.StateDir != state {
		t.Fatalf("OpenRunLog(suspended) = %+v, %v; want its journal", r, err)
	}

	if r, err := OpenRunLog("notes.md", s); r != nil || err != nil {
		t.Errorf("OpenRunLog(not a run's log) = %+v, %v; want nil", r, err)
	}
	if err := os.Remove(filepath.Join(res.Dir, runstate.JournalFile)); err != nil {
		t.Fatal(err)
	}
	if r, err := OpenRunLog(name, s); err != nil || r == nil || r.Journal != nil {
		t.Errorf("OpenRunLog(never suspended, %s) = %+v, %v; want no journal", s.Meta.Status, r, err)
	}
	s.Meta.Status = runstate.StatusCompleted
	var ended *NothingToResumeError
	if _, err := OpenRunLog(name, s); !errors.As(err, &ended) || ended.Status != runstate.StatusCompleted {
		t.Errorf("OpenRunLog(completed) = %v; want nothing to resume", err)
	}
}

// TestJournalLoadConfig checks which configuration a resumed run loads:
// the caller's, else the run's own, else none.
func TestJournalLoadConfig(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, runconfig.ConfigFile)
	if err := os.WriteFile(file, []byte("[grants]\ncapabilities = [\"fs.read\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if cfg, err := (&Journal{}).LoadConfig(""); err != nil || cfg.Dir != "." || cfg.File != "" {
		t.Errorf("no configuration = %+v, %v", cfg, err)
	}
	if cfg, err := (&Journal{Config: file}).LoadConfig(""); err != nil || cfg.File != file {
		t.Errorf("the run's configuration = %+v, %v", cfg, err)
	}
	if _, err := (&Journal{Config: file}).LoadConfig(filepath.Join(dir, "other.toml")); err == nil {
		t.Error("the caller's missing configuration was not the one loaded")
	}
}
