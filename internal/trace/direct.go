package trace

import (
	"strconv"
)

// DecodeDirect decodes data, a trace document, into the Trace that Decode
// returns for it (with file and line for the derived id), reading the
// document's own structure (the trace, its actions, side effects, costs,
// flow, allowlist) straight into the typed fields instead of building a
// generic map of the whole document and converting it with FromValue.
// Only the values a Trace keeps as generic values (parameters, inputs,
// outputs, metadata, replay runs, unknown members) are built as such.
// Reading back stored traces, where every document is known to be valid,
// spent a third of its time in that conversion and much of the rest in
// maps built only to be read once.
//
// Like Skim, it is sure or it declines: ok is true only when Decode would
// decode data without an error, and then the trace equals Decode's (as by
// reflect.DeepEqual; FuzzDecodeDirect checks it). A document with any
// problem, or written in a rarer form than DecodeDirect checks (a count
// written as 1e3 or -0, a version written as 1.0, ...), is declined, and
// the caller decodes it with Decode, which gives the same trace or the
// error. Values are checked to be valid JSON with no member named twice,
// as Parse checks them.
func (p *Parser) DecodeDirect(data []byte, file string, line int) (t *Trace, ok bool) {
	t = &Trace{Version: SchemaVersion}
	if !p.readWhole(data, func() bool { return p.directTrace(t) }) || p.dup {
		return nil, false
	}
	if t.ID == "" {
		t.ID = DeriveID(file, line)
	}
	return t, true
}

// directTrace reads the trace object at p.pos into t.
func (p *Parser) directTrace(t *Trace) bool {
	return p.traceMembers(t, func(depth int) bool { return p.directActions(depth, t) }, nil)
}

// traceMembers reads the trace object at p.pos into t but for its
// actions, which actions reads (the array's own depth is depth+1), and
// its metadata when metadata is not nil, which then reads it in place of
// t.Metadata. A trace without actions is declined.
func (p *Parser) traceMembers(t *Trace, actions, metadata func(depth int) bool) bool {
	const depth = 1 // of the trace's members
	hasActions := false
	return p.skimObject(0, func(name []byte) bool {
		switch string(name) {
		case "version":
			return p.skimVersion()
		case "id":
			return p.directString(&t.ID)
		case "source":
			return p.directString(&t.Source)
		case "source_hash":
			return p.directString(&t.SourceHash)
		case "workflow_id":
			return p.directString(&t.WorkflowID)
		case "started_at":
			return p.directString(&t.StartedAt)
		case "finished_at":
			return p.directString(&t.FinishedAt)
		case "flow":
			if p.skipNull() {
				return true
			}
			t.Flow = &Flow{}
			return p.directFlow(depth, t.Flow)
		case "actions":
			hasActions = true
			return actions(depth)
		case "replay_run":
			return p.directObject(depth, &t.ReplayRun)
		case "replay_allowlist":
			if p.skipNull() {
				return true
			}
			t.ReplayAllowlist = []AllowlistRule{}
			return p.skimArray(depth, func(int) bool {
				t.ReplayAllowlist = append(t.ReplayAllowlist, AllowlistRule{})
				return p.directAllowlistRule(depth+2, &t.ReplayAllowlist[len(t.ReplayAllowlist)-1])
			})
		case "usage":
			if p.skipNull() {
				return true
			}
			var c Cost
			ok := p.directCost(depth, &c, true)
			t.Usage = &Usage{ModelCalls: c.ModelCalls, InputTokens: c.InputTokens, OutputTokens: c.OutputTokens,
				TotalCostUSD: c.TotalCostUSD, WallMS: c.WallMS, Extra: c.Extra}
			return ok
		case "metadata":
			if metadata != nil {
				return metadata(depth)
			}
			return p.directObject(depth, &t.Metadata)
		}
		return p.directExtra(&t.Extra, name, depth)
	}) && hasActions
}

// directFlow reads the flow object at p.pos, whose own depth is depth+1.
func (p *Parser) directFlow(depth int, f *Flow) bool {
	return p.skimObject(depth, func(name []byte) bool {
		switch string(name) {
		case "trace_id":
			return p.directString(&f.TraceID)
		case "agent_run_id":
			return p.directString(&f.AgentRunID)
		case "transcript_ref":
			return p.directString(&f.TranscriptRef)
		case "atom_ids":
			return p.directStrings(depth+1, &f.AtomIDs)
		case "slice_ids":
			return p.directStrings(depth+1, &f.SliceIDs)
		}
		return p.directExtra(&f.Extra, name, depth+1)
	})
}

