// Package temporal runs approved workflows as durable Temporal workflows:
// a run survives the loss of the worker that ran it, waits for approvals
// and decisions as long as they take, retries a lost step with backoff,
// and is spread over as many workers as there are.
//
// One Temporal workflow type, RunWorkflow, runs every bundle a worker
// serves. Its code is a short Go loop, not the Starlark interpreter: the
// run's state is the journal that lets a local run be resumed (see
// runner.Advance), and each iteration hands the journal to one activity,
// StepActivity, which runs the bundle's Starlark workflow from the start,
// answers every step the journal holds from it, performs the next step
// (a ctx.tool, ctx.exec or ctx.model call, with the ctx.secret and
// ctx.check calls before it) through the same host as a local run, and
// returns the journal with that step added. So:
//
//   - the workflow code is deterministic by construction: it reads
//     nothing but activity results, updates and its input, and the
//     Starlark code, which has no clock, randomness or I/O of its own,
//     never runs inside it;
//   - a step is performed once: a completed activity's result is in the
//     history, and a replayed workflow, on this worker or another, gets
//     it from there (an attempt lost mid-step is retried, as any
//     activity is);
//   - capabilities, grants, secrets, redaction and receipts are exactly
//     those of a local run, because the step is performed by it; secret
//     values never reach the history (the journal holds outputs with
//     secrets replaced, as journal.json does);
//   - the bundle's readiness (bundle.Ready, the approval ledger when the
//     configuration requires it) is decided again at every step, from the
//     bundle directory as it is then, so a withdrawn approval stops a run
//     at its next step.
//
// The input pins the bundle's workflow sha256. A worker serves only the
// bundles it was started with (NewWorker refuses one that is not ready);
// a run whose pinned workflow is not the one the worker holds is refused
// on its first workflow task, and a history replayed against a changed
// workflow fails with an error saying so (a replay must run against the
// code that made the history).
//
// An approval or decision the run reaches is a Temporal Update named after
// its boundary (Decide sends it); the run waits for it, for
// [temporal] approval_timeout at most when the configuration sets one,
// and the decision becomes the next step, recorded in the run's trace as
// a local approval is. While it waits, the workflow's memo names the
// boundary (List reads it). When the run ends, its trace.json and
// session.md are written under the worker's state directory, as a local
// run's are, so mining reads it like any other run.
package temporal
