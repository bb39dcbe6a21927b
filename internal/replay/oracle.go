package replay

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// Oracle compares two executions of a run, as the replay oracle of the
// harn.orchestration.replay_trace.v1 format does: first is the recorded
// execution, second the one being checked, both generic JSON objects such
// as a trace's replay_run. Neither is modified.
//
// Each allowlist rule is a JSON pointer pattern (see trace.Pattern; "*"
// matches any array element or object member) naming a field that changes
// on every execution, with the reason why. A value at a path some rule
// matches, in either run, is masked: it compares equal to whatever the
// other run holds there, whatever its type. That covers run and receipt
// ids, and the string "<allowlisted>" that mining writes into a
// candidate's expected receipts where the examples differed. An object
// member at a matched path that only one run has is masked too: a
// per-execution field one execution did not record is not drift. An array
// element that only one run has is always a divergence, even under a "*"
// rule, since a rule masks values, not how many receipts a run made.
// Masking by skipping, rather than by writing a placeholder into copies of
// both runs as the original does, gives the same verdict without copying
// the runs; a rule's replacement value therefore does not matter.
//
// A rule without a reason or with a malformed path is not applied (an
// unexplained exception could hide real drift) and is reported as a
// warning with code allowlist_invalid; a rule that matches nothing in
// either run is a warning with code allowlist_unused. Neither fails the
// comparison.
//
// The runs are then compared canonically (object members by key, arrays by
// index, numbers by value) and the first divergence in document order,
// members in sorted key order, is reported with its JSON pointer. The
// report passes when there is none.
func Oracle(first, second map[string]any, allowlist []trace.AllowlistRule) candidate.OracleReport {
	all := compileRules(allowlist)
	m := masker{}
	for _, r := range all {
		if r.invalid == "" {
			m.rules = append(m.rules, r)
		}
	}
	m.markUsed(first)
	m.markUsed(second)
	warnings := []candidate.Problem{}
	for _, r := range all {
		switch {
		case r.invalid != "":
			warnings = append(warnings, candidate.Problem{Code: candidate.CodeAllowlistInvalid, Message: r.invalid, Path: r.path})
		case !r.used:
			warnings = append(warnings, candidate.Problem{
				Code:    candidate.CodeAllowlistUnused,
				Message: fmt.Sprintf("allowlist rule %s matched nothing in either run", r.path),
				Path:    r.path,
			})
		}
	}
	div := m.diff(any(first), any(second))
	return candidate.OracleReport{
		SchemaVersion:   candidate.ReplayTraceSchema,
		Expectation:     candidate.ExpectMatch,
		Passed:          div == nil,
		Divergence:      div,
		Warnings:        warnings,
		FirstRunCounts:  counts(first),
		SecondRunCounts: counts(second),
	}
}

// rule is a compiled allowlist rule: its path split into unescaped
// segments, "*" being the wildcard, and whether it matched anything. A
// rule that cannot be applied says why in invalid.
type rule struct {
	path    string
	segs    []string
	used    bool
	invalid string
}

// unescaper undoes RFC 6901 escaping. Scanning left to right, "~01" is "~"
// then "1", as the RFC requires ("~1" is decoded before "~0" would be).
var unescaper = strings.NewReplacer("~1", "/", "~0", "~")

// compileRules compiles the allowlist, keeping rule order; malformed rules
// are kept with the reason they cannot be applied.
func compileRules(allowlist []trace.AllowlistRule) []*rule {
	rules := make([]*rule, len(allowlist))
	for i, r := range allowlist {
		c := &rule{path: r.Path}
		rules[i] = c
		segs, err := compilePattern(r.Path)
		switch {
		case err != nil:
			c.invalid = fmt.Sprintf("allowlist rule %d: %v; rule ignored", i, err)
		case strings.TrimSpace(r.Reason) == "":
			c.invalid = fmt.Sprintf("allowlist rule %d: path %s gives no reason why it differs between executions; rule ignored", i, r.Path)
		default:
			c.segs = segs
		}
	}
	return rules
}

// compilePattern checks a rule path with trace.CompilePattern, the one
// definition of the pattern language, and returns its segments.
func compilePattern(path string) ([]string, error) {
	if _, err := trace.CompilePattern(path); err != nil {
		return nil, err
	}
	return splitSegments(path), nil
}

