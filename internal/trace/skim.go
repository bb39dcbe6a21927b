package trace

import (
	"bytes"
	"slices"
	"strconv"
)

// Skim is what the first pass of a mining run needs of a trace document,
// read by Parser.Skim without building the rest: for a mined corpus that
// is the action's kind, name and parameter names, a few metadata members
// and the ids, while most of the bytes are outputs and parameter values.
// Decoding those into generic maps only to drop them was as costly as the
// whole pass.
//
// Each field is defined by what Decode and Normalize make of the same
// document, so that a summary computed from a Skim equals the one
// computed from the decoded trace (FuzzSkim checks it).
type Skim struct {
	// ID is Trace.ID: the document's id, or the one DeriveID gives.
	ID string
	// Source and SourceHash are Trace.Source and Trace.SourceHash, which
	// the loader sets, as it sets them on a decoded trace; Skim leaves
	// them empty.
	Source, SourceHash string
	// Agent is the value of the trace's metadata.agent, when HasAgent.
	Agent    any
	HasAgent bool
	// MetadataViolation is whether the trace's own metadata marks an
	// unresolved policy violation (see Trace.PolicyViolation).
	MetadataViolation bool
	// ParentSession is the trace's metadata.parent_session_id when it is
	// a non-empty string: the session a subagent's or a continuation's
	// trace belongs to.
	ParentSession string
	Actions       []SkimAction
}

// SkimAction is what Skim keeps of an action.
type SkimAction struct {
	ID   string // Action.ID, defaulted as Decode defaults it
	Kind Kind
	Name string
	// Signature is Action.Signature().
	Signature string
	// Failed is Action.Failed().
	Failed bool
	// Violation is whether the action's metadata marks an unresolved
	// policy violation.
	Violation bool
	// NondeterministicSideEffect is Action.NondeterministicSideEffect().
	NondeterministicSideEffect bool
	// HasSideEffects is len(Action.SideEffects) > 0.
	HasSideEffects bool
	// ApprovalRequired is Action.Approval != nil && Action.Approval.Required.
	ApprovalRequired bool
}

// PolicyViolation is Trace.PolicyViolation of the skimmed trace.
func (s *Skim) PolicyViolation() (actionID string, ok bool) {
	if s.MetadataViolation {
		return "", true
	}
	for i := range s.Actions {
		if s.Actions[i].Violation {
			return s.Actions[i].ID, true
		}
	}
	return "", false
}

const (
	// maxSignatureLen is the longest signature a Parser shares between
	// documents: a signature repeats in every action of its step, and
	// one of a hundred parameter names is far shorter.
	maxSignatureLen = 1024
	// maxCountDigits is the longest plain literal read as a count
	// without converting it: 18 digits always fit an int64.
	maxCountDigits = 18
	// maxAmountDigits bounds the integer digits of an amount written
	// without an exponent, which is then finite as a float64 for sure.
	maxAmountDigits = 300
)

// Skim reads data, a trace document, as Decode would (with file and line
// for the derived id) and returns what Skim keeps of it, without
// building the values it does not keep.
//
// It is sure or it declines: ok is true only when Decode would decode
// the document without an error and the loader would take it for a
// crystallization trace (it has "actions", and none of the members that
// make it an agent session record). A document with any problem, and
// one written in a rarer form than Skim cares to check (an integral
// count written as 1e3, a negative zero, a version written as 1.0, ...),
// is declined, and the caller decodes it whole, which gives the error
// the user sees. Every value Skim skips is still checked to be valid
// JSON with no member named twice, as Parse checks it.
func (p *Parser) Skim(data []byte, file string, line int) (s *Skim, ok bool) {
	s = &Skim{}
	if !p.readWhole(data, func() bool { return p.skimTrace(s) }) || p.dup {
		return nil, false
	}
	if s.ID == "" {
		s.ID = DeriveID(file, line)
	}
	return s, true
}

