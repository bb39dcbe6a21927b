package trace

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
)

// The spool form of a trace is a private binary encoding of a decoded
// Trace, Origin included, that DecodeSpool turns back into a trace equal
// to it (as by reflect.DeepEqual). It exists for a loader that must hand
// a trace over again after letting it go: writing it as trace JSON costs
// more than decoding the agent's log again (every generic value goes
// through encoding/json, compacted once per level), and decoding the
// agent's log again costs as much as the first load. The spool form is a
// walk of the value with no reflection, no escaping, no sorting and no
// validation: a string is its length and bytes, a map its length and
// members in whatever order the map gives them, so both directions cost
// little more than the allocations of the trace itself.
//
// It is not a file format: it is read back only by the process that
// wrote it, with this package's version, and is never stored. Generic
// values may hold the types Parse produces (map[string]any, []any,
// string, json.Number, bool, nil) and the few a normalizer adds (int,
// int64, float64, []string, map[string]string); any other type is an
// error (ErrSpoolType), and the caller keeps such a trace in memory.

// ErrSpoolType is returned by AppendSpool for a trace with a generic
// value of a type the spool form does not hold.
var ErrSpoolType = errors.New("value of a type the spool form does not hold")

// Tags of generic values. A nil map or slice of a known type inside an
// any is a value of its own (a typed nil), kept apart from the empty one.
const (
	spNil byte = iota
	spString
	spNumber
	spTrue
	spFalse
	spMap
	spNilMap
	spSlice
	spNilSlice
	spInt
	spInt64
	spFloat
	spStrings
	spNilStrings
	spStringMap
	spNilStringMap
)

// AppendSpool appends the spool form of t to dst.
func AppendSpool(dst []byte, t *Trace) ([]byte, error) {
	e := spoolEncoder{buf: dst}
	e.trace(t)
	if e.err != nil {
		return dst, e.err
	}
	return e.buf, nil
}

// DecodeSpool decodes what AppendSpool wrote.
func DecodeSpool(data []byte) (*Trace, error) {
	d := spoolDecoder{data: data}
	t := d.trace()
	if d.err == nil && d.pos != len(d.data) {
		d.err = errors.New("trailing bytes")
	}
	if d.err != nil {
		return nil, fmt.Errorf("spooled trace: %w", d.err)
	}
	return t, nil
}

type spoolEncoder struct {
	buf []byte
	err error
}

func (e *spoolEncoder) uint(n uint64) { e.buf = binary.AppendUvarint(e.buf, n) }
func (e *spoolEncoder) int(n int64)   { e.buf = binary.AppendVarint(e.buf, n) }

func (e *spoolEncoder) bool(b bool) {
	if b {
		e.buf = append(e.buf, 1)
	} else {
		e.buf = append(e.buf, 0)
	}
}

func (e *spoolEncoder) str(s string) {
	e.uint(uint64(len(s)))
	e.buf = append(e.buf, s...)
}

// present writes whether a nillable field is set, and reports it.
func (e *spoolEncoder) present(set bool) bool {
	e.bool(set)
	return set
}

func (e *spoolEncoder) strs(s []string) {
	if e.present(s != nil) {
		e.uint(uint64(len(s)))
		for _, x := range s {
			e.str(x)
		}
	}
}

func (e *spoolEncoder) obj(m map[string]any) {
	if e.present(m != nil) {
		e.members(m)
	}
}

func (e *spoolEncoder) members(m map[string]any) {
	e.uint(uint64(len(m)))
	for k, v := range m {
		e.str(k)
		e.value(v)
	}
}

func (e *spoolEncoder) optInt(p *int64) {
	if e.present(p != nil) {
		e.int(*p)
	}
}

func (e *spoolEncoder) optBool(p *bool) {
	if e.present(p != nil) {
		e.bool(*p)
	}
}

