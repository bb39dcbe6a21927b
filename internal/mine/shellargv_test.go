package mine

import (
	"testing"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// TestShellStepWithoutTemplateRejects: a step an agent ran as a shell
// command (its examples carry the command text) runs only from an argv
// template, since no binding stands for a command line. When the log
// holds the command only as shell text no template reads (variables,
// substitutions), or the examples ran different templates, a workflow
// could not run the step, and the candidate is rejected naming it. The
// same steps without command text (a tool a binding runs) only warn.
func TestShellStepWithoutTemplateRejects(t *testing.T) {
	withCommand := func(a *trace.Action, text string) {
		if a.Metadata == nil {
			a.Metadata = map[string]any{}
		}
		a.Metadata["command"] = text
	}
	tests := []struct {
		name string
		edit func(i int, actions []trace.Action)
		code string
		path string
	}{{
		name: "unparsed",
		edit: func(i int, actions []trace.Action) {
			delete(actions[0].Metadata, "argv")
			actions[0].Metadata["unparsed"] = true
			withCommand(&actions[0], `git checkout -b "$BRANCH"`)
		},
		code: candidate.CodeUnparsedCommand,
		path: "$.actions[1].metadata.command",
	}, {
		name: "divergent",
		edit: func(i int, actions []trace.Action) {
			withCommand(&actions[0], "git checkout -b deps")
			if i == 2 {
				actions[0].Metadata["argv"] = decodeAny(`["git","checkout","{b}"]`)
			}
		},
		code: candidate.CodeDivergentArgv,
		path: "$.actions[1].metadata.argv",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := mustMine(t, bumpTraces(tt.edit), Options{})
			var c *candidate.Candidate
			for i := range r.RejectedCandidates {
				if len(r.RejectedCandidates[i].Steps) == 5 {
					c = &r.RejectedCandidates[i]
				}
			}
			if c == nil {
				t.Fatalf("no rejected 5-step candidate among %d", len(r.RejectedCandidates))
			}
			var got *candidate.Problem
			for i, p := range c.RejectionReasons {
				if p.Code == tt.code {
					got = &c.RejectionReasons[i]
				}
			}
			if got == nil {
				t.Fatalf("rejection reasons %+v, warnings %+v; want a %s rejection", c.RejectionReasons, c.Warnings, tt.code)
			}
			if got.Step != 1 || got.Path != tt.path {
				t.Errorf("rejection %+v; want step 1 at %s", got, tt.path)
			}
			for _, s := range r.Candidates {
				if s.ID == c.ID {
					t.Errorf("the rejected candidate %s is listed as safe", c.ID)
				}
			}
		})
	}
}
