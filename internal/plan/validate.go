package plan

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"

	"github.com/crystallize-dev/crystallize/internal/trace"
)

// Version is the only schema_version this package understands.
const Version = "1"

// Codes of validation problems. They are a contract: tests and callers
// match on them, never on messages.
const (
	// Errors: the plan is refused.
	CodeInvalidJSON            = "invalid_json"
	CodeTooLarge               = "too_large"
	CodeStringTooLarge         = "string_too_large"
	CodeDuplicateKey           = "duplicate_key"
	CodeNotADict               = "not_a_dict"
	CodeShape                  = "shape"
	CodeSchemaVersionMismatch  = "schema_version_mismatch"
	CodeNoNodes                = "no_nodes"
	CodeEntryMissing           = "entry_missing"
	CodeEntryNotFound          = "entry_not_found"
	CodeNodeIDMismatch         = "node_id_mismatch"
	CodeUnknownKind            = "unknown_kind"
	CodeEdgeFromUnknown        = "edge_from_unknown"
	CodeEdgeToUnknown          = "edge_to_unknown"
	CodeDuplicateEdge          = "duplicate_edge"
	CodeCycle                  = "cycle"
	CodeAgentLoopMissingPrompt = "agent_loop_missing_prompt"
	CodeSubAgentMissingWorker  = "sub_agent_missing_worker"
	CodeCommandMissingTool     = "command_missing_tool"
	CodeHumanGateMissingApprov = "human_gate_missing_approval"
	CodeHumanGateConflict      = "human_gate_conflict"
	CodeMapMissingInputs       = "map_missing_inputs"
	CodeNodeToolNotGranted     = "node_tool_not_granted"
	CodeVerificationPrimary    = "verification_primary_unknown"
	CodeUnknownResolver        = "unknown_resolver_unknown"
	CodeBudgetMaxNodes         = "budget_max_nodes"
	CodeBudgetMaxDepth         = "budget_max_depth"
	CodeBudgetMaxToolCalls     = "budget_max_tool_calls"
	CodeBudgetMaxModelCalls    = "budget_max_model_calls"
	CodeBudgetMaxSteps         = "budget_max_steps"
	CodeBudgetWallClock        = "budget_wall_clock_ms"
	CodeBudgetTotalCost        = "budget_total_cost_usd"
	CodeBudgetFailures         = "budget_consecutive_failures"
	CodeBudgetFailuresMax      = "budget_consecutive_failures_max"
	CodeBudgetFailuresKinds    = "budget_consecutive_failures_kinds"
	CodeBudgetFailuresKind     = "budget_consecutive_failures_kind"
	CodeBudgetFailuresPause    = "budget_consecutive_failures_pause"
	CodePromotionNegativeRuns  = "promotion_negative_shadow_runs"
	CodePromotionPassRate      = "promotion_invalid_pass_rate"

	// Warnings: the plan is accepted, but a reviewer should look.
	CodeVerifyNoContract        = "verify_no_contract"
	CodeWritesWithoutCapability = "writes_without_capability"
	CodeNodeUnreachable         = "node_unreachable"
	CodeJoinSingleInput         = "join_single_input"
)

// Default budgets, used for each ceiling a plan leaves out.
const (
	DefaultMaxNodes      = 32
	DefaultMaxDepth      = 8
	DefaultMaxToolCalls  = 128
	DefaultMaxModelCalls = 64
	DefaultMaxSteps      = 32
	// DefaultMaxIterations bounds an agent_loop that sets no
	// agent_loop.max_iterations.
	DefaultMaxIterations = 8
)

// Kinds are the node kinds of the IR, in the IR's documented order.
var Kinds = []string{"read_fact", "search", "context_pack", "agent_loop", "sub_agent", "workflow_map", "verify", "human_gate", "deterministic_command", "join", "compact"}

// Problem is one validation error or warning.
type Problem struct {
	Code    string `json:"code"`
	Path    string `json:"path"` // JSON path such as $.nodes.discover.tools[1]
	Message string `json:"message"`
}

