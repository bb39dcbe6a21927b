package tracetest

import (
	"bytes"
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"
)

// This file writes a session as OpenTelemetry GenAI spans in OTLP/JSON,
// the encoding an OTLP file exporter or collector writes: each line is an
// ExportTraceServiceRequest (resourceSpans → scopeSpans → spans). A session
// is one trace: an invoke_agent span holding the user's prompt and the
// total usage, a chat span per model turn with gen_ai.request.model and
// gen_ai.usage.*, and an execute_tool span per tool call with
// gen_ai.tool.name, gen_ai.tool.call.id and the arguments and result as
// JSON and text. A failed call has an error status. Following OTLP/JSON,
// ids are hex, times are nanosecond strings, 64-bit integers are strings
// and enums are numbers. Spans are written when they end, as a batch
// processor exports them, and a session's spans are split over two lines,
// so a reader must group spans by traceId.

const (
	otelModel = "gpt-4.1-2025-04-14"
	otelAgent = "coding-agent"
)

// Span kinds and status codes of OTLP.
const (
	spanKindInternal = 1
	spanKindClient   = 3
	statusError      = 2
)

type otelRequest struct {
	ResourceSpans []otelResourceSpans `json:"resourceSpans"`
}

type otelResourceSpans struct {
	Resource   otelResource     `json:"resource"`
	ScopeSpans []otelScopeSpans `json:"scopeSpans"`
}

type otelResource struct {
	Attributes []otelAttr `json:"attributes"`
}

type otelScopeSpans struct {
	Scope otelScope  `json:"scope"`
	Spans []otelSpan `json:"spans"`
}

type otelScope struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

type otelSpan struct {
	TraceID           string     `json:"traceId"`
	SpanID            string     `json:"spanId"`
	ParentSpanID      string     `json:"parentSpanId,omitempty"`
	Name              string     `json:"name"`
	Kind              int        `json:"kind"`
	StartTimeUnixNano string     `json:"startTimeUnixNano"`
	EndTimeUnixNano   string     `json:"endTimeUnixNano"`
	Attributes        []otelAttr `json:"attributes"`
	Status            otelStatus `json:"status"`

	end int64 // for ordering spans by end time
}

type otelStatus struct {
	Code    int    `json:"code,omitempty"`
	Message string `json:"message,omitempty"`
}

type otelAttr struct {
	Key   string    `json:"key"`
	Value otelValue `json:"value"`
}

type otelValue struct {
	StringValue *string         `json:"stringValue,omitempty"`
	IntValue    *string         `json:"intValue,omitempty"`
	ArrayValue  *otelArrayValue `json:"arrayValue,omitempty"`
}

type otelArrayValue struct {
	Values []otelValue `json:"values"`
}

func strAttr(k, v string) otelAttr { return otelAttr{Key: k, Value: otelValue{StringValue: &v}} }

func intAttr(k string, v int) otelAttr {
	s := strconv.Itoa(v)
	return otelAttr{Key: k, Value: otelValue{IntValue: &s}}
}

func strsAttr(k string, vs ...string) otelAttr {
	arr := &otelArrayValue{}
	for _, v := range vs {
		arr.Values = append(arr.Values, otelValue{StringValue: &v})
	}
	return otelAttr{Key: k, Value: otelValue{ArrayValue: arr}}
}

// spanID returns the k-th span id of a session: 16 hex digits derived
// from the session id.
func spanID(session string, k int) string {
	h := fnv.New64a()
	h.Write([]byte(session))
	return fmt.Sprintf("%016x", splitmix(h.Sum64()^splitmix(uint64(k)+7)))
}

