// Package runstate is what a run tells the stages around it, without
// the runner: the status it ended in, the approval or decision a
// suspended run waits for, the messages of the agent API, and the names
// of the files of its record. The registry of live runs, the inbox and
// the session index read these; the runner writes them.
package runstate

// Run statuses, recorded in the runner's Result.Status, the trace and
// session.md.
const (
	StatusCompleted = "completed"
	StatusFailed    = "failed"
	StatusCancelled = "cancelled"
	// StatusPendingApproval: the run waits for an approval decision;
	// the runner's Resume continues it.
	StatusPendingApproval = "pending_approval"
	// StatusRejected: an approval boundary was rejected.
	StatusRejected = "rejected"
	// StatusRunning is the status of a run the runner's Advance stopped
	// between two steps.
	StatusRunning = "running"
)

// Names of the files of a run record, under <StateDir>/runs/<run-id>/.
const (
	TraceFile   = "trace.json"
	SessionFile = "session.md"
	// JournalFile is the journal of a run that was suspended.
	JournalFile = "journal.json"
)

// Pending is the approval a suspended run waits for.
type Pending struct {
	Step     int    `json:"step"`
	Boundary string `json:"boundary"`
	Prompt   string `json:"prompt,omitempty"`
	// Kind is PendingDecision for ctx.request_decision, whose Options
	// are the choices; "" for an approval.
	Kind    string   `json:"kind,omitempty"`
	Options []string `json:"options,omitempty"`
}

// PendingDecision is Pending.Kind for a run waiting at
// ctx.request_decision; "" is an approval.
const PendingDecision = "decision"

// Message kinds given to the runner's Options.Inbox: the callout types
// they are written as.
const (
	MessageTaskComplete     = "task_complete"
	MessageInfo             = "info"
	MessageDecisionNeeded   = "decision_needed"
	MessageApprovalRequired = "approval_required"
)

// Message is what the agent API tells a person: the callout a call of
// ctx.notify, ctx.request_decision or ctx.request_approval wrote.
type Message struct {
	Type string
	// Step is the step the message was written at: the decision's or
	// approval's own step, or for a notification the last step before
	// it.
	Step int
	// Boundary names the decision or approval ("" for notifications).
	Boundary string
	// Text is the notification, question or approval prompt, secrets
	// replaced.
	Text string
	// Options are the choices of a decision.
	Options []string
}

// Outcome is how a run ended, or where it was suspended: its status and,
// for a suspended run, what it waits for.
type Outcome struct {
	Status  string
	Pending *Pending
}
