package source

import (
	"cmp"
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/crystallize-dev/crystallize/internal/trace"
)

// Composition is the adapter for governed code-mode composition reports
// (schemas/composition-report.v1.json): JSON objects with a "run" and a
// "calls" member, written by a code-mode host after it ran one snippet
// whose binding calls it mediated. Such a run is a procedure an agent
// wrote as code; feeding its report to the same mining, shadow and review
// pipeline is how repeated read-only compositions become visible as
// candidates, without promoting the snippet itself.
//
// The trace (CompositionTrace) has one parent action of kind
// KindCompositionRun, whose parameters and inputs are the snippet's
// identity (language, snippet hash, binding-manifest hash, requested
// side-effect ceiling), then one tool_call per child binding call in
// operation_index order: its tool_name as name, its raw_input as
// parameters (or as inputs when raw_input is not an object), its result's
// output as output, "domain.op" as capability, and its annotations, policy
// context, status, error category and requested side-effect level as
// metadata.
//
// Side effects follow the requested levels. A child whose level is read-only
// (ReadOnlyLevel) changes nothing; a child with another level declares one
// side effect of that kind on its tool, and a child without a level
// declares an UnknownSideEffects record, since unknown is not none. The
// parent records one receipt_write on CompositionReceipts: the host's own
// receipt log, which package bundle counts as the tool's data plane. So a
// snippet whose children all read crystallizes into a plan-only bundle,
// and one that writes does not.
//
// The replay run holds one effect receipt for the parent and one per
// child, in trace order, each child's with its output: a later run whose
// child returned something else diverges at /effect_receipts/<i>/output.
// The run id and the tool call ids are allocated per execution and are
// allowlisted with their reasons. Receipts leave out the children's
// inputs: an input that varies between runs is a parameter of the
// workflow, not drift, and in the receipts it would make the examples
// disagree.
type Composition struct{}

// KindCompositionRun is the kind of a composition trace's parent action:
// one governed run of a code-mode snippet.
const KindCompositionRun trace.Kind = "composition_run"

// CompositionReceipts is the target of the receipt_write side effect of a
// composition run: the code-mode host's receipt log.
const CompositionReceipts = "composition_receipts"

// ReadOnlyLevel reports whether a child binding call's requested
// side-effect level changes nothing outside the host: none, read,
// read_only or readonly, in any case.
func ReadOnlyLevel(level string) bool {
	switch strings.ToLower(level) {
	case "none", "read", "read_only", "readonly":
		return true
	}
	return false
}

// Name returns "composition_report.v1".
func (Composition) Name() string { return "composition_report.v1" }

// Detect reports whether doc has both a "run" and a "calls" member.
func (Composition) Detect(doc map[string]any) bool {
	_, run := doc["run"]
	_, calls := doc["calls"]
	return run && calls
}

// Decode converts a composition report into a trace, reporting every
// problem at its JSON path in the report.
func (Composition) Decode(doc map[string]any, raw []byte, file string, line int) (*trace.Trace, error) {
	return compositionTrace(doc, file, line)
}

// CompositionTrace converts a composition report held in memory, as
// generic JSON values (maps, slices, strings, numbers, booleans, nil), into
// a normalized trace with id "composition-" + run.id (see Composition for
// the mapping). file only names the report in errors and becomes the
// trace's Source; the source hash is trace.HashBytes of the report's
// canonical JSON encoding (sorted keys), so the same report gives the same
// hash, and the same candidate ids, however it reached the caller. The
// error, if any, is a trace.ErrorList naming every problem at its JSON
// path.
func CompositionTrace(report map[string]any, file string) (*trace.Trace, error) {
	t, err := compositionTrace(report, file, 0)
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(report)
	if err != nil {
		return nil, trace.ErrorList{{File: file, Path: "$", Msg: "encoding report: " + err.Error()}}
	}
	t.Source = file
	t.SourceHash = trace.HashBytes(b)
	trace.Normalize(t)
	return t, nil
}

// childCall is a child binding call on its way to its action: the path of
// its element, for errors, and its operation index, for the order.
type childCall struct {
	path   string
	index  int64
	action trace.Action
	level  string
	tool   string
	cap    string
	status string
	errCat string
}

