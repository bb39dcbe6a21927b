package persona

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"go.starlark.net/syntax"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/codegen"
)

// PatchFile is the file name the patch is checked under, and the name it
// has in a bundle (the bundle's workflow file).
const PatchFile = "workflow.star"

// maxLiteralDepth bounds the nesting of a literal in the patch, far below
// what the Starlark parser refuses and far beyond what a result holds.
const maxLiteralDepth = 64

// errTooDeep reports a result member nested deeper than maxLiteralDepth.
var errTooDeep = fmt.Errorf("value nested deeper than %d levels", maxLiteralDepth)

// Patch renders the literal Starlark step that replaces the worker of a
// proposed result: one function, FuncName(persona, worker), taking ctx
// and the repair bundle and returning the recurring result. Each member of
// the result (sorted by name) is
//
//   - a literal, when every matched record returned the same value;
//   - bundle["k"], when in every record it equals the bundle's member k
//     (the first such k by name): the worker passed that part of its input
//     through;
//   - otherwise a ctx.model call behind a review_required comment, with a
//     CodeVaryingResult warning: the records show the member varies and
//     nothing in the bundle predicts it, so code alone cannot produce it.
//
// The header names the persona, the worker, the evidence and the
// candidate, and says that the patch is review material. The source
// passes codegen.Check (it parses with go.starlark.net/syntax, every name
// resolves, one function whose first parameter is ctx); a source that
// does not is returned as an error, never as a patch. res must be a
// Proposed result of Evaluate.
func Patch(res *Result, candidateID string) ([]byte, []candidate.Problem, error) {
	if res == nil || len(res.matched) == 0 {
		return nil, nil, errors.New("patch: no matched records")
	}
	fn := FuncName(res.Persona, res.Worker)
	var keys []string
	for k := range res.matched[0].Result {
		keys = append(keys, k)
	}
	slices.Sort(keys)

	var (
		body     strings.Builder
		warnings []candidate.Problem
		varying  []string
	)
	for _, k := range keys {
		vals := make([]string, len(res.matched))
		for i, r := range res.matched {
			vals[i] = canonical(r.Result[k])
		}
		switch from := passedThrough(res.matched, k, vals); {
		case allSame(vals):
			lit, err := literal(res.matched[0].Result[k], 2, 0)
			if err != nil {
				return nil, nil, fmt.Errorf("patch: $.result.%s: %w", k, err)
			}
			fmt.Fprintf(&body, "        %s: %s,\n", quote(k), lit)
		case from != "":
			fmt.Fprintf(&body, "        # varies with the bundle: equal to bundle[%s] in all %d records\n", quote(from), len(res.matched))
			fmt.Fprintf(&body, "        %s: bundle[%s],\n", quote(k), quote(from))
		default:
			varying = append(varying, k)
			fmt.Fprintf(&body, "        # review_required: %s varies between the records and no bundle member predicts it\n", oneLine(k))
			fmt.Fprintf(&body, "        %s: ctx.model(%s, inputs = {\"bundle\": bundle, \"member\": %s}),\n", quote(k), quote(fn+"."+k), quote(k))
		}
	}
	if len(varying) > 0 {
		warnings = append(warnings, candidate.Problem{
			Code:    CodeVaryingResult,
			Message: fmt.Sprintf("result member(s) %s vary between the records and equal no bundle member; the patch asks a model for them and needs review", strings.Join(varying, ", ")),
			Path:    "$.result",
		})
	}

	var b strings.Builder
	line := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	line("# %s — persona repair crystallization, %s", fn, oneLine(candidateID))
	line("# persona %s · repair worker %s · %d clean records over %d days (%s)", oneLine(res.Persona), oneLine(res.Worker), res.Examples, res.HistoryDays, res.HistorySource)
	line("# input shape %s · output shape %s", res.InputShape, res.OutputShape)
	line("# review material: a literal step for the persona package, never applied automatically;")
	line("# promotion still needs historical shadow fixtures, an eval-pack delta, a human approval,")
	line("# a package version bump and a normal pull request against the persona package.")
	line("# step 1 · %s: the persona passes the repair bundle in as `bundle`", StepReadBundle)
	line("# step 2 · %s: this function, in place of the worker's model loop", oneLine(res.Worker))
	line("# step 3 · %s %s: stays with the persona, which acts on the returned result", StepDownstream, oneLine(strconv.Quote(res.DownstreamAction)))
	line("def %s(ctx, bundle):", fn)
	line("    %s", docstring(fmt.Sprintf("Returns the result repair worker %s gave persona %s in %d records, without a model loop.", res.Worker, res.Persona, res.Examples)))
	switch {
	case res.matched[0].Result == nil:
		// Every record agreed on having no result (null shape).
		line("    return None")
	case len(keys) == 0:
		line("    return {}")
	default:
		line("    return {")
		b.WriteString(body.String())
		line("    }")
	}
	src := []byte(b.String())
	if err := codegen.Check(PatchFile, src, fn); err != nil {
		return nil, nil, fmt.Errorf("patch %s does not check: %w", fn, err)
	}
	return src, warnings, nil
}

