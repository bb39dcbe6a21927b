package candidate

import "fmt"

// Check kinds: the preconditions the runtime evaluates before a step
// (ctx.check). Each names what the traces showed true before the step ran,
// so a run that finds it false knows the world differs from them before
// the step acts on it.
const (
	// CheckCapability: the run holds Capability, or, when Tool has a
	// binding that declares what it needs, what the binding declares
	// (the binding performs the step then, not the traces' program).
	CheckCapability = "capability"
	// CheckInputsBound: every one of Inputs, the step's arguments that
	// are workflow parameters, has a value (not None, not "").
	CheckInputsBound = "inputs_bound"
	// CheckFileExists: the file the step's argument From names exists.
	CheckFileExists = "file_exists"
	// CheckBranchAbsent: the git branch the step's argument From names
	// does not exist yet (git rev-parse --verify fails).
	CheckBranchAbsent = "branch_absent"
	// CheckProgramOnPath: Program is found on PATH, unless Tool has a
	// binding of its own, which then runs the step instead.
	CheckProgramOnPath = "program_on_path"
	// CheckOutputShape: the result of the earlier step Step has Shape,
	// a JSON object whose keys have the JSON types (JSONType) recorded.
	CheckOutputShape = "output_shape"
)

// CheckKinds are the kinds the runtime knows, in a stable order.
var CheckKinds = []string{CheckCapability, CheckInputsBound, CheckFileExists, CheckBranchAbsent, CheckProgramOnPath, CheckOutputShape}

// Check is one machine-checkable precondition of a step. Which fields are
// set depends on Kind (see the Check* constants).
type Check struct {
	Kind string `json:"kind"`
	// Capability is the capability a capability check requires, and
	// Tool the step's tool name, whose binding may declare its own
	// capabilities or run another program.
	Capability string `json:"capability,omitempty"`
	Tool       string `json:"tool,omitempty"`
	// Program is the program a program_on_path check looks up.
	Program string `json:"program,omitempty"`
	// From is the key of the step argument whose value a file_exists or
	// branch_absent check tests: the value the step itself receives.
	From string `json:"from,omitempty"`
	// Inputs are the step argument keys an inputs_bound check tests.
	Inputs []string `json:"inputs,omitempty"`
	// Step and Shape are the earlier step and the recorded shape of its
	// result (key → JSON type) an output_shape check tests: the keys the
	// step reads from it.
	Step  int               `json:"step,omitempty"`
	Shape map[string]string `json:"shape,omitempty"`
}

// String is the check as prose, for the step's preconditions list.
func (c Check) String() string {
	switch c.Kind {
	case CheckCapability:
		return fmt.Sprintf("capability %q is granted", c.Capability)
	case CheckInputsBound:
		return fmt.Sprintf("inputs %q are bound", c.Inputs)
	case CheckFileExists:
		return fmt.Sprintf("the file named by argument %q exists", c.From)
	case CheckBranchAbsent:
		return fmt.Sprintf("the git branch named by argument %q does not exist yet", c.From)
	case CheckProgramOnPath:
		return fmt.Sprintf("program %q is on PATH", c.Program)
	case CheckOutputShape:
		return fmt.Sprintf("step %d's result has the recorded shape", c.Step)
	}
	return "check " + c.Kind
}

// CodeFallbackNeeded: runs of the workflow (traces mined again) needed
// the fallback at a step: a precondition failed or the step itself did,
// and the run went on through its fallback policy.
const CodeFallbackNeeded = "fallback_needed"

// MetaFallback is the action metadata key a run sets on a failed check,
// a failed step and every step its fallback agent made: an object with
// "policy" (fail, agent or ask) and, on the failure, "reason".
const MetaFallback = "fallback"