func compositionTrace(doc map[string]any, file string, line int) (*trace.Trace, error) {
	f := &trace.Fields{File: file, Line: line}
	run := reqObject(f, doc, "$", "run")
	callsArr, callsOK := reqArray(f, doc, "$", "calls")

	const rp = "$.run"
	// A run that is missing or not an object has been reported; its
	// members would only repeat that as "missing" each.
	rf := f
	if run == nil {
		rf = &trace.Fields{}
	}
	runID := rf.ReqString(run, rp, "id")
	snippet := rf.ReqString(run, rp, "snippet_hash")
	manifest := rf.ReqString(run, rp, "binding_manifest_hash")
	language := f.OptString(run, rp, "language")
	ceiling := f.OptString(run, rp, "requested_side_effect_ceiling")
	runOK := f.OptBool(run, rp, "ok")
	failure := f.OptString(run, rp, "failure_category")
	stdout := f.OptString(run, rp, "stdout")
	agentRun := f.OptString(run, rp, "agent_run_id")
	transcript := f.OptString(run, rp, "transcript_ref")

	// The children, checked one by one; they are put in operation order
	// once their indexes are known to be unique.
	var calls []childCall
	// named are the tool call ids of every call, including those dropped
	// for other problems, so that their results are not reported too.
	named := map[string]bool{}
	if callsOK {
		for i, e := range callsArr {
			p := trace.Element("$.calls", i)
			obj, isObj := e.(map[string]any)
			if !isObj {
				f.TypeError(p, "object", e)
				continue
			}
			c, ok := childAction(f, obj, p)
			named[c.action.ID] = true
			if ok {
				calls = append(calls, c)
			}
		}
	}
	// Every id must name one thing: the run's id is the parent action's,
	// each tool call id a child's and the key its result is filed under.
	// Duplicates are found in the report's order, so that "first" means
	// first in the file.
	firstIndex := map[int64]string{}
	firstID := map[string]string{}
	if runID != "" {
		firstID[runID] = trace.Member(rp, "id")
	}
	for _, c := range calls {
		if where, dup := firstIndex[c.index]; dup {
			f.Errorf(trace.Member(c.path, "operation_index"), "duplicate operation_index %d (first at %s)", c.index, where)
		} else {
			firstIndex[c.index] = trace.Member(c.path, "operation_index")
		}
		idPath := trace.Member(c.path, "tool_call_id")
		if where, dup := firstID[c.action.ID]; dup {
			f.Errorf(idPath, "duplicate id %q (first at %s)", c.action.ID, where)
		} else {
			firstID[c.action.ID] = idPath
		}
	}

	slices.SortStableFunc(calls, func(a, b childCall) int { return cmp.Compare(a.index, b.index) })

	// Results are filed under their call's tool call id.
	outputs := map[string]any{}
	if arr, ok := f.OptArray(doc, "$", "results"); ok {
		seen := map[string]string{}
		for i, e := range arr {
			p := trace.Element("$.results", i)
			obj, isObj := e.(map[string]any)
			if !isObj {
				f.TypeError(p, "object", e)
				continue
			}
			id := f.ReqString(obj, p, "tool_call_id")
			if id == "" {
				continue
			}
			idPath := trace.Member(p, "tool_call_id")
			if where, dup := seen[id]; dup {
				f.Errorf(idPath, "duplicate result for tool_call_id %q (first at %s)", id, where)
				continue
			}
			seen[id] = idPath
			if !named[id] {
				f.Errorf(idPath, "no call has tool_call_id %q", id)
				continue
			}
			outputs[id] = obj["output"]
		}
	}
	events, hasEvents := f.OptArray(doc, "$", "events")

	if err := f.Err(); err != nil {
		return nil, err
	}

	identity := map[string]any{"snippet_hash": snippet, "binding_manifest_hash": manifest}
	if language != "" {
		identity["language"] = language
	}
	if ceiling != "" {
		identity["requested_side_effect_ceiling"] = ceiling
	}
	t := &trace.Trace{
		Version: trace.SchemaVersion,
		ID:      "composition-" + runID,
		Actions: make([]trace.Action, 0, 1+len(calls)),
		Metadata: map[string]any{
			"composition.run_id":                runID,
			"composition.snippet_hash":          snippet,
			"composition.binding_manifest_hash": manifest,
		},
		ReplayAllowlist: []trace.AllowlistRule{
			{Path: "/run_id", Reason: "composition run ids are allocated per execution"},
			{Path: "/effect_receipts/0/run_id", Reason: "composition run ids are allocated per execution"},
		},
		Extra: rest(doc, "run", "calls", "results", "events"),
	}
	if agentRun != "" || transcript != "" {
		t.Flow = &trace.Flow{AgentRunID: agentRun, TranscriptRef: transcript}
	}
	if language != "" {
		t.Metadata["composition.language"] = language
	}
	if ceiling != "" {
		t.Metadata["composition.requested_side_effect_ceiling"] = ceiling
	}
	if runOK != nil {
		t.Metadata["composition.ok"] = *runOK
	}
	if failure != "" {
		t.Metadata["composition.failure_category"] = failure
	}
	if hasEvents && len(events) > 0 {
		t.Metadata["composition.events"] = events
	}

	// The parent: the run itself. Its parameters repeat its inputs so that
	// the snippet's identity is part of the step the workflow calls, and
	// a run of another snippet is seen to differ.
	parent := trace.Action{
		ID:           runID,
		Kind:         KindCompositionRun,
		Name:         string(KindCompositionRun),
		Parameters:   identity,
		Inputs:       clone(identity),
		Output:       run["result"],
		Capabilities: []string{"composition.run"},
		SideEffects: []trace.SideEffect{{
			Kind: "receipt_write", Target: CompositionReceipts, Capability: "composition.run", Mutation: "append",
		}},
		Extra: rest(run, "id", "snippet_hash", "binding_manifest_hash", "language", "requested_side_effect_ceiling",
			"ok", "failure_category", "result", "stdout", "agent_run_id", "transcript_ref"),
	}
	setDeterministic(&parent)
	pmd := map[string]any{}
	if runOK != nil {
		pmd["ok"] = *runOK
	}
	if failure != "" {
		pmd["failure_category"] = failure
	}
	if stdout != "" {
		pmd["stdout"] = stdout
	}
	if len(pmd) > 0 {
		parent.Metadata = pmd
	}
	t.Actions = append(t.Actions, parent)

	parentReceipt := map[string]any{"kind": string(KindCompositionRun), "run_id": runID, "calls": number(int64(len(calls)))}
	for k, v := range identity {
		parentReceipt[k] = v
	}
	if runOK != nil {
		parentReceipt["ok"] = *runOK
	}
	if failure != "" {
		parentReceipt["failure_category"] = failure
	}
	receipts := []any{parentReceipt}
	statuses := make([]any, len(calls))
	for i, c := range calls {
		a := c.action
		receipt := map[string]any{
			"kind":            string(trace.KindToolCall),
			"tool_call_id":    a.ID,
			"operation_index": number(c.index),
			"tool_name":       c.tool,
			"capability":      c.cap,
		}
		if out, has := outputs[a.ID]; has {
			a.Output = out
			receipt["output"] = out
		}
		if c.level != "" {
			receipt["requested_side_effect_level"] = c.level
		}
		if c.status != "" {
			receipt["status"] = c.status
		}
		if c.errCat != "" {
			receipt["error_category"] = c.errCat
		}
		statuses[i] = c.status
		t.Actions = append(t.Actions, a)
		receipts = append(receipts, receipt)
	}
	t.Metadata["composition.child_statuses"] = statuses
	if len(calls) > 0 {
		t.ReplayAllowlist = append(t.ReplayAllowlist, trace.AllowlistRule{
			Path: "/effect_receipts/*/tool_call_id", Reason: "tool call ids are allocated per execution",
		})
	}
	t.ReplayRun = map[string]any{
		"run_id":                runID,
		"snippet_hash":          snippet,
		"binding_manifest_hash": manifest,
		"effect_receipts":       receipts,
	}
	t.PruneExtra()
	return t, nil
}

