package runrecord

import (
	"bytes"
	"fmt"
	"maps"
	"strconv"
	"strings"

	"github.com/crystallize-dev/crystallize/internal/jsontext"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// A run's records are canonical JSON (jsontext.Canonical: keys sorted,
// two-space indentation, no HTML escaping, numbers as written). The bulk
// of a trace, its actions and receipts, is not marshalled: each is
// written straight from its fields and maps (appendAction, appendReceipt,
// jsontext.AppendCanonical) and spliced into the encoding of the rest,
// so that no nesting level re-validates the levels below it; at 1,000
// steps, marshalling the whole trace cost more than running it. Tests
// hold these writers to jsontext.Canonical's bytes.

// EncodeTrace is jsontext.Canonical(t) for a run's trace whose replay_run
// holds typed after its effect_receipts, with each action and each
// receipt encoded on its own.
func EncodeTrace(t *trace.Trace, typed []Receipt) ([]byte, error) {
	shell := *t
	shell.Actions = nil // encoded as []
	var receipts []any
	if rr := t.ReplayRun; rr != nil {
		if l, ok := rr["effect_receipts"].([]any); ok && len(l) > 0 {
			receipts = l
			shell.ReplayRun = maps.Clone(rr)
			shell.ReplayRun["effect_receipts"] = []any{}
		}
	}
	generic := len(receipts)
	head, err := jsontext.Canonical(&shell)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(head)+len(t.Actions)*1024+(generic+len(typed))*512)
	// "actions" is a top-level member and "effect_receipts" the first
	// member of one, so their lines are indented by exactly two and four
	// spaces: a deeper line has more, and a string cannot hold a raw
	// newline.
	out, rest, err := splice(out, head, "\n  \"actions\": []", 1, len(t.Actions), func(dst []byte, i int) ([]byte, error) {
		return appendAction(dst, &t.Actions[i], 2)
	})
	if err != nil {
		return nil, err
	}
	out, rest, err = splice(out, rest, "\n  \"replay_run\": {\n    \"effect_receipts\": []", 2, generic+len(typed), func(dst []byte, i int) ([]byte, error) {
		if i < generic {
			return jsontext.AppendCanonical(dst, receipts[i], 3)
		}
		return appendReceipt(dst, &typed[i-generic], 3)
	})
	if err != nil {
		return nil, err
	}
	return append(out, rest...), nil
}

// appendReceipt appends the canonical form of rc as replay_run holds it
// (ReceiptValue), written from its fields; a receipt with usage, whose
// cost is a float, is written from its value.
func appendReceipt(dst []byte, rc *Receipt, depth int) ([]byte, error) {
	if rc.Usage != nil {
		return jsontext.AppendCanonical(dst, ReceiptValue(rc), depth)
	}
	str := func(key, v string, first bool) {
		if !first {
			dst = append(dst, ',')
		}
		dst = jsontext.AppendNewline(dst, depth+1)
		dst = append(dst, key...)
		dst = jsontext.AppendString(dst, v)
	}
	dst = append(dst, '{')
	str(`"arguments_sha256": `, rc.ArgumentsSHA256, true)
	dst = append(jsontext.AppendNewline(append(dst, ','), depth+1), `"duration_ms": `...)
	dst = strconv.AppendInt(dst, rc.DurationMS, 10)
	str(`"kind": `, rc.Kind, false)
	str(`"receipt_id": `, rc.ID, false)
	str(`"result_sha256": `, rc.ResultSHA256, false)
	dst = append(jsontext.AppendNewline(append(dst, ','), depth+1), `"side_effects": `...)
	if len(rc.SideEffects) == 0 {
		dst = append(dst, "[]"...)
	} else {
		dst = append(dst, '[')
		for i, se := range rc.SideEffects {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(jsontext.AppendNewline(dst, depth+2), '{')
			first := true
			field := func(key, v string) {
				if !first {
					dst = append(dst, ',')
				}
				first = false
				dst = append(jsontext.AppendNewline(dst, depth+3), key...)
				dst = jsontext.AppendString(dst, v)
			}
			if se.Capability != "" {
				field(`"capability": `, se.Capability)
			}
			field(`"kind": `, se.Kind)
			if se.Mutation != "" {
				field(`"mutation": `, se.Mutation)
			}
			field(`"target": `, se.Target)
			dst = append(jsontext.AppendNewline(dst, depth+2), '}')
		}
		dst = append(jsontext.AppendNewline(dst, depth+1), ']')
	}
	str(`"status": `, rc.Status, false)
	dst = append(jsontext.AppendNewline(append(dst, ','), depth+1), `"step": `...)
	dst = strconv.AppendInt(dst, int64(rc.Step), 10)
	str(`"tool": `, rc.Tool, false)
	return append(jsontext.AppendNewline(dst, depth), '}'), nil
}

