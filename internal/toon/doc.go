// Package toon reads and writes TOON, the Token-Oriented Object Notation of
// the TOON specification version 4.0: a line-oriented, indentation-based
// text form of the JSON data model that declares array lengths and field
// lists once, so that uniform records read as tables.
//
// The package implements the whole of the 4.0 draft: inline, tabular,
// nested-field-group, keyed-tabular and expanded-list arrays, the comma,
// tab and pipe delimiters with their scoping, canonical numbers, the quoting
// and escaping rules, comment lines, and every strict-mode check of §14.
//
// Its main invariant is that Encode is deterministic and Decode inverts it:
// for every value v the encoder accepts, Decode(Encode(v)) equals v under
// the spec's JSON-model equality (§2), and Encode(Decode(Encode(v))) is
// byte-for-byte Encode(v).
//
// # Values
//
// Decode returns the JSON data model with ordered objects: Object (a slice
// of key/value members, in document order), []any, string, json.Number,
// bool and nil. Objects are slices rather than maps because TOON, unlike
// Go's maps, has a key order the spec requires encoders to preserve (§2);
// ReadJSON decodes JSON text into the same ordered values so that a JSON
// document converts to TOON with its keys in their original order.
//
// Numbers are kept as decimal text, never rounded through float64: the
// decoder returns json.Number holding the canonical form of the token
// (§2: no exponent for 1e-6 ≤ |n| < 1e21, no trailing fractional zeros,
// -0 as 0, otherwise lowercase exponent with an explicit sign, such as
// 1e-7 or 1.5e+21), so that integers beyond 2^53 and long fractions
// survive a round trip. This is the lossless-first policy §4 recommends;
// there is no out-of-range number.
//
// # Host types
//
// Encode accepts, besides the values above, map[string]any (keys sorted,
// since Go map order is random), the Go integer and float types (NaN and
// ±Inf become null, §3), and any other value encoding/json can marshal
// (structs, json.Marshaler implementations such as time.Time): those are
// marshalled to JSON and read back with ReadJSON, so struct field order
// is kept. Invalid UTF-8 in strings is replaced by U+FFFD.
//
// # What the spec leaves to implementations
//
// Decoder: strict mode (the default) rejects ill-formed UTF-8; non-strict
// mode replaces it by U+FFFD. Non-strict mode ignores tabs in indentation
// (depth counts spaces only), computes depth as floor(spaces/indent),
// skips lines that belong to no scope, fills missing row cells with null
// and drops surplus ones, ignores content after a completed root array,
// applies last-write-wins to duplicate keys (keeping the first key's
// position), and parses malformed headers as key-value lines. Invalid
// escapes and unterminated strings are errors in both modes (§7.1).
//
// Encoder: list items that are primitives are quoted against the array's
// active delimiter; object field values against the document delimiter
// (§11.1). Key folding and path expansion are not part of TOON 4.0 — a
// dotted key such as user.name is a single literal key in both
// directions (§6, §8) — so the encoder never folds and the decoder never
// expands.
package toon
