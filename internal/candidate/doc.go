// Package candidate defines the workflow-candidate IR and the mining report:
// the contract between mining, which produces candidates, and every stage
// after it (code generation, shadow replay, bundles, the runtime), which
// consume them.
//
// Every slice in these types is kept in a documented, deterministic order so
// that a report encodes to the same bytes for the same input.
//
// The candidate id is "candidate_" + the first 16 hex digits of the sha256
// of the step signatures and the example traces' source hashes, so the
// same traces give the same id on every machine; the promotion types and
// the Starlark identifier rules live here because mining, code generation,
// bundles and the runtime must agree on them. So do the projections a
// workflow and its SKILL.md share (how each step is called and titled,
// what it needs, one-line text, the skill's name and id): code generation
// and package skill both read them here, so neither depends on the other.
package candidate
