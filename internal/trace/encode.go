package trace

import (
	"math"
	"sort"
	"strconv"

	"github.com/crystallize-dev/crystallize/internal/jsontext"
)

// The MarshalJSON methods write the format's fields in a fixed order (the
// order of the struct, which puts version and id first, where a reader
// looks), then the Extra members in sorted key order. The output is
// therefore the same bytes for the same value on every run, which golden
// tests and reviewers' diffs depend on.
//
// Optional fields are left out when they are unset: empty strings and nil
// pointers, maps, slices and values. A non-nil empty map or slice is
// written ({} or []), unlike encoding/json's omitempty, because Decode
// distinguishes "parameters": {} from no parameters and a round trip must
// give back an equal value.
//
// An Extra member whose key is one of the type's own fields is skipped: the
// typed field is the authority, and writing the key twice would produce a
// document whose meaning depends on the reader.

// Strings are escaped as every file of the module escapes them
// (jsontext.AppendQuote: encoding/json's escaping without HTML escaping),
// so that a trace's < and & read the same in the store, in an import's
// files and in a run's trace.json. Each type appends itself to the
// buffer of the object around it (appendJSON), and generic values are
// written by jsontext.AppendCompact, so that a trace is encoded in one
// buffer without reflection: generated corpora and the store encode
// thousands of traces.

// object appends one JSON object to buf. The first error sticks and
// later calls do nothing, so callers check once at the end.
type object struct {
	buf   []byte
	start int // where the object starts in buf
	err   error
}

func newObject(dst []byte) object { return object{buf: dst, start: len(dst)} }

// key appends the member name, after '{' or ','. The names of the
// format's fields are plain ASCII and written as they are; an Extra
// member's name is quoted (field with quote set).
func (o *object) key(key string) {
	if len(o.buf) == o.start {
		o.buf = append(o.buf, '{', '"')
	} else {
		o.buf = append(o.buf, ',', '"')
	}
	o.buf = append(append(o.buf, key...), '"', ':')
}

func (o *object) field(key string, v any) {
	if o.err != nil {
		return
	}
	o.key(key)
	o.buf, o.err = jsontext.AppendCompact(o.buf, v)
}

// extraField appends an Extra member, whose name may need escaping.
func (o *object) extraField(key string, v any) {
	if o.err != nil {
		return
	}
	if len(o.buf) == o.start {
		o.buf = append(o.buf, '{')
	} else {
		o.buf = append(o.buf, ',')
	}
	o.buf = append(jsontext.AppendQuote(o.buf, key), ':')
	o.buf, o.err = jsontext.AppendCompact(o.buf, v)
}

// The typed members are written without boxing their values in an
// interface, which would allocate for each string and number.

func (o *object) quoted(key, s string) {
	o.key(key)
	o.buf = jsontext.AppendQuote(o.buf, s)
}

func (o *object) int(key string, n int64) {
	o.key(key)
	o.buf = strconv.AppendInt(o.buf, n, 10)
}

func (o *object) float(key string, f float64) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		o.field(key, f) // encoding/json's error
		return
	}
	o.key(key)
	o.buf, _ = jsontext.AppendFloat(o.buf, f)
}

func (o *object) bool(key string, b bool) {
	o.key(key)
	o.buf = strconv.AppendBool(o.buf, b)
}

// appender is a value of the format that appends its own JSON.
type appender interface {
	appendJSON(dst []byte) ([]byte, error)
}

func (o *object) sub(key string, v appender) {
	if o.err != nil {
		return
	}
	o.key(key)
	o.buf, o.err = v.appendJSON(o.buf)
}

// list appends a member holding the n values elem appends.
func (o *object) list(key string, n int, elem func(dst []byte, i int) ([]byte, error)) {
	if o.err != nil {
		return
	}
	o.key(key)
	o.buf = append(o.buf, '[')
	for i := range n {
		if i > 0 {
			o.buf = append(o.buf, ',')
		}
		if o.buf, o.err = elem(o.buf, i); o.err != nil {
			return
		}
	}
	o.buf = append(o.buf, ']')
}

func (o *object) str(key, s string) {
	if s != "" {
		o.quoted(key, s)
	}
}

func (o *object) strings(key string, l []string) {
	if l != nil {
		o.list(key, len(l), func(dst []byte, i int) ([]byte, error) { return jsontext.AppendQuote(dst, l[i]), nil })
	}
}

