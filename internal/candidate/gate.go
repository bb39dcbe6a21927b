package candidate

import "github.com/crystallize-dev/crystallize/internal/trace"

// ActionGate returns the approval boundary an action records, the one
// reading mining and shadow replay share so that what a candidate promises
// and what a held-out run did are compared in the same terms. A
// human_approval action without an approval record is a required gate
// named after the action; any other action without one has no gate (nil).
// A gate without a boundary name takes the action's name, so two runs
// gate the same way only when they name the same boundary.
func ActionGate(a *trace.Action) *trace.Approval {
	ap := a.Approval
	if ap == nil {
		if a.Kind != trace.KindHumanApproval {
			return nil
		}
		return &trace.Approval{Required: true, Boundary: a.Name}
	}
	out := &trace.Approval{Prompt: ap.Prompt, Approver: ap.Approver, Required: ap.Required, Boundary: ap.Boundary}
	if out.Boundary == "" {
		out.Boundary = a.Name
	}
	return out
}
