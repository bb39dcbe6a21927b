// Package trace is the model of a recorded agent run: a Trace is an ordered
// list of Actions (tool calls, model calls, approvals, file mutations, …)
// plus the provenance, usage and replay data recorded with it. It holds the
// JSON codec for the crystallization trace format (version 1, described by
// schemas/trace.v1.json), the normalization every later stage relies on,
// content hashes, action signatures, replay allowlist patterns, and the
// positioned input errors that every decoder in the project reports.
//
// The main invariant: a *Trace returned by this package is well formed.
// Decode checks every field the format names, against a JSON path, and
// either returns a trace whose required fields are present and whose action
// ids are unique, or an ErrorList naming every problem in the document; it
// never returns a half-checked trace. Fields the format does not name are
// kept in the Extra maps and written back by the MarshalJSON methods, so
// that Decode followed by json.Marshal followed by Decode yields an equal
// value: traces written by other tools survive a pass through this one.
//
// Decoding is two-phase on purpose. The bytes are first parsed into the
// generic values of encoding/json (with UseNumber, so numbers keep their
// literal text), then converted to the typed structs by a walk that knows
// the JSON path of every value. Decoding straight into the structs would
// stop at the first type error and report it without a usable path; the
// generic value also lets the source package detect the document's format
// once and hand the same value to the converter, instead of parsing twice.
// The parsing is done by a Parser, which gives the values encoding/json
// gives (and its errors) but stores the strings and numbers that repeat
// between documents once, since a loaded corpus is mostly those. Unlike
// encoding/json, it refuses an object with two members of the same name
// (Duplicates names each with its line and path): a reviewer must not read
// one value while the decoder keeps the other. Traces are read by exact
// member names (map keys); the other documents that are reviewed or run
// (bundle manifests and reports, harness manifests, journals) are decoded
// into structs by encoding/json, which also matches names that differ only
// by case or Unicode folding, and CheckNames refuses those names first.
package trace
