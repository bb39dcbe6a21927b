package runner

import (
	"fmt"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/model"
	"github.com/crystallize-dev/crystallize/internal/runstate"
	"github.com/crystallize-dev/crystallize/internal/toolexec"
)

func TestFailureCode(t *testing.T) {
	for _, tc := range []struct {
		status, msg, want string
	}{
		{runstate.StatusFailed, fmt.Errorf("%w: tool x needs y", ErrCapability).Error(), "capability_not_granted"},
		{runstate.StatusFailed, fmt.Errorf("step 2: %w: server notes, tool add", toolexec.ErrMCP).Error(), "mcp_call_failed"},
		// The outermost cause, the one a reader sees first, decides.
		{runstate.StatusFailed, ErrFailed.Error() + ": " + model.ErrUnavailable.Error(), "workflow_failed"},
		{runstate.StatusRejected, "approval rejected: merge", "approval_rejected"},
		{runstate.StatusRejected, "", "approval_rejected"},
		{runstate.StatusCancelled, "context canceled", "cancelled"},
		{runstate.StatusFailed, "tool go.test: exit status 1", "step_error"},
	} {
		if got := FailureCode(tc.status, tc.msg); got != tc.want {
			t.Errorf("FailureCode(%s, %q) = %s, want %s", tc.status, tc.msg, got, tc.want)
		}
	}
}
