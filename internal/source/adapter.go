package source

import (
	"bytes"
	"strings"

	"github.com/crystallize-dev/crystallize/internal/trace"
)

// Adapter converts documents of one input format into traces.
type Adapter interface {
	// Name identifies the format, for messages and reports.
	Name() string
	// Detect reports whether the parsed JSON object doc is in this
	// adapter's format. It looks only at the shape of doc, cheaply: the
	// first adapter whose Detect is true decodes the document.
	Detect(doc map[string]any) bool
	// Decode converts doc, which was parsed from raw, found in file (at
	// 1-based line for a JSON Lines record, else 0). The error, if any,
	// is a trace.ErrorList naming every problem at its JSON path. The
	// returned trace need not be normalized and has no Origin or source
	// hash yet; the loader sets them.
	Decode(doc map[string]any, raw []byte, file string, line int) (*trace.Trace, error)
}

// defaultAdapters is the registry, in detection order. It is an array, not
// a slice, so that it cannot be appended to or modified through a shared
// backing store: Adapters hands out copies. The crystallization format
// comes first because it is the native one: a document with both
// "actions" and "stages" is a trace that happens to carry a stages member.
var defaultAdapters = [...]Adapter{TraceV1{}, RunRecord{}, Composition{}}

// Adapters returns the registered adapters in detection order. The slice
// is a copy; changing it does not change the registry.
func Adapters() []Adapter {
	return append([]Adapter(nil), defaultAdapters[:]...)
}

// TraceV1 is the adapter for the crystallization trace format, version 1
// (schemas/trace.v1.json): a JSON object with an "actions" member.
type TraceV1 struct{}

// Name returns "crystallization_trace.v1".
func (TraceV1) Name() string { return "crystallization_trace.v1" }

// Detect reports whether doc has an "actions" member.
func (TraceV1) Detect(doc map[string]any) bool {
	_, ok := doc["actions"]
	return ok
}

// Decode converts doc with trace.FromValue, reusing the value the loader
// already parsed instead of parsing raw again.
func (TraceV1) Decode(doc map[string]any, raw []byte, file string, line int) (*trace.Trace, error) {
	return trace.FromValue(doc, file, line)
}

// utf8BOM is the byte order mark some Windows editors put at the start of
// a UTF-8 file. encoding/json rejects it, but it is not part of the
// document, so it is dropped before parsing (the source hash still covers
// the file's bytes as they are).
var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// noAdapterMsg is the message for a JSON object no adapter recognizes. It
// names the member each document format is detected by, which is what
// the user most likely got wrong, and the session log formats that were
// tried too (by the first records of the file), so that a user whose agent
// log is not read sees that its format was looked for.
var noAdapterMsg = func() string {
	var names []string
	for _, a := range sessionAdapters {
		names = append(names, a.Name())
	}
	return `neither a crystallization trace (no "actions"), a workflow run record (no "stages") nor a composition report (no "run" and "calls"), and the file is no session log of ` +
		strings.Join(names, ", ") + ` (by its first records)`
}()

// DecodeDocument parses one JSON document from file (at 1-based line for a
// JSON Lines record, else 0), finds the adapter for its format and decodes
// it. The error, if any, is a trace.ErrorList: a syntax error with its line
// and column, "$: expected object, got …", "$: neither a crystallization
// trace … nor a workflow run record …", or every problem the adapter found.
// The trace is not normalized and has no Origin or source hash; Load sets
// those.
func DecodeDocument(raw []byte, file string, line int) (*trace.Trace, error) {
	var p trace.Parser
	return decodeDocument(&p, raw, file, line)
}

// decodeDocument is DecodeDocument parsing with p, which shares the strings
// of the document with those p parsed before.
func decodeDocument(p *trace.Parser, raw []byte, file string, line int) (*trace.Trace, error) {
	raw = bytes.TrimPrefix(raw, utf8BOM)
	v, err := p.Parse(raw, file, line)
	if err != nil {
		return nil, err
	}
	return decodeValue(v, raw, file, line)
}

// decodeValue decodes the parsed document v with the adapter of its format.
func decodeValue(v any, raw []byte, file string, line int) (*trace.Trace, error) {
	doc, ok := v.(map[string]any)
	if !ok {
		return nil, trace.ErrorList{{File: file, Line: line, Path: "$", Msg: "expected object, got " + trace.TypeName(v)}}
	}
	for _, a := range defaultAdapters {
		if a.Detect(doc) {
			return a.Decode(doc, raw, file, line)
		}
	}
	return nil, trace.ErrorList{{File: file, Line: line, Path: "$", Msg: noAdapterMsg}}
}
