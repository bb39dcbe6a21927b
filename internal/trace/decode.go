package trace

import (
	"path"
	"reflect"
	"strconv"
	"strings"

	"github.com/crystallize-dev/crystallize/internal/jsontext"
)

// Decode decodes one crystallization trace document. file and line say
// where the document came from: they position errors and, when the document
// has no id, derive one (see FromValue). line is the 1-based line of a JSON
// Lines record, or 0 for a whole file.
//
// The error, when not nil, is an ErrorList holding every problem found in
// the document, not only the first.
func Decode(data []byte, file string, line int) (*Trace, error) {
	v, err := ParseJSON(data, file, line)
	if err != nil {
		return nil, err
	}
	doc, ok := v.(map[string]any)
	if !ok {
		return nil, ErrorList{{File: file, Line: line, Path: "$", Msg: "expected object, got " + TypeName(v)}}
	}
	return FromValue(doc, file, line)
}

// FromValue converts a parsed crystallization trace document (the generic
// value ParseJSON returns for a JSON object) into a Trace, checking every
// field against the format and reporting every problem, each at its JSON
// path. The trace shares doc's generic values (parameters, outputs,
// metadata, unknown fields); the caller must not modify doc afterwards.
//
// Defaults: a missing version is 1 (SchemaVersion); a missing or empty id
// is derived from file, as the base name without extension, plus "_L" and
// the line for a JSON Lines record ("runs/a.jsonl", line 3 → "a_L3"), so
// that the same file always yields the same id; with no file the id stays
// empty. A missing action id is "action_<n>", n the 1-based position.
//
// An unsupported version (above SchemaVersion, or negative) is reported
// alone: the document was written for a format this package does not
// know, and listing what that format's fields look like to an older reader
// would only mislead.
func FromValue(doc map[string]any, file string, line int) (*Trace, error) {
	d := &Fields{File: file, Line: line}
	t := d.trace(doc)
	if err := d.Errs.Err(); err != nil {
		return nil, err
	}
	if t.ID == "" {
		t.ID = DeriveID(file, line)
	}
	return t, nil
}

// DeriveID returns the id given to a trace that has none: file without its
// extension (only the base name when file is absolute or leaves its
// directory), with "_L<line>" appended for a JSON Lines
// record (line > 0). It returns "" when file is empty. Importers of other
// formats use it too, so every trace without an id is named the same way.
func DeriveID(file string, line int) string {
	if file == "" {
		return ""
	}
	// A relative path keeps its directories, so files with the same name
	// in different directories get different ids; an absolute path gives
	// only its base name, which does not depend on where the file lives.
	p := path.Clean(strings.ReplaceAll(file, "\\", "/"))
	if path.IsAbs(p) || strings.HasPrefix(p, "../") || len(p) > 1 && p[1] == ':' {
		p = path.Base(p)
	}
	id := strings.TrimSuffix(p, path.Ext(p))
	if id == "" {
		id = "trace"
	}
	if line > 0 {
		id += "_L" + strconv.Itoa(line)
	}
	return id
}

// The format's own member names of each type, which Extra does not hold,
// are the JSON names of its fields (jsontext.Fields).
var (
	traceFields      = fieldNames[Trace]()
	actionFields     = fieldNames[Action]()
	sideEffectFields = fieldNames[SideEffect]()
	approvalFields   = fieldNames[Approval]()
	costFields       = fieldNames[Cost]()
	usageFields      = fieldNames[Usage]()
	flowFields       = fieldNames[Flow]()
	allowlistFields  = fieldNames[AllowlistRule]()
)

// A nameSet is a set of member names, kept by their length: a test
// compares a name with the few of its length, first byte first, which
// costs a fraction of hashing it; extra tests every member of every
// object Decode reads.
type nameSet [][]string

// fieldNames returns the names of T's fields.
func fieldNames[T any]() nameSet {
	fields, _ := jsontext.Fields(reflect.TypeFor[T]())
	var s nameSet
	for _, f := range fields {
		for len(s) <= len(f.Name) {
			s = append(s, nil)
		}
		s[len(f.Name)] = append(s[len(f.Name)], f.Name)
	}
	return s
}

