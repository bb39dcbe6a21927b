package assert

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/crystallize-dev/crystallize/internal/trace"
)

// CaseInput is a case's input. A case's output comes from exactly one
// of Command (run from the repository root; a string runs under sh -c,
// a list is an argv), Output (recorded text) or OutputFile; a runner
// decides which of them it allows.
type CaseInput struct {
	Query              string             `json:"query,omitempty"`
	Prompt             string             `json:"prompt,omitempty"`
	Goal               string             `json:"goal,omitempty"`
	ExpectedDocuments  []string           `json:"expected_documents,omitempty"`
	RetrievedDocuments []string           `json:"retrieved_documents,omitempty"`
	Relevance          map[string]float64 `json:"relevance,omitempty"`
	Command            json.RawMessage    `json:"command,omitempty"`
	TimeoutSeconds     int                `json:"timeout_seconds,omitempty"`
	Output             *string            `json:"output,omitempty"`
	OutputFile         string             `json:"output_file,omitempty"`
	Trajectory         []ToolCall         `json:"trajectory,omitempty"`
	// Trace is a crystallize trace file whose actions are the
	// trajectory.
	Trace             string     `json:"trace,omitempty"`
	ExpectedToolCalls []ToolCall `json:"expected_tool_calls,omitempty"`
	Reference         string     `json:"reference,omitempty"`
	// ReferenceClaims are the statements a retrieval must support, for
	// context_recall (else the sentences of Reference).
	ReferenceClaims []string `json:"reference_claims,omitempty"`
	// RetrievedContexts are recorded passages, the text of a recorded
	// ranking.
	RetrievedContexts []string `json:"retrieved_contexts,omitempty"`
	Candidates        []string `json:"candidates,omitempty"`
	BestCandidate     *int     `json:"best_candidate,omitempty"`
}

// Argv returns the command of the case: nil when it has none.
func (in CaseInput) Argv() ([]string, error) {
	if len(in.Command) == 0 {
		return nil, nil
	}
	var s string
	if json.Unmarshal(in.Command, &s) == nil {
		if strings.TrimSpace(s) == "" {
			return nil, fmt.Errorf("empty command")
		}
		return []string{"sh", "-c", s}, nil
	}
	var list []string
	if err := json.Unmarshal(in.Command, &list); err != nil || len(list) == 0 {
		return nil, fmt.Errorf("command is neither a string nor a non-empty list of strings")
	}
	return list, nil
}

// TraceTrajectory is the trajectory of a crystallize trace: its actions
// other than model calls (name, parameters, and whether metadata marks
// the call as failed).
func TraceTrajectory(t *trace.Trace) []ToolCall {
	var list []ToolCall
	for _, a := range t.Actions {
		// A model's turn is not a tool call; everything the agent did
		// with a tool, reads included, is.
		if a.Kind == trace.KindModelCall {
			continue
		}
		failed, _ := a.Metadata["error"].(bool)
		list = append(list, ToolCall{Name: a.Name, Arguments: a.Parameters, Error: failed})
	}
	return list
}

// PromptWrapperVersion names the prompt the judge's rubric is wrapped
// in; changing the wrapper changes the judge configuration hash, which
// invalidates calibrations.
const PromptWrapperVersion = "harness-judge-prompt/1"

// JudgePrompt wraps a request in the judge prompt (PromptWrapperVersion).
func JudgePrompt(r JudgeRequest) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Assertion: %s\nRubric: %s\n", r.Type, r.Rubric)
	if r.Input != "" {
		fmt.Fprintf(&b, "Input:\n%s\n", r.Input)
	}
	if r.Reference != "" {
		fmt.Fprintf(&b, "Reference answer:\n%s\n", r.Reference)
	}
	if len(r.Candidates) > 0 {
		for i, c := range r.Candidates {
			fmt.Fprintf(&b, "Candidate %d:\n%s\n", i, c)
		}
		b.WriteString("Set best to the index of the best candidate.\n")
	} else {
		fmt.Fprintf(&b, "Output to judge:\n%s\n", r.Output)
	}
	b.WriteString("Answer with JSON: pass (does the output satisfy the rubric), score in [0, 1], reason.\n")
	return b.String()
}