func (o *object) generic(key string, v any) {
	if v != nil {
		o.field(key, v)
	}
}

func (o *object) obj(key string, m map[string]any) {
	if m != nil {
		o.field(key, m)
	}
}

func (o *object) extra(m map[string]any, known nameSet) {
	if len(m) == 0 {
		return
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		if !known.has(k) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		o.extraField(k, m[k])
	}
}

func (o *object) bytes() ([]byte, error) {
	if o.err != nil {
		return nil, o.err
	}
	if len(o.buf) == o.start {
		return append(o.buf, "{}"...), nil
	}
	return append(o.buf, '}'), nil
}

// MarshalJSON writes the trace in the crystallization trace format with
// its Extra members merged in. Origin is not written; Source is.
func (t Trace) MarshalJSON() ([]byte, error) {
	return t.appendJSON(make([]byte, 0, 256+512*len(t.Actions)))
}

func (t Trace) appendJSON(dst []byte) ([]byte, error) {
	o := newObject(dst)
	o.int("version", int64(t.Version))
	o.quoted("id", t.ID)
	o.str("source", t.Source)
	o.str("source_hash", t.SourceHash)
	o.str("workflow_id", t.WorkflowID)
	o.str("started_at", t.StartedAt)
	o.str("finished_at", t.FinishedAt)
	if t.Flow != nil {
		o.sub("flow", t.Flow)
	}
	// Required by the format, even when empty.
	o.list("actions", len(t.Actions), func(dst []byte, i int) ([]byte, error) { return t.Actions[i].appendJSON(dst) })
	o.obj("replay_run", t.ReplayRun)
	if t.ReplayAllowlist != nil {
		o.list("replay_allowlist", len(t.ReplayAllowlist), func(dst []byte, i int) ([]byte, error) { return t.ReplayAllowlist[i].appendJSON(dst) })
	}
	if t.Usage != nil {
		o.sub("usage", t.Usage)
	}
	o.obj("metadata", t.Metadata)
	o.extra(t.Extra, traceFields)
	return o.bytes()
}

// MarshalJSON writes the action with its Extra members merged in.
func (a Action) MarshalJSON() ([]byte, error) { return a.appendJSON(nil) }

func (a *Action) appendJSON(dst []byte) ([]byte, error) {
	o := newObject(dst)
	o.quoted("id", a.ID)
	o.quoted("kind", string(a.Kind))
	o.quoted("name", a.Name)
	o.str("timestamp", a.Timestamp)
	o.obj("parameters", a.Parameters)
	o.generic("inputs", a.Inputs)
	o.generic("output", a.Output)
	o.generic("observed_output", a.ObservedOutput)
	o.strings("capabilities", a.Capabilities)
	if a.SideEffects != nil {
		o.list("side_effects", len(a.SideEffects), func(dst []byte, i int) ([]byte, error) { return a.SideEffects[i].appendJSON(dst) })
	}
	o.strings("required_secrets", a.RequiredSecrets)
	if a.Approval != nil {
		o.sub("approval", a.Approval)
	}
	if a.Cost != nil {
		o.sub("cost", a.Cost)
	}
	if a.DurationMS != nil {
		o.int("duration_ms", *a.DurationMS)
	}
	if a.Deterministic != nil {
		o.bool("deterministic", *a.Deterministic)
	}
	if a.Fuzzy != nil {
		o.bool("fuzzy", *a.Fuzzy)
	}
	o.obj("metadata", a.Metadata)
	o.extra(a.Extra, actionFields)
	return o.bytes()
}

// MarshalJSON writes the side effect with its Extra members merged in.
func (s SideEffect) MarshalJSON() ([]byte, error) { return s.appendJSON(nil) }

func (s *SideEffect) appendJSON(dst []byte) ([]byte, error) {
	o := newObject(dst)
	o.quoted("kind", s.Kind)
	o.quoted("target", s.Target)
	o.str("capability", s.Capability)
	o.str("mutation", s.Mutation)
	o.obj("metadata", s.Metadata)
	o.extra(s.Extra, sideEffectFields)
	return o.bytes()
}

// MarshalJSON writes the approval with its Extra members merged in.
func (a Approval) MarshalJSON() ([]byte, error) { return a.appendJSON(nil) }

