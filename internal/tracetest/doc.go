// Package tracetest generates seeded synthetic trace corpora for the tests
// and benchmarks of the miner.
//
// A corpus is random noise with K procedures planted into it. Each planted
// procedure is a fixed sequence of actions that appears, contiguously and at
// most once per trace, in a chosen set of traces; the Planted record says
// which traces, which parameters vary between plantings, which stay
// constant and which are copied from an earlier step's output. A miner that
// works recovers every planted procedure with exactly that support,
// parameters, constants and bindings.
//
// The main invariant is that the corpus is a pure function of its Config:
// the same Config yields byte-identical JSON on every machine, whatever the
// number of CPUs, so a failing test or a benchmark can be reproduced from
// its seed. Two more invariants make the expectations exact:
//
//   - Noise never reproduces a planted signature: procedure tools live in
//     their own namespace (proc03.step07_apply), noise tools in others.
//   - Plantings never touch: two procedures planted into the same trace are
//     separated by at least one noise action when the trace has any, so the
//     miner does not see an accidental longer repeat made of two plantings.
//
// Noise may still repeat by chance (two traces may call the same noise tool
// before the same procedure); that is realistic, and a miner must report
// such a short repeat as its own candidate rather than stretch a planted
// one.
//
// GenerateAgents does the same for the logs real agents write: sessions
// of Claude Code, Codex CLI and OpenTelemetry GenAI spans in which an
// agent bumps a Go dependency, triages an issue or cuts a release among
// reads, searches, todo lists, unrelated builds, failing tests it fixes
// and chained commands. Each session is written in every format from one
// agent-neutral form, so a procedure planted in a session is there in all
// three, and the AgentManifest says what an importer and a miner must
// find: the command heads of each procedure, its varying values and the
// sessions it was planted in.
//
// Generic values (parameters, outputs, metadata) hold the types
// encoding/json produces with UseNumber: numbers are json.Number and arrays
// []any. So a corpus written and read back equals the one in memory.
package tracetest
