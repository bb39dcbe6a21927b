package plan

import (
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strings"
)

// GraphType is the _type marker of a compiled workflow graph.
const GraphType = "workflow_graph"

// Graph is a plan lowered to the workflow graph the runtime executes.
// Nodes are kept as JSON objects because lowering_overrides may set any
// member of a lowered node, including ones this package does not know.
type Graph struct {
	Type             string                    `json:"_type"`
	ID               string                    `json:"id"`
	Name             string                    `json:"name"`
	Version          int                       `json:"version"`
	Entry            string                    `json:"entry"`
	Nodes            map[string]map[string]any `json:"nodes"`
	Edges            []Edge                    `json:"edges"`
	CapabilityPolicy map[string]any            `json:"capability_policy"`
	ModelPolicy      map[string]any            `json:"model_policy,omitempty"`
	Metadata         map[string]any            `json:"metadata"`
}

// lowering is one row of the IR's lowering table: the workflow node
// kind and mode an IR kind becomes. A join has no mode.
var lowering = map[string]struct{ kind, mode string }{
	"read_fact":             {"stage", "llm"},
	"search":                {"stage", "llm"},
	"context_pack":          {"stage", "llm"},
	"agent_loop":            {"stage", "agent"},
	"sub_agent":             {"subagent", "llm"},
	"workflow_map":          {"map", "llm"},
	"verify":                {"verify", "llm"},
	"human_gate":            {"stage", "manual"},
	"deterministic_command": {"stage", "command"},
	"join":                  {"join", ""},
	"compact":               {"stage", "compact"},
}

// Compile lowers a parsed plan to a workflow graph, node by node as the
// IR's lowering table says:
//
//   - every node gets id, kind and mode from the table, its prompt, its
//     tools, a capability_policy of its own tools and side-effect level,
//     and metadata.task_plan_kind (the IR kind, which the workflow kind
//     alone does not recover), metadata.purpose and metadata.effects;
//   - agent_loop: done_sentinel and max_iterations (default 8), and the
//     block itself as metadata.agent_loop (stop_after_successful_tools
//     included);
//   - sub_agent: metadata.worker_name, worker_preset, worker_task_label
//     from sub_agent.worker_name, preset, task_label;
//   - workflow_map: map_policy from map.items, item_artifact_kind,
//     max_concurrency;
//   - verify: the verify block verbatim;
//   - human_gate: metadata.human_gate = true, approval_id,
//     approval_prompt, approval_skippable (false when absent) from
//     human_gate.approval_id, prompt, skippable (or the alias approval.id,
//     prompt, skippable);
//   - deterministic_command: metadata.command_tool, command_args;
//   - join: join_policy {"strategy": "all"};
//   - compact: auto_compact {enabled, token_threshold} from
//     compact.threshold_tokens (else the plan's
//     compaction_policy.threshold_tokens) and
//     metadata.compact_preserve_recent likewise;
//   - system as the node's system prompt, metadata under the IR's own
//     metadata keys, model_policy from model (provider, model,
//     tier → model_tier, temperature, max_tokens) with the node's
//     model_policy merged over it, then lowering_overrides merged last, member
//     by member (an override replaces a whole member, it is not merged
//     into it: "verbatim", as the IR specifies).
//
// The workflow's capability_policy is the plan's capabilities (no tools
// and read_only when absent: deny by default), its model_policy the
// plan's, and metadata.task_plan keeps the objective, the effective
// budgets, the policies, verification, unknowns, the node order and the
// plan's source hash, so a receipt or a promotion gate can read them; the
// plan's own metadata sits beside task_plan.
//
// The graph's id is "task_plan_" + the first 16 hex digits of the plan's
// sha256: the same plan always compiles to the same graph.
func Compile(p *Plan) (*Graph, error) {
	if p == nil {
		return nil, errors.New("compiling task plan: nil plan")
	}
	if p.Validation != nil && !p.Validation.Valid {
		return nil, &InvalidError{File: p.File, Validation: p.Validation}
	}
	g := &Graph{
		Type:    GraphType,
		ID:      "task_plan_" + hashHex(p.SourceHash, 16),
		Name:    slug(p.Objective),
		Version: 1,
		Entry:   p.Entry,
		Nodes:   map[string]map[string]any{},
		Edges:   slices.Clone(p.Edges),
	}
	if g.Edges == nil {
		g.Edges = []Edge{}
	}
	for _, n := range p.Nodes {
		g.Nodes[n.ID] = lowerNode(p, n)
	}

	caps := map[string]any{"tools": []string{}, "side_effect_level": "read_only"}
	for k, v := range p.Capabilities {
		if !strings.HasPrefix(k, "x-") {
			caps[k] = v
		}
	}
	g.CapabilityPolicy = caps
	g.ModelPolicy = p.ModelPolicy

	order := make([]string, len(p.Nodes))
	for i, n := range p.Nodes {
		order[i] = n.ID
	}
	tp := map[string]any{
		"schema_version": p.SchemaVersion,
		"objective":      p.Objective,
		"entry":          p.Entry,
		"node_order":     order,
		"source_hash":    p.SourceHash,
		"budgets":        effectiveBudgets(p),
	}
	for k, v := range map[string]any{
		"verification":      p.Verification,
		"transcript_policy": p.TranscriptPolicy,
		"compaction_policy": p.CompactionPolicy,
		"promotion_policy":  p.PromotionPolicy,
	} {
		if m, _ := v.(map[string]any); m != nil {
			tp[k] = m
		}
	}
	if p.Unknowns != nil {
		tp["unknowns"] = p.Unknowns
	}
	g.Metadata = map[string]any{}
	for k, v := range p.Metadata {
		if !strings.HasPrefix(k, "x-") {
			g.Metadata[k] = v
		}
	}
	g.Metadata["task_plan"] = tp
	return g, nil
}

