package bundle

import (
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/jsontext"
	"github.com/crystallize-dev/crystallize/internal/redact"
)

// reportFile is a bundle's report.json: the redacted report and the
// skills the bundle accepted or rejected. Its two lists take the place
// of the report's own (encoding/json writes the shallower field), which
// list every candidate's skill: a bundle holds one candidate, and its
// report says what became of that candidate's skill in it.
type reportFile struct {
	*candidate.Report
	SkillCandidates         []any `json:"skill_candidates"`
	RejectedSkillCandidates []any `json:"rejected_skill_candidates"`
}

// bundleReport returns the report a bundle holds: r with provenance paths
// made relative, every private payload redacted and every user home
// directory anonymized, and the number of replacements. It is what
// encoding r, doing all that to the generic JSON and decoding the result
// gives (redactReport, which the tests keep as the reference), built on
// the typed report: a report of fifty thousand examples per candidate
// cost a map per object and an interface per value, three times over.
// r is not modified.
func bundleReport(r *candidate.Report) (*candidate.Report, int, error) {
	rel := relativeReport(r)
	red, n, err := redact.Copy(rel)
	if err != nil {
		return nil, 0, fmt.Errorf("redacting report: %w", err)
	}
	h, err := anonymizeHomesTyped(reflect.ValueOf(red).Elem())
	if err != nil {
		return nil, 0, fmt.Errorf("anonymizing home directories in report: %w", err)
	}
	return red, n + h, nil
}

// relativeReport returns a shallow copy of r with its provenance paths
// made relative (localPath), copying only what it changes.
func relativeReport(r *candidate.Report) *candidate.Report {
	out := *r
	out.WorkflowPath = localPath(r.WorkflowPath)
	if r.ShadowSources != nil {
		out.ShadowSources = make([]string, len(r.ShadowSources))
		for i, s := range r.ShadowSources {
			out.ShadowSources[i] = localPath(s)
		}
	}
	if r.SkippedFiles != nil {
		out.SkippedFiles = make([]candidate.SkippedFile, len(r.SkippedFiles))
		for i, sf := range r.SkippedFiles {
			old := sf.Path
			sf.Path = localPath(old)
			if sf.Errors != nil && old != "" {
				errs := make([]string, len(sf.Errors))
				for j, e := range sf.Errors {
					errs[j] = strings.ReplaceAll(e, old, localPath(old))
				}
				sf.Errors = errs
			}
			out.SkippedFiles[i] = sf
		}
	}
	if r.ExcludedTraces != nil {
		out.ExcludedTraces = make([]candidate.Exclusion, len(r.ExcludedTraces))
		for i, ex := range r.ExcludedTraces {
			ex.Source = localPath(ex.Source)
			out.ExcludedTraces[i] = ex
		}
	}
	relCandidates := func(cs []candidate.Candidate) []candidate.Candidate {
		if cs == nil {
			return nil
		}
		out := make([]candidate.Candidate, len(cs))
		for i, c := range cs {
			if c.Examples != nil {
				exs := make([]candidate.Example, len(c.Examples))
				for j, ex := range c.Examples {
					ex.Source = localPath(ex.Source)
					exs[j] = ex
				}
				c.Examples = exs
			}
			out[i] = c
		}
		return out
	}
	out.Candidates = relCandidates(r.Candidates)
	out.RejectedCandidates = relCandidates(r.RejectedCandidates)
	return &out
}

var (
	jsonNumberType      = reflect.TypeFor[json.Number]()
	jsonMarshalerType   = reflect.TypeFor[json.Marshaler]()
	textMarshalerIfType = reflect.TypeFor[encoding.TextMarshaler]()
)

// anonymizeHomesTyped is redact.Homes on a typed value, v settable: it
// replaces user home directories in every string that encoding v would
// write as a JSON string (not object keys, not numbers), and returns how
// many strings it changed. A value whose type encodes itself, or a struct
// that encoding/json writes by rules jsontext.Fields does not follow,
// takes the JSON round trip.
func anonymizeHomesTyped(v reflect.Value) (int, error) {
	n := 0
	var walk func(v reflect.Value) error
	walk = func(v reflect.Value) error {
		t := v.Type()
		if t.Kind() != reflect.Pointer && t.Kind() != reflect.Interface &&
			(reflect.PointerTo(t).Implements(jsonMarshalerType) || reflect.PointerTo(t).Implements(textMarshalerIfType)) {
			return homesRoundTrip(v, &n)
		}
		switch v.Kind() {
		case reflect.String:
			if t == jsonNumberType {
				return nil
			}
			if out, k := redact.HomeDirs(v.String()); k > 0 {
				n++
				v.SetString(out)
			}
		case reflect.Pointer:
			if !v.IsNil() {
				return walk(v.Elem())
			}
		case reflect.Interface:
			if v.IsNil() {
				return nil
			}
			out, k := redact.Homes(v.Elem().Interface())
			n += k
			if k > 0 {
				v.Set(reflect.ValueOf(out))
			}
		case reflect.Struct:
			fields, unusual := jsontext.Fields(t)
			if unusual {
				return homesRoundTrip(v, &n)
			}
			for _, f := range fields {
				fv, ok := jsontext.FieldByIndex(v, f.Index)
				if !ok || f.OmitEmpty && jsontext.IsEmpty(fv) {
					continue
				}
				if err := walk(fv); err != nil {
					return err
				}
			}
		case reflect.Slice, reflect.Array:
			if t.Elem().Kind() == reflect.Uint8 {
				return homesRoundTrip(v, &n)
			}
			for i := range v.Len() {
				if err := walk(v.Index(i)); err != nil {
					return err
				}
			}
		case reflect.Map:
			if t.Key().Kind() != reflect.String {
				return homesRoundTrip(v, &n)
			}
			iter := v.MapRange()
			for iter.Next() {
				e := reflect.New(t.Elem()).Elem()
				e.Set(iter.Value())
				before := n
				if err := walk(e); err != nil {
					return err
				}
				if n > before {
					v.SetMapIndex(iter.Key(), e)
				}
			}
		}
		return nil
	}
	return n, walk(v)
}

// homesRoundTrip anonymizes v through its JSON: encode, redact.Homes on
// the generic value, decode back into v when anything changed.
func homesRoundTrip(v reflect.Value, n *int) error {
	if (v.Kind() == reflect.Slice || v.Kind() == reflect.Map) && v.IsNil() {
		return nil
	}
	b, err := json.Marshal(v.Interface())
	if err != nil {
		return err
	}
	g, err := decodeGeneric(b)
	if err != nil {
		return err
	}
	out, k := redact.Homes(g)
	if k == 0 {
		return nil
	}
	*n += k
	nv := reflect.New(v.Type())
	if err := remarshal(out, nv.Interface()); err != nil {
		return err
	}
	v.Set(nv.Elem())
	return nil
}