// String formats p as "path: code: message".
func (p Problem) String() string {
	return p.Path + ": " + p.Code + ": " + p.Message
}

// Validation is the result of Validate. Its JSON form is the output of
// "crystallize plan validate --json" and is a contract.
type Validation struct {
	Valid             bool              `json:"valid"`
	SchemaVersion     string            `json:"schema_version"`
	Errors            []Problem         `json:"errors"`
	Warnings          []Problem         `json:"warnings"`
	GraphStats        GraphStats        `json:"graph_stats"`
	CapabilitySummary CapabilitySummary `json:"capability_summary"`
	BudgetSummary     BudgetSummary     `json:"budget_summary"`
	PromotionSummary  PromotionSummary  `json:"promotion_summary"`
}

// GraphStats describes the plan's graph.
type GraphStats struct {
	NodeCount      int `json:"node_count"`
	EdgeCount      int `json:"edge_count"`
	ReachableCount int `json:"reachable_count"` // nodes reachable from the entry, the entry included
	// MaxDepth is the most nodes on a path from the entry, the entry
	// counting 1. A loop through a branch edge is followed once.
	MaxDepth   int            `json:"max_depth"`
	KindCounts map[string]int `json:"kind_counts"`
}

// CapabilitySummary compares what the plan grants with what its nodes use.
type CapabilitySummary struct {
	Declared        bool     `json:"declared"`          // the plan has a capabilities object
	Tools           []string `json:"tools"`             // the ceiling, capabilities.tools
	SideEffectLevel string   `json:"side_effect_level"` // as declared, or ""
	ToolsUsed       []string `json:"tools_used"`        // every tool a node names, sorted
	Ungranted       []string `json:"ungranted"`         // tools used but not granted, sorted
	WritingNodes    []string `json:"writing_nodes"`     // nodes that declare a writes_* effect or run a command, in file order
}

// Budget is one static ceiling with the plan's own upper bound for it.
type Budget struct {
	Limit   int64 `json:"limit"`
	Used    int64 `json:"used"`    // the plan's static upper bound
	Default bool  `json:"default"` // the plan left the ceiling out
}

// BudgetSummary lists the static ceilings and the run-time ones.
type BudgetSummary struct {
	MaxNodes            Budget                     `json:"max_nodes"`
	MaxDepth            Budget                     `json:"max_depth"`
	MaxToolCalls        Budget                     `json:"max_tool_calls"`
	MaxModelCalls       Budget                     `json:"max_model_calls"`
	MaxSteps            Budget                     `json:"max_steps"`
	WallClockMS         *int64                     `json:"wall_clock_ms"`
	TotalCostUSD        *float64                   `json:"total_cost_usd"`
	ConsecutiveFailures *ConsecutiveFailuresBudget `json:"consecutive_failures"`
}

// ConsecutiveFailuresBudget stops a run after Max failed steps in a row,
// counting only nodes of Kinds (all kinds when empty); with Pause the run
// waits for approval instead of failing.
type ConsecutiveFailuresBudget struct {
	Max   int64    `json:"max"`
	Kinds []string `json:"kinds"`
	Pause bool     `json:"pause"`
}

// PromotionSummary is the plan's promotion policy, or zeros when absent.
type PromotionSummary struct {
	Declared            bool     `json:"declared"`
	ShadowRunsRequired  int64    `json:"shadow_runs_required"`
	HumanReviewRequired bool     `json:"human_review_required"`
	MinPassRate         *float64 `json:"min_pass_rate"`
}