func (e *spoolEncoder) value(v any) {
	switch v := v.(type) {
	case nil:
		e.buf = append(e.buf, spNil)
	case string:
		e.buf = append(e.buf, spString)
		e.str(v)
	case json.Number:
		e.buf = append(e.buf, spNumber)
		e.str(string(v))
	case bool:
		if v {
			e.buf = append(e.buf, spTrue)
		} else {
			e.buf = append(e.buf, spFalse)
		}
	case map[string]any:
		if v == nil {
			e.buf = append(e.buf, spNilMap)
			return
		}
		e.buf = append(e.buf, spMap)
		e.members(v)
	case []any:
		if v == nil {
			e.buf = append(e.buf, spNilSlice)
			return
		}
		e.buf = append(e.buf, spSlice)
		e.uint(uint64(len(v)))
		for _, x := range v {
			e.value(x)
		}
	case int:
		e.buf = append(e.buf, spInt)
		e.int(int64(v))
	case int64:
		e.buf = append(e.buf, spInt64)
		e.int(v)
	case float64:
		e.buf = append(e.buf, spFloat)
		e.buf = binary.LittleEndian.AppendUint64(e.buf, math.Float64bits(v))
	case []string:
		if v == nil {
			e.buf = append(e.buf, spNilStrings)
			return
		}
		e.buf = append(e.buf, spStrings)
		e.uint(uint64(len(v)))
		for _, x := range v {
			e.str(x)
		}
	case map[string]string:
		if v == nil {
			e.buf = append(e.buf, spNilStringMap)
			return
		}
		e.buf = append(e.buf, spStringMap)
		e.uint(uint64(len(v)))
		for k, x := range v {
			e.str(k)
			e.str(x)
		}
	default:
		if e.err == nil {
			e.err = fmt.Errorf("%w: %T", ErrSpoolType, v)
		}
	}
}

func (e *spoolEncoder) trace(t *Trace) {
	e.int(int64(t.Version))
	for _, s := range [...]string{t.ID, t.Source, t.SourceHash, t.WorkflowID, t.StartedAt, t.FinishedAt, t.Origin.Path} {
		e.str(s)
	}
	e.int(int64(t.Origin.Line))
	if f := t.Flow; e.present(f != nil) {
		e.str(f.TraceID)
		e.str(f.AgentRunID)
		e.str(f.TranscriptRef)
		e.strs(f.AtomIDs)
		e.strs(f.SliceIDs)
		e.obj(f.Extra)
	}
	if e.present(t.Actions != nil) {
		e.uint(uint64(len(t.Actions)))
		for i := range t.Actions {
			e.action(&t.Actions[i])
		}
	}
	e.obj(t.ReplayRun)
	if e.present(t.ReplayAllowlist != nil) {
		e.uint(uint64(len(t.ReplayAllowlist)))
		for _, r := range t.ReplayAllowlist {
			e.str(r.Path)
			e.str(r.Reason)
			e.value(r.Replacement)
			e.obj(r.Extra)
		}
	}
	if u := t.Usage; e.present(u != nil) {
		e.int(u.ModelCalls)
		e.int(u.InputTokens)
		e.int(u.OutputTokens)
		e.value(u.TotalCostUSD)
		e.int(u.WallMS)
		e.obj(u.Extra)
	}
	e.obj(t.Metadata)
	e.obj(t.Extra)
}

