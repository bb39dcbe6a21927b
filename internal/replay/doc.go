// Package replay proves a workflow candidate against recorded traces
// without running anything: shadow comparison and the replay oracle.
//
// Shadow aligns the candidate's step signatures with each trace's action
// signatures, as a process-mining alignment would, and then compares what
// the steps promise (side effects, approval boundaries, deterministic
// outputs) with what the aligned actions did. When receipts are involved
// it runs the replay oracle: the trace's replay_run is the first execution
// and a copy carrying the candidate's expected receipts is the second, and
// the two are diffed canonically after masking the fields the trace's
// replay_allowlist says change on every execution.
//
// The invariant: Shadow and Oracle are pure functions of their inputs.
// They call no tool, touch no file, and never modify the candidate or the
// traces they are given (traces share generic JSON values with their
// decoder, so writing to them would corrupt the caller's data); the same
// inputs give the same report, in the same order, however many cores
// compared them.
package replay
