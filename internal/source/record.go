package source

import (
	"cmp"
	"slices"
	"strconv"
	"time"

	"github.com/crystallize-dev/crystallize/internal/trace"
)

// RunRecord is the adapter for persisted workflow run records: JSON
// objects with a "stages" member or "_type": "workflow_run", as a workflow
// runtime writes them after a run. A record is converted into a trace:
//
//   - each stage {id, kind, node_id, started_at, visible_text, usage,
//     metadata} becomes an action of the stage's kind (default "stage")
//     named by node_id, timed at started_at, whose output and observed
//     output are visible_text, whose cost comes from usage (call_count,
//     input_tokens, output_tokens, total_cost, total_duration_ms, the first
//     of models), deterministic when it made no model call and fuzzy when
//     it made some;
//   - each tool recording {tool_use_id, tool_name, timestamp, result,
//     duration_ms, args_hash, iteration, is_rejected, args or arguments}
//     becomes a tool_call action with the args as parameters, the result as
//     output, args_hash, iteration and is_rejected added to its metadata,
//     and deterministic unless the call was rejected;
//   - each human-in-the-loop question {request_id, agent, asked_at, prompt,
//     trace_id} becomes a human_approval action named after the agent
//     (human_approval when there is none) with a required approval at
//     boundary "hitl" and trace_id added to its metadata.
//
// The actions are merged in timestamp order by a stable sort, so ties keep
// stages before tool calls before questions, each in record order. The
// record's id, workflow_id, started_at, finished_at, usage and metadata
// carry over; the replay allowlist is the one a run needs by construction
// (run ids differ per execution). Members the conversion does not use are
// kept in the Extra maps, except "_type", which names the record format
// and would be false of the trace, and members named like a field of the
// trace or action they would land in, which cannot be kept beside the
// field they shadow (see trace.Trace.PruneExtra).
type RunRecord struct{}

// Name returns "workflow_run".
func (RunRecord) Name() string { return "workflow_run" }

// Detect reports whether doc has a "stages" member or "_type":
// "workflow_run".
func (RunRecord) Detect(doc map[string]any) bool {
	if _, ok := doc["stages"]; ok {
		return true
	}
	typ, _ := doc["_type"].(string)
	return typ == "workflow_run"
}

// Decode converts a run record into a trace, reporting every type error at
// its JSON path in the record.
func (RunRecord) Decode(doc map[string]any, raw []byte, file string, line int) (*trace.Trace, error) {
	f := &trace.Fields{File: file, Line: line}
	t := &trace.Trace{
		Version:    trace.SchemaVersion,
		ID:         f.OptString(doc, "$", "id"),
		WorkflowID: f.OptString(doc, "$", "workflow_id"),
		StartedAt:  f.OptString(doc, "$", "started_at"),
		FinishedAt: f.OptString(doc, "$", "finished_at"),
		Metadata:   f.OptObject(doc, "$", "metadata"),
		ReplayAllowlist: []trace.AllowlistRule{
			{Path: "/run_id", Reason: "run ids are allocated per execution"},
		},
		Extra: rest(doc, "_type", "id", "workflow_id", "started_at", "finished_at", "usage",
			"metadata", "stages", "tool_recordings", "hitl_questions"),
	}
	if u := f.OptObject(doc, "$", "usage"); u != nil {
		t.Usage = &trace.Usage{
			ModelCalls:   f.Count(u, "$.usage", "call_count"),
			InputTokens:  f.Count(u, "$.usage", "input_tokens"),
			OutputTokens: f.Count(u, "$.usage", "output_tokens"),
			TotalCostUSD: f.Amount(u, "$.usage", "total_cost"),
			WallMS:       f.Count(u, "$.usage", "total_duration_ms"),
			Extra:        rest(u, "call_count", "input_tokens", "output_tokens", "total_cost", "total_duration_ms"),
		}
	}

	var steps []step
	each(f, doc, "stages", func(obj map[string]any, p string) { steps = append(steps, stageAction(f, obj, p)) })
	each(f, doc, "tool_recordings", func(obj map[string]any, p string) { steps = append(steps, toolAction(f, obj, p)) })
	each(f, doc, "hitl_questions", func(obj map[string]any, p string) { steps = append(steps, questionAction(f, obj, p)) })

	// Stable, so that equal times keep the order the lists were appended
	// in; the key is computed once per step, not per comparison.
	slices.SortStableFunc(steps, func(a, b step) int { return a.at.compare(b.at) })

	t.Actions = make([]trace.Action, len(steps))
	first := make(map[string]string, len(steps))
	for i, s := range steps {
		if s.action.ID == "" {
			s.action.ID = "action_" + strconv.Itoa(i+1)
		}
		if where, dup := first[s.action.ID]; dup {
			f.Errorf(s.idPath, "duplicate action id %q (first at %s)", s.action.ID, where)
		} else {
			first[s.action.ID] = s.idPath
		}
		t.Actions[i] = s.action
	}
	if err := f.Err(); err != nil {
		return nil, err
	}
	if t.ID == "" {
		t.ID = trace.DeriveID(file, line)
	}
	// A leftover member named like a trace field ("source", "flow", an
	// action's "output") cannot be kept beside the field it shadows.
	t.PruneExtra()
	return t, nil
}

