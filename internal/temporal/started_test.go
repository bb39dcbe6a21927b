package temporal

import (
	"encoding/json"
	"testing"
)

// TestStartedJSON pins what run --temporal --json prints for a run it
// does not wait for: the run id and "running", under the keys a script
// reads.
func TestStartedJSON(t *testing.T) {
	got, err := json.Marshal(StartedRun("20260112T101500Z-5f2a9c0e11d4"))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"run_id":"20260112T101500Z-5f2a9c0e11d4","status":"running"}`
	if string(got) != want {
		t.Errorf("StartedRun JSON = %s; want %s", got, want)
	}
}