// Validate checks data as a task plan and reports every problem it finds.
// It accepts any input and never panics: bytes that are not JSON, or JSON
// that is not an object, give a validation with one error. The result's
// slices are never nil, so its JSON form always has every member.
func Validate(data []byte) *Validation {
	v := &Validation{Errors: []Problem{}, Warnings: []Problem{}}
	v.GraphStats.KindCounts = map[string]int{}
	v.CapabilitySummary = CapabilitySummary{Tools: []string{}, ToolsUsed: []string{}, Ungranted: []string{}, WritingNodes: []string{}}
	// A plan is read by people: one far larger than any plan is refused
	// before it is decoded, and so is any string no reviewer reads.
	if len(data) > MaxPlanBytes {
		v.errorf(CodeTooLarge, "$", "the plan is %d bytes, more than %d", len(data), MaxPlanBytes)
		return v
	}
	doc, err := decode(data)
	if err != nil {
		v.errorf(CodeInvalidJSON, "$", "not valid JSON: %v", err)
		return v
	}
	longStrings(doc, "$", func(path string, n int) {
		v.errorf(CodeStringTooLarge, path, "a string of %d bytes, more than %d", n, MaxStringBytes)
	})
	// The decoder keeps the last of two members with one name, so a
	// reviewer could read a command that is not the one that runs.
	for _, d := range trace.Duplicates(data, "", 0) {
		v.errorf(CodeDuplicateKey, d.Path, "line %d: %s", d.Line, d.Msg)
	}
	root, ok := obj(doc)
	if !ok {
		v.errorf(CodeNotADict, "$", "a task plan is a JSON object, got %s", typeName(doc))
		return v
	}
	c := &checker{v: v, root: root}
	c.run(nodeOrder(data))
	c.shape(doc)
	v.Valid = len(v.Errors) == 0
	return v
}

// Size limits of a plan. A plan is a graph of a few dozen nodes that a
// person reviews; the limits are far above any such plan and far below
// what would make validation, compilation or review slow.
const (
	// MaxPlanBytes bounds a plan file.
	MaxPlanBytes = 4 << 20
	// MaxStringBytes bounds every string in a plan (and every key).
	MaxStringBytes = 256 << 10
)

// ReadFile reads a plan file: a regular file (a FIFO would block the
// read, a device never end it) of at most MaxPlanBytes. A symlink is
// followed to what it names, which must be a regular file too.
func ReadFile(file string) ([]byte, error) {
	st, err := os.Stat(file)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, errors.New("not a regular file")
	}
	if st.Size() > MaxPlanBytes {
		return nil, fmt.Errorf("%s: the plan is %d bytes, more than %d", CodeTooLarge, st.Size(), MaxPlanBytes)
	}
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return nil, errors.New("not a regular file")
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxPlanBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxPlanBytes {
		return nil, fmt.Errorf("%s: the plan is more than %d bytes", CodeTooLarge, MaxPlanBytes)
	}
	return data, nil
}

// longStrings calls f with the path and length of every string (value or
// key) in doc longer than MaxStringBytes.
func longStrings(doc any, path string, f func(path string, n int)) {
	switch d := doc.(type) {
	case string:
		if len(d) > MaxStringBytes {
			f(path, len(d))
		}
	case []any:
		for i, e := range d {
			longStrings(e, fmt.Sprintf("%s[%d]", path, i), f)
		}
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(d)) {
			kp := path + "." + k
			if len(k) > MaxStringBytes {
				kp = path + "." + k[:32] + "…"
				f(kp, len(k))
			}
			longStrings(d[k], kp, f)
		}
	}
}

func (v *Validation) errorf(code, path, format string, args ...any) {
	v.Errors = append(v.Errors, Problem{code, path, fmt.Sprintf(format, args...)})
}

func (v *Validation) warnf(code, path, format string, args ...any) {
	v.Warnings = append(v.Warnings, Problem{code, path, fmt.Sprintf(format, args...)})
}

// checker holds one validation's state: the decoded document and what
// the earlier checks learned about it.
type checker struct {
	v     *Validation
	root  map[string]any
	ids   []string       // node ids in file order
	nodes map[string]any // node id → decoded node (any type)
	kinds map[string]string
	edges []edge // well-formed edges between known nodes
	grant map[string]bool
}

// edge is an edge whose ends both name nodes.
type edge struct {
	from, to, branch string
	index            int // position in $.edges
}