// has reports whether k is in s.
func (s nameSet) has(k string) bool {
	if len(k) >= len(s) {
		return false
	}
	for _, name := range s[len(k)] {
		if name[0] == k[0] && name == k {
			return true
		}
	}
	return false
}

// extra returns the members of obj that known does not claim, or nil.
func extra(obj map[string]any, known nameSet) map[string]any {
	var m map[string]any
	for k, v := range obj {
		if known.has(k) {
			continue
		}
		if m == nil {
			m = make(map[string]any)
		}
		m[k] = v
	}
	return m
}

func (d *Fields) trace(doc map[string]any) *Trace {
	const p = "$"
	t := &Trace{Version: SchemaVersion}
	if v, ok := get(doc, "version"); ok {
		if n, ok := d.Int(v, "$.version", false); ok {
			switch {
			case n == 0:
				// Version 0 is what a writer that does not know the
				// field emits as its zero value; it means version 1.
			case n < 0 || n > SchemaVersion:
				d.Errorf("$.version", "unsupported trace version %d", n)
				return t
			default:
				t.Version = int(n)
			}
		}
	}
	t.ID = d.OptString(doc, p, "id")
	t.Source = d.OptString(doc, p, "source")
	t.SourceHash = d.OptString(doc, p, "source_hash")
	t.WorkflowID = d.OptString(doc, p, "workflow_id")
	t.StartedAt = d.OptString(doc, p, "started_at")
	t.FinishedAt = d.OptString(doc, p, "finished_at")
	if obj := d.OptObject(doc, p, "flow"); obj != nil {
		t.Flow = d.flow(obj, "$.flow")
	}
	t.Actions = d.actions(doc)
	t.ReplayRun = d.OptObject(doc, p, "replay_run")
	if arr, ok := d.OptArray(doc, p, "replay_allowlist"); ok {
		t.ReplayAllowlist = make([]AllowlistRule, 0, len(arr))
		for i, e := range arr {
			ep := Element("$.replay_allowlist", i)
			obj, ok := e.(map[string]any)
			if !ok {
				d.TypeError(ep, "object", e)
				continue
			}
			t.ReplayAllowlist = append(t.ReplayAllowlist, d.allowlistRule(obj, ep))
		}
	}
	if obj := d.OptObject(doc, p, "usage"); obj != nil {
		t.Usage = d.usage(obj, "$.usage")
	}
	t.Metadata = d.OptObject(doc, p, "metadata")
	t.Extra = extra(doc, traceFields)
	return t
}

// actions reads the required actions array and checks that action ids,
// given or defaulted, are unique: mining, replay and session logs refer to
// actions by id, so two actions with one id would make those references
// ambiguous.
func (d *Fields) actions(doc map[string]any) []Action {
	v, present := doc["actions"]
	if !present {
		d.Errorf("$.actions", "missing required field")
		return nil
	}
	arr, ok := v.([]any)
	if !ok {
		d.TypeError("$.actions", "array", v)
		return nil
	}
	actions := make([]Action, 0, len(arr))
	first := make(map[string]int, len(arr))
	for i, e := range arr {
		p := Element("$.actions", i)
		obj, ok := e.(map[string]any)
		if !ok {
			d.TypeError(p, "object", e)
			continue
		}
		a := d.action(obj, p, i)
		if j, dup := first[a.ID]; dup {
			d.Errorf(p+".id", "duplicate action id %q (first at %s)", a.ID, Element("$.actions", j))
		} else {
			first[a.ID] = i
		}
		actions = append(actions, a)
	}
	return actions
}