// step is an action on its way into the merged list: where it came from,
// for errors, and when it happened, for the merge.
type step struct {
	action trace.Action
	idPath string // JSON path of the member that gave (or would give) the id
	at     stamp
}

// stamp is a sort key for a timestamp. RFC 3339 times are compared as
// instants, so "10:00:00+02:00" sorts before "09:00:00Z", and as their text
// only when they are not RFC 3339. The three classes keep the order total
// (and so the sort well defined) for any mix: steps without a time first,
// as they cannot be placed, then parseable times, then other text.
type stamp struct {
	class int // 0 no time, 1 RFC 3339, 2 other text
	t     time.Time
	text  string
}

func newStamp(s string) stamp {
	if s == "" {
		return stamp{}
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return stamp{class: 1, t: t}
	}
	return stamp{class: 2, text: s}
}

func (a stamp) compare(b stamp) int {
	return cmp.Or(cmp.Compare(a.class, b.class), a.t.Compare(b.t), cmp.Compare(a.text, b.text))
}

// each calls fn for every element of the optional array member key of doc,
// reporting elements that are not objects.
func each(f *trace.Fields, doc map[string]any, key string, fn func(obj map[string]any, p string)) {
	arr, ok := f.OptArray(doc, "$", key)
	if !ok {
		return
	}
	for i, e := range arr {
		p := trace.Element("$."+key, i)
		obj, ok := e.(map[string]any)
		if !ok {
			f.TypeError(p, "object", e)
			continue
		}
		fn(obj, p)
	}
}

func stageAction(f *trace.Fields, obj map[string]any, p string) step {
	a := trace.Action{
		ID:        f.OptString(obj, p, "id"),
		Kind:      trace.Kind(f.OptString(obj, p, "kind")),
		Name:      f.ReqString(obj, p, "node_id"),
		Timestamp: f.OptString(obj, p, "started_at"),
		Metadata:  f.OptObject(obj, p, "metadata"),
		Extra:     rest(obj, "id", "kind", "node_id", "started_at", "visible_text", "usage", "metadata"),
	}
	if a.Kind == "" {
		a.Kind = trace.KindStage
	}
	if v, ok := obj["visible_text"]; ok && v != nil {
		if _, ok := v.(string); ok {
			a.Output, a.ObservedOutput = v, v
		} else {
			f.TypeError(trace.Member(p, "visible_text"), "string", v)
		}
	}
	var calls int64
	if u := f.OptObject(obj, p, "usage"); u != nil {
		up := trace.Member(p, "usage")
		c := &trace.Cost{
			ModelCalls:   f.Count(u, up, "call_count"),
			InputTokens:  f.Count(u, up, "input_tokens"),
			OutputTokens: f.Count(u, up, "output_tokens"),
			TotalCostUSD: f.Amount(u, up, "total_cost"),
			WallMS:       f.Count(u, up, "total_duration_ms"),
			Extra:        rest(u, "call_count", "input_tokens", "output_tokens", "total_cost", "total_duration_ms", "models"),
		}
		// The cost model is one name; a stage that used several keeps
		// the whole list next to the first.
		if models := f.OptStrings(u, up, "models"); len(models) > 0 {
			c.Model = models[0]
			if len(models) > 1 {
				if c.Extra == nil {
					c.Extra = map[string]any{}
				}
				c.Extra["models"] = u["models"]
			}
		}
		calls = c.ModelCalls
		a.Cost = c
	}
	// A stage that called no model is plain code; one that did is where
	// the run needed judgment.
	a.Deterministic = ptr(calls == 0)
	a.Fuzzy = ptr(calls > 0)
	return step{action: a, idPath: trace.Member(p, "id"), at: newStamp(a.Timestamp)}
}