func (c *checker) run(order []string) {
	v := c.v
	switch sv := c.root["schema_version"].(type) {
	case nil:
		v.errorf(CodeSchemaVersionMismatch, "$.schema_version", "missing; want %q", Version)
	case string:
		v.SchemaVersion = sv
		if sv != Version {
			v.errorf(CodeSchemaVersionMismatch, "$.schema_version", "schema_version %q is not supported; want %q", sv, Version)
		}
	default:
		v.SchemaVersion = fmt.Sprint(sv)
		v.errorf(CodeSchemaVersionMismatch, "$.schema_version", "schema_version must be the string %q, got %s %s", Version, typeName(sv), fmt.Sprint(sv))
	}

	c.collectNodes(order)
	c.capabilities()
	for _, id := range c.ids {
		c.node(id)
	}
	c.entry()
	c.collectEdges()
	c.references()
	c.graph()
	c.promotion()
}

// collectNodes records the node ids in file order. Keys the order walk
// missed (it cannot, for a document that decoded) are appended sorted, so
// the result is deterministic whatever happens.
func (c *checker) collectNodes(order []string) {
	c.kinds = map[string]string{}
	raw, present := c.root["nodes"]
	nodes, ok := obj(raw)
	switch {
	case !present:
		c.v.errorf(CodeNoNodes, "$.nodes", "missing; a plan needs at least one node")
		return
	case !ok:
		c.v.errorf(CodeNoNodes, "$.nodes", "must be an object of nodes keyed by id, got %s", typeName(raw))
		return
	case len(nodes) == 0:
		c.v.errorf(CodeNoNodes, "$.nodes", "a plan needs at least one node")
		return
	}
	c.nodes = nodes
	seen := map[string]bool{}
	for _, id := range order {
		if _, ok := nodes[id]; ok && !seen[id] {
			seen[id] = true
			c.ids = append(c.ids, id)
		}
	}
	var rest []string
	for id := range nodes {
		if !seen[id] {
			rest = append(rest, id)
		}
	}
	sort.Strings(rest)
	c.ids = append(c.ids, rest...)
	c.v.GraphStats.NodeCount = len(c.ids)
}

// capabilities reads the plan's capability ceiling. A plan without one
// grants no tools: deny by default.
func (c *checker) capabilities() {
	c.grant = map[string]bool{}
	s := &c.v.CapabilitySummary
	caps, ok := obj(c.root["capabilities"])
	if !ok {
		return
	}
	s.Declared = true
	for _, t := range strs(caps["tools"]) {
		if !c.grant[t] {
			c.grant[t] = true
			s.Tools = append(s.Tools, t)
		}
	}
	s.SideEffectLevel, _ = str(caps["side_effect_level"])
}