// childAction checks one element of calls and builds its action. ok is
// false when the element lacks what ordering needs (a valid
// operation_index and tool_call_id); its problems are recorded either way.
func childAction(f *trace.Fields, obj map[string]any, p string) (childCall, bool) {
	c := childCall{path: p}
	index, hasIndex := reqInt(f, obj, p, "operation_index")
	c.index = index
	id := f.ReqString(obj, p, "tool_call_id")
	c.tool = f.ReqString(obj, p, "tool_name")
	domain := f.ReqString(obj, p, "domain")
	op := f.ReqString(obj, p, "op")
	c.level = f.OptString(obj, p, "requested_side_effect_level")
	annotations := f.OptObject(obj, p, "annotations")
	policy := f.OptObject(obj, p, "policy_context")
	c.status = f.OptString(obj, p, "status")
	c.errCat = f.OptString(obj, p, "error_category")
	duration := f.OptInt(obj, p, "duration_ms")
	if domain != "" && op != "" {
		c.cap = domain + "." + op
	}

	a := trace.Action{
		ID:         id,
		Kind:       trace.KindToolCall,
		Name:       c.tool,
		DurationMS: duration,
		Extra: rest(obj, "operation_index", "tool_call_id", "tool_name", "domain", "op", "raw_input",
			"requested_side_effect_level", "annotations", "policy_context", "status", "error_category", "duration_ms"),
	}
	if c.cap != "" {
		a.Capabilities = []string{c.cap}
	}
	// An object input is the call's keyword arguments; anything else is
	// kept as the input it was, without inventing argument names.
	if in, has := obj["raw_input"]; has && in != nil {
		if m, isObj := in.(map[string]any); isObj {
			if len(m) > 0 {
				a.Parameters = m
			}
		} else {
			a.Inputs = in
		}
	}
	md := map[string]any{"operation_index": number(index)}
	if annotations != nil {
		md["annotations"] = annotations
	}
	if policy != nil {
		md["policy_context"] = policy
	}
	if c.status != "" {
		md["status"] = c.status
	}
	if c.errCat != "" {
		md["error_category"] = c.errCat
	}
	if c.level != "" {
		md["requested_side_effect_level"] = c.level
	}
	md["domain"], md["op"] = domain, op
	a.Metadata = md

	switch {
	case c.level == "":
		a.SideEffects = []trace.SideEffect{{
			Kind: UnknownSideEffects, Target: c.tool, Capability: c.cap,
			Metadata: map[string]any{"side_effects_known": false, "reason": "the call does not state its requested side-effect level"},
		}}
	case !ReadOnlyLevel(c.level):
		a.SideEffects = []trace.SideEffect{{Kind: c.level, Target: c.tool, Capability: c.cap}}
	}
	// The call was made by snippet code, not chosen by a model: given the
	// snippet and its inputs it is the same call every time.
	setDeterministic(&a)
	c.action = a
	return c, hasIndex && id != ""
}