func lowerNode(p *Plan, n *Node) map[string]any {
	row := lowering[n.Kind]
	out := map[string]any{"id": n.ID, "kind": row.kind}
	if row.mode != "" {
		out["mode"] = row.mode
	}
	if n.Prompt != "" {
		out["prompt"] = n.Prompt
	}
	tools := slices.Clone(n.Tools)
	if tools == nil {
		tools = []string{}
	}
	out["tools"] = tools

	level := "read_only"
	policyTools := slices.Clone(tools)
	if n.Kind == "deterministic_command" {
		if t, _ := str(n.Command["tool"]); t != "" && !slices.Contains(policyTools, t) {
			policyTools = append(policyTools, t)
		}
	}
	if writes(map[string]any{"effects": toAny(n.Effects)}, n.Kind) {
		level = "writes_files"
	}
	out["capability_policy"] = map[string]any{"tools": policyTools, "side_effect_level": level}

	// The node's own metadata goes in first, so the IR's keys below
	// cannot be shadowed by it.
	md := map[string]any{}
	for k, v := range n.Metadata {
		if !strings.HasPrefix(k, "x-") {
			md[k] = v
		}
	}
	md["task_plan_kind"] = n.Kind
	if n.System != "" {
		out["system"] = n.System
	}
	if n.Purpose != "" {
		md["purpose"] = n.Purpose
	}
	if len(n.Effects) > 0 {
		md["effects"] = n.Effects
	}
	switch n.Kind {
	case "agent_loop":
		if n.AgentLoop != nil {
			md["agent_loop"] = withoutExtensions(n.AgentLoop)
		}
		out["max_iterations"] = json.Number("8")
		if v, ok := n.AgentLoop["max_iterations"]; ok {
			out["max_iterations"] = v
		}
		if s, _ := str(n.AgentLoop["done_sentinel"]); s != "" {
			out["done_sentinel"] = s
		}
	case "sub_agent":
		lift(md, n.SubAgent, "worker_name", "worker_name")
		lift(md, n.SubAgent, "preset", "worker_preset")
		lift(md, n.SubAgent, "task_label", "worker_task_label")
	case "workflow_map":
		mp := map[string]any{}
		lift(mp, n.Map, "items", "items")
		lift(mp, n.Map, "item_artifact_kind", "item_artifact_kind")
		lift(mp, n.Map, "max_concurrency", "max_concurrency")
		out["map_policy"] = mp
	case "verify":
		if n.Verify != nil {
			out["verify"] = withoutExtensions(n.Verify)
		}
	case "human_gate":
		md["human_gate"] = true
		lift(md, n.HumanGate, "approval_id", "approval_id")
		lift(md, n.HumanGate, "prompt", "approval_prompt")
		md["approval_skippable"] = false
		lift(md, n.HumanGate, "skippable", "approval_skippable")
	case "deterministic_command":
		lift(md, n.Command, "tool", "command_tool")
		args := []any{}
		if a, ok := n.Command["args"].([]any); ok {
			args = a
		}
		md["command_args"] = args
	case "join":
		out["join_policy"] = map[string]any{"strategy": "all"}
	case "compact":
		ac := map[string]any{"enabled": true}
		if !lift(ac, n.Compact, "threshold_tokens", "token_threshold") {
			lift(ac, p.CompactionPolicy, "threshold_tokens", "token_threshold")
		}
		out["auto_compact"] = ac
		if !lift(md, n.Compact, "preserve_recent", "compact_preserve_recent") {
			lift(md, p.CompactionPolicy, "preserve_recent", "compact_preserve_recent")
		}
	}
	out["metadata"] = md
	// model {provider, model, tier, temperature, max_tokens} is the IR's
	// way to pick a model; model_policy, ours, is merged over it.
	mp := map[string]any{}
	lift(mp, n.Model, "provider", "provider")
	lift(mp, n.Model, "model", "model")
	lift(mp, n.Model, "tier", "model_tier")
	lift(mp, n.Model, "temperature", "temperature")
	lift(mp, n.Model, "max_tokens", "max_tokens")
	maps.Copy(mp, n.ModelPolicy)
	if len(mp) > 0 || n.ModelPolicy != nil {
		out["model_policy"] = mp
	}
	maps.Copy(out, n.LoweringOverrides)
	return out
}

