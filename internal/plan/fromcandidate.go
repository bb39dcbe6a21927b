package plan

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// ShadowGateNode is the id of the final verify node FromCandidate writes:
// the bundle's shadow replay, the gate a candidate must pass to be promoted.
const ShadowGateNode = "shadow_gate"

// ExtensionKey is the plan member under which FromCandidate records where
// the plan came from and what its placeholders mean. Members starting with
// "x-" are extensions the schema allows and validation ignores.
const ExtensionKey = "x-crystallize"

// Origin is the bundle a candidate lowered by FromCandidate comes from.
// The plan package does not read bundles: the caller reads the bundle and
// passes its candidate and these values, so a plan depends only on the
// candidate format.
type Origin struct {
	// Dir is the bundle's directory, the argument of the shadow gate's
	// "crystallize shadow DIR".
	Dir string
	// Manifest is the bundle's manifest file, named by an InvalidError.
	Manifest string
	// Title is the manifest's title, the plan's objective (the
	// candidate's name when empty).
	Title string
	// Workflow is the name of the bundle's workflow.
	Workflow string
}

// FromCandidate returns c, the candidate of the bundle o, as a task plan,
// encoded as canonical JSON (sorted keys, see candidate.EncodeJSON).
//
// The lowering, step by step in the candidate's order:
//
//   - a deterministic step becomes a deterministic_command whose tool is
//     the step's name and whose args are its arguments as "KEY=VALUE": a
//     constant is its value (a string as is, anything else as JSON), a
//     parameter is the placeholder "{{name}}", a binding is
//     "{{steps.N.FIELD:PATH}}" (the output of an earlier step) and a
//     secret is "{{secret:ID}}", so no secret value is ever written;
//   - a fuzzy step becomes a read_fact when it has no side effects and no
//     write capability, else an agent_loop (8 iterations, sentinel DONE);
//   - a human-approval step, a step with an approval and every approval
//     point of the candidate become a human_gate before the step;
//   - the bundle's shadow gate ("crystallize shadow DIR" must pass) is a
//     final verify node, the plan's verification.primary.
//
// Edges follow step order. capabilities.tools is the set of step tools;
// the static budgets are raised from their defaults only when a long
// candidate needs it, so the plan always validates with no errors. Node
// ids start with the zero-padded step index so that the sorted JSON keeps
// the nodes in step order. The parameters and the placeholder syntax are
// documented under ExtensionKey.
func FromCandidate(c *candidate.Candidate, o Origin) ([]byte, error) {
	doc := fromCandidate(c, o)
	data, err := candidate.EncodeJSON(doc)
	if err != nil {
		return nil, fmt.Errorf("encoding task plan: %w", err)
	}
	v := Validate(data)
	if raiseBudgets(doc, v) {
		if data, err = candidate.EncodeJSON(doc); err != nil {
			return nil, fmt.Errorf("encoding task plan: %w", err)
		}
		v = Validate(data)
	}
	if !v.Valid {
		// A lowering bug, not bad input: report it with the whole
		// validation rather than write a plan nothing can run.
		return nil, &InvalidError{File: o.Manifest, Validation: v}
	}
	return data, nil
}

