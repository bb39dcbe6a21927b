// Package codify turns session logs into a draft workflow candidate and
// applies a person's review and a model's refinement to it (the
// "user-confirm" and "agent-refine" layers of progressive codification).
//
// Run mines the sessions' traces the way mine does; Apply applies an
// interactive review to the sources and mines them again, so everything
// derived from the steps agrees with the kept steps by construction;
// Refiner asks a model to rename and comment the workflow and accepts the
// answer only when codegen.Equivalent proves it the same program. The
// terminal dialogue, the flags and the output files belong to the caller.
package codify