// appendAction appends the canonical form of a, as Action.MarshalJSON
// and jsontext.AppendIndent would write it, its members in sorted key order and its
// generic values written directly. An action with members beyond its
// fields (Extra) takes the marshalling path. TestAppendActionFields
// fails when trace.Action gains a field this does not know.
func appendAction(dst []byte, a *trace.Action, depth int) ([]byte, error) {
	if len(a.Extra) > 0 {
		raw, err := a.MarshalJSON()
		if err != nil {
			return nil, err
		}
		return jsontext.AppendIndent(dst, raw, depth)
	}
	first := true
	var err error
	member := func(key string) {
		if first {
			dst = append(dst, '{')
			first = false
		} else {
			dst = append(dst, ',')
		}
		dst = jsontext.AppendNewline(dst, depth+1)
		dst = jsontext.AppendString(dst, key)
		dst = append(dst, ": "...)
	}
	value := func(v any) {
		if err == nil {
			dst, err = jsontext.AppendCanonical(dst, v, depth+1)
		}
	}
	if a.Approval != nil {
		member("approval")
		value(*a.Approval)
	}
	if a.Capabilities != nil {
		member("capabilities")
		value(&a.Capabilities) // by pointer, which is boxed without allocating
	}
	if a.Cost != nil {
		member("cost")
		value(*a.Cost)
	}
	if a.Deterministic != nil {
		member("deterministic")
		dst = strconv.AppendBool(dst, *a.Deterministic)
	}
	if a.DurationMS != nil {
		member("duration_ms")
		dst = strconv.AppendInt(dst, *a.DurationMS, 10)
	}
	if a.Fuzzy != nil {
		member("fuzzy")
		dst = strconv.AppendBool(dst, *a.Fuzzy)
	}
	member("id")
	dst = jsontext.AppendString(dst, a.ID)
	if a.Inputs != nil {
		member("inputs")
		value(a.Inputs)
	}
	member("kind")
	dst = jsontext.AppendString(dst, string(a.Kind))
	if a.Metadata != nil {
		member("metadata")
		value(a.Metadata)
	}
	member("name")
	dst = jsontext.AppendString(dst, a.Name)
	if a.ObservedOutput != nil {
		member("observed_output")
		value(a.ObservedOutput)
	}
	if a.Output != nil {
		member("output")
		value(a.Output)
	}
	if a.Parameters != nil {
		member("parameters")
		value(a.Parameters)
	}
	if a.RequiredSecrets != nil {
		member("required_secrets")
		value(&a.RequiredSecrets)
	}
	if a.SideEffects != nil {
		member("side_effects")
		value(a.SideEffects)
	}
	if a.Timestamp != "" {
		member("timestamp")
		dst = jsontext.AppendString(dst, a.Timestamp)
	}
	if err != nil {
		return nil, err
	}
	return append(jsontext.AppendNewline(dst, depth), '}'), nil
}

// splice appends src up to the empty list that ends slot, at nesting
// depth depth, then the n elements elem writes, and returns src from the
// list's closing bracket on.
func splice(dst, src []byte, slot string, depth, n int, elem func(dst []byte, i int) ([]byte, error)) (out, rest []byte, err error) {
	if n == 0 {
		return dst, src, nil
	}
	at := bytes.Index(src, []byte(slot))
	if at < 0 {
		return nil, nil, fmt.Errorf("encoding trace: no %q", strings.TrimSpace(slot))
	}
	at += len(slot) - 1 // the ']'
	dst = append(dst, src[:at]...)
	for i := range n {
		dst = jsontext.AppendNewline(dst, depth+1)
		if dst, err = elem(dst, i); err != nil {
			return nil, nil, err
		}
		if i < n-1 {
			dst = append(dst, ',')
		}
	}
	return jsontext.AppendNewline(dst, depth), src[at:], nil
}