// fromCandidate lowers c to a plan document (see FromCandidate).
func fromCandidate(c *candidate.Candidate, o Origin) map[string]any {
	width := 2
	for _, s := range c.Steps {
		width = max(width, len(strconv.Itoa(s.Index)))
	}
	prefix := func(i int) string { return fmt.Sprintf("s%0*d_", width, i) }

	gates := map[int]candidate.ApprovalPoint{}
	for _, ap := range c.ApprovalPoints {
		gates[ap.Step] = ap
	}

	nodes := map[string]any{}
	var order []string
	sources := map[string]any{}
	tools := map[string]bool{}
	add := func(id string, n map[string]any, step int) {
		nodes[id] = n
		order = append(order, id)
		sources[id] = step
	}
	for _, s := range c.Steps {
		ap, gated := gates[s.Index]
		if s.Approval != nil && !gated {
			ap, gated = candidate.ApprovalPoint{Step: s.Index, Boundary: s.Approval.Boundary, Prompt: s.Approval.Prompt, Required: s.Approval.Required}, true
		}
		if s.Kind == trace.KindHumanApproval {
			add(prefix(s.Index)+"approve", gateNode(s, ap), s.Index)
			continue
		}
		if gated {
			add(prefix(s.Index)+"approve", gateNode(s, ap), s.Index)
		}
		id := prefix(s.Index) + "step_" + idPart(s.Name)
		switch {
		case s.Segment == candidate.Deterministic:
			tools[s.Name] = true
			add(id, map[string]any{
				"kind":    "deterministic_command",
				"purpose": fmt.Sprintf("step %d: %s %s (deterministic)", s.Index, s.Kind, s.Name),
				"tools":   []string{s.Name},
				"command": map[string]any{"tool": s.Name, "args": args(s.Arguments)},
			}, s.Index)
		default:
			n := map[string]any{
				"purpose": fmt.Sprintf("step %d: %s %s (fuzzy)", s.Index, s.Kind, s.Name),
				"prompt":  fuzzyPrompt(s),
			}
			if s.Kind != trace.KindModelCall {
				tools[s.Name] = true
				n["tools"] = []string{s.Name}
			}
			if readOnly(s) {
				n["kind"] = "read_fact"
			} else {
				n["kind"] = "agent_loop"
				n["agent_loop"] = map[string]any{"max_iterations": DefaultMaxIterations, "done_sentinel": "DONE"}
				n["effects"] = []string{"writes_files"}
			}
			add(id, n, s.Index)
		}
	}
	nodes[ShadowGateNode] = map[string]any{
		"kind":    "verify",
		"purpose": "the bundle's shadow gate: every source example and held-out trace replays",
		"verify": map[string]any{
			"command":       "crystallize shadow " + filepath.ToSlash(o.Dir),
			"expect_status": 0,
			"expect_text":   "pass=true",
		},
	}
	order = append(order, ShadowGateNode)

	edges := []any{}
	for i := 1; i < len(order); i++ {
		edges = append(edges, map[string]any{"from": order[i-1], "to": order[i]})
	}
	toolList := []string{}
	for t := range tools {
		toolList = append(toolList, t)
	}
	slices.Sort(toolList)

	params := []any{}
	for _, p := range c.Parameters {
		params = append(params, map[string]any{
			"name":        p.Name,
			"placeholder": "{{" + p.Name + "}}",
			"type":        p.Type,
			"required":    p.Required,
			"examples":    p.Examples,
		})
	}
	objective := o.Title
	if objective == "" {
		objective = c.Name
	}
	return map[string]any{
		"schema_version": "1",
		"objective":      objective,
		"entry":          order[0],
		"nodes":          nodes,
		"edges":          edges,
		"capabilities": map[string]any{
			"tools":             toolList,
			"side_effect_level": sideEffectLevel(c),
		},
		"verification": map[string]any{"primary": ShadowGateNode},
		ExtensionKey: map[string]any{
			"candidate_id": c.ID,
			"workflow":     o.Workflow,
			"parameters":   params,
			"source_steps": sources,
			"args": "deterministic_command args are KEY=VALUE: a constant is its value, " +
				"a parameter {{name}}, a binding {{steps.N.FIELD:PATH}}, a secret {{secret:ID}}",
		},
	}
}

