package runtime

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

func TestFailureCode(t *testing.T) {
	for _, tc := range []struct {
		status, msg, want string
	}{
		{StatusFailed, fmt.Errorf("%w: tool x needs y", ErrCapability).Error(), "capability_not_granted"},
		{StatusFailed, fmt.Errorf("step 2: %w: server notes, tool add", ErrMCP).Error(), "mcp_call_failed"},
		// The outermost cause, the one a reader sees first, decides.
		{StatusFailed, ErrFailed.Error() + ": " + ErrModel.Error(), "workflow_failed"},
		{StatusRejected, "approval rejected: merge", "approval_rejected"},
		{StatusRejected, "", "approval_rejected"},
		{StatusCancelled, "context canceled", "cancelled"},
		{StatusFailed, "tool go.test: exit status 1", "step_error"},
	} {
		if got := FailureCode(tc.status, tc.msg); got != tc.want {
			t.Errorf("FailureCode(%s, %q) = %s, want %s", tc.status, tc.msg, got, tc.want)
		}
	}
}

func TestReadStatsBadRecords(t *testing.T) {
	dir := t.TempDir()
	for name, data := range map[string]string{
		"not-json":  "{",
		"not-a-run": `{"version":1,"id":"x","actions":[]}`,
		"no-status": `{"version":1,"id":"x","actions":[],"metadata":{"crystallize_run":{"workflow":"wf"}}}`,
	} {
		os.MkdirAll(filepath.Join(dir, name), 0o755)
		os.WriteFile(filepath.Join(dir, name, TraceFile), []byte(data), 0o644)
	}
	st, err := ReadStats(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Workflows) != 0 || len(st.Skipped) != 3 {
		t.Fatalf("ReadStats = %+v, want three skipped runs and no workflow", st)
	}
	for _, s := range st.Skipped {
		if s.Error == "" {
			t.Errorf("%s skipped without a reason", s.Dir)
		}
	}
	if _, err := ReadStats(filepath.Join(dir, "missing")); err == nil {
		t.Error("ReadStats of a missing directory succeeded")
	}
}