// lift copies from[key] to to[as] when present and reports whether it did.
func lift(to, from map[string]any, key, as string) bool {
	v, ok := from[key]
	if ok {
		to[as] = v
	}
	return ok
}

func withoutExtensions(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		if !strings.HasPrefix(k, "x-") {
			out[k] = v
		}
	}
	return out
}

func toAny(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

// effectiveBudgets is the plan's budgets with every static ceiling filled
// in, so the runtime enforces exactly what validation checked.
func effectiveBudgets(p *Plan) map[string]any {
	out := map[string]any{}
	for k, v := range p.Budgets {
		if !strings.HasPrefix(k, "x-") {
			out[k] = v
		}
	}
	if p.Validation != nil {
		s := p.Validation.BudgetSummary
		out["max_nodes"] = s.MaxNodes.Limit
		out["max_depth"] = s.MaxDepth.Limit
		out["max_tool_calls"] = s.MaxToolCalls.Limit
		out["max_model_calls"] = s.MaxModelCalls.Limit
		out["max_steps"] = s.MaxSteps.Limit
	}
	return out
}

func hashHex(sourceHash string, n int) string {
	h := strings.TrimPrefix(sourceHash, "sha256:")
	if len(h) > n {
		h = h[:n]
	}
	return h
}

// slug turns an objective into a lowercase identifier of at most 48
// characters (whole words), "task_plan" when nothing is left.
func slug(s string) string {
	var words []string
	for _, f := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !('a' <= r && r <= 'z' || '0' <= r && r <= '9')
	}) {
		if n := len(strings.Join(append(words, f), "_")); n > 48 {
			break
		}
		words = append(words, f)
	}
	if len(words) == 0 {
		return "task_plan"
	}
	return strings.Join(words, "_")
}