// action reads one action; i is its position, used for the default id, or
// -1 when there is no enclosing trace to number it.
func (d *Fields) action(obj map[string]any, p string, i int) Action {
	a := Action{
		ID:   d.OptString(obj, p, "id"),
		Kind: Kind(d.ReqString(obj, p, "kind")),
		Name: d.ReqString(obj, p, "name"),
	}
	if a.ID == "" && i >= 0 {
		a.ID = "action_" + strconv.Itoa(i+1)
	}
	a.Timestamp = d.OptString(obj, p, "timestamp")
	a.Parameters = d.OptObject(obj, p, "parameters")
	a.Inputs = obj["inputs"]
	a.Output = obj["output"]
	a.ObservedOutput = obj["observed_output"]
	a.Capabilities = d.OptStrings(obj, p, "capabilities")
	if arr, ok := d.OptArray(obj, p, "side_effects"); ok {
		a.SideEffects = make([]SideEffect, 0, len(arr))
		for j, e := range arr {
			ep := Element(p+".side_effects", j)
			se, ok := e.(map[string]any)
			if !ok {
				d.TypeError(ep, "object", e)
				continue
			}
			a.SideEffects = append(a.SideEffects, d.sideEffect(se, ep))
		}
	}
	a.RequiredSecrets = d.OptStrings(obj, p, "required_secrets")
	if o := d.OptObject(obj, p, "approval"); o != nil {
		a.Approval = d.approval(o, p+".approval")
	}
	if o := d.OptObject(obj, p, "cost"); o != nil {
		a.Cost = d.cost(o, p+".cost")
	}
	a.DurationMS = d.OptInt(obj, p, "duration_ms")
	a.Deterministic = d.OptBool(obj, p, "deterministic")
	a.Fuzzy = d.OptBool(obj, p, "fuzzy")
	a.Metadata = d.OptObject(obj, p, "metadata")
	a.Extra = extra(obj, actionFields)
	return a
}

func (d *Fields) sideEffect(obj map[string]any, p string) SideEffect {
	return SideEffect{
		Kind:       d.ReqString(obj, p, "kind"),
		Target:     d.OptString(obj, p, "target"),
		Capability: d.OptString(obj, p, "capability"),
		Mutation:   d.OptString(obj, p, "mutation"),
		Metadata:   d.OptObject(obj, p, "metadata"),
		Extra:      extra(obj, sideEffectFields),
	}
}

func (d *Fields) approval(obj map[string]any, p string) *Approval {
	a := &Approval{
		Prompt:   d.OptString(obj, p, "prompt"),
		Approver: d.OptString(obj, p, "approver"),
		Boundary: d.OptString(obj, p, "boundary"),
		Extra:    extra(obj, approvalFields),
	}
	if b := d.OptBool(obj, p, "required"); b != nil {
		a.Required = *b
	}
	return a
}

func (d *Fields) cost(obj map[string]any, p string) *Cost {
	return &Cost{
		Model:        d.OptString(obj, p, "model"),
		ModelCalls:   d.Count(obj, p, "model_calls"),
		InputTokens:  d.Count(obj, p, "input_tokens"),
		OutputTokens: d.Count(obj, p, "output_tokens"),
		// Absent in most traces: zero, as Count reads a missing count.
		CacheReadTokens:  d.Count(obj, p, "cache_read_tokens"),
		CacheWriteTokens: d.Count(obj, p, "cache_write_tokens"),
		TotalCostUSD:     d.Amount(obj, p, "total_cost_usd"),
		WallMS:           d.Count(obj, p, "wall_ms"),
		Extra:            extra(obj, costFields),
	}
}

func (d *Fields) usage(obj map[string]any, p string) *Usage {
	return &Usage{
		ModelCalls:   d.Count(obj, p, "model_calls"),
		InputTokens:  d.Count(obj, p, "input_tokens"),
		OutputTokens: d.Count(obj, p, "output_tokens"),
		TotalCostUSD: d.Amount(obj, p, "total_cost_usd"),
		WallMS:       d.Count(obj, p, "wall_ms"),
		Extra:        extra(obj, usageFields),
	}
}

