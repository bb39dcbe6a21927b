package toolexec

import (
	"strings"

	"github.com/crystallize-dev/crystallize/internal/redact"
)

// Scrubber replaces secret values in recorded text. Longer values are
// replaced first, so that a secret containing another is replaced whole.
// What it returns has then been through the redactor (redact.Value) too,
// so a credential the run never resolved as a secret (a token a tool
// printed, one under a "token" key) does not reach the run's records
// either: trace.json, session.md, the journal, the result.
type Scrubber struct {
	ids    []string
	values []string
}

func (s *Scrubber) Add(id, value string) {
	if value == "" {
		return
	}
	for _, v := range s.values {
		if v == value {
			return
		}
	}
	i := 0
	for i < len(s.values) && len(s.values[i]) >= len(value) {
		i++
	}
	s.values = append(s.values[:i], append([]string{value}, s.values[i:]...)...)
	s.ids = append(s.ids[:i], append([]string{id}, s.ids[i:]...)...)
}

// Scrub scrubs one string.
func (s *Scrubber) Scrub(x string) string {
	out, _ := redact.Value(s.known(x))
	return out.(string)
}

// known replaces the known secret values in x: as they are, by
// "[redacted:ID]", which restore puts the value back for, and in the
// transformed forms redact.ReplaceTransformed finds (reversed,
// case-folded, base64, split by white space), by "[redacted:ID~form]",
// which stays.
func (s *Scrubber) known(x string) string {
	for i, v := range s.values {
		if strings.Contains(x, v) {
			x = strings.ReplaceAll(x, v, "[redacted:"+s.ids[i]+"]")
		}
	}
	for i, v := range s.values {
		x = redact.ReplaceTransformed(x, v, func(form string) string {
			return "[redacted:" + s.ids[i] + "~" + form + "]"
		})
	}
	return x
}

// Value scrubs every string (and object key) in a generic value, returning
// a new value; v is not changed.
func (s *Scrubber) Value(v any) any {
	out, _ := redact.Value(s.knownValue(v))
	return out
}

// knownValue replaces the known secret values in every string (and
// object key) of v.
func (s *Scrubber) knownValue(v any) any {
	if len(s.values) == 0 {
		return v
	}
	switch v := v.(type) {
	case string:
		return s.known(v)
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = s.knownValue(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[s.known(k)] = s.knownValue(e)
		}
		return out
	}
	return v
}

// Restore puts the values of the secrets known so far back into a value
// scrub replaced them in: a journaled output, answered again to the
// workflow when a run is resumed.
func (s *Scrubber) Restore(v any) any {
	if len(s.values) == 0 {
		return v
	}
	switch v := v.(type) {
	case string:
		for i, id := range s.ids {
			v = strings.ReplaceAll(v, "[redacted:"+id+"]", s.values[i])
		}
		return v
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = s.Restore(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[s.Restore(k).(string)] = s.Restore(e)
		}
		return out
	}
	return v
}