// node checks one node's own contract.
func (c *checker) node(id string) {
	v := c.v
	path := child("$.nodes", id)
	n, ok := obj(c.nodes[id])
	if !ok {
		return // the schema reports the type
	}
	if nid, ok := str(n["id"]); ok && nid != id {
		v.errorf(CodeNodeIDMismatch, child(path, "id"), "node id %q differs from its key %q", nid, id)
	}
	k, _ := str(n["kind"])
	switch {
	case n["kind"] == nil:
		v.errorf(CodeUnknownKind, child(path, "kind"), "missing; want one of %s", strings.Join(Kinds, ", "))
		return
	case !slices.Contains(Kinds, k):
		v.errorf(CodeUnknownKind, child(path, "kind"), "unknown kind %s; want one of %s", quoteAny(n["kind"]), strings.Join(Kinds, ", "))
		return
	}
	c.kinds[id] = k
	v.GraphStats.KindCounts[k]++

	block := func(name string) map[string]any {
		b, _ := obj(n[name])
		return b
	}
	nonEmpty := func(m map[string]any, key string) bool {
		s, _ := str(m[key])
		return strings.TrimSpace(s) != ""
	}
	switch k {
	case "agent_loop":
		if !nonEmpty(n, "prompt") {
			v.errorf(CodeAgentLoopMissingPrompt, child(path, "prompt"), "an agent_loop needs a prompt to iterate on")
		}
	case "sub_agent":
		if !nonEmpty(block("sub_agent"), "worker_name") {
			v.errorf(CodeSubAgentMissingWorker, path+".sub_agent.worker_name", "a sub_agent needs the name of the worker it delegates to")
		}
	case "deterministic_command":
		if !nonEmpty(block("command"), "tool") {
			v.errorf(CodeCommandMissingTool, path+".command.tool", "a deterministic_command needs the tool it calls")
		}
	case "human_gate":
		// human_gate {approval_id, prompt, skippable} is the IR's block;
		// approval {id, prompt, skippable} is its older alias, accepted
		// alone. Both at once could disagree, so that is refused.
		_, hasGate := n["human_gate"]
		_, hasAlias := n["approval"]
		switch {
		case hasGate && hasAlias:
			v.errorf(CodeHumanGateConflict, child(path, "approval"), "give the approval once, in human_gate; approval is its older alias")
		case hasAlias:
			if !nonEmpty(block("approval"), "id") {
				v.errorf(CodeHumanGateMissingApprov, path+".approval.id", "a human_gate needs an approval id for --approve and resume to name")
			}
		case !nonEmpty(block("human_gate"), "approval_id"):
			v.errorf(CodeHumanGateMissingApprov, path+".human_gate.approval_id", "a human_gate needs an approval id for --approve and resume to name")
		}
	case "workflow_map":
		m := block("map")
		items, isList := m["items"].([]any)
		_, isRef := str(m["items"])
		if !(isList && len(items) > 0) && !(isRef && nonEmpty(m, "items")) && !nonEmpty(m, "item_artifact_kind") {
			v.errorf(CodeMapMissingInputs, path+".map.items", "a workflow_map needs map.items (a non-empty list or an artifact name) or map.item_artifact_kind to fan out over")
		}
	case "verify":
		vb := block("verify")
		switch {
		case vb == nil:
			v.warnf(CodeVerifyNoContract, child(path, "verify"), "a verify node without a verify block has nothing to check without a model")
		case !nonEmpty(vb, "command"):
			v.warnf(CodeVerifyNoContract, child(path, "verify"), "verify.command is missing: there is nothing to run without a model")
		}
		// A command without expectations is a contract: the verifier
		// expects exit status 0 when expect_status is absent.
	}

	// Tools: each must be granted by the plan-wide ceiling.
	s := &c.v.CapabilitySummary
	use := func(tool, p string) {
		if !slices.Contains(s.ToolsUsed, tool) {
			s.ToolsUsed = append(s.ToolsUsed, tool)
		}
		if !c.grant[tool] {
			if !slices.Contains(s.Ungranted, tool) {
				s.Ungranted = append(s.Ungranted, tool)
			}
			if s.Declared {
				v.errorf(CodeNodeToolNotGranted, p, "tool %q is not in capabilities.tools", tool)
			} else {
				v.errorf(CodeNodeToolNotGranted, p, "tool %q is not granted: the plan declares no capabilities, which grants no tools", tool)
			}
		}
	}
	if tools, ok := n["tools"].([]any); ok {
		for i, t := range tools {
			if ts, ok := str(t); ok && ts != "" {
				use(ts, trace.Element(child(path, "tools"), i))
			}
		}
	}
	if k == "deterministic_command" {
		if tool, _ := str(block("command")["tool"]); strings.TrimSpace(tool) != "" {
			use(tool, path+".command.tool")
		}
	}
	sort.Strings(s.ToolsUsed)
	sort.Strings(s.Ungranted)

	// Writes: a node that declares writing needs a ceiling that allows it.
	if writes(n, k) {
		s.WritingNodes = append(s.WritingNodes, id)
		var why string
		tool, _ := str(block("command")["tool"])
		switch {
		case k == "deterministic_command" && n["effects"] == nil && c.grant[tool] && s.SideEffectLevel != "none" && s.SideEffectLevel != "read_only":
			// A command node that declares no effects can do what its
			// tool does, and the plan grants that tool by name.
		case !c.grant["edit"] && !c.grant["run"] && s.SideEffectLevel != "writes_files" && s.SideEffectLevel != "runs_commands":
			why = "capabilities.tools grants neither edit nor run, and side_effect_level is neither writes_files nor runs_commands"
		case s.SideEffectLevel == "none" || s.SideEffectLevel == "read_only":
			why = fmt.Sprintf("capabilities.side_effect_level is %s", s.SideEffectLevel)
		}
		if why != "" {
			p := child(path, "effects")
			if k == "deterministic_command" && n["effects"] == nil {
				p = child(path, "command")
			}
			v.warnf(CodeWritesWithoutCapability, p, "node writes, but %s", why)
		}
	}
}