// directActions reads the actions array, whose own depth is depth+1,
// checking that action ids, given or defaulted, are unique.
func (p *Parser) directActions(depth int, t *Trace) bool {
	p.actions = p.actions[:0]
	n := 0
	ok := p.skimArray(depth, func(i int) bool {
		n++
		if !p.inWindow(i) {
			return p.skipTrusted()
		}
		p.actions = append(p.actions, Action{})
		a := &p.actions[len(p.actions)-1]
		return p.directAction(depth+2, i, a) && p.newActionID(a.ID)
	})
	t.Actions = make([]Action, len(p.actions))
	copy(t.Actions, p.actions)
	return ok && (p.window == nil || n >= p.window.Hi)
}

// newActionID records the id of an action of the current trace, and
// reports whether it is new: action ids, given or defaulted, are unique in
// a trace.
func (p *Parser) newActionID(id string) bool {
	if p.ids == nil {
		p.ids = make(map[string]struct{})
	}
	if _, dup := p.ids[id]; dup {
		return false
	}
	p.ids[id] = struct{}{}
	return true
}

// directAction reads the action object at p.pos, the i-th of its trace;
// depth is that of its members.
func (p *Parser) directAction(depth, i int, a *Action) bool {
	var kind, name bool
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
			return p.directString(&a.Timestamp)
		case "parameters":
			return p.directObject(depth, &a.Parameters)
		case "inputs":
			return p.directValue(depth, &a.Inputs)
		case "output":
			return p.directValue(depth, &a.Output)
		case "observed_output":
			return p.directValue(depth, &a.ObservedOutput)
		case "capabilities":
			return p.directStrings(depth, &a.Capabilities)
		case "required_secrets":
			return p.directStrings(depth, &a.RequiredSecrets)
		case "side_effects":
			if p.skipNull() {
				return true
			}
			a.SideEffects = []SideEffect{}
			return p.skimArray(depth, func(int) bool {
				a.SideEffects = append(a.SideEffects, SideEffect{})
				return p.directSideEffect(depth+2, &a.SideEffects[len(a.SideEffects)-1])
			})
		case "approval":
			if p.skipNull() {
				return true
			}
			a.Approval = &Approval{}
			return p.directApproval(depth, a.Approval)
		case "cost":
			if p.skipNull() {
				return true
			}
			a.Cost = &Cost{}
			return p.directCost(depth, a.Cost, false)
		case "duration_ms":
			if p.skipNull() {
				return true
			}
			var n int64
			if !p.directCount(&n) {
				return false
			}
			a.DurationMS = &n
			return true
		case "deterministic":
			return p.directBool(&a.Deterministic)
		case "fuzzy":
			return p.directBool(&a.Fuzzy)
		case "metadata":
			return p.directObject(depth, &a.Metadata)
		}
		return p.directExtra(&a.Extra, member, depth)
	})
	if !ok || !kind || !name {
		return false
	}
	if a.ID == "" {
		a.ID = "action_" + strconv.Itoa(i+1)
	}
	return true
}

// directSideEffect reads the side effect object at p.pos; depth is that
// of its members.
func (p *Parser) directSideEffect(depth int, s *SideEffect) bool {
	kind := false
	return p.skimObject(depth-1, func(member []byte) bool {
		switch string(member) {
		case "kind":
			key, ok := p.reqKey()
			s.Kind, kind = key, ok
			return ok
		case "target":
			return p.directKey(&s.Target)
		case "capability":
			return p.directKey(&s.Capability)
		case "mutation":
			return p.directKey(&s.Mutation)
		case "metadata":
			return p.directObject(depth, &s.Metadata)
		}
		return p.directExtra(&s.Extra, member, depth)
	}) && kind
}

// directCost reads the cost object at p.pos, whose own depth is depth+1,
// into c. A usage object (usage set) has the members of a cost but the
// model and the cache counts, which are unknown members there, kept in
// Extra.
func (p *Parser) directCost(depth int, c *Cost, usage bool) bool {
	return p.skimObject(depth, func(member []byte) bool {
		switch string(member) {
		case "model_calls":
			return p.directCount(&c.ModelCalls)
		case "input_tokens":
			return p.directCount(&c.InputTokens)
		case "output_tokens":
			return p.directCount(&c.OutputTokens)
		case "total_cost_usd":
			return p.directAmount(&c.TotalCostUSD)
		case "wall_ms":
			return p.directCount(&c.WallMS)
		}
		if !usage {
			switch string(member) {
			case "model":
				return p.directKey(&c.Model)
			case "cache_read_tokens":
				return p.directCount(&c.CacheReadTokens)
			case "cache_write_tokens":
				return p.directCount(&c.CacheWriteTokens)
			}
		}
		return p.directExtra(&c.Extra, member, depth+1)
	})
}

// directApproval reads the approval object at p.pos, whose own depth is
// depth+1.
func (p *Parser) directApproval(depth int, ap *Approval) bool {
	return p.skimObject(depth, func(member []byte) bool {
		switch string(member) {
		case "prompt":
			return p.directString(&ap.Prompt)
		case "approver":
			return p.directString(&ap.Approver)
		case "boundary":
			return p.directKey(&ap.Boundary)
		case "required":
			b, ok := p.optBool()
			ap.Required = b == 1
			return ok
		}
		return p.directExtra(&ap.Extra, member, depth+1)
	})
}

