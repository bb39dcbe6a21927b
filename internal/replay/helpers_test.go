package replay

import (
	"strings"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// act returns a tool_call action named name whose parameters are the
// given keys, each set to "v".
func act(id, name string, keys ...string) trace.Action {
	a := trace.Action{ID: id, Kind: trace.KindToolCall, Name: name}
	if len(keys) > 0 {
		a.Parameters = map[string]any{}
		for _, k := range keys {
			a.Parameters[k] = "v"
		}
	}
	return a
}

// seq returns a trace whose actions are named by the space-separated
// words of names, with ids "<id>-<index>".
func seq(id, names string) *trace.Trace {
	t := &trace.Trace{Version: 1, ID: id, SourceHash: "sha256:" + id}
	for i, n := range strings.Fields(names) {
		t.Actions = append(t.Actions, act(id+"-"+itoa(i), n))
	}
	return t
}

func itoa(i int) string {
	const digits = "0123456789"
	if i < 10 {
		return digits[i : i+1]
	}
	return itoa(i/10) + digits[i%10:i%10+1]
}

// cand returns a candidate whose steps are parameterless tool calls named
// by the words of names.
func cand(names string) *candidate.Candidate {
	c := &candidate.Candidate{ID: "candidate_test"}
	for i, n := range strings.Fields(names) {
		a := act("", n)
		c.SequenceSignature = append(c.SequenceSignature, a.Signature())
		c.Steps = append(c.Steps, candidate.Step{Index: i + 1, Kind: a.Kind, Name: n})
	}
	return c
}