// writes reports whether a node may change the world: it declares a
// writes_* effect, or it runs a command, which can do anything its tool
// can.
func writes(n map[string]any, kind string) bool {
	if kind == "deterministic_command" {
		return true
	}
	for _, e := range strs(n["effects"]) {
		if strings.HasPrefix(e, "writes") {
			return true
		}
	}
	return false
}

func (c *checker) entry() {
	raw, present := c.root["entry"]
	e, _ := str(raw)
	switch {
	case !present || strings.TrimSpace(e) == "":
		if _, isStr := raw.(string); present && !isStr {
			return // the schema reports the type
		}
		c.v.errorf(CodeEntryMissing, "$.entry", "a plan needs an entry node id")
	case c.nodes != nil && !c.isNode(e):
		c.v.errorf(CodeEntryNotFound, "$.entry", "entry %q names no node", e)
	}
}

// collectEdges checks every edge's ends and keeps the ones between known
// nodes for the graph checks.
func (c *checker) collectEdges() {
	list, _ := c.root["edges"].([]any)
	c.v.GraphStats.EdgeCount = len(list)
	seen := map[[3]string]int{}
	for i, raw := range list {
		e, ok := obj(raw)
		if !ok {
			continue
		}
		p := trace.Element("$.edges", i)
		from, fok := str(e["from"])
		to, tok := str(e["to"])
		branch, _ := str(e["branch"])
		good := fok && tok
		if fok && from != "" && !c.isNode(from) {
			c.v.errorf(CodeEdgeFromUnknown, child(p, "from"), "edge from %q: no such node", from)
			good = false
		}
		if tok && to != "" && !c.isNode(to) {
			c.v.errorf(CodeEdgeToUnknown, child(p, "to"), "edge to %q: no such node", to)
			good = false
		}
		if !good || from == "" || to == "" {
			continue
		}
		key := [3]string{from, to, branch}
		if j, dup := seen[key]; dup {
			c.v.errorf(CodeDuplicateEdge, p, "same edge as $.edges[%d]", j)
			continue
		}
		seen[key] = i
		c.edges = append(c.edges, edge{from, to, branch, i})
	}
}

func (c *checker) isNode(id string) bool {
	_, ok := c.nodes[id]
	return ok
}

// references checks the node ids named outside nodes and edges.
func (c *checker) references() {
	if ver, ok := obj(c.root["verification"]); ok {
		if p, ok := str(ver["primary"]); ok && !c.isNode(p) {
			c.v.errorf(CodeVerificationPrimary, "$.verification.primary", "primary verifier %q names no node", p)
		}
	}
	list, _ := c.root["unknowns"].([]any)
	for i, raw := range list {
		u, _ := obj(raw)
		if r, ok := str(u["resolved_by_node"]); ok && !c.isNode(r) {
			c.v.errorf(CodeUnknownResolver, trace.Element("$.unknowns", i)+".resolved_by_node", "resolver %q names no node", r)
		}
	}
}

