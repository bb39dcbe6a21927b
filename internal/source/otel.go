package source

import (
	"encoding/base64"
	"encoding/json"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/crystallize-dev/crystallize/internal/normalize"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// OTLP is the session adapter for OpenTelemetry traces in OTLP/JSON, as an
// OTLP file exporter or a collector's file exporter writes them: an object
// {"resourceSpans": [{"resource": …, "scopeSpans": [{"scope": …,
// "spans": [span, …]}]}]} per *.json file or per line of a *.jsonl file.
//
// One trace is made per traceId across all records of a file, since a
// collector flushes one agent run over several export requests; a span
// that comes again (same trace and span id) is read once. Spans
// follow the GenAI semantic conventions: an execute_tool span (its
// gen_ai.operation.name, or a name starting with "execute_tool") is one
// tool call; a chat, generate_content, text_completion or invoke_agent
// span is a model turn whose gen_ai.usage.* tokens are attributed to the
// tool calls it produced; the first user message of gen_ai.input.messages
// (or the older gen_ai.prompt and gen_ai.user.message event) is the goal.
//
// The records arrive parsed as generic JSON, and are read by hand rather
// than through the OTLP protobuf types: OTLP/JSON writes trace and span
// ids as hex where protobuf's JSON mapping expects base64, and a protobuf
// decoder stops at the first problem without a JSON path, while a user
// fixing an export wants every problem at its path.
type OTLP struct{}

// Name returns "otel".
func (OTLP) Name() string { return "otel" }

// DetectRecord reports whether doc is an OTLP/JSON export: an object with
// resourceSpans.
func (OTLP) DetectRecord(doc map[string]any) bool {
	_, ok := doc["resourceSpans"]
	return ok
}

// otlpShape is what readOTLP reads of an export: the resources'
// attributes and the spans' ids, names, times, attributes, status and
// events. It leaves out the instrumentation scopes, span kinds, flags,
// trace states, links and dropped counts; the attributes, which are most
// of an export, are all read.
var otlpShape = &trace.Shape{Only: true, Members: map[string]*trace.Shape{
	// A collector may write every signal to one file: a logs export is
	// kept whole for decodeExports, a metrics export only as present.
	"resourceLogs": nil, "resourceMetrics": {Stub: true},
	"resourceSpans": {Elems: &trace.Shape{Only: true, Members: map[string]*trace.Shape{
		"resource": {Only: true, Members: map[string]*trace.Shape{"attributes": nil}},
		"scopeSpans": {Elems: &trace.Shape{Only: true, Members: map[string]*trace.Shape{
			"spans": {Elems: &trace.Shape{Only: true, Members: map[string]*trace.Shape{
				"traceId": nil, "spanId": unique, "parentSpanId": nil, "name": nil,
				"startTimeUnixNano": unique, "endTimeUnixNano": unique,
				"attributes": nil, "status": nil,
				"events": {Elems: &trace.Shape{Only: true, Members: map[string]*trace.Shape{"name": nil, "attributes": nil}}},
			}}},
		}}},
	}}},
}}

func (OTLP) recordShape() *trace.Shape { return otlpShape }

// Span operations of the GenAI conventions that are model turns.
var otelModelOps = map[string]bool{"chat": true, "generate_content": true, "text_completion": true, "invoke_agent": true}

// otelSpan is one span as read, with what the trace needs of it.
type otelSpan struct {
	traceID, spanID, parentID string
	name                      string
	start, end                uint64 // Unix nanoseconds, 0 when unset
	attrs                     map[string]any
	events                    []otelEvent
	statusError               bool
	statusMessage             string
	line                      int    // the record's line
	path                      string // JSON path, for problems found after reading
	rawAttrs                  []any  // the attributes as written, to locate one
	resource                  map[string]any
}

type otelEvent struct {
	name  string
	attrs map[string]any
}

func (s *otelSpan) op() string {
	if op, _ := s.attrs["gen_ai.operation.name"].(string); op != "" {
		return op
	}
	head, _, _ := strings.Cut(s.name, " ")
	return head
}

func (s *otelSpan) str(key string) string {
	v, _ := s.attrs[key].(string)
	return v
}

func (s *otelSpan) int(key string) (int64, bool) {
	switch v := s.attrs[key].(type) {
	case int64:
		return v, true
	case float64:
		if v == math.Trunc(v) {
			return int64(v), true
		}
	}
	return 0, false
}

// DecodeSessions reads the records of one file into one trace per trace
// id. Traces in which a problem was found are left out and every problem
// is in the error, so a caller that skips invalid input keeps the rest.
// Log and metric exports in the same file are read as OTLPLogs reads
// them (see decodeExports).
func (OTLP) DecodeSessions(records []Record, file string, rules *normalize.Rules) ([]*trace.Trace, []SkippedSession, error) {
	return decodeExports(records, file, rules, "resourceSpans")
}

// decodeSpans is DecodeSessions for the records that are span exports.
func decodeSpans(records []Record, file string, rules *normalize.Rules) ([]*trace.Trace, []SkippedSession, error) {
	if rules == nil {
		rules = normalize.Default()
	}
	var errs trace.ErrorList
	byTrace := map[string][]*otelSpan{}
	var order []string
	bad := map[string]bool{}       // traces with a problem
	seen := map[string]*otelSpan{} // the spans read so far by trace/span id
	for _, rec := range records {
		d := &trace.Fields{File: file, Line: rec.Line}
		spans := readOTLP(d, rec.Doc, rec.Line)
		for _, s := range spans {
			// Exporters deliver at least once: a span sent again after a
			// failed export is the same span, not a second tool call. One
			// sent again with other content is not a redelivery, and
			// keeping either copy would hide the other.
			key := s.traceID + "/" + s.spanID
			if first := seen[key]; first != nil {
				if !sameSpan(first, s) {
					d.Errorf(s.path, "span %s of trace %s sent again with different content (first at line %d, %s)", s.spanID, s.traceID, first.line, first.path)
				}
				continue
			}
			seen[key] = s
			if _, ok := byTrace[s.traceID]; !ok {
				order = append(order, s.traceID)
			}
			byTrace[s.traceID] = append(byTrace[s.traceID], s)
		}
		if len(d.Errs) > 0 {
			// A bad span's trace id may be unreadable; every trace of the
			// record is suspect.
			for _, s := range spans {
				bad[s.traceID] = true
			}
			errs = append(errs, d.Errs...)
		}
	}
	var traces []*trace.Trace
	var skipped []SkippedSession
	for _, id := range order {
		spans := byTrace[id]
		t, err := otelTrace(id, spans, file, rules)
		if err != nil {
			errs = append(errs, err...)
			continue
		}
		if bad[id] {
			continue
		}
		if t == nil {
			skipped = append(skipped, SkippedSession{
				ID: id, Line: firstLine(spans), Reason: ReasonNoToolCalls,
				Message: "trace " + id + " has no execute_tool span",
			})
			continue
		}
		traces = append(traces, t)
	}
	errs.Sort()
	return traces, skipped, errs.Err()
}

// sameSpan reports whether a and b, two spans with the same ids, say the
// same thing, wherever each was read.
func sameSpan(a, b *otelSpan) bool {
	x, y := *a, *b
	x.line, x.path, x.rawAttrs = 0, "", nil
	y.line, y.path, y.rawAttrs = 0, "", nil
	return reflect.DeepEqual(x, y)
}

// readOTLP reads the spans of one export request, reporting problems in d.
// A span whose ids cannot be read is left out.
func readOTLP(d *trace.Fields, doc map[string]any, line int) []*otelSpan {
	rss, ok := doc["resourceSpans"].([]any)
	if !ok {
		if v, present := doc["resourceSpans"]; !present {
			d.Errorf("$.resourceSpans", "missing required field")
		} else {
			d.TypeError("$.resourceSpans", "array", v)
		}
		return nil
	}
	var out []*otelSpan
	for i, rsv := range rss {
		rp := trace.Element("$.resourceSpans", i)
		rs, ok := rsv.(map[string]any)
		if !ok {
			d.TypeError(rp, "object", rsv)
			continue
		}
		var resource map[string]any
		if res := d.OptObject(rs, rp, "resource"); res != nil {
			resource = otelAttributes(d, res, trace.Member(rp, "resource"))
		}
		sss, _ := d.OptArray(rs, rp, "scopeSpans")
		for j, ssv := range sss {
			sp := trace.Element(trace.Member(rp, "scopeSpans"), j)
			ss, ok := ssv.(map[string]any)
			if !ok {
				d.TypeError(sp, "object", ssv)
				continue
			}
			spans, _ := d.OptArray(ss, sp, "spans")
			for k, v := range spans {
				p := trace.Element(trace.Member(sp, "spans"), k)
				if s := readSpan(d, v, p); s != nil {
					s.line, s.path, s.resource = line, p, resource
					out = append(out, s)
				}
			}
		}
	}
	return out
}

func readSpan(d *trace.Fields, v any, p string) *otelSpan {
	m, ok := v.(map[string]any)
	if !ok {
		d.TypeError(p, "object", v)
		return nil
	}
	s := &otelSpan{
		traceID: otelID(d, m, p, "traceId", 32, true),
		spanID:  otelID(d, m, p, "spanId", 16, true),
	}
	s.parentID = otelID(d, m, p, "parentSpanId", 16, false)
	s.name = d.OptString(m, p, "name")
	s.start = otelTime(d, m, p, "startTimeUnixNano")
	s.end = otelTime(d, m, p, "endTimeUnixNano")
	if s.start != 0 && s.end != 0 && s.end < s.start {
		d.Errorf(trace.Member(p, "endTimeUnixNano"), "end %d is before start %d", s.end, s.start)
	}
	s.attrs = otelAttributes(d, m, p)
	s.rawAttrs, _ = m["attributes"].([]any)
	if st := d.OptObject(m, p, "status"); st != nil {
		sp := trace.Member(p, "status")
		switch c := st["code"].(type) {
		case nil:
		case string:
			switch c {
			case "STATUS_CODE_ERROR":
				s.statusError = true
			case "STATUS_CODE_OK", "STATUS_CODE_UNSET":
			default:
				d.Errorf(trace.Member(sp, "code"), "unknown status code %q", c)
			}
		default:
			n, ok := d.Int(c, trace.Member(sp, "code"), true)
			if ok && n > 2 {
				d.Errorf(trace.Member(sp, "code"), "unknown status code %d", n)
			}
			s.statusError = n == 2
		}
		s.statusMessage = d.OptString(st, sp, "message")
	}
	if evs, ok := d.OptArray(m, p, "events"); ok {
		for i, ev := range evs {
			ep := trace.Element(trace.Member(p, "events"), i)
			em, ok := ev.(map[string]any)
			if !ok {
				d.TypeError(ep, "object", ev)
				continue
			}
			s.events = append(s.events, otelEvent{name: d.OptString(em, ep, "name"), attrs: otelAttributes(d, em, ep)})
		}
	}
	if s.traceID == "" || s.spanID == "" {
		return nil
	}
	return s
}

// otelID reads a trace or span id: n lowercase or uppercase hex digits,
// normalized to lowercase. An optional id may be absent or "".
func otelID(d *trace.Fields, m map[string]any, p, key string, n int, required bool) string {
	v, present := m[key]
	if !present || v == nil {
		if required {
			d.Errorf(trace.Member(p, key), "missing required field")
		}
		return ""
	}
	s, ok := v.(string)
	if !ok {
		d.TypeError(trace.Member(p, key), "string", v)
		return ""
	}
	if s == "" && !required {
		return ""
	}
	if len(s) != n || strings.Trim(strings.ToLower(s), "0123456789abcdef") != "" {
		d.Errorf(trace.Member(p, key), "expected %d hex digits, got %q", n, s)
		return ""
	}
	return strings.ToLower(s)
}

// otelTime reads a Unix nanosecond time, which OTLP/JSON writes as a
// decimal string (a 64-bit integer does not fit a JSON number) but some
// writers give as a number.
func otelTime(d *trace.Fields, m map[string]any, p, key string) uint64 {
	v, present := m[key]
	if !present || v == nil {
		return 0
	}
	var text string
	switch x := v.(type) {
	case string:
		text = x
	case json.Number:
		text = string(x)
	default:
		d.TypeError(trace.Member(p, key), "string of decimal digits", v)
		return 0
	}
	n, err := strconv.ParseUint(text, 10, 64)
	if err != nil {
		d.Errorf(trace.Member(p, key), "expected Unix nanoseconds as decimal digits, got %q", text)
		return 0
	}
	return n
}

// otelAttributes reads the attributes member of m, a list of
// {key, value} with value an AnyValue, into a map of Go values: string,
// int64, float64, bool, []any, map[string]any, []byte or nil.
func otelAttributes(d *trace.Fields, m map[string]any, p string) map[string]any {
	arr, ok := d.OptArray(m, p, "attributes")
	if !ok {
		return nil
	}
	return otelKeyValues(d, arr, trace.Member(p, "attributes"))
}

func otelKeyValues(d *trace.Fields, arr []any, p string) map[string]any {
	out := make(map[string]any, len(arr))
	for i, kv := range arr {
		ep := trace.Element(p, i)
		km, ok := kv.(map[string]any)
		if !ok {
			d.TypeError(ep, "object", kv)
			continue
		}
		key := d.ReqString(km, ep, "key")
		var val any
		if v, present := km["value"]; present && v != nil {
			val = otelValue(d, v, trace.Member(ep, "value"))
		}
		if key != "" {
			out[key] = val
		}
	}
	return out
}

// otelValue reads an AnyValue: an object with one of stringValue,
// intValue (a decimal string, or a number), doubleValue, boolValue,
// arrayValue {values}, kvlistValue {values} or bytesValue (base64). An
// empty object is an empty value.
func otelValue(d *trace.Fields, v any, p string) any {
	m, ok := v.(map[string]any)
	if !ok {
		d.TypeError(p, "object", v)
		return nil
	}
	if len(m) > 1 {
		d.Errorf(p, "expected one value type, got %d", len(m))
		return nil
	}
	for k, x := range m {
		kp := trace.Member(p, k)
		switch k {
		case "stringValue":
			s, ok := x.(string)
			if !ok {
				d.TypeError(kp, "string", x)
			}
			return s
		case "intValue":
			var text string
			switch n := x.(type) {
			case string:
				text = n
			case json.Number:
				text = string(n)
			default:
				d.TypeError(kp, "integer as a decimal string", x)
				return nil
			}
			n, err := strconv.ParseInt(text, 10, 64)
			if err != nil {
				d.Errorf(kp, "expected a 64-bit integer, got %q", text)
				return nil
			}
			return n
		case "doubleValue":
			switch n := x.(type) {
			case string:
				// The JSON mapping of protobuf spells non-finite
				// doubles as strings.
				switch n {
				case "NaN":
					return math.NaN()
				case "Infinity":
					return math.Inf(1)
				case "-Infinity":
					return math.Inf(-1)
				}
				f, err := strconv.ParseFloat(n, 64)
				if err != nil {
					d.Errorf(kp, "expected a number, got %q", n)
					return nil
				}
				return f
			default:
				f, _ := d.Float(x, kp)
				return f
			}
		case "boolValue":
			b, ok := x.(bool)
			if !ok {
				d.TypeError(kp, "boolean", x)
			}
			return b
		case "bytesValue":
			s, ok := x.(string)
			if !ok {
				d.TypeError(kp, "string", x)
				return nil
			}
			b, err := base64.StdEncoding.DecodeString(s)
			if err != nil {
				d.Errorf(kp, "expected base64, got %q", s)
				return nil
			}
			return b
		case "arrayValue":
			am, ok := x.(map[string]any)
			if !ok {
				d.TypeError(kp, "object", x)
				return nil
			}
			vals, _ := d.OptArray(am, kp, "values")
			out := make([]any, 0, len(vals))
			for i, e := range vals {
				out = append(out, otelValue(d, e, trace.Element(trace.Member(kp, "values"), i)))
			}
			return out
		case "kvlistValue":
			km, ok := x.(map[string]any)
			if !ok {
				d.TypeError(kp, "object", x)
				return nil
			}
			vals, _ := d.OptArray(km, kp, "values")
			return otelKeyValues(d, vals, trace.Member(kp, "values"))
		default:
			d.Errorf(kp, "unknown value type %q", k)
			return nil
		}
	}
	return nil
}

// otelTrace builds the trace of one trace id, or nil when it has no tool
// call. Problems found here (tool arguments that are not JSON) are
// returned with their span's position.
func otelTrace(id string, spans []*otelSpan, file string, rules *normalize.Rules) (*trace.Trace, trace.ErrorList) {
	slices.SortStableFunc(spans, func(a, b *otelSpan) int {
		if a.start != b.start {
			if a.start < b.start {
				return -1
			}
			return 1
		}
		return strings.Compare(a.spanID, b.spanID)
	})
	byID := make(map[string]*otelSpan, len(spans))
	for _, s := range spans {
		byID[s.spanID] = s
	}
	isTool := func(s *otelSpan) bool { return s.op() == "execute_tool" }
	isModel := func(s *otelSpan) bool { return otelModelOps[s.op()] }
	// A model span with a model span below it (an invoke_agent around its
	// chat calls) reports the sum of its children: only the innermost
	// model spans are turns, so that no token is counted twice.
	hasModelChild := map[string]bool{}
	for _, s := range spans {
		if !isModel(s) {
			continue
		}
		seen := map[string]bool{}
		for p := byID[s.parentID]; p != nil && !seen[p.spanID]; p = byID[p.parentID] {
			seen[p.spanID] = true
			if isModel(p) {
				hasModelChild[p.spanID] = true
			}
		}
	}
	isTurn := func(s *otelSpan) bool { return isModel(s) && !hasModelChild[s.spanID] }

	// Each tool span's turn: the nearest turn among its ancestors, else
	// the last turn that started before it.
	turnOf := map[*otelSpan]*otelSpan{}
	var last *otelSpan
	var tools []*otelSpan
	for _, s := range spans {
		switch {
		case isTurn(s):
			last = s
		case isTool(s):
			tools = append(tools, s)
			turnOf[s] = last
			seen := map[string]bool{}
			for p := byID[s.parentID]; p != nil && !seen[p.spanID]; p = byID[p.parentID] {
				seen[p.spanID] = true
				if isTurn(p) {
					turnOf[s] = p
					break
				}
			}
		}
	}
	if len(tools) == 0 {
		return nil, nil
	}
	perTurn := map[*otelSpan][]*otelSpan{}
	for _, s := range tools {
		if t := turnOf[s]; t != nil {
			perTurn[t] = append(perTurn[t], s)
		}
	}

	t := &trace.Trace{Version: trace.SchemaVersion, ID: id, Origin: trace.Origin{Path: file, Line: firstLine(spans)}}
	usage := &trace.Usage{}
	md := map[string]any{"agent": "otel"}
	var minStart, maxEnd uint64
	for _, s := range spans {
		if s.start != 0 && (minStart == 0 || s.start < minStart) {
			minStart = s.start
		}
		if s.end > maxEnd {
			maxEnd = s.end
		}
		if isTurn(s) {
			in, _ := s.int("gen_ai.usage.input_tokens")
			out, _ := s.int("gen_ai.usage.output_tokens")
			usage.ModelCalls++
			usage.InputTokens += in
			usage.OutputTokens += out
			usage.WallMS += s.durationMS()
			if _, ok := md["model"]; !ok && s.model() != "" {
				md["model"] = s.model()
			}
		}
		if conv := s.str("gen_ai.conversation.id"); conv != "" {
			if _, ok := md["session_id"]; !ok {
				md["session_id"] = conv
			}
		}
	}
	if svc, _ := spans[0].resource["service.name"].(string); svc != "" {
		md["service"] = svc
	}
	g, goalErrs := otelGoal(spans, isModel, file)
	if g != "" {
		md["goal"] = g
	}
	t.Metadata = md
	t.Usage = usage
	if minStart != 0 {
		t.StartedAt = nanoTime(minStart)
	}
	if maxEnd != 0 {
		t.FinishedAt = nanoTime(maxEnd)
	}

	var acts actionList
	errs := goalErrs
	for _, s := range tools {
		c, cerrs := otelCall(s, file)
		if len(cerrs) > 0 {
			errs = append(errs, cerrs...)
			continue
		}
		if turn := turnOf[s]; turn != nil {
			c.Cost = turnShare(turn, perTurn[turn], s)
		}
		acts.add(rules.Actions(c))
	}
	t.Actions = acts.actions()
	if len(errs) > 0 {
		return nil, errs
	}
	return t, nil
}

// firstLine is the line of the first record holding one of spans.
func firstLine(spans []*otelSpan) int {
	line := spans[0].line
	for _, s := range spans {
		line = min(line, s.line)
	}
	return line
}

func (s *otelSpan) durationMS() int64 {
	if s.start == 0 || s.end < s.start {
		return 0
	}
	return int64((s.end - s.start) / uint64(time.Millisecond))
}

func (s *otelSpan) model() string {
	if m := s.str("gen_ai.response.model"); m != "" {
		return m
	}
	return s.str("gen_ai.request.model")
}

func nanoTime(n uint64) string {
	if n > math.MaxInt64 {
		n = math.MaxInt64
	}
	return time.Unix(0, int64(n)).UTC().Format(time.RFC3339Nano)
}

// turnShare is tool span s's share of its turn: the turn's one model call
// goes to its first tool call, tokens and wall time are split evenly with
// the remainder on the first, so that the shares add up to the turn.
func turnShare(turn *otelSpan, tools []*otelSpan, s *otelSpan) *trace.Cost {
	n := int64(len(tools))
	first := tools[0] == s
	split := func(v int64) int64 {
		if first {
			return v/n + v%n
		}
		return v / n
	}
	in, _ := turn.int("gen_ai.usage.input_tokens")
	out, _ := turn.int("gen_ai.usage.output_tokens")
	c := &trace.Cost{
		Model:        turn.model(),
		InputTokens:  split(in),
		OutputTokens: split(out),
		WallMS:       split(turn.durationMS()),
	}
	if first {
		c.ModelCalls = 1
	}
	return c
}

// otelCall converts an execute_tool span into the normalization table's
// Call.
func otelCall(s *otelSpan, file string) (normalize.Call, trace.ErrorList) {
	c := normalize.Call{
		ID:       s.str("gen_ai.tool.call.id"),
		Tool:     s.str("gen_ai.tool.name"),
		IsError:  s.statusError || s.attrs["error.type"] != nil,
		Metadata: map[string]any{"span_id": s.spanID},
	}
	if c.ID == "" {
		c.ID = s.spanID
	}
	if c.Tool == "" {
		c.Tool = strings.TrimSpace(strings.TrimPrefix(s.name, "execute_tool"))
	}
	if c.Tool == "" {
		return c, trace.ErrorList{{File: file, Line: s.line, Path: s.path + ".attributes", Msg: "execute_tool span names no tool (gen_ai.tool.name)"}}
	}
	if s.start != 0 {
		c.Timestamp = nanoTime(s.start)
		if s.end >= s.start {
			d := s.durationMS()
			c.DurationMS = &d
		}
	}
	if code, ok := s.int("process.exit.code"); ok && code >= math.MinInt32 && code <= math.MaxInt32 {
		n := int(code)
		c.ExitCode = &n
	}
	switch a := s.attrs["gen_ai.tool.call.arguments"].(type) {
	case nil:
	case map[string]any:
		c.Args = generic(a).(map[string]any)
	case string:
		v, ok := parseJSONText(a)
		if !ok {
			dec := json.NewDecoder(strings.NewReader(a))
			dec.UseNumber()
			if err := dec.Decode(&v); err != nil || dec.More() {
				return c, trace.ErrorList{{File: file, Line: s.line, Path: s.attrPath("gen_ai.tool.call.arguments"),
					Msg: "gen_ai.tool.call.arguments is not JSON"}}
			}
			// Valid JSON parseJSONText refused has a duplicate key.
			if dups := textDuplicates(a, file, s.line, s.attrPath("gen_ai.tool.call.arguments")); len(dups) > 0 {
				return c, dups
			}
		}
		if m, ok := v.(map[string]any); ok {
			c.Args = m
		} else {
			c.Args = map[string]any{"input": v}
		}
	default:
		return c, trace.ErrorList{{File: file, Line: s.line, Path: s.attrPath("gen_ai.tool.call.arguments"),
			Msg: "expected a JSON string or a key-value list, got " + trace.TypeName(a)}}
	}
	if r, ok := s.attrs["gen_ai.tool.call.result"]; ok {
		c.Result = generic(r)
	} else if s.statusMessage != "" {
		c.Result = s.statusMessage
	}
	if et, _ := s.attrs["error.type"].(string); et != "" {
		c.Metadata["error_type"] = et
	}
	return c, nil
}

// attrPath is the JSON path of the value of the span's attribute key.
func (s *otelSpan) attrPath(key string) string {
	return attributePath(s.path, s.rawAttrs, key)
}

// attributePath is the JSON path of the value of attribute key among raw,
// the attributes as written of the object at path p (a span, a log
// record), or the path of the attributes when key is not among them.
func attributePath(p string, raw []any, key string) string {
	p = trace.Member(p, "attributes")
	for i, a := range raw {
		if m, _ := a.(map[string]any); m["key"] == key {
			return trace.Member(trace.Element(p, i), "value")
		}
	}
	return p
}

// generic converts an attribute value into the generic JSON values traces
// hold: numbers as json.Number (a non-finite double, which JSON cannot
// carry, as its name), bytes as base64.
func generic(v any) any {
	switch x := v.(type) {
	case int64:
		return json.Number(strconv.FormatInt(x, 10))
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return strconv.FormatFloat(x, 'g', -1, 64)
		}
		return json.Number(strconv.FormatFloat(x, 'g', -1, 64))
	case []byte:
		return base64.StdEncoding.EncodeToString(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = generic(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = generic(e)
		}
		return out
	}
	return v
}

// otelGoal is the text of the first user message of the trace: from
// gen_ai.input.messages (the current conventions, a JSON list of
// {role, parts: [{type: "text", content}]}), gen_ai.prompt (older ones),
// a gen_ai.user.message event, or the flattened gen_ai.prompt.0.content.
// Agent spans are asked first, since the goal is what the agent was
// invoked with; then the model spans in start order.
func otelGoal(spans []*otelSpan, isModel func(*otelSpan) bool, file string) (string, trace.ErrorList) {
	var ordered []*otelSpan
	for _, s := range spans {
		if s.op() == "invoke_agent" {
			ordered = append(ordered, s)
		}
	}
	for _, s := range spans {
		if s.op() != "invoke_agent" && isModel(s) {
			ordered = append(ordered, s)
		}
	}
	for _, s := range ordered {
		if g, errs := firstUserText(s.attrs["gen_ai.input.messages"], file, s.line, s.attrPath("gen_ai.input.messages")); g != "" || errs != nil {
			return g, errs
		}
		for i, ev := range s.events {
			at := trace.Member(trace.Element(trace.Member(s.path, "events"), i), "attributes")
			if g, errs := firstUserText(ev.attrs["gen_ai.input.messages"], file, s.line, at); g != "" || errs != nil {
				return g, errs
			}
			if ev.name == "gen_ai.user.message" {
				if c, _ := ev.attrs["content"].(string); c != "" {
					return c, nil
				}
			}
		}
		if p, ok := s.attrs["gen_ai.prompt"]; ok {
			if g, errs := firstUserText(p, file, s.line, s.attrPath("gen_ai.prompt")); g != "" || errs != nil {
				return g, errs
			}
			if text, ok := p.(string); ok && !strings.HasPrefix(strings.TrimSpace(text), "[") {
				return text, nil
			}
		}
		for i := 0; ; i++ {
			k := "gen_ai.prompt." + strconv.Itoa(i)
			role, ok := s.attrs[k+".role"].(string)
			if !ok {
				break
			}
			if c, _ := s.attrs[k+".content"].(string); role == "user" && c != "" {
				return c, nil
			}
		}
	}
	return "", nil
}

// firstUserText finds the first user message's text in a list of chat
// messages, given as a JSON string or as an already structured value.
// Parts of type "text" with "content" (the current conventions) and a
// plain "content" string (older ones) are read.
//
// A JSON string is read from path of file at line; one whose objects
// repeat a member name is refused, naming where (see textDuplicates).
func firstUserText(v any, file string, line int, path string) (string, trace.ErrorList) {
	if s, ok := v.(string); ok {
		x, ok := parseJSONText(s)
		if !ok {
			if json.Unmarshal([]byte(s), &x) != nil {
				return "", nil
			}
			if dups := textDuplicates(s, file, line, path); len(dups) > 0 {
				return "", dups
			}
		}
		v = x
	}
	msgs, ok := v.([]any)
	if !ok {
		return "", nil
	}
	for _, m := range msgs {
		mm, ok := m.(map[string]any)
		if !ok || mm["role"] != "user" {
			continue
		}
		if c, ok := mm["content"].(string); ok && c != "" {
			return c, nil
		}
		parts, _ := mm["parts"].([]any)
		var texts []string
		for _, p := range parts {
			pm, _ := p.(map[string]any)
			if pm["type"] == "text" {
				if c, _ := pm["content"].(string); c != "" {
					texts = append(texts, c)
				}
			}
		}
		if len(texts) > 0 {
			return strings.Join(texts, "\n"), nil
		}
	}
	return "", nil
}