// splitSegments splits a valid pointer into unescaped segments. Matching
// segments against the walker's path stack, rather than calling
// Pattern.Match with a pointer string built for every node, keeps the walk
// free of allocations; FuzzAllowlistPattern checks that both agree.
func splitSegments(path string) []string {
	segs := strings.Split(path[1:], "/")
	for i, s := range segs {
		if strings.IndexByte(s, '~') >= 0 {
			segs[i] = unescaper.Replace(s)
		}
	}
	return segs
}

func (r *rule) match(stack []string) bool {
	if len(stack) != len(r.segs) {
		return false
	}
	for i, s := range r.segs {
		if s != "*" && s != stack[i] {
			return false
		}
	}
	return true
}

// masker walks runs with the path of the current node kept as a stack of
// unescaped segments.
type masker struct {
	rules []*rule
	stack []string
}

func (m *masker) masked() bool {
	for _, r := range m.rules {
		if r.match(m.stack) {
			return true
		}
	}
	return false
}

// markUsed records which rules match some node of v. It walks all of v,
// not only what the diff visits (the diff stops at the first divergence),
// so an unused-rule warning does not depend on where the runs differ.
func (m *masker) markUsed(v any) {
	unused := 0
	for _, r := range m.rules {
		if !r.used {
			unused++
		}
	}
	if unused > 0 {
		m.walk(v, &unused)
	}
}

func (m *masker) walk(v any, unused *int) {
	for _, r := range m.rules {
		if !r.used && r.match(m.stack) {
			r.used = true
			*unused--
		}
	}
	if *unused == 0 {
		return
	}
	switch v := v.(type) {
	case map[string]any:
		for k, child := range v {
			m.stack = append(m.stack, k)
			m.walk(child, unused)
			m.stack = m.stack[:len(m.stack)-1]
			if *unused == 0 {
				return
			}
		}
	case []any:
		for i, child := range v {
			m.stack = append(m.stack, strconv.Itoa(i))
			m.walk(child, unused)
			m.stack = m.stack[:len(m.stack)-1]
			if *unused == 0 {
				return
			}
		}
	}
}

// diff returns the first divergence between a and b at the current path,
// or nil. Its cost is linear in the size of the runs times the number of
// rules, which are few.
func (m *masker) diff(a, b any) *candidate.Divergence {
	if m.masked() {
		return nil
	}
	switch av := a.(type) {
	case map[string]any:
		bv, ok := b.(map[string]any)
		if !ok {
			break
		}
		keys := make([]string, 0, len(av)+len(bv))
		for k := range av {
			keys = append(keys, k)
		}
		for k := range bv {
			if _, ok := av[k]; !ok {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		for _, k := range keys {
			m.stack = append(m.stack, k)
			x, inA := av[k]
			y, inB := bv[k]
			var d *candidate.Divergence
			switch {
			case inA && inB:
				d = m.diff(x, y)
			case m.masked():
			case inA:
				d = m.divergence(x, nil, "right run is missing this field")
			default:
				d = m.divergence(nil, y, "left run is missing this field")
			}
			m.stack = m.stack[:len(m.stack)-1]
			if d != nil {
				return d
			}
		}
		return nil
	case []any:
		bv, ok := b.([]any)
		if !ok {
			break
		}
		for i := range max(len(av), len(bv)) {
			m.stack = append(m.stack, strconv.Itoa(i))
			var d *candidate.Divergence
			switch {
			case i < len(av) && i < len(bv):
				d = m.diff(av[i], bv[i])
			case i < len(av):
				d = m.divergence(av[i], nil, "right run is missing this array element")
			default:
				d = m.divergence(nil, bv[i], "left run is missing this array element")
			}
			m.stack = m.stack[:len(m.stack)-1]
			if d != nil {
				return d
			}
		}
		return nil
	}
	if equal(a, b) {
		return nil
	}
	return m.divergence(a, b, "values differ")
}

func (m *masker) divergence(left, right any, msg string) *candidate.Divergence {
	return &candidate.Divergence{Path: pointer(m.stack), Left: left, Right: right, Message: msg}
}

// pointer renders a path stack as an RFC 6901 JSON pointer.
func pointer(stack []string) string {
	var b strings.Builder
	for _, s := range stack {
		b.WriteByte('/')
		b.WriteString(escapeSegment(s))
	}
	return b.String()
}

func escapeSegment(s string) string {
	if strings.ContainsAny(s, "~/") {
		return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
	}
	return s
}

// counts returns the number of elements of every top-level array of a run,
// the summary the original's report gives for its fixed set of arrays.
func counts(run map[string]any) map[string]int {
	out := map[string]int{}
	for k, v := range run {
		if a, ok := v.([]any); ok {
			out[k] = len(a)
		}
	}
	return out
}
