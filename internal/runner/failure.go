package runner

import (
	"strings"

	"github.com/crystallize-dev/crystallize/internal/model"
	"github.com/crystallize-dev/crystallize/internal/runconfig"
	"github.com/crystallize-dev/crystallize/internal/runstate"
	"github.com/crystallize-dev/crystallize/internal/toolexec"
	"github.com/crystallize-dev/crystallize/internal/verify"
)

// failureCodes are the stable codes of run failures, by the error each
// failure wraps. A recorded run keeps only its error's message, which
// starts with or contains the sentinel's message.
var failureCodes = []struct {
	err  error
	code string
}{
	{ErrCapability, "capability_not_granted"},
	{runconfig.ErrSecret, "secret_unavailable"},
	{runconfig.ErrSecretsFile, "secrets_file_unusable"},
	{ErrStepLimit, "step_limit_exceeded"},
	{ErrCancelled, "cancelled"},
	{ErrFailed, "workflow_failed"},
	{model.ErrUnavailable, "model_unavailable"},
	{toolexec.ErrMCP, "mcp_call_failed"},
	{ErrBudget, "budget_exceeded"},
	{ErrWorker, "unknown_worker"},
	{ErrRejected, "approval_rejected"},
	{verify.ErrDrift, "receipt_drift"},
	{verify.ErrUnverifiable, "unverifiable"},
	{ErrUnbound, "unbound_tool"},
	{toolexec.ErrOutsideWorkspace, "outside_workspace"},
	{toolexec.ErrOptionArgument, "option_argument"},
	{ErrJournal, "journal_mismatch"},
	{ErrPrecondition, "precondition_failed"},
	{ErrFallback, "fallback_incomplete"},
}

// FailureCode returns the reason code of a run that ended with status
// and the recorded error message msg: the code of the sentinel error whose
// message occurs first in msg (the outermost cause a reader sees first),
// else "approval_rejected" or "cancelled" by status, else "step_error",
// a step that failed on its own terms (a command's exit status, a tool's
// error).
func FailureCode(status, msg string) string {
	best, at := "", len(msg)+1
	for _, f := range failureCodes {
		if i := strings.Index(msg, f.err.Error()); i >= 0 && i < at {
			best, at = f.code, i
		}
	}
	switch {
	case best != "":
		return best
	case status == runstate.StatusRejected:
		return "approval_rejected"
	case status == runstate.StatusCancelled:
		return "cancelled"
	}
	return "step_error"
}
