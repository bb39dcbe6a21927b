package plan

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
)

// ErrInvalid is the error Parse returns, wrapped in an *InvalidError, for
// a plan that does not validate.
var ErrInvalid = errors.New("invalid task plan")

// InvalidError is a plan that failed validation, with the whole
// validation so a caller can print every problem.
type InvalidError struct {
	File       string
	Validation *Validation
}

// Error names the file, the number of errors and the first one.
func (e *InvalidError) Error() string {
	n := len(e.Validation.Errors)
	if n == 0 {
		return e.File + ": " + ErrInvalid.Error()
	}
	more := ""
	if n > 1 {
		more = fmt.Sprintf(" (and %d more)", n-1)
	}
	return fmt.Sprintf("%s: %s: %s%s", e.File, ErrInvalid, e.Validation.Errors[0], more)
}

// Unwrap returns ErrInvalid.
func (e *InvalidError) Unwrap() error { return ErrInvalid }

// Plan is a task plan that validated with no errors. Members the IR
// forwards without interpreting (policies, verify blocks, overrides) are
// kept as decoded JSON, numbers as json.Number, so they lower verbatim.
type Plan struct {
	File       string      // name the plan was read from, for messages
	SourceHash string      // "sha256:" + hex of the plan's bytes
	Validation *Validation // the validation, warnings included

	SchemaVersion string
	Objective     string
	Entry         string
	Nodes         []*Node // in file order
	Edges         []Edge

	Budgets          map[string]any
	Capabilities     map[string]any
	ModelPolicy      map[string]any
	Verification     map[string]any
	Unknowns         []any
	TranscriptPolicy map[string]any
	CompactionPolicy map[string]any
	PromotionPolicy  map[string]any
	Metadata         map[string]any // the plan's own metadata, kept on the compiled workflow
}

// Node is one step of a plan. Kind selects which of the kind blocks are
// meaningful; the others are nil.
type Node struct {
	ID      string
	Kind    string
	Purpose string
	Prompt  string
	System  string // system prompt for the node's model
	Tools   []string
	Effects []string

	AgentLoop map[string]any // agent_loop: max_iterations, done_sentinel
	SubAgent  map[string]any // sub_agent: worker_name, preset, task_label
	Map       map[string]any // workflow_map: items, item_artifact_kind, max_concurrency
	Verify    map[string]any // verify: command, expect_status, expect_text, assert_text
	// HumanGate is the human_gate block as the IR writes it:
	// approval_id, prompt, skippable. A plan may give it instead as the
	// older alias "approval": {id, prompt, skippable}; Parse turns the
	// alias into this shape, so every consumer reads one form.
	HumanGate map[string]any
	Command   map[string]any // deterministic_command: tool, args
	Compact   map[string]any // compact: threshold_tokens, preserve_recent

	Model             map[string]any // provider, model, tier, temperature, max_tokens
	Metadata          map[string]any // merged into the lowered node's metadata
	ModelPolicy       map[string]any
	LoweringOverrides map[string]any
}

// Edge is a directed edge; a non-empty Branch is taken only when From
// reports that branch.
type Edge struct {
	From   string `json:"from"`
	To     string `json:"to"`
	Branch string `json:"branch,omitempty"`
	Label  string `json:"label,omitempty"` // for reviewers; lowered and rendered, never interpreted
}

// Parse validates data as a task plan and returns it. A plan with any
// validation error is refused with an *InvalidError (errors.Is
// ErrInvalid) that carries the whole validation; warnings are kept on
// Plan.Validation. file names the input in messages.
func Parse(data []byte, file string) (*Plan, error) {
	v := Validate(data)
	if !v.Valid {
		return nil, &InvalidError{File: file, Validation: v}
	}
	// Validate decoded the same bytes without error, so this cannot fail;
	// the check keeps Parse honest if that ever changes.
	doc, err := decode(data)
	root, ok := obj(doc)
	if err != nil || !ok {
		return nil, &InvalidError{File: file, Validation: v}
	}
	sum := sha256.Sum256(data)
	p := &Plan{
		File:       file,
		SourceHash: "sha256:" + hex.EncodeToString(sum[:]),
		Validation: v,
	}
	p.SchemaVersion, _ = str(root["schema_version"])
	p.Objective, _ = str(root["objective"])
	p.Entry, _ = str(root["entry"])
	p.Budgets, _ = obj(root["budgets"])
	p.Capabilities, _ = obj(root["capabilities"])
	p.ModelPolicy, _ = obj(root["model_policy"])
	p.Verification, _ = obj(root["verification"])
	p.Unknowns, _ = root["unknowns"].([]any)
	p.TranscriptPolicy, _ = obj(root["transcript_policy"])
	p.CompactionPolicy, _ = obj(root["compaction_policy"])
	p.PromotionPolicy, _ = obj(root["promotion_policy"])
	p.Metadata, _ = obj(root["metadata"])

	nodes, _ := obj(root["nodes"])
	c := &checker{v: &Validation{}, root: root}
	c.collectNodes(nodeOrder(data))
	for _, id := range c.ids {
		m, _ := obj(nodes[id])
		n := &Node{ID: id, Tools: strs(m["tools"]), Effects: strs(m["effects"])}
		n.Kind, _ = str(m["kind"])
		n.Purpose, _ = str(m["purpose"])
		n.Prompt, _ = str(m["prompt"])
		n.AgentLoop, _ = obj(m["agent_loop"])
		n.SubAgent, _ = obj(m["sub_agent"])
		n.Map, _ = obj(m["map"])
		n.Verify, _ = obj(m["verify"])
		n.HumanGate = humanGate(m)
		n.System, _ = str(m["system"])
		n.Model, _ = obj(m["model"])
		n.Metadata, _ = obj(m["metadata"])
		n.Command, _ = obj(m["command"])
		n.Compact, _ = obj(m["compact"])
		n.ModelPolicy, _ = obj(m["model_policy"])
		n.LoweringOverrides, _ = obj(m["lowering_overrides"])
		p.Nodes = append(p.Nodes, n)
	}
	edges, _ := root["edges"].([]any)
	for _, raw := range edges {
		e, _ := obj(raw)
		var ed Edge
		ed.From, _ = str(e["from"])
		ed.To, _ = str(e["to"])
		ed.Branch, _ = str(e["branch"])
		ed.Label, _ = str(e["label"])
		p.Edges = append(p.Edges, ed)
	}
	return p, nil
}

// Node returns the node with the given id, or nil.
func (p *Plan) Node(id string) *Node {
	for _, n := range p.Nodes {
		if n.ID == id {
			return n
		}
	}
	return nil
}

// humanGate returns node m's human_gate block in its canonical shape
// {approval_id, prompt, skippable}, reading the "approval" alias
// {id, prompt, skippable} when the node has no human_gate block. It
// returns nil when the node has neither.
func humanGate(m map[string]any) map[string]any {
	if hg, ok := obj(m["human_gate"]); ok {
		return hg
	}
	alias, ok := obj(m["approval"])
	if !ok {
		return nil
	}
	hg := map[string]any{}
	for k, v := range alias {
		switch k {
		case "id":
			hg["approval_id"] = v
		default:
			hg[k] = v
		}
	}
	return hg
}