// passedThrough returns the first bundle member (by name) whose canonical
// value equals vals[i] in every record i, or "".
func passedThrough(records []*Record, key string, vals []string) string {
	var names []string
	for k := range records[0].Bundle {
		names = append(names, k)
	}
	slices.Sort(names)
next:
	for _, k := range names {
		for i, r := range records {
			v, ok := r.Bundle[k]
			if !ok || canonical(v) != vals[i] {
				continue next
			}
		}
		return k
	}
	return ""
}

func allSame(vals []string) bool {
	for _, v := range vals[1:] {
		if v != vals[0] {
			return false
		}
	}
	return true
}

// canonical is the JSON text of a generic value with sorted keys; an
// absent member and null are both "null".
func canonical(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%#v", v)
	}
	return string(b)
}

// quote returns a Starlark string literal for s. syntax.Quote escapes
// quotes, backslashes and every non-printing rune; invalid UTF-8 (only
// possible for strings built in Go) becomes U+FFFD first, since Starlark
// takes \x escapes above 0x7f only in bytes literals.
func quote(s string) string {
	return syntax.Quote(strings.ToValidUTF8(s, "\uFFFD"), false)
}

// literal renders a generic JSON value as a Starlark expression, objects
// with sorted keys, one member per line from the given indentation level
// on (4 spaces a level).
func literal(v any, indent, depth int) (string, error) {
	if depth > maxLiteralDepth {
		return "", errTooDeep
	}
	switch x := v.(type) {
	case nil:
		return "None", nil
	case bool:
		if x {
			return "True", nil
		}
		return "False", nil
	case string:
		return quote(x), nil
	case json.Number:
		return number(string(x))
	case float64:
		return number(strconv.FormatFloat(x, 'g', -1, 64))
	case int:
		return strconv.Itoa(x), nil
	case int64:
		return strconv.FormatInt(x, 10), nil
	case []any:
		if len(x) == 0 {
			return "[]", nil
		}
		parts := make([]string, len(x))
		for i, e := range x {
			s, err := literal(e, indent+1, depth+1)
			if err != nil {
				return "", err
			}
			parts[i] = s
		}
		return "[" + strings.Join(parts, ", ") + "]", nil
	case map[string]any:
		if len(x) == 0 {
			return "{}", nil
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		pad := strings.Repeat("    ", indent+1)
		var b strings.Builder
		b.WriteString("{\n")
		for _, k := range keys {
			s, err := literal(x[k], indent+1, depth+1)
			if err != nil {
				return "", err
			}
			fmt.Fprintf(&b, "%s%s: %s,\n", pad, quote(k), s)
		}
		b.WriteString(strings.Repeat("    ", indent) + "}")
		return b.String(), nil
	}
	return "", fmt.Errorf("value of type %T is not JSON", v)
}

// number renders a JSON number literal as a Starlark int or float: an
// integer stays as written (Starlark ints are unbounded); anything else
// is written as the float it denotes, with a decimal point or exponent.
func number(s string) (string, error) {
	if _, err := strconv.ParseInt(s, 10, 64); err == nil {
		return s, nil
	}
	if isInteger(s) {
		return strings.TrimLeft(s, "+"), nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return "", fmt.Errorf("number %s cannot be written as a Starlark literal", s)
	}
	out := strconv.FormatFloat(f, 'g', -1, 64)
	if !strings.ContainsAny(out, ".eE") {
		out += ".0"
	}
	return out, nil
}

// isInteger reports whether s is an optionally negative run of digits.
func isInteger(s string) bool {
	s = strings.TrimPrefix(s, "-")
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// oneLine reduces text that came from input to one printable line for a
// comment: every non-printing rune (line breaks, control characters,
// bidirectional overrides) becomes a space, so no input can end the
// comment and start code.
func oneLine(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	return strings.Map(func(r rune) rune {
		if unicode.IsPrint(r) {
			return r
		}
		return ' '
	}, s)
}

// docstring returns a one-line triple-quoted Starlark string holding s,
// with backslashes and double quotes escaped so nothing in s closes it.
func docstring(s string) string {
	s = oneLine(s)
	s = strings.ReplaceAll(s, `\`, `\\`)
	s = strings.ReplaceAll(s, `"`, `\"`)
	return `"""` + s + `"""`
}