// readWhole reads data with read, which reads one value from p.pos, and
// reports whether read accepted it and nothing but white space follows;
// p.dup then says whether an object in it names a member twice. The
// scratch space is released either way.
func (p *Parser) readWhole(data []byte, read func() bool) bool {
	p.data, p.pos, p.dup = data, 0, false
	ok := read()
	if ok {
		p.skipSpace()
		ok = p.pos == len(data)
	}
	p.release()
	return ok
}

// release drops what the scratch space holds of the last document, so
// that a Parser kept between documents does not keep it alive, and
// leaves the stacks empty for the next one, also after a declined
// document.
func (p *Parser) release() {
	p.data = nil
	clear(p.elems)
	p.elems = p.elems[:0]
	clear(p.members)
	p.members = p.members[:0]
	// Each object drops its member names when it ends, and each action
	// starts its parameter names over, so names may lie past the end.
	clear(p.skipped[:cap(p.skipped)])
	p.skipped = p.skipped[:0]
	clear(p.params[:cap(p.params)])
	p.params = p.params[:0]
	clear(p.ids)
	clear(p.actions)
	p.actions = p.actions[:0]
}

// skimTrace reads the trace object at p.pos. The trace's own members,
// small beside its actions, are read by DecodeDirect's reader of them;
// the actions are skimmed.
func (p *Parser) skimTrace(s *Skim) bool {
	var t Trace
	metadata := func(depth int) bool {
		return p.skipNull() || p.skimObject(depth, func(name []byte) bool {
			if string(name) == "agent" {
				v, ok := p.value(depth + 1)
				s.Agent, s.HasAgent = v, true
				return ok
			}
			if string(name) == "parent_session_id" {
				v, ok := p.value(depth + 1)
				// The last member wins, as it does in Decode.
				s.ParentSession, _ = v.(string)
				return ok
			}
			if mayMarkPolicy(name) {
				key := string(name)
				v, ok := p.value(depth + 1)
				s.MetadataViolation = s.MetadataViolation || policyMarker(key, v)
				return ok
			}
			return p.skip(depth + 1)
		})
	}
	if !p.traceMembers(&t, func(depth int) bool { return p.skimActions(depth, s) }, metadata) {
		return false
	}
	// What makes a *.json document an agent session record (a Codex
	// envelope, an OTLP export) to the loader.
	if _, ok := t.Extra["payload"]; ok {
		return false
	}
	if _, ok := t.Extra["resourceSpans"]; ok {
		return false
	}
	s.ID = t.ID
	return true
}

// skimActions reads the actions array, whose own depth is depth+1.
func (p *Parser) skimActions(depth int, s *Skim) bool {
	return p.skimArray(depth, func(i int) bool {
		s.Actions = append(s.Actions, SkimAction{})
		a := &s.Actions[len(s.Actions)-1]
		return p.skimAction(depth+2, i, a) && p.newActionID(a.ID)
	})
}

