// Package mine finds the procedures agents repeat and turns each into a
// workflow candidate.
//
// There are two miners. The exact miner, described below, finds contiguous
// repeats; it is complete and linear-time, and it is the right one for
// traces the crystallization runtime records, where a procedure's steps
// are adjacent. The gapped miner (gapped.go) finds procedures whose steps
// have other actions between them, as in agent sessions: it leaves
// observations out, folds retried commands into one step by the retry rule
// it shares with shadow replay (candidate.FoldRetries), keeps a command
// that failed for good as a step with a review note, counts only the
// occurrences whose gaps hold what the gap rule it also shares with
// replay lets sit there (candidate.MayInterleave: nothing that changes
// something or needs a person), and drops steps that sit where they do
// only because they are common. Options.Mode
// chooses; by default agent sessions (metadata.agent, or any observation)
// get the gapped miner and everything else the exact one. Both rank and
// build candidates the same way.
//
// The exact miner runs in three passes over the eligible traces:
//
//  1. Every action is interned to a symbol: its signature
//     kind:name:sorted,parameter,keys. A trace becomes a sequence of symbols.
//  2. A generalized suffix array with LCP (Index) enumerates every repeated
//     contiguous run of at least two symbols that occurs in at least
//     MinExamples distinct sessions (support.go: a session's continuation
//     and subagent traces are one session), is left- and right-maximal by
//     occurrences (extending it on either side loses an occurrence), and
//     has no longer extension that occurs in the same number of sessions.
//     SA-IS builds the array in linear time; the walk over LCP intervals is
//     O(n log depth). No map of windows is ever built.
//  3. The repeats are ranked (Score: supporting sessions² × length, then a
//     fixed tie-break; see rank.go), what is not a procedure last (reads
//     only, or edits that recorded only their path; see shape.go), and the
//     best ones are built into candidates: per step, the fields that vary
//     become parameters, the fields that never vary stay constants, and
//     values that always equal an earlier step's output become bindings. Side effects that differ between examples reject the
//     candidate; model-dependent steps become fuzzy segments.
//
// The invariant: the same traces and options give the same report, byte for
// byte, on every machine. Nothing here reads the clock, the environment or
// a map in iteration order.
package mine