func (e *spoolEncoder) action(a *Action) {
	e.str(a.ID)
	e.str(string(a.Kind))
	e.str(a.Name)
	e.str(a.Timestamp)
	e.obj(a.Parameters)
	e.value(a.Inputs)
	e.value(a.Output)
	e.value(a.ObservedOutput)
	e.strs(a.Capabilities)
	if e.present(a.SideEffects != nil) {
		e.uint(uint64(len(a.SideEffects)))
		for _, s := range a.SideEffects {
			e.str(s.Kind)
			e.str(s.Target)
			e.str(s.Capability)
			e.str(s.Mutation)
			e.obj(s.Metadata)
			e.obj(s.Extra)
		}
	}
	e.strs(a.RequiredSecrets)
	if ap := a.Approval; e.present(ap != nil) {
		e.str(ap.Prompt)
		e.str(ap.Approver)
		e.bool(ap.Required)
		e.str(ap.Boundary)
		e.obj(ap.Extra)
	}
	if c := a.Cost; e.present(c != nil) {
		e.str(c.Model)
		e.int(c.ModelCalls)
		e.int(c.InputTokens)
		e.int(c.OutputTokens)
		e.int(c.CacheReadTokens)
		e.int(c.CacheWriteTokens)
		e.value(c.TotalCostUSD)
		e.int(c.WallMS)
		e.obj(c.Extra)
	}
	e.optInt(a.DurationMS)
	e.optBool(a.Deterministic)
	e.optBool(a.Fuzzy)
	e.obj(a.Metadata)
	e.obj(a.Extra)
}

// spoolDecoder reads the spool form. The first error sticks; after it
// every read returns a zero value, so the walk needs no checks of its own.
type spoolDecoder struct {
	data []byte
	pos  int
	err  error
}

var errSpoolShort = errors.New("unexpected end")

func (d *spoolDecoder) fail(err error) {
	if d.err == nil {
		d.err = err
	}
	d.pos = len(d.data)
}

func (d *spoolDecoder) uint() uint64 {
	n, k := binary.Uvarint(d.data[d.pos:])
	if k <= 0 {
		d.fail(errSpoolShort)
		return 0
	}
	d.pos += k
	return n
}

func (d *spoolDecoder) int() int64 {
	n, k := binary.Varint(d.data[d.pos:])
	if k <= 0 {
		d.fail(errSpoolShort)
		return 0
	}
	d.pos += k
	return n
}

func (d *spoolDecoder) byte() byte {
	if d.pos >= len(d.data) {
		d.fail(errSpoolShort)
		return 0
	}
	b := d.data[d.pos]
	d.pos++
	return b
}

func (d *spoolDecoder) bool() bool { return d.byte() == 1 }

// count reads a length, which cannot exceed the bytes left, as each
// element takes one at least.
func (d *spoolDecoder) count() int {
	n := d.uint()
	if n > uint64(len(d.data)-d.pos) {
		d.fail(errSpoolShort)
		return 0
	}
	return int(n)
}

func (d *spoolDecoder) str() string {
	n := d.count()
	s := string(d.data[d.pos : d.pos+n])
	d.pos += n
	return s
}

func (d *spoolDecoder) strs() []string {
	if !d.bool() {
		return nil
	}
	return d.strList()
}

func (d *spoolDecoder) strList() []string {
	out := make([]string, d.count())
	for i := range out {
		out[i] = d.str()
	}
	return out
}

func (d *spoolDecoder) obj() map[string]any {
	if !d.bool() {
		return nil
	}
	return d.members()
}

func (d *spoolDecoder) members() map[string]any {
	n := d.count()
	m := make(map[string]any, n)
	for range n {
		k := d.str()
		m[k] = d.value()
	}
	return m
}

func (d *spoolDecoder) optInt() *int64 {
	if !d.bool() {
		return nil
	}
	n := d.int()
	return &n
}

func (d *spoolDecoder) optBool() *bool {
	if !d.bool() {
		return nil
	}
	b := d.bool()
	return &b
}

func (d *spoolDecoder) float() float64 {
	if len(d.data)-d.pos < 8 {
		d.fail(errSpoolShort)
		return 0
	}
	f := math.Float64frombits(binary.LittleEndian.Uint64(d.data[d.pos:]))
	d.pos += 8
	return f
}

// floatValue reads a float64 field, written as a generic value.
func (d *spoolDecoder) floatValue() float64 {
	f, ok := d.value().(float64)
	if !ok {
		d.fail(errors.New("expected a float"))
	}
	return f
}

