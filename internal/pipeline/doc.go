// Package pipeline is the one road from traces to artifacts: it mines
// traces (MineTraces, or ReadCorpus and MineDir for a directory too large
// to hold decoded), screens the held-out traces (Screen, LoadHeldout,
// StreamHeldout), shadow-replays every candidate against both, and
// renders and writes what a run produces (Publish): the report, the
// selected workflow and every safe candidate's, the review bundle with
// its skill and eval pack. Induce is the same road ending in memory, for
// callers that want the accepted skills rather than files.
//
// Every command that turns traces into artifacts goes through it (mine,
// ingest, session codify, persona), and so does every library caller, so
// that the choice of miner, which held-out traces count as evidence, the
// skill gate and what is redacted before anything is written are decided
// once. Files are written through package atomicfile: all of a run's
// outputs or none.
//
// The package sits above bundle and skill, whose formats it writes, and
// below the command line, which only turns flags into Options and prints
// what the pipeline returns.
package pipeline