// gateNode is the human_gate guarding step s.
func gateNode(s candidate.Step, ap candidate.ApprovalPoint) map[string]any {
	prompt := ap.Prompt
	if prompt == "" {
		prompt = fmt.Sprintf("approve step %d (%s)", s.Index, s.Name)
	}
	id := "step-" + strconv.Itoa(s.Index)
	if ap.Boundary != "" {
		id = idPart(ap.Boundary)
	}
	return map[string]any{
		"kind":       "human_gate",
		"purpose":    fmt.Sprintf("approval boundary before step %d: %s", s.Index, s.Name),
		"human_gate": map[string]any{"approval_id": id, "prompt": prompt, "skippable": !ap.Required && (s.Approval == nil || !s.Approval.Required)},
	}
}

// args renders a step's arguments as "KEY=VALUE" strings (see FromCandidate).
func args(in []candidate.Argument) []string {
	out := []string{}
	for _, a := range in {
		var v string
		switch a.Kind {
		case candidate.ArgParameter:
			v = "{{" + a.Parameter + "}}"
		case candidate.ArgSecret:
			v = "{{secret:" + a.Secret + "}}"
		case candidate.ArgBinding:
			if b := a.Binding; b != nil {
				v = fmt.Sprintf("{{steps.%d.%s:%s}}", b.FromStep, b.FromField, b.FromPath)
			}
		default:
			if s, ok := a.Value.(string); ok {
				v = s
			} else if data, err := candidate.EncodeJSON(a.Value); err == nil {
				v = strings.TrimSpace(string(data))
			}
		}
		out = append(out, a.Key+"="+v)
	}
	return out
}

// fuzzyPrompt asks a model to do what a fuzzy step did in the traces.
func fuzzyPrompt(s candidate.Step) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Do step %d of the workflow, which the traces did with %s %s", s.Index, s.Kind, s.Name)
	if len(s.Arguments) > 0 {
		fmt.Fprintf(&b, " (arguments: %s)", strings.Join(args(s.Arguments), ", "))
	}
	b.WriteString(".")
	for _, n := range s.ReviewNotes {
		b.WriteString(" " + n)
	}
	if !readOnly(s) {
		b.WriteString(" Print DONE when finished.")
	}
	return b.String()
}

// readOnly reports whether a step neither has side effects nor holds a
// capability whose name says it writes.
func readOnly(s candidate.Step) bool {
	if len(s.SideEffects) > 0 {
		return false
	}
	for _, c := range s.Capabilities {
		if strings.Contains(c, "write") || strings.Contains(c, "exec") {
			return false
		}
	}
	return true
}

// sideEffectLevel is the plan's ceiling: external when a step calls an
// external API or has an effect other than on files and git refs,
// writes_files when it only writes those, read_only otherwise.
func sideEffectLevel(c *candidate.Candidate) string {
	level := "read_only"
	for _, s := range c.Steps {
		if s.Kind == trace.KindExternalAPICall {
			return "external"
		}
		for _, se := range s.SideEffects {
			switch se.Kind {
			case "file_write", "file_delete", "file_create", "git_ref", "git_commit":
				level = "writes_files"
			default:
				return "external"
			}
		}
	}
	return level
}

// raiseBudgets sets each static budget the plan exceeds at its default to
// the plan's bound, and reports whether it changed any. A mined candidate
// is a straight line, so its bounds are known and a ceiling at exactly the
// bound is the honest one.
func raiseBudgets(doc map[string]any, v *Validation) bool {
	s := v.BudgetSummary
	budgets := map[string]any{}
	for name, b := range map[string]Budget{
		"max_nodes":       s.MaxNodes,
		"max_depth":       s.MaxDepth,
		"max_steps":       s.MaxSteps,
		"max_tool_calls":  s.MaxToolCalls,
		"max_model_calls": s.MaxModelCalls,
	} {
		if b.Used > b.Limit {
			budgets[name] = b.Used
		}
	}
	if len(budgets) == 0 {
		return false
	}
	doc["budgets"] = budgets
	return true
}

// idPart turns a name into a node-id fragment: lowercase letters, digits
// and underscores.
func idPart(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	if b.Len() == 0 {
		return "step"
	}
	return b.String()
}
