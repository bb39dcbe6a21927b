package mine

import (
	"slices"
	"strings"

	"github.com/crystallize-dev/crystallize/internal/trace"
)

// decisionOptions returns the alternatives of a human_approval step whose
// examples all offered the person the same options (metadata options, a
// list of strings, as package normalize records an agent's question to
// its user), or nil. The options must be a real choice, at least two
// distinct non-empty strings, since that is what a workflow can ask; when
// the examples offered different lists, the step stays an approval: which
// list to offer is for a reviewer, not for mining.
func decisionOptions(v stepView) []string {
	var first []string
	for e, a := range v.actions {
		if a.Kind != trace.KindHumanApproval {
			return nil
		}
		opts, ok := stringList(a.Metadata["options"])
		if !ok {
			return nil
		}
		if e == 0 {
			first = opts
		} else if !slices.Equal(first, opts) {
			return nil
		}
	}
	if len(first) < 2 {
		return nil
	}
	for i, o := range first {
		if strings.TrimSpace(o) == "" || slices.Contains(first[:i], o) {
			return nil
		}
	}
	return first
}

// stringList reads a list of strings as metadata holds it: []any when
// decoded from JSON, []string when set in memory.
func stringList(v any) ([]string, bool) {
	switch l := v.(type) {
	case []string:
		return slices.Clone(l), true
	case []any:
		out := make([]string, len(l))
		for i, x := range l {
			s, ok := x.(string)
			if !ok {
				return nil, false
			}
			out[i] = s
		}
		return out, true
	}
	return nil, false
}
