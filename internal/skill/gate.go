package skill

// The replay gate: whether a skill may ship, and its receipt gate.json.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/crystallize-dev/crystallize/internal/candidate"
)

// Gate receipt markers, decisions and trace roles.
const (
	GateSchema        = "crystallize.skill.gate"
	GateSchemaVersion = 1

	GateAccepted = "accepted"
	GateRejected = "rejected"

	RoleSource  = candidate.RoleSource
	RoleHeldout = candidate.RoleHeldout
)

// Rejection reason codes of a skill gate.
const (
	CodeCandidateRejected   = "candidate_rejected"
	CodeSourceReplayMissing = "source_replay_missing"
	CodeSourceReplayFailed  = "source_replay_failed"
	CodeHeldoutMissing      = "heldout_missing"
	CodeHeldoutReplayFailed = "heldout_replay_failed"
	CodeGateTraceInvalid    = "gate_trace_invalid"
)

// Gate is the replay-gate receipt of a skill, written as gate.json
// next to SKILL.md. A skill is accepted only when the candidate is safe,
// every source trace replays, and at least one held-out sibling trace was
// compared and every compared one passed. A held-out trace that does not
// contain the sequence at all is counted as unmatched: it is reported, but
// it is a different procedure, not a drift of this one, so it does not
// reject the skill by itself.
type Gate struct {
	Schema              string              `json:"schema"`
	SchemaVersion       int                 `json:"schema_version"`
	SkillID             string              `json:"skill_id"`
	SkillName           string              `json:"skill_name"`
	WorkflowCandidateID string              `json:"workflow_candidate_id"`
	SourceReplay        GateReplay          `json:"source_replay"`
	HeldoutReplay       GateHeldout         `json:"heldout_replay"`
	ComparedTraces      []GateTrace         `json:"compared_traces"`
	Decision            string              `json:"decision"`
	RejectionReasons    []candidate.Problem `json:"rejection_reasons"`
}

// GateReplay counts the source traces the gate compared and how many
// passed. PassedNotListed, of those, passed but are not among
// ComparedTraces: the shadow report counted them without listing them
// (candidate.ShadowReport.PassedNotListed).
type GateReplay struct {
	Compared        int `json:"compared"`
	Passed          int `json:"passed"`
	PassedNotListed int `json:"passed_not_listed,omitempty"`
}

// GateHeldout counts the held-out traces: compared (they contain the
// sequence), passed, and unmatched (they do not contain it).
type GateHeldout struct {
	Compared  int `json:"compared"`
	Passed    int `json:"passed"`
	Unmatched int `json:"unmatched"`
}

// GateTrace is one trace the gate looked at. Role is RoleSource or
// RoleHeldout; Status is the shadow replay's: candidate.StatusPass,
// candidate.StatusFail or candidate.StatusUnmatched.
type GateTrace struct {
	TraceID    string `json:"trace_id"`
	SourceHash string `json:"source_hash"`
	Role       string `json:"role"`
	Status     string `json:"status"`
}

// Accepted reports whether the gate admits the skill into a bundle.
func (g Gate) Accepted() bool {
	return g.Decision == GateAccepted && len(g.RejectionReasons) == 0
}

