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
package plan