// skimAction reads the action object at p.pos, the i-th of its trace;
// depth is that of its members.
func (p *Parser) skimAction(depth, i int, a *SkimAction) bool {
	var kind, name bool
	p.params = p.params[:0]
	sideEffects := 0
	var deterministic, fuzzy, markedNondeterministic bool
	ok := p.skimObject(depth-1, func(member []byte) bool {
		switch string(member) {
		case "id":
			return p.directString(&a.ID)
		case "kind":
			key, ok := p.reqKey()
			a.Kind, kind = Kind(key), ok
			return ok
		case "name":
			key, ok := p.reqKey()
			a.Name, name = key, ok
			return ok
		case "timestamp":
			_, ok := p.optString()
			return ok
		case "parameters":
			if p.skipNull() {
				return true
			}
			return p.skimObject(depth, func(key []byte) bool {
				p.params = append(p.params, key)
				return p.skip(depth + 1)
			})
		case "capabilities", "required_secrets":
			return p.optStrings(depth)
		case "side_effects":
			return p.skipNull() || p.skimArray(depth, func(int) bool {
				sideEffects++
				kind := false
				return p.skimObject(depth+1, func(member []byte) bool {
					switch string(member) {
					case "kind":
						_, kind = p.reqString()
						return kind
					case "target", "capability", "mutation":
						_, ok := p.optString()
						return ok
					case "metadata":
						return p.skipNull() || p.skimObject(depth+2, func(key []byte) bool {
							if string(key) == "nondeterministic" {
								v, ok := p.value(depth + 3)
								markedNondeterministic = markedNondeterministic || isTrue(v)
								return ok
							}
							return p.skip(depth + 3)
						})
					}
					return p.skip(depth + 2)
				}) && kind
			})
		case "approval":
			var ap Approval
			ok := p.skipNull() || p.directApproval(depth, &ap)
			a.ApprovalRequired = ap.Required
			return ok
		case "cost":
			return p.skipNull() || p.skimObject(depth, func(member []byte) bool {
				switch string(member) {
				case "model":
					_, ok := p.optString()
					return ok
				case "model_calls", "input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "wall_ms":
					return p.directCount(new(int64)) // checked, not kept
				case "total_cost_usd":
					return p.skipNull() || p.amount()
				}
				return p.skip(depth + 1)
			})
		case "duration_ms":
			return p.directCount(new(int64))
		case "deterministic":
			b, ok := p.optBool()
			deterministic = b == 0
			return ok
		case "fuzzy":
			b, ok := p.optBool()
			fuzzy = b == 1
			return ok
		case "metadata":
			return p.skipNull() || p.skimObject(depth, func(key []byte) bool {
				switch string(key) {
				case "error", "exit_code":
					k := string(key)
					v, ok := p.value(depth + 1)
					a.Failed = a.Failed || failureMarker(k, v)
					return ok
				case "nondeterministic_side_effect":
					v, ok := p.value(depth + 1)
					markedNondeterministic = markedNondeterministic || isTrue(v)
					return ok
				}
				if mayMarkPolicy(key) {
					k := string(key)
					v, ok := p.value(depth + 1)
					a.Violation = a.Violation || policyMarker(k, v)
					return ok
				}
				return p.skip(depth + 1)
			})
		}
		return p.skip(depth)
	})
	if !ok || !kind || !name {
		return false
	}
	if a.ID == "" {
		a.ID = "action_" + strconv.Itoa(i+1)
	}
	a.NondeterministicSideEffect = sideEffects > 0 && (deterministic || fuzzy || markedNondeterministic)
	a.HasSideEffects = sideEffects > 0
	a.Signature = p.signature(a.Kind, a.Name, p.params)
	return true
}

// signature returns Action.Signature for kind, name and the parameter
// names keys, which it sorts, shared with the same signature of earlier
// actions.
func (p *Parser) signature(kind Kind, name string, keys [][]byte) string {
	slices.SortFunc(keys, bytes.Compare)
	b := append(p.sig[:0], kind...)
	b = append(b, ':')
	b = append(b, name...)
	b = append(b, ':')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, k...)
	}
	p.sig = b
	if len(b) > maxSignatureLen {
		return string(b)
	}
	if s, ok := p.sigs[string(b)]; ok {
		return s
	}
	s := string(b)
	if p.sigs == nil {
		p.sigs = make(map[string]string)
	}
	if len(p.sigs) >= maxInterned {
		clear(p.sigs)
	}
	p.sigs[s] = s
	return s
}

// skimObject reads the object at p.pos (after white space), calling
// member for each member with its name, once p.pos is at its value;
// member reads the value, and returns false to decline the document.
// The names are collected on p.skipped, as skipObject does, to find a
// name that comes twice. depth is the number of arrays and objects
// around the object; its members' values are at depth+1.
func (p *Parser) skimObject(depth int, member func(name []byte) bool) bool {
	return p.peek('{') && depth+1 <= maxDepth && p.objectMembers(member)
}