func (d *spoolDecoder) value() any {
	switch tag := d.byte(); tag {
	case spNil:
		return nil
	case spString:
		return d.str()
	case spNumber:
		return json.Number(d.str())
	case spTrue:
		return true
	case spFalse:
		return false
	case spMap:
		return d.members()
	case spNilMap:
		return map[string]any(nil)
	case spSlice:
		s := make([]any, d.count())
		for i := range s {
			s[i] = d.value()
		}
		return s
	case spNilSlice:
		return []any(nil)
	case spInt:
		return int(d.int())
	case spInt64:
		return d.int()
	case spFloat:
		return d.float()
	case spStrings:
		return d.strList()
	case spNilStrings:
		return []string(nil)
	case spStringMap:
		n := d.count()
		m := make(map[string]string, n)
		for range n {
			k := d.str()
			m[k] = d.str()
		}
		return m
	case spNilStringMap:
		return map[string]string(nil)
	default:
		d.fail(fmt.Errorf("unknown tag %d", tag))
		return nil
	}
}

func (d *spoolDecoder) trace() *Trace {
	t := &Trace{Version: int(d.int())}
	for _, s := range [...]*string{&t.ID, &t.Source, &t.SourceHash, &t.WorkflowID, &t.StartedAt, &t.FinishedAt, &t.Origin.Path} {
		*s = d.str()
	}
	t.Origin.Line = int(d.int())
	if d.bool() {
		t.Flow = &Flow{TraceID: d.str(), AgentRunID: d.str(), TranscriptRef: d.str(), AtomIDs: d.strs(), SliceIDs: d.strs(), Extra: d.obj()}
	}
	if d.bool() {
		t.Actions = make([]Action, d.count())
		for i := range t.Actions {
			d.action(&t.Actions[i])
		}
	}
	t.ReplayRun = d.obj()
	if d.bool() {
		t.ReplayAllowlist = make([]AllowlistRule, d.count())
		for i := range t.ReplayAllowlist {
			t.ReplayAllowlist[i] = AllowlistRule{Path: d.str(), Reason: d.str(), Replacement: d.value(), Extra: d.obj()}
		}
	}
	if d.bool() {
		t.Usage = &Usage{ModelCalls: d.int(), InputTokens: d.int(), OutputTokens: d.int(), TotalCostUSD: d.floatValue(), WallMS: d.int(), Extra: d.obj()}
	}
	t.Metadata = d.obj()
	t.Extra = d.obj()
	return t
}

func (d *spoolDecoder) action(a *Action) {
	a.ID = d.str()
	a.Kind = Kind(d.str())
	a.Name = d.str()
	a.Timestamp = d.str()
	a.Parameters = d.obj()
	a.Inputs = d.value()
	a.Output = d.value()
	a.ObservedOutput = d.value()
	a.Capabilities = d.strs()
	if d.bool() {
		a.SideEffects = make([]SideEffect, d.count())
		for i := range a.SideEffects {
			a.SideEffects[i] = SideEffect{Kind: d.str(), Target: d.str(), Capability: d.str(), Mutation: d.str(), Metadata: d.obj(), Extra: d.obj()}
		}
	}
	a.RequiredSecrets = d.strs()
	if d.bool() {
		a.Approval = &Approval{Prompt: d.str(), Approver: d.str(), Required: d.bool(), Boundary: d.str(), Extra: d.obj()}
	}
	if d.bool() {
		a.Cost = &Cost{Model: d.str(), ModelCalls: d.int(), InputTokens: d.int(), OutputTokens: d.int(), CacheReadTokens: d.int(), CacheWriteTokens: d.int(), TotalCostUSD: d.floatValue(), WallMS: d.int(), Extra: d.obj()}
	}
	a.DurationMS = d.optInt()
	a.Deterministic = d.optBool()
	a.Fuzzy = d.optBool()
	a.Metadata = d.obj()
	a.Extra = d.obj()
}
