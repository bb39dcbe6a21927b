package runtime

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/big"
	"strings"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/crystallize-dev/crystallize/internal/jsontext"
	"github.com/crystallize-dev/crystallize/internal/redact"
)

// toGo converts a Starlark value to the generic JSON value encoding/json
// produces with UseNumber: nil, bool, string, json.Number, []any and
// map[string]any. Structs become objects. Anything else (functions,
// sets, dicts with non-string keys) is an error: what crosses the host
// boundary must be recordable.
func toGo(v starlark.Value) (any, error) {
	switch v := v.(type) {
	case starlark.NoneType:
		return nil, nil
	case starlark.Bool:
		return bool(v), nil
	case starlark.String:
		return string(v), nil
	case starlark.Int:
		return json.Number(v.String()), nil
	case starlark.Float:
		return json.Number(fmt.Sprint(float64(v))), nil
	case *starlark.List:
		out := make([]any, v.Len())
		for i := range out {
			e, err := toGo(v.Index(i))
			if err != nil {
				return nil, err
			}
			out[i] = e
		}
		return out, nil
	case starlark.Tuple:
		out := make([]any, len(v))
		for i, e := range v {
			g, err := toGo(e)
			if err != nil {
				return nil, err
			}
			out[i] = g
		}
		return out, nil
	case *starlark.Dict:
		out := make(map[string]any, v.Len())
		for _, item := range v.Items() {
			k, ok := item[0].(starlark.String)
			if !ok {
				return nil, fmt.Errorf("dict key %s is a %s, not a string", item[0], item[0].Type())
			}
			g, err := toGo(item[1])
			if err != nil {
				return nil, err
			}
			out[string(k)] = g
		}
		return out, nil
	case *starlarkstruct.Struct:
		out := map[string]any{}
		for _, name := range v.AttrNames() {
			a, err := v.Attr(name)
			if err != nil {
				return nil, err
			}
			g, err := toGo(a)
			if err != nil {
				return nil, err
			}
			out[name] = g
		}
		return out, nil
	}
	return nil, fmt.Errorf("a %s cannot be passed to or from the host", v.Type())
}

// toStarlark converts a generic JSON value (and the Go scalars a tool may
// return) to Starlark. Objects become dicts, in sorted key order so that
// iteration in the workflow is deterministic.
func toStarlark(v any) (starlark.Value, error) {
	switch v := v.(type) {
	case nil:
		return starlark.None, nil
	case bool:
		return starlark.Bool(v), nil
	case string:
		return starlark.String(v), nil
	case json.Number:
		if i, ok := new(big.Int).SetString(string(v), 10); ok {
			return starlark.MakeBigInt(i), nil
		}
		f, err := v.Float64()
		if err != nil {
			return nil, fmt.Errorf("number %s: %w", v, err)
		}
		return starlark.Float(f), nil
	case int:
		return starlark.MakeInt(v), nil
	case int64:
		return starlark.MakeInt64(v), nil
	case float64:
		return starlark.Float(v), nil
	case []any:
		elems := make([]starlark.Value, len(v))
		for i, e := range v {
			s, err := toStarlark(e)
			if err != nil {
				return nil, err
			}
			elems[i] = s
		}
		return starlark.NewList(elems), nil
	case map[string]any:
		d := starlark.NewDict(len(v))
		for _, k := range sortedKeys(v) {
			s, err := toStarlark(v[k])
			if err != nil {
				return nil, err
			}
			if err := d.SetKey(starlark.String(k), s); err != nil {
				return nil, err
			}
		}
		return d, nil
	case []string:
		elems := make([]starlark.Value, len(v))
		for i, e := range v {
			elems[i] = starlark.String(e)
		}
		return starlark.NewList(elems), nil
	}
	return nil, fmt.Errorf("a Go %T cannot be passed to a workflow", v)
}

// canonical encodes v as compact JSON with object keys sorted (which
// encoding/json does for maps) and without HTML escaping
// (jsontext.AppendCompact): every call digests its arguments and result.
func canonical(v any) []byte {
	return appendCanonicalTo(make([]byte, 0, 256), v)
}

// appendCanonicalTo is canonical(v) appended to dst: with dst a buffer
// on the caller's stack, a value that fits is encoded without growing
// a slice from nothing a few bytes at a time.
func appendCanonicalTo(dst []byte, v any) []byte {
	out, err := jsontext.AppendCompact(dst, v)
	if err != nil {
		// Values come from toGo or JSON decoding and always encode;
		// a failure is still recorded rather than hidden.
		return fmt.Appendf(dst, "%q", err.Error())
	}
	return out
}

// digest is "sha256:" and the hex SHA-256 of v's canonical JSON.
func digest(v any) string {
	var buf [512]byte
	return digestJSON(appendCanonicalTo(buf[:0], v))
}

// digestJSON is digest of a value whose canonical JSON is data.
func digestJSON(data []byte) string {
	sum := sha256.Sum256(data)
	var out [len("sha256:") + 2*sha256.Size]byte
	copy(out[:], "sha256:")
	hex.Encode(out[len("sha256:"):], sum[:])
	return string(out[:])
}

// parseOutput returns out decoded as JSON when it is a JSON document, else
// out as a string with one trailing newline removed.
func parseOutput(out []byte) any {
	trimmed := bytes.TrimSpace(out)
	if len(trimmed) > 0 && json.Valid(trimmed) {
		dec := json.NewDecoder(bytes.NewReader(trimmed))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err == nil {
			return v
		}
	}
	return strings.TrimSuffix(string(out), "\n")
}

// argString renders an argument for a command line: strings as they are,
// None as "", everything else as its canonical JSON.
func argString(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	case json.Number:
		return string(v)
	}
	return string(canonical(v))
}

// scrubber replaces secret values in recorded text. Longer values are
// replaced first, so that a secret containing another is replaced whole.
// What it returns has then been through the redactor (redact.Value) too,
// so a credential the run never resolved as a secret (a token a tool
// printed, one under a "token" key) does not reach the run's records
// either: trace.json, session.md, the journal, the result.
type scrubber struct {
	ids    []string
	values []string
}

func (s *scrubber) add(id, value string) {
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

// string scrubs one string.
func (s *scrubber) string(x string) string {
	out, _ := redact.Value(s.known(x))
	return out.(string)
}

// known replaces the known secret values in x: as they are, by
// "[redacted:ID]", which restore puts the value back for, and in the
// transformed forms redact.ReplaceTransformed finds (reversed,
// case-folded, base64, split by white space), by "[redacted:ID~form]",
// which stays.
func (s *scrubber) known(x string) string {
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

// value scrubs every string (and object key) in a generic value, returning
// a new value; v is not changed.
func (s *scrubber) value(v any) any {
	out, _ := redact.Value(s.knownValue(v))
	return out
}

// knownValue replaces the known secret values in every string (and
// object key) of v.
func (s *scrubber) knownValue(v any) any {
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

// restore puts the values of the secrets known so far back into a value
// scrub replaced them in: a journaled output, answered again to the
// workflow when a run is resumed.
func (s *scrubber) restore(v any) any {
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
			out[i] = s.restore(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[s.restore(k).(string)] = s.restore(e)
		}
		return out
	}
	return v
}
