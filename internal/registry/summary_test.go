package registry

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/crystallize-dev/crystallize/internal/store"
)

func TestEntrySummary(t *testing.T) {
	// 2026-01-01T00:00:00.250Z and five seconds later.
	const started = 1767225600250
	e := Entry{Number: 2, State: StatusRunning, LiveSession: store.LiveSession{
		SessionID: "r1", Workspace: "/w", StateDir: "/w/.crystallize", AgentType: TypeWorkflow, Name: "bump",
		Status: StatusRunning, PID: 42, Started: started, Heartbeat: started + 5000,
	}}
	want := Summary{Number: 2, SessionID: "r1", Name: "bump", AgentType: TypeWorkflow, State: StatusRunning, Status: StatusRunning,
		Workspace: "/w", StateDir: "/w/.crystallize", PID: 42, Started: "2026-01-01T00:00:00.250Z", Heartbeat: "2026-01-01T00:00:05.250Z"}
	if diff := cmp.Diff(want, e.Summary()); diff != "" {
		t.Errorf("Summary (-want +got):\n%s", diff)
	}
	b, err := json.Marshal(e.Summary())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), `"ended"`) {
		t.Errorf("a session that has not ended has an ended time: %s", b)
	}
	e.Ended = started + 60000
	if got := e.Summary().Ended; got != "2026-01-01T00:01:00.250Z" {
		t.Errorf("Summary().Ended = %q", got)
	}
	if got := Summaries(nil); got == nil || len(got) != 0 {
		t.Errorf("Summaries(nil) = %#v, want an empty list, never null", got)
	}
}