func toolAction(f *trace.Fields, obj map[string]any, p string) step {
	a := trace.Action{
		ID:         f.OptString(obj, p, "tool_use_id"),
		Kind:       trace.KindToolCall,
		Name:       f.ReqString(obj, p, "tool_name"),
		Timestamp:  f.OptString(obj, p, "timestamp"),
		DurationMS: f.OptInt(obj, p, "duration_ms"),
	}
	used := []string{"tool_use_id", "tool_name", "timestamp", "result", "duration_ms", "args_hash", "iteration", "is_rejected", "metadata"}
	// Recorders name the arguments args or arguments; with both, args
	// wins and arguments stays in Extra.
	argsKey := "args"
	if v, ok := obj["args"]; !ok || v == nil {
		argsKey = "arguments"
	}
	a.Parameters = f.OptObject(obj, p, argsKey)
	used = append(used, argsKey)
	if v, ok := obj["result"]; ok && v != nil {
		a.Output = v
	}
	md := metadata(f, obj, p)
	if h := f.OptString(obj, p, "args_hash"); h != "" {
		md["args_hash"] = h
	}
	if v, ok := obj["iteration"]; ok && v != nil {
		if _, ok := f.Int(v, trace.Member(p, "iteration"), true); ok {
			md["iteration"] = v
		}
	}
	rejected := f.OptBool(obj, p, "is_rejected")
	if rejected != nil {
		md["is_rejected"] = *rejected
	}
	if len(md) > 0 {
		a.Metadata = md
	}
	// A rejected call did not run as recorded; replaying it blindly
	// would not reproduce the run.
	a.Deterministic = ptr(rejected == nil || !*rejected)
	a.Extra = rest(obj, used...)
	return step{action: a, idPath: trace.Member(p, "tool_use_id"), at: newStamp(a.Timestamp)}
}

func questionAction(f *trace.Fields, obj map[string]any, p string) step {
	a := trace.Action{
		ID:        f.OptString(obj, p, "request_id"),
		Kind:      trace.KindHumanApproval,
		Name:      f.OptString(obj, p, "agent"),
		Timestamp: f.OptString(obj, p, "asked_at"),
		Approval: &trace.Approval{
			Prompt:   f.OptString(obj, p, "prompt"),
			Required: true,
			Boundary: "hitl",
		},
		// A person's answer is not a function of the inputs.
		Deterministic: ptr(false),
		Extra:         rest(obj, "request_id", "agent", "asked_at", "prompt", "trace_id", "metadata"),
	}
	if a.Name == "" {
		// Every action needs a name; a question asked on behalf of no
		// named agent is still a human approval.
		a.Name = string(trace.KindHumanApproval)
	}
	md := metadata(f, obj, p)
	if id := f.OptString(obj, p, "trace_id"); id != "" {
		md["trace_id"] = id
	}
	if len(md) > 0 {
		a.Metadata = md
	}
	return step{action: a, idPath: trace.Member(p, "request_id"), at: newStamp(a.Timestamp)}
}

// metadata returns a copy of the element's own metadata object, if it has
// one, for the conversion to add its bookkeeping to; the fields it adds
// win over members of the same name.
func metadata(f *trace.Fields, obj map[string]any, p string) map[string]any {
	md := map[string]any{}
	for k, v := range f.OptObject(obj, p, "metadata") {
		md[k] = v
	}
	return md
}

// rest returns the members of obj other than used, or nil: the members a
// conversion does not interpret and keeps in an Extra map.
func rest(obj map[string]any, used ...string) map[string]any {
	var m map[string]any
	for k, v := range obj {
		if slices.Contains(used, k) {
			continue
		}
		if m == nil {
			m = make(map[string]any)
		}
		m[k] = v
	}
	return m
}

func ptr[T any](v T) *T { return &v }
