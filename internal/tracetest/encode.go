package tracetest

import (
	"encoding/json"
	"strconv"

	"github.com/crystallize-dev/crystallize/internal/jsontext"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// This file is a fast JSON encoder for generated traces. The canonical
// encoding is trace.Trace's MarshalJSON; it is general (Extra members,
// every optional field) and costs tens of microseconds per action, which
// would make writing a 10,000-trace corpus take half a minute. Generated
// traces use a known subset of the format, so appendTrace writes that
// subset directly, in the same field order and with the same omissions,
// and falls back to MarshalJSON for anything outside it. TestEncode pins
// the two to the same bytes, so a change to the canonical form shows up
// as a test failure here rather than as a silently different corpus.

// marshal returns the compact JSON of t, as t.MarshalJSON writes it.
func marshal(t *trace.Trace) ([]byte, error) {
	if !fastTrace(t) {
		return t.MarshalJSON()
	}
	return appendTrace(make([]byte, 0, 512*len(t.Actions)), t), nil
}

// fastTrace reports whether appendTrace can encode t: it sets no field the
// generator does not set.
func fastTrace(t *trace.Trace) bool {
	if t.Source != "" || t.SourceHash != "" || t.WorkflowID != "" || t.ReplayRun != nil ||
		t.ReplayAllowlist != nil || t.Extra != nil || t.Usage == nil || t.Usage.Extra != nil ||
		(t.Flow != nil && (t.Flow.TraceID != "" || t.Flow.TranscriptRef != "" ||
			t.Flow.AtomIDs != nil || t.Flow.SliceIDs != nil || t.Flow.Extra != nil)) {
		return false
	}
	if !fastValue(t.Metadata) {
		return false
	}
	for i := range t.Actions {
		a := &t.Actions[i]
		if a.Inputs != nil || a.ObservedOutput != nil || a.RequiredSecrets != nil || a.Approval != nil ||
			a.Metadata != nil || a.Extra != nil || a.Cost == nil || a.Cost.Extra != nil ||
			!fastValue(a.Parameters) || !fastValue(a.Output) {
			return false
		}
		for _, s := range a.SideEffects {
			if s.Metadata != nil || s.Extra != nil {
				return false
			}
		}
	}
	return true
}

// fastValue reports whether appendValue can encode v.
func fastValue(v any) bool {
	switch v := v.(type) {
	case nil, string, bool, json.Number:
		return true
	case map[string]any:
		for _, x := range v {
			if !fastValue(x) {
				return false
			}
		}
		return true
	case []any:
		for _, x := range v {
			if !fastValue(x) {
				return false
			}
		}
		return true
	case []string:
		return true
	}
	return false
}

// appendTrace appends t in the field order of trace.Trace.MarshalJSON.
func appendTrace(b []byte, t *trace.Trace) []byte {
	b = append(b, `{"version":`...)
	b = strconv.AppendInt(b, int64(t.Version), 10)
	b = appendKey(b, "id")
	b = appendString(b, t.ID)
	if t.StartedAt != "" {
		b = appendKey(b, "started_at")
		b = appendString(b, t.StartedAt)
	}
	if t.FinishedAt != "" {
		b = appendKey(b, "finished_at")
		b = appendString(b, t.FinishedAt)
	}
	if t.Flow != nil {
		b = appendKey(b, "flow")
		if t.Flow.AgentRunID == "" {
			b = append(b, "{}"...)
		} else {
			b = append(b, `{"agent_run_id":`...)
			b = appendString(b, t.Flow.AgentRunID)
			b = append(b, '}')
		}
	}
	b = appendKey(b, "actions")
	b = append(b, '[')
	for i := range t.Actions {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendAction(b, &t.Actions[i])
	}
	b = append(b, ']')
	u := t.Usage
	b = append(b, `,"usage":{"model_calls":`...)
	b = strconv.AppendInt(b, u.ModelCalls, 10)
	b = append(b, `,"input_tokens":`...)
	b = strconv.AppendInt(b, u.InputTokens, 10)
	b = append(b, `,"output_tokens":`...)
	b = strconv.AppendInt(b, u.OutputTokens, 10)
	b = append(b, `,"total_cost_usd":`...)
	b = appendFloat(b, u.TotalCostUSD)
	b = append(b, `,"wall_ms":`...)
	b = strconv.AppendInt(b, u.WallMS, 10)
	b = append(b, '}')
	if t.Metadata != nil {
		b = appendKey(b, "metadata")
		b = appendValue(b, t.Metadata)
	}
	return append(b, '}')
}

// appendAction appends a in the field order of trace.Action.MarshalJSON.
func appendAction(b []byte, a *trace.Action) []byte {
	b = append(b, `{"id":`...)
	b = appendString(b, a.ID)
	b = appendKey(b, "kind")
	b = appendString(b, string(a.Kind))
	b = appendKey(b, "name")
	b = appendString(b, a.Name)
	if a.Timestamp != "" {
		b = appendKey(b, "timestamp")
		b = appendString(b, a.Timestamp)
	}
	if a.Parameters != nil {
		b = appendKey(b, "parameters")
		b = appendValue(b, a.Parameters)
	}
	if a.Output != nil {
		b = appendKey(b, "output")
		b = appendValue(b, a.Output)
	}
	if a.Capabilities != nil {
		b = appendKey(b, "capabilities")
		b = appendValue(b, a.Capabilities)
	}
	if a.SideEffects != nil {
		b = appendKey(b, "side_effects")
		b = append(b, '[')
		for i, s := range a.SideEffects {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"kind":`...)
			b = appendString(b, s.Kind)
			b = appendKey(b, "target")
			b = appendString(b, s.Target)
			if s.Capability != "" {
				b = appendKey(b, "capability")
				b = appendString(b, s.Capability)
			}
			if s.Mutation != "" {
				b = appendKey(b, "mutation")
				b = appendString(b, s.Mutation)
			}
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	c := a.Cost
	b = appendKey(b, "cost")
	b = append(b, '{')
	if c.Model != "" {
		b = append(b, `"model":`...)
		b = appendString(b, c.Model)
		b = append(b, ',')
	}
	b = append(b, `"model_calls":`...)
	b = strconv.AppendInt(b, c.ModelCalls, 10)
	b = append(b, `,"input_tokens":`...)
	b = strconv.AppendInt(b, c.InputTokens, 10)
	b = append(b, `,"output_tokens":`...)
	b = strconv.AppendInt(b, c.OutputTokens, 10)
	b = append(b, `,"total_cost_usd":`...)
	b = appendFloat(b, c.TotalCostUSD)
	b = append(b, `,"wall_ms":`...)
	b = strconv.AppendInt(b, c.WallMS, 10)
	b = append(b, '}')
	if a.DurationMS != nil {
		b = appendKey(b, "duration_ms")
		b = strconv.AppendInt(b, *a.DurationMS, 10)
	}
	if a.Deterministic != nil {
		b = appendKey(b, "deterministic")
		b = strconv.AppendBool(b, *a.Deterministic)
	}
	if a.Fuzzy != nil {
		b = appendKey(b, "fuzzy")
		b = strconv.AppendBool(b, *a.Fuzzy)
	}
	return append(b, '}')
}

// appendKey appends `,"key":`; keys are plain ASCII literals.
func appendKey(b []byte, key string) []byte {
	b = append(b, ',', '"')
	b = append(b, key...)
	return append(b, '"', ':')
}

// appendValue appends a value for which fastValue is true, as
// trace.Trace's MarshalJSON writes it (jsontext.AppendCompact).
func appendValue(b []byte, v any) []byte {
	out, err := jsontext.AppendCompact(b, v)
	if err != nil {
		panic("tracetest: appendValue of a value fastValue rejects") // unreachable
	}
	return out
}

// appendString appends s quoted as every file of the module quotes it.
func appendString(b []byte, s string) []byte { return jsontext.AppendQuote(b, s) }

// appendFloat appends f as encoding/json does; the generator writes no
// NaN or infinity.
func appendFloat(b []byte, f float64) []byte { return appendValue(b, f) }
