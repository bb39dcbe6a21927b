// Package jsontext is the module's one JSON text core: the string
// encoder (AppendQuote), the string decoder (AppendUnquote), the scanner
// that skips white space, numbers and whole values and walks an object's
// members (Members), the placing of an offset at its line and column
// (Position), and the canonical writer (Canonical, WriteCanonical,
// AppendCanonical, AppendIndent) with the plan of how encoding/json
// writes a struct (Fields).
//
// Every file the module writes by hand as JSON quotes its strings here,
// so that one format never has two escapings: strings are escaped as
// encoding/json escapes them with SetEscapeHTML(false), so that the <, >
// and & of shell commands and prose stay readable in traces, reports and
// bundles. What decodes by hand (trace's parser, redact's one-pass
// redactor) reads strings here, so that every decoder agrees with
// encoding/json on escapes, surrogates and invalid UTF-8.
//
// Canonical JSON is the form of every generated record: object members
// sorted bytewise by their decoded names (of a name given twice, the
// last value), two-space indentation, numbers as written, no HTML
// escaping, and (for Canonical and WriteCanonical) a final newline. It is
// what encoding v with encoding/json, decoding the text into generic
// values and encoding them again with sorted keys would give; the writer
// gets there without building the generic values.
//
// The package is a leaf: it imports only the standard library.
package jsontext