func (d *Fields) flow(obj map[string]any, p string) *Flow {
	return &Flow{
		TraceID:       d.OptString(obj, p, "trace_id"),
		AgentRunID:    d.OptString(obj, p, "agent_run_id"),
		TranscriptRef: d.OptString(obj, p, "transcript_ref"),
		AtomIDs:       d.OptStrings(obj, p, "atom_ids"),
		SliceIDs:      d.OptStrings(obj, p, "slice_ids"),
		Extra:         extra(obj, flowFields),
	}
}

// allowlistRule reads one rule and checks its path now rather than when
// replay first uses it: a malformed pattern would otherwise silently allow
// nothing, and the replay oracle would fail on a difference the author
// meant to allow.
func (d *Fields) allowlistRule(obj map[string]any, p string) AllowlistRule {
	r := AllowlistRule{
		Path:        d.ReqString(obj, p, "path"),
		Reason:      d.ReqString(obj, p, "reason"),
		Replacement: obj["replacement"],
		Extra:       extra(obj, allowlistFields),
	}
	if r.Path != "" {
		if _, err := CompilePattern(r.Path); err != nil {
			d.Errorf(p+".path", "%v", err)
		}
	}
	return r
}

// unmarshal is the UnmarshalJSON of every type in this package: it parses
// data as generic values, checks that it is an object, converts it with
// conv and stores the result in dst, so that json.Unmarshal into these
// types applies the same checks, defaults and Extra handling as Decode.
// Errors carry paths relative to the value ("$" is the value itself) and
// no file; dst is left as it was.
func unmarshal[T any](data []byte, dst *T, conv func(d *Fields, obj map[string]any) T) error {
	v, err := ParseJSON(data, "", 0)
	if err != nil {
		return err
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return ErrorList{{Path: "$", Msg: "expected object, got " + TypeName(v)}}
	}
	d := &Fields{}
	out := conv(d, obj)
	if err := d.Errs.Err(); err != nil {
		return err
	}
	*dst = out
	return nil
}

// UnmarshalJSON decodes a trace document like Decode with no file name:
// the id stays empty when the document has none.
func (t *Trace) UnmarshalJSON(data []byte) error {
	return unmarshal(data, t, func(d *Fields, obj map[string]any) Trace { return *d.trace(obj) })
}

// UnmarshalJSON decodes one action with the checks of Decode. A missing id
// stays empty, since there is no position to number the action by.
func (a *Action) UnmarshalJSON(data []byte) error {
	return unmarshal(data, a, func(d *Fields, obj map[string]any) Action { return d.action(obj, "$", -1) })
}

// UnmarshalJSON decodes one side effect with the checks of Decode.
func (s *SideEffect) UnmarshalJSON(data []byte) error {
	return unmarshal(data, s, func(d *Fields, obj map[string]any) SideEffect { return d.sideEffect(obj, "$") })
}

// UnmarshalJSON decodes an approval with the checks of Decode.
func (a *Approval) UnmarshalJSON(data []byte) error {
	return unmarshal(data, a, func(d *Fields, obj map[string]any) Approval { return *d.approval(obj, "$") })
}

// UnmarshalJSON decodes a cost with the checks of Decode.
func (c *Cost) UnmarshalJSON(data []byte) error {
	return unmarshal(data, c, func(d *Fields, obj map[string]any) Cost { return *d.cost(obj, "$") })
}

// UnmarshalJSON decodes a usage total with the checks of Decode.
func (u *Usage) UnmarshalJSON(data []byte) error {
	return unmarshal(data, u, func(d *Fields, obj map[string]any) Usage { return *d.usage(obj, "$") })
}

// UnmarshalJSON decodes flow provenance with the checks of Decode.
func (f *Flow) UnmarshalJSON(data []byte) error {
	return unmarshal(data, f, func(d *Fields, obj map[string]any) Flow { return *d.flow(obj, "$") })
}

// UnmarshalJSON decodes an allowlist rule with the checks of Decode,
// including the syntax of its path pattern.
func (r *AllowlistRule) UnmarshalJSON(data []byte) error {
	return unmarshal(data, r, func(d *Fields, obj map[string]any) AllowlistRule { return d.allowlistRule(obj, "$") })
}