// skimArray reads the array at p.pos (after white space), calling elem
// for each element with its index, once p.pos is at it. depth is the
// number of arrays and objects around the array.
func (p *Parser) skimArray(depth int, elem func(i int) bool) bool {
	return p.peek('[') && depth+1 <= maxDepth && p.arrayElems(elem)
}

// skimVersion reads a trace's version: null, 0 and 1 all read as
// SchemaVersion. Every other form is an error or rare enough (1.0, 1e0)
// to be left to the full decoder, so it declines.
func (p *Parser) skimVersion() bool {
	if p.skipNull() {
		return true
	}
	end, ok := p.numberAt()
	if !ok || end != p.pos+1 || p.data[p.pos] != '0' && p.data[p.pos] != '1' {
		return false
	}
	p.pos = end
	return true
}

// peek skips white space and reports whether the next byte is c.
func (p *Parser) peek(c byte) bool {
	p.skipSpace()
	return p.pos < len(p.data) && p.data[p.pos] == c
}

// skipNull skips a null at p.pos, after white space, and reports whether
// there was one: a member set to null reads as unset.
func (p *Parser) skipNull() bool {
	return p.peek('n') && p.literal("null")
}

// optString reads an optional string: its text (valid until the next
// string is read), nil for null, and false for any other value.
func (p *Parser) optString() ([]byte, bool) {
	if p.skipNull() {
		return nil, true
	}
	if !p.peek('"') {
		return nil, false
	}
	text, ok := p.str()
	if text == nil && ok {
		text = []byte{}
	}
	return text, ok
}

// reqString reads a required string, which must not be empty.
func (p *Parser) reqString() ([]byte, bool) {
	if !p.peek('"') {
		return nil, false
	}
	text, ok := p.str()
	return text, ok && len(text) > 0
}

// optStrings reads an optional array of strings whose elements are at
// depth+1.
func (p *Parser) optStrings(depth int) bool {
	return p.skipNull() || p.skimArray(depth, func(int) bool {
		if !p.peek('"') {
			return false
		}
		_, ok := p.str()
		return ok
	})
}

// optBool reads an optional boolean: -1 for null, 0 for false, 1 for
// true; ok is false for any other value.
func (p *Parser) optBool() (b int, ok bool) {
	switch {
	case p.skipNull():
		return -1, true
	case p.peek('t'):
		return 1, p.literal("true")
	case p.peek('f'):
		return 0, p.literal("false")
	}
	return -1, false
}

// numberAt returns the end of the number at p.pos, after white space.
func (p *Parser) numberAt() (int, bool) {
	p.skipSpace()
	if p.pos >= len(p.data) {
		return 0, false
	}
	if c := p.data[p.pos]; c != '-' && !isDigit(c) {
		return 0, false
	}
	return p.numberEnd()
}

// amount reads an amount written as a non-negative number without an
// exponent and with few enough digits to be a finite float64.
func (p *Parser) amount() bool {
	end, ok := p.numberAt()
	if !ok {
		return false
	}
	lit := p.data[p.pos:end]
	if lit[0] == '-' || bytes.ContainsAny(lit, "eE") {
		return false
	}
	if dot := bytes.IndexByte(lit, '.'); dot > maxAmountDigits || dot < 0 && len(lit) > maxAmountDigits {
		return false
	}
	p.pos = end
	return true
}

// mayMarkPolicy reports whether a metadata member named name could mark
// a policy violation, cheaply: every name policyKeyOf recognizes holds
// "policy" in some case, and a name with other than ASCII letters is
// left to policyKeyOf, since lowering some non-ASCII letters gives ASCII
// ones.
func mayMarkPolicy(name []byte) bool {
	const word = "policy"
	for i := 0; i+len(word) <= len(name); i++ {
		match := true
		for j := 0; j < len(word); j++ {
			c := name[i+j]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			if c != word[j] {
				match = false
				break
			}
		}
		if match {
			return true
		}
	}
	for _, c := range name {
		if c >= 0x80 {
			return true
		}
	}
	return false
}