// NewGate decides the gate for the skill of c from the shadow results
// of its traces. The traces are sorted (source before held-out, then by
// trace id and hash) so the receipt does not depend on the order the
// caller compared them in. The skill id is candidate.SkillID of c's id
// and w.Func.
func NewGate(c *candidate.Candidate, w Workflow, traces []GateTrace) Gate {
	g := Gate{
		Schema:           GateSchema,
		SchemaVersion:    GateSchemaVersion,
		SkillName:        candidate.SkillName(c),
		ComparedTraces:   slices.Clone(traces),
		RejectionReasons: []candidate.Problem{},
	}
	if g.ComparedTraces == nil {
		g.ComparedTraces = []GateTrace{}
	}
	if c != nil {
		g.SkillID = candidate.SkillID(c.ID, w.Func)
		g.WorkflowCandidateID = c.ID
	}
	slices.SortStableFunc(g.ComparedTraces, compareGateTraces)
	reject := func(p candidate.Problem) { g.RejectionReasons = append(g.RejectionReasons, p) }

	if c == nil || !c.Safe() {
		var codes []string
		if c != nil {
			for _, p := range c.RejectionReasons {
				codes = append(codes, p.Code)
			}
		}
		reject(candidate.Problem{Code: CodeCandidateRejected, Message: "the workflow candidate is rejected (" + candidate.JoinNames(codes) + ")"})
	}
	for _, t := range g.ComparedTraces {
		switch t.Role {
		case RoleSource:
			g.SourceReplay.Compared++
			if t.Status == candidate.StatusPass {
				g.SourceReplay.Passed++
			} else {
				reject(candidate.Problem{Code: CodeSourceReplayFailed, TraceID: t.TraceID,
					Message: fmt.Sprintf("source trace %s did not replay (%s)", candidate.OneLine(t.TraceID), candidate.OneLine(t.Status))})
			}
		case RoleHeldout:
			switch t.Status {
			case candidate.StatusUnmatched:
				g.HeldoutReplay.Unmatched++
			case candidate.StatusPass:
				g.HeldoutReplay.Compared++
				g.HeldoutReplay.Passed++
			default:
				g.HeldoutReplay.Compared++
				reject(candidate.Problem{Code: CodeHeldoutReplayFailed, TraceID: t.TraceID,
					Message: fmt.Sprintf("held-out trace %s drifted from the candidate (%s)", candidate.OneLine(t.TraceID), candidate.OneLine(t.Status))})
			}
		default:
			reject(candidate.Problem{Code: CodeGateTraceInvalid, TraceID: t.TraceID,
				Message: fmt.Sprintf("trace %s has role %q; want %q or %q", candidate.OneLine(t.TraceID), candidate.OneLine(t.Role), RoleSource, RoleHeldout)})
		}
	}
	if g.SourceReplay.Compared == 0 {
		reject(candidate.Problem{Code: CodeSourceReplayMissing, Message: "no source trace was replayed"})
	}
	if g.HeldoutReplay.Compared == 0 {
		reject(candidate.Problem{Code: CodeHeldoutMissing, Message: fmt.Sprintf(
			"skill induction needs at least one held-out sibling trace that contains the sequence; %d held-out traces did not",
			g.HeldoutReplay.Unmatched)})
	}
	g.Decision = GateAccepted
	if len(g.RejectionReasons) > 0 {
		g.Decision = GateRejected
	}
	return g
}

// ShadowGate decides the gate for the skill of c, whose workflow is w,
// from c's shadow report,
// the one way every writer of a skill (a bundle, skill induction) maps
// replay results to gate traces. A trace keeps the shadow replay's status
// words; a status other than pass and unmatched is a failure, a held-out
// trace keeps its role and every other trace is a source trace.
func ShadowGate(c *candidate.Candidate, w Workflow) Gate {
	var traces []GateTrace
	if c != nil && c.Shadow != nil {
		for _, t := range c.Shadow.Traces {
			status := candidate.StatusFail
			switch t.Status {
			case candidate.StatusPass, candidate.StatusUnmatched:
				status = t.Status
			}
			role := RoleSource
			if t.Role == candidate.RoleHeldout {
				role = RoleHeldout
			}
			traces = append(traces, GateTrace{TraceID: t.TraceID, SourceHash: t.SourceHash, Role: role, Status: status})
		}
	}
	g := NewGate(c, w, traces)
	if c != nil && c.Shadow != nil && c.Shadow.PassedNotListed > 0 {
		n := c.Shadow.PassedNotListed
		g.SourceReplay.Compared += n
		g.SourceReplay.Passed += n
		g.SourceReplay.PassedNotListed = n
		// Only the listed traces could be missing: a source replay with
		// unlisted passes did compare source traces.
		g.RejectionReasons = slices.DeleteFunc(g.RejectionReasons, func(p candidate.Problem) bool { return p.Code == CodeSourceReplayMissing })
		g.Decision = GateAccepted
		if len(g.RejectionReasons) > 0 {
			g.Decision = GateRejected
		}
	}
	return g
}

// compareGateTraces orders traces source first, then held-out, then any
// other role, and within a role by trace id and source hash.
func compareGateTraces(a, b GateTrace) int {
	rank := func(role string) int {
		switch role {
		case RoleSource:
			return 0
		case RoleHeldout:
			return 1
		}
		return 2
	}
	if ra, rb := rank(a.Role), rank(b.Role); ra != rb {
		return ra - rb
	}
	if a.Role != b.Role {
		return strings.Compare(a.Role, b.Role)
	}
	if a.TraceID != b.TraceID {
		return strings.Compare(a.TraceID, b.TraceID)
	}
	return strings.Compare(a.SourceHash, b.SourceHash)
}

// GateJSON encodes g as gate.json: indented, fields in declaration order,
// empty lists as [] rather than null, and a final newline.
func GateJSON(g Gate) ([]byte, error) {
	if g.ComparedTraces == nil {
		g.ComparedTraces = []GateTrace{}
	}
	if g.RejectionReasons == nil {
		g.RejectionReasons = []candidate.Problem{}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(g); err != nil {
		return nil, fmt.Errorf("encoding skill gate: %w", err)
	}
	return b.Bytes(), nil
}