func writeOTel(buf *bytes.Buffer, s *agentSession) {
	traceID := TraceID(FormatOTel, s.id)
	nano := func(ms int64) string { return strconv.FormatInt(s.at(ms).UnixNano(), 10) }
	rootID := spanID(s.id, 0)
	input := jsonString([]any{map[string]any{"role": "user", "parts": []any{map[string]any{"type": "text", "content": s.goal}}}})
	var spans []otelSpan
	k := 1
	child := func(name string, kind int, start, end int64, attrs []otelAttr, status otelStatus) {
		spans = append(spans, otelSpan{
			TraceID: traceID, SpanID: spanID(s.id, k), ParentSpanID: rootID, Name: name, Kind: kind,
			StartTimeUnixNano: nano(start), EndTimeUnixNano: nano(end), Attributes: attrs, Status: status, end: end,
		})
		k++
	}
	inTotal, outTotal := 0, 0
	for ti := range s.turns {
		t := &s.turns[ti]
		inTotal += t.input
		outTotal += t.output
		finish := "tool_calls"
		if len(t.calls) == 0 {
			finish = "stop"
		}
		attrs := []otelAttr{
			strAttr("gen_ai.operation.name", "chat"),
			strAttr("gen_ai.provider.name", "openai"),
			strAttr("gen_ai.request.model", otelModel),
			strAttr("gen_ai.response.model", otelModel),
			intAttr("gen_ai.usage.input_tokens", t.input),
			intAttr("gen_ai.usage.output_tokens", t.output),
			strsAttr("gen_ai.response.finish_reasons", finish),
		}
		if ti == 0 {
			attrs = append(attrs, strAttr("gen_ai.input.messages", input))
		}
		child("chat "+otelModel, spanKindClient, t.startMS, t.startMS+t.latMS, attrs, otelStatus{})
		for ci := range t.calls {
			c := &t.calls[ci]
			tool, args, result := otelTool(c)
			attrs := []otelAttr{
				strAttr("gen_ai.operation.name", "execute_tool"),
				strAttr("gen_ai.tool.name", tool),
				strAttr("gen_ai.tool.type", "function"),
				strAttr("gen_ai.tool.call.id", "call_"+c.key),
				strAttr("gen_ai.tool.call.arguments", jsonString(args)),
				strAttr("gen_ai.tool.call.result", result),
			}
			var status otelStatus
			if c.failed() {
				attrs = append(attrs, strAttr("error.type", "exit_status_"+strconv.Itoa(c.exit)))
				status = otelStatus{Code: statusError, Message: fmt.Sprintf("exit status %d", c.exit)}
			}
			child("execute_tool "+tool, spanKindInternal, c.startMS, c.startMS+c.durMS, attrs, status)
		}
	}
	spans = append(spans, otelSpan{
		TraceID: traceID, SpanID: rootID, Name: "invoke_agent " + otelAgent, Kind: spanKindInternal,
		StartTimeUnixNano: nano(0), EndTimeUnixNano: nano(s.endMS),
		Attributes: []otelAttr{
			strAttr("gen_ai.operation.name", "invoke_agent"),
			strAttr("gen_ai.agent.name", otelAgent),
			strAttr("gen_ai.provider.name", "openai"),
			strAttr("gen_ai.request.model", otelModel),
			strAttr("gen_ai.conversation.id", s.id),
			strAttr("gen_ai.input.messages", input),
			intAttr("gen_ai.usage.input_tokens", inTotal),
			intAttr("gen_ai.usage.output_tokens", outTotal),
		},
		end: s.endMS + 1,
	})
	slices.SortStableFunc(spans, func(a, b otelSpan) int { return int(a.end - b.end) })

	resource := otelResource{Attributes: []otelAttr{
		strAttr("service.name", otelAgent),
		strAttr("telemetry.sdk.language", "python"),
		strAttr("telemetry.sdk.name", "opentelemetry"),
	}}
	scope := otelScope{Name: "opentelemetry.instrumentation.genai", Version: "0.4b0"}
	half := (len(spans) + 1) / 2
	for _, part := range [][]otelSpan{spans[:half], spans[half:]} {
		if len(part) == 0 {
			continue
		}
		jsonLine(buf, otelRequest{ResourceSpans: []otelResourceSpans{{Resource: resource, ScopeSpans: []otelScopeSpans{{Scope: scope, Spans: part}}}}})
	}
}

// otelTool returns the tool name, arguments and result text of c.
func otelTool(c *agentCall) (string, map[string]any, string) {
	switch c.kind {
	case callRead:
		return "read_file", map[string]any{"path": c.path}, c.output
	case callList:
		return "list_dir", map[string]any{"path": c.path}, codexShellOutput(c)
	case callEdit:
		return "edit_file", map[string]any{"path": c.path, "old_string": c.oldText, "new_string": c.newText}, "edited " + c.path
	case callSearch, callGlob:
		return "run_shell", map[string]any{"command": codexArgv(c)[2]}, codexShellOutput(c)
	case callPlan:
		return "run_shell", map[string]any{"command": "git status --short"}, ""
	default:
		return "run_shell", map[string]any{"command": c.command}, c.output
	}
}
