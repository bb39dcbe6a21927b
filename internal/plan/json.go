package plan

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/crystallize-dev/crystallize/internal/jsontext"
)

// decode parses data as one JSON value with numbers kept as json.Number,
// the representation the schema validator expects. A syntax error names
// its line and column, which is what a person fixing the file needs.
func decode(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("empty input")
		}
		return nil, positioned(data, err, dec.InputOffset())
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, positioned(data, errors.New("data after the top-level value"), dec.InputOffset())
	}
	return v, nil
}

// positioned prefixes err with the line and column of its offset, taken
// from a *json.SyntaxError when there is one.
func positioned(data []byte, err error, offset int64) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		offset = se.Offset
	}
	line, col := jsontext.Position(data, int(offset))
	return fmt.Errorf("line %d, column %d: %v", line, col, err)
}

// nodeOrder returns the keys of the top-level "nodes" object in the order
// they appear in data. Go maps forget that order, and the order in which
// the author wrote the steps is the order a reviewer expects to read
// them in. A key that appears twice keeps its first position; when
// "nodes" appears twice, the last one wins, as it does for the decoder.
// It returns nil when data is not an object with an object "nodes".
// data is text decode has accepted, which jsontext.Members walks.
func nodeOrder(data []byte) []string {
	i := jsontext.SkipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return nil
	}
	var order []string
	jsontext.Members(data, i, func(name []byte, value int) error {
		if string(name) != "nodes" {
			return nil
		}
		order = nil
		if data[value] != '{' {
			return nil
		}
		seen := map[string]bool{}
		_, err := jsontext.Members(data, value, func(key []byte, _ int) error {
			if !seen[string(key)] {
				seen[string(key)] = true
				order = append(order, string(key))
			}
			return nil
		})
		return err
	})
	return order
}

// child returns the JSON path of member k of the value at parent:
// $.nodes.discover, or $.nodes["plan-changes"] when k is not an identifier.
func child(parent, k string) string {
	if isIdent(k) {
		return parent + "." + k
	}
	q, _ := json.Marshal(k)
	return parent + "[" + string(q) + "]"
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		switch {
		case r == '_', 'a' <= r && r <= 'z', 'A' <= r && r <= 'Z':
		case '0' <= r && r <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// covers reports whether path is at or below base, so that a specific
// error about base (say, a budget that is not an object) hides the
// schema's complaints about the same value and its members.
func covers(base, path string) bool {
	if !strings.HasPrefix(path, base) {
		return false
	}
	rest := path[len(base):]
	return rest == "" || rest[0] == '.' || rest[0] == '['
}

// Accessors over decoded JSON. Each returns ok=false for a value of the
// wrong type, so the semantic checks can skip what the schema already
// reports instead of reporting it twice or, worse, panicking.

func obj(v any) (map[string]any, bool) {
	m, ok := v.(map[string]any)
	return m, ok
}

func str(v any) (string, bool) {
	s, ok := v.(string)
	return s, ok
}

// strs returns the strings of an array, skipping elements that are not
// strings (the schema reports those).
func strs(v any) []string {
	a, _ := v.([]any)
	var out []string
	for _, e := range a {
		if s, ok := e.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// num returns a finite JSON number as a float64.
func num(v any) (float64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, false
	}
	return f, true
}

// integer returns a JSON number with no fractional part (1 and 1.0 alike,
// as JSON Schema counts them) that fits an int64 exactly.
func integer(v any) (int64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	if i, err := strconv.ParseInt(string(n), 10, 64); err == nil {
		return i, true
	}
	f, ok := num(v)
	if !ok || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return 0, false
	}
	return int64(f), true
}
