// Package plan is the typed task-plan IR: a narrow, JSON-shaped
// graph of typed steps (read_fact, agent_loop, verify, human_gate, …) that
// a planner — a person, a model, or both — can write without knowing the
// workflow graph the runtime executes.
//
// The package does three things with a plan, all without running it:
//
//   - Validate checks every rule the IR states and reports each problem as
//     a record {code, path, message} with a stable code and the JSON path
//     of the offending value. It accepts any bytes and never fails: a plan
//     that is not even JSON is a validation with one error.
//   - Compile lowers a valid plan to the workflow graph, following the
//     IR's lowering table kind by kind.
//   - Mermaid renders a valid plan as a flowchart for review.
//
// The main invariant is that only a plan that validates with no errors
// can be parsed, compiled or rendered: Parse runs Validate and refuses an
// invalid plan, so Compile and Mermaid never see dangling references,
// unknown kinds or unbounded graphs.
//
// The shape of a plan (types, required and unknown members) is published
// as a JSON Schema, Schema, the same bytes as schemas/task-plan.v1.json;
// the checks that a schema cannot express (references, cycles, budgets,
// the contract of each kind) have their own codes. Where both would
// report the same value, only the specific code is kept.
//
// Kind blocks use the producer's names: a human_gate carries
// "human_gate": {"approval_id", "prompt", "skippable"}, a sub_agent
// {"worker_name", "preset", "task_label"}, a workflow_map "map", a
// deterministic_command "command" {"tool", "args"}. The one alias kept
// is "approval": {"id", "prompt", "skippable"} for human_gate, from
// plans written before the block was renamed; Parse rewrites it to the
// canonical block, and a node that gives both is refused.
//
// Where this validator is stricter than the producer's, on purpose:
// members not in the schema are errors unless they start with "x-"
// (planners invent fields), and a node's tools must be granted by
// capabilities.tools (deny by default).
package plan