// directAllowlistRule reads a replay allowlist rule whose members are at
// depth, checking its path as Decode does.
func (p *Parser) directAllowlistRule(depth int, r *AllowlistRule) bool {
	var path, reason bool
	return p.skimObject(depth-1, func(member []byte) bool {
		switch string(member) {
		case "path":
			text, ok := p.reqString()
			if !ok {
				return false
			}
			r.Path = string(text)
			_, err := CompilePattern(r.Path)
			path = err == nil
			return path
		case "reason":
			text, ok := p.reqString()
			r.Reason, reason = string(text), ok
			return ok
		case "replacement":
			return p.directValue(depth, &r.Replacement)
		}
		return p.directExtra(&r.Extra, member, depth)
	}) && path && reason
}

// directString reads an optional string member into dst; null leaves it
// unset.
func (p *Parser) directString(dst *string) bool {
	text, ok := p.optString()
	if ok && text != nil {
		*dst = string(text)
	}
	return ok
}

// reqKey reads a required string that repeats across actions and traces
// (a kind, a name), shared as Parse shares every string.
func (p *Parser) reqKey() (string, bool) {
	text, ok := p.reqString()
	if !ok {
		return "", false
	}
	return p.key(text), true
}

// directKey is directString for a value that repeats across actions
// and traces (a side effect's target, an approval's boundary): it is
// shared, as Parse shares every string.
func (p *Parser) directKey(dst *string) bool {
	text, ok := p.optString()
	if ok && text != nil {
		*dst = p.key(text)
	}
	return ok
}

// directStrings reads an optional array of strings, whose elements are at
// depth+1, into dst: nil for null, a non-nil slice for an array, as
// Fields.OptStrings gives. Each string is shared like a member name:
// capabilities and secrets repeat in every action.
func (p *Parser) directStrings(depth int, dst *[]string) bool {
	if p.skipNull() {
		return true
	}
	out := []string{}
	ok := p.skimArray(depth, func(int) bool {
		if !p.peek('"') {
			return false
		}
		text, ok := p.str()
		if ok {
			out = append(out, p.key(text))
		}
		return ok
	})
	*dst = out
	return ok
}

// directObject reads an optional object member, whose value is at depth,
// into dst as the generic value Parse gives; null leaves it nil.
func (p *Parser) directObject(depth int, dst *map[string]any) bool {
	if p.skipNull() {
		return true
	}
	if !p.peek('{') {
		return false
	}
	v, ok := p.value(depth)
	if ok {
		*dst = v.(map[string]any)
	}
	return ok
}

// directValue reads a member of any type, whose value is at depth, into
// dst as the generic value Parse gives.
func (p *Parser) directValue(depth int, dst *any) bool {
	v, ok := p.value(depth)
	*dst = v
	return ok
}

// directBool reads an optional boolean member into dst; null leaves it
// nil.
func (p *Parser) directBool(dst **bool) bool {
	b, ok := p.optBool()
	if ok && b >= 0 {
		v := b == 1
		*dst = &v
	}
	return ok
}

// directCount reads a count member written as a plain non-negative
// integer literal, which then fits an int64 for sure; null leaves dst 0.
// Other forms Decode accepts (1e3, 30.0, -0) are declined.
func (p *Parser) directCount(dst *int64) bool {
	if p.skipNull() {
		return true
	}
	end, ok := p.numberAt()
	if !ok || end-p.pos > maxCountDigits {
		return false
	}
	var n int64
	for _, c := range p.data[p.pos:end] {
		if !isDigit(c) {
			return false
		}
		n = n*10 + int64(c-'0')
	}
	p.pos = end
	*dst = n
	return true
}

// directAmount reads an amount member written as a non-negative number
// without an exponent; null leaves dst 0. The value is strconv's, as in
// Fields.Amount.
func (p *Parser) directAmount(dst *float64) bool {
	if p.skipNull() {
		return true
	}
	p.skipSpace()
	start := p.pos
	if !p.amount() {
		return false
	}
	f, err := strconv.ParseFloat(string(p.data[start:p.pos]), 64)
	if err != nil || f < 0 {
		return false
	}
	*dst = f
	return true
}

// directExtra reads the value of a member the format does not name, at
// depth, into *extra, as FromValue keeps it.
func (p *Parser) directExtra(extra *map[string]any, name []byte, depth int) bool {
	key := p.key(name)
	v, ok := p.value(depth)
	if !ok {
		return false
	}
	if *extra == nil {
		*extra = make(map[string]any)
	}
	(*extra)[key] = v
	return true
}