func (a *Approval) appendJSON(dst []byte) ([]byte, error) {
	o := newObject(dst)
	o.str("prompt", a.Prompt)
	o.str("approver", a.Approver)
	o.bool("required", a.Required)
	o.str("boundary", a.Boundary)
	o.extra(a.Extra, approvalFields)
	return o.bytes()
}

// MarshalJSON writes the cost with its Extra members merged in.
func (c Cost) MarshalJSON() ([]byte, error) { return c.appendJSON(nil) }

func (c *Cost) appendJSON(dst []byte) ([]byte, error) {
	o := newObject(dst)
	o.str("model", c.Model)
	o.int("model_calls", c.ModelCalls)
	o.int("input_tokens", c.InputTokens)
	o.int("output_tokens", c.OutputTokens)
	// Written only when known, so that traces without them keep their
	// bytes (and source hashes).
	if c.CacheReadTokens != 0 {
		o.int("cache_read_tokens", c.CacheReadTokens)
	}
	if c.CacheWriteTokens != 0 {
		o.int("cache_write_tokens", c.CacheWriteTokens)
	}
	o.float("total_cost_usd", c.TotalCostUSD)
	o.int("wall_ms", c.WallMS)
	o.extra(c.Extra, costFields)
	return o.bytes()
}

// MarshalJSON writes the usage totals with their Extra members merged in.
func (u Usage) MarshalJSON() ([]byte, error) { return u.appendJSON(nil) }

func (u *Usage) appendJSON(dst []byte) ([]byte, error) {
	o := newObject(dst)
	o.int("model_calls", u.ModelCalls)
	o.int("input_tokens", u.InputTokens)
	o.int("output_tokens", u.OutputTokens)
	o.float("total_cost_usd", u.TotalCostUSD)
	o.int("wall_ms", u.WallMS)
	o.extra(u.Extra, usageFields)
	return o.bytes()
}

// MarshalJSON writes the flow provenance with its Extra members merged in.
func (f Flow) MarshalJSON() ([]byte, error) { return f.appendJSON(nil) }

func (f *Flow) appendJSON(dst []byte) ([]byte, error) {
	o := newObject(dst)
	o.str("trace_id", f.TraceID)
	o.str("agent_run_id", f.AgentRunID)
	o.str("transcript_ref", f.TranscriptRef)
	o.strings("atom_ids", f.AtomIDs)
	o.strings("slice_ids", f.SliceIDs)
	o.extra(f.Extra, flowFields)
	return o.bytes()
}

// MarshalJSON writes the rule with its Extra members merged in.
func (r AllowlistRule) MarshalJSON() ([]byte, error) { return r.appendJSON(nil) }

func (r *AllowlistRule) appendJSON(dst []byte) ([]byte, error) {
	o := newObject(dst)
	o.quoted("path", r.Path)
	o.quoted("reason", r.Reason)
	o.generic("replacement", r.Replacement)
	o.extra(r.Extra, allowlistFields)
	return o.bytes()
}

// PruneExtra drops from every Extra map in t (the trace's, its flow's,
// its actions' and theirs) the members whose key names one of the type's
// own fields. Decode never produces such members, but code that builds a
// trace from another format and keeps that format's leftover members in
// Extra may: a run record's "source" member is not the trace's source.
// MarshalJSON would leave those members out, so a trace that still had them
// would not survive an encode/decode round trip; PruneExtra makes what was
// built equal to what is written.
func (t *Trace) PruneExtra() {
	t.Extra = extra(t.Extra, traceFields)
	if t.Flow != nil {
		t.Flow.Extra = extra(t.Flow.Extra, flowFields)
	}
	for i := range t.Actions {
		a := &t.Actions[i]
		a.Extra = extra(a.Extra, actionFields)
		for j := range a.SideEffects {
			a.SideEffects[j].Extra = extra(a.SideEffects[j].Extra, sideEffectFields)
		}
		if a.Approval != nil {
			a.Approval.Extra = extra(a.Approval.Extra, approvalFields)
		}
		if a.Cost != nil {
			a.Cost.Extra = extra(a.Cost.Extra, costFields)
		}
	}
	for i := range t.ReplayAllowlist {
		t.ReplayAllowlist[i].Extra = extra(t.ReplayAllowlist[i].Extra, allowlistFields)
	}
	if t.Usage != nil {
		t.Usage.Extra = extra(t.Usage.Extra, usageFields)
	}
}
