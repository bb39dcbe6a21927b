package mine

import (
	"fmt"
	"strings"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// AllowlistedValue replaces, in expected receipts, a value that the
// examples' replay allowlists say changes on every execution (run ids,
// receipt ids). The replay oracle masks the same paths before comparing.
const AllowlistedValue = "<allowlisted>"

// consensusReceipts returns the effect receipts every example agrees on.
// Every example must have recorded receipts, and the same number of them; each receipt is merged
// field by field, and a field that differs is acceptable only where an
// example's replay_allowlist covers it. Anything else is a disagreement:
// the candidate then has no expected receipts, with a warning, instead of
// silently trusting the first example.
func consensusReceipts(traces []*trace.Trace) ([]any, []candidate.Problem) {
	var have [][]any
	var rules []trace.AllowlistRule
	var missing []string
	for _, t := range traces {
		receipts, _ := t.ReplayRun["effect_receipts"].([]any)
		if len(receipts) == 0 {
			missing = append(missing, t.ID)
			continue
		}
		have = append(have, receipts)
		rules = append(rules, t.ReplayAllowlist...)
	}
	if len(have) == 0 {
		return []any{}, nil
	}
	if len(missing) > 0 {
		// Receipts some examples never recorded are not a consensus: the
		// examples without them would fail their own shadow replay.
		return []any{}, []candidate.Problem{{
			Code: candidate.CodeReceiptsMissing,
			Message: fmt.Sprintf("%d of %d examples recorded no effect receipts (%s); no expected receipts are derived",
				len(missing), len(traces), strings.Join(limit(missing, 5), ", ")),
		}}
	}
	n := len(have[0])
	for _, h := range have[1:] {
		if len(h) != n {
			return []any{}, []candidate.Problem{{
				Code:    candidate.CodeReceiptDisagreement,
				Message: "examples recorded different numbers of effect receipts; no expected receipts are derived",
				Path:    "/effect_receipts",
			}}
		}
	}
	m := receiptMerger{rules: rules}
	out := make([]any, n)
	for i := range n {
		vals := make([]any, len(have))
		for e := range have {
			vals[e] = have[e][i]
		}
		v, bad := m.merge(vals, fmt.Sprintf("/effect_receipts/%d", i))
		if bad != "" {
			return []any{}, []candidate.Problem{{
				Code:    candidate.CodeReceiptDisagreement,
				Message: fmt.Sprintf("examples disagree on receipt field %s and no replay_allowlist rule covers it; no expected receipts are derived", bad),
				Path:    bad,
			}}
		}
		out[i] = v
	}
	return out, nil
}

type receiptMerger struct{ rules []trace.AllowlistRule }

func (m receiptMerger) allowed(ptr string) bool {
	for _, r := range m.rules {
		if r.Match(ptr) {
			return true
		}
	}
	return false
}

// merge returns the consensus of vals at JSON pointer ptr, or the pointer
// of the first disagreement.
func (m receiptMerger) merge(vals []any, ptr string) (any, string) {
	first := canonical(vals[0])
	equal := true
	for _, v := range vals[1:] {
		if canonical(v) != first {
			equal = false
			break
		}
	}
	if equal {
		return vals[0], ""
	}
	if m.allowed(ptr) {
		return AllowlistedValue, ""
	}
	if objs, ok := allObjects(vals); ok {
		keys := map[string]bool{}
		for _, o := range objs {
			for k := range o {
				keys[k] = true
			}
		}
		out := map[string]any{}
		for _, k := range sortedKeys(keys) {
			child := make([]any, len(objs))
			p := ptr + "/" + escapePointer(k)
			absent := false
			for e, o := range objs {
				v, present := o[k]
				if !present {
					absent = true
					break
				}
				child[e] = v
			}
			if absent {
				// A member some examples lack is per-execution noise only
				// where the allowlist says so; it is then left out.
				if m.allowed(p) {
					continue
				}
				return nil, p
			}
			v, bad := m.merge(child, p)
			if bad != "" {
				return nil, bad
			}
			out[k] = v
		}
		return out, ""
	}
	if arrs, ok := allArrays(vals); ok {
		out := make([]any, len(arrs[0]))
		for i := range out {
			child := make([]any, len(arrs))
			for e, a := range arrs {
				child[e] = a[i]
			}
			v, bad := m.merge(child, fmt.Sprintf("%s/%d", ptr, i))
			if bad != "" {
				return nil, bad
			}
			out[i] = v
		}
		return out, ""
	}
	return nil, ptr
}

func allObjects(vals []any) ([]map[string]any, bool) {
	out := make([]map[string]any, len(vals))
	for i, v := range vals {
		o, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		out[i] = o
	}
	return out, true
}

func allArrays(vals []any) ([][]any, bool) {
	out := make([][]any, len(vals))
	for i, v := range vals {
		a, ok := v.([]any)
		if !ok || (i > 0 && len(a) != len(out[0])) {
			return nil, false
		}
		out[i] = a
	}
	return out, true
}

// escapePointer escapes one JSON-pointer segment (RFC 6901).
func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

func limit(s []string, n int) []string {
	if len(s) <= n {
		return s
	}
	return append(append([]string(nil), s[:n]...), fmt.Sprintf("and %d more", len(s)-n))
}
