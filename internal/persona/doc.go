// Package persona crystallizes the repairs a durable persona keeps asking
// a repair worker for: when a persona (a long-running agent such as a merge
// captain) calls the same worker for the same shape of problem, gets the
// same shape of answer and then does the same thing with it, the worker's
// model loop can become a deterministic step of the persona's own code.
//
// The input is the persona's history: JSON Lines of repair-worker records
// (Decode), each with the repair bundle the worker was given, the result it
// returned, the action the persona took next, what the worker's model loop
// cost and when it finished. Evaluate decides, for one persona, whether its
// records recur exactly. Recurrence is a grouping, not a veto: the clean
// records (a successful status, StatusSucceeded, and no validation errors)
// are grouped by the exact recurrence key
//
//   - the same worker;
//   - the same input shape (Shape of the bundle) and output shape (Shape of
//     the result);
//   - the same downstream action;
//
// and a group is a candidate when it has at least Options.MinExamples
// records over at least Options.MinHostedHistoryDays days (between its
// first and last record, or as many days of hosted history as the caller
// says). The strongest group is decided on: Proposed when it is a
// candidate, Gated otherwise; the other groups are listed with their
// reasons (Result.Groups), so one record that went another way does not
// hide the recurrence of the rest. A status that is neither a known success
// nor a known failure is a warning that names it. Every reason is a
// candidate.Problem with a stable code (the Code constants).
//
// A proposal goes through the same pipeline as any other candidate, with no
// parallel copy of candidate assembly: each matched record becomes a
// three-action trace (read the repair bundle, the worker's step, the
// downstream action), mine.Mine turns the traces into a candidate whose
// savings are the worker's model loops, and replay.Apply compares the
// candidate with every matched record, so the shadow comparison of result
// shape and downstream action is computed, not asserted, and
// `crystallize shadow` recomputes it from the bundle's fixtures. The
// workflow of the proposal is a literal Starlark patch,
// def <persona>_<worker>_step(ctx, bundle), that returns the recurring
// result: constant members as literals, members that always equal a member
// of the bundle as reads of it. It is review material for the persona
// package, never applied automatically.
//
// The invariant: only exact recurrence (one group) is proposed, and everything is a
// pure function of the records and options: no clock, no file written, the
// same input gives the same decision, candidate and patch bytes.
package persona
