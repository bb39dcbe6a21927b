package trace

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
)

// AppendCanonical appends to b an encoding of the decoded JSON value v in
// which equal values are equal bytes and different values different ones:
// a type tag, and for strings, numbers, objects and arrays a length
// prefix, with object members in key order. It is injective without
// escaping and avoids encoding/json's reflection, which makes it the
// cheap way to compare or digest parameters (mining compares values by
// it; a thin load digests each call's parameters by it).
func AppendCanonical(b []byte, v any) []byte {
	switch x := v.(type) {
	case string:
		b = append(b, 's')
		b = strconv.AppendInt(b, int64(len(x)), 10)
		b = append(b, ':')
		return append(b, x...)
	case json.Number:
		b = append(b, 'n')
		b = strconv.AppendInt(b, int64(len(x)), 10)
		b = append(b, ':')
		return append(b, x...)
	case bool:
		if x {
			return append(b, 't')
		}
		return append(b, 'f')
	case nil:
		return append(b, 'z')
	case map[string]any:
		b = append(b, '{')
		b = strconv.AppendInt(b, int64(len(x)), 10)
		b = append(b, ':')
		for _, k := range slices.Sorted(maps.Keys(x)) {
			b = strconv.AppendInt(b, int64(len(k)), 10)
			b = append(b, ':')
			b = append(b, k...)
			b = AppendCanonical(b, x[k])
		}
		return b
	case []any:
		b = append(b, '[')
		b = strconv.AppendInt(b, int64(len(x)), 10)
		b = append(b, ':')
		for _, el := range x {
			b = AppendCanonical(b, el)
		}
		return b
	}
	// Values built in Go rather than decoded from JSON: fall back to
	// their JSON encoding, tagged apart from everything above.
	j, err := json.Marshal(v)
	if err != nil {
		j = fmt.Appendf(nil, "%T:%v", v, v)
	}
	b = append(b, 'j')
	b = strconv.AppendInt(b, int64(len(j)), 10)
	b = append(b, ':')
	return append(b, j...)
}
