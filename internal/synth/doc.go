// Package synth is bounded synthesis: it decides whether code, written
// by a person or proposed by a model, does what a claim says, and keeps
// the evidence.
//
// An experiment (experiment.toml, see Experiment) names a claim, a spec
// that bounds the code (the host modules it may load, its resources, the
// metamorphic properties it must satisfy), the code, its data and the
// hypotheses to decide. Run takes it through the steps of the original
// harness, specify_claim → generate_spec → bounded_synthesis →
// execute_capsule → run_metamorphic_tests, then applies the verifiers;
// WriteEvidence leaves a redacted evidence bundle.
//
// The main invariant: synthesized code never runs outside a capsule. A
// capsule is Starlark, which has no file, network, environment or clock
// access and no recursion; load() reaches only the host modules the spec
// allows, checked before anything runs; a step budget bounds its loops;
// and a Sandbox runs it in a separate process whose memory, CPU time,
// file writes and network the kernel bounds, killed after a wall-clock
// allowance. Every way a capsule fails is a *CapsuleError with a stable
// code, the capsule's name and the limit that stopped it.
//
// Deriving a parameter from others, which runs no code and needs no
// model, is package derive's.
package synth