func (c *checker) promotion() {
	pp, ok := obj(c.root["promotion_policy"])
	if !ok {
		return
	}
	s := &c.v.PromotionSummary
	s.Declared = true
	s.HumanReviewRequired, _ = pp["human_review_required"].(bool)
	if n, ok := integer(pp["shadow_runs_required"]); ok {
		if n < 0 {
			c.v.errorf(CodePromotionNegativeRuns, "$.promotion_policy.shadow_runs_required", "shadow_runs_required is %d; it cannot be negative", n)
		} else {
			s.ShadowRunsRequired = n
		}
	}
	if raw, present := pp["min_pass_rate"]; present {
		r, ok := num(raw)
		switch {
		case !ok:
			c.v.errorf(CodePromotionPassRate, "$.promotion_policy.min_pass_rate", "min_pass_rate must be a number from 0 to 1, got %s", typeName(raw))
		case r < 0 || r > 1:
			c.v.errorf(CodePromotionPassRate, "$.promotion_policy.min_pass_rate", "min_pass_rate %g is outside 0 to 1", r)
		default:
			s.MinPassRate = &r
		}
	}
}

// shape applies the JSON Schema and reports each violation as a shape
// error, except where a specific code already covers the same value.
func (c *checker) shape(doc any) {
	sch, err := compiledSchema()
	if err != nil {
		c.v.errorf(CodeShape, "$", "task-plan schema does not compile: %v", err)
		return
	}
	err = sch.Validate(doc)
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return
	}
	var shapes []Problem
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) > 0 {
			for _, cause := range e.Causes {
				walk(cause)
			}
			return
		}
		at := instancePath(doc, e.InstanceLocation)
		switch k := e.ErrorKind.(type) {
		case *kind.Required:
			for _, m := range k.Missing {
				shapes = append(shapes, Problem{CodeShape, child(at, m), "missing required member"})
			}
		case *kind.AdditionalProperties:
			for _, m := range k.Properties {
				shapes = append(shapes, Problem{CodeShape, child(at, m), `unknown member (extensions must start with "x-")`})
			}
		default:
			shapes = append(shapes, Problem{CodeShape, at, leafMessage(e.ErrorKind)})
		}
	}
	walk(ve)
	sort.SliceStable(shapes, func(i, j int) bool { return shapes[i].Path < shapes[j].Path })
	coded := slices.Clone(c.v.Errors)
	for i, p := range shapes {
		if i > 0 && p == shapes[i-1] {
			continue
		}
		if slices.ContainsFunc(coded, func(e Problem) bool { return covers(e.Path, p.Path) }) {
			continue
		}
		c.v.Errors = append(c.v.Errors, p)
	}
}

// instancePath turns the validator's JSON-pointer tokens into a JSON path,
// walking the document to tell array indexes from member names.
func instancePath(doc any, tokens []string) string {
	path, cur := "$", doc
	for _, t := range tokens {
		switch x := cur.(type) {
		case []any:
			var i int
			if _, err := fmt.Sscanf(t, "%d", &i); err == nil && i >= 0 && i < len(x) {
				path, cur = trace.Element(path, i), x[i]
				continue
			}
			path, cur = child(path, t), nil
		case map[string]any:
			path, cur = child(path, t), x[t]
		default:
			path, cur = child(path, t), nil
		}
	}
	return path
}

// leafMessage renders one schema violation without its location, which
// the problem's path already gives. The validator only formats whole
// errors, so this formats a one-node error and drops its location prefix.
func leafMessage(k jsonschema.ErrorKind) string {
	msg := (&jsonschema.ValidationError{ErrorKind: k}).Error()
	if _, rest, ok := strings.Cut(msg, ": "); ok && strings.HasPrefix(msg, "at ") {
		return rest
	}
	return msg
}

func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	default:
		return "number"
	}
}

func quoteAny(v any) string {
	if s, ok := v.(string); ok {
		return fmt.Sprintf("%q", s)
	}
	return typeName(v) + " " + fmt.Sprint(v)
}