// reqObject reads a required object member; absent or of another type is
// recorded, and nil returned.
func reqObject(f *trace.Fields, obj map[string]any, p, key string) map[string]any {
	v, present := obj[key]
	if !present {
		f.Errorf(trace.Member(p, key), "missing required field")
		return nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		f.TypeError(trace.Member(p, key), "object", v)
	}
	return m
}

// reqArray reads a required array member.
func reqArray(f *trace.Fields, obj map[string]any, p, key string) ([]any, bool) {
	v, present := obj[key]
	if !present {
		f.Errorf(trace.Member(p, key), "missing required field")
		return nil, false
	}
	arr, ok := v.([]any)
	if !ok {
		f.TypeError(trace.Member(p, key), "array", v)
	}
	return arr, ok
}

// reqInt reads a required non-negative integer member.
func reqInt(f *trace.Fields, obj map[string]any, p, key string) (int64, bool) {
	v, present := obj[key]
	if !present {
		f.Errorf(trace.Member(p, key), "missing required field")
		return 0, false
	}
	return f.Int(v, trace.Member(p, key), true)
}

// number returns n as the generic JSON number the trace codec produces, so
// that a trace built here equals the one decoded from its encoding.
func number(n int64) json.Number { return json.Number(strconv.FormatInt(n, 10)) }

// clone returns a shallow copy of m, so that two fields of an action do not
// share one map a caller might change through either.
func clone(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
