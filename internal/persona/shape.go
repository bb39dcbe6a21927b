package persona

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strconv"
	"strings"

	"github.com/crystallize-dev/crystallize/internal/trace"
)

// Shape returns the digest of the structure of a JSON value (a generic
// value of trace.ParseJSON): "sha256:" and the hex SHA-256 of its
// canonical description, which Describe returns. Two values have the same
// shape when they have the same member names and JSON types at every
// level, whatever their scalar values; an added, removed or retyped member
// anywhere changes it.
func Shape(v any) string {
	sum := sha256.Sum256([]byte(Describe(v)))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// maxShapeDepth bounds the nesting Describe follows. Deeper values are
// described as "deep", which still tells them from any shallower value;
// the JSON parser already refuses documents nested much deeper than a
// record needs.
const maxShapeDepth = 64

// Describe returns the canonical description of the structure of v that
// Shape digests:
//
//   - a scalar is its JSON type: null, boolean, string or number;
//   - an object is {"name":shape,...} with its members sorted by name and
//     each name quoted, so no name can forge a separator;
//   - an array is [shape|shape|...] with the distinct shapes of its
//     elements, sorted: an array's shape is the set of its element shapes,
//     so a list of three strings has the shape of a list of one, and the
//     empty array is [].
//
// Numbers are one type: 1 and 1.5 have the same shape, as in JSON.
func Describe(v any) string {
	var b strings.Builder
	describe(&b, v, 0)
	return b.String()
}

func describe(b *strings.Builder, v any, depth int) {
	if depth > maxShapeDepth {
		b.WriteString("deep")
		return
	}
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.Quote(k))
			b.WriteByte(':')
			describe(b, x[k], depth+1)
		}
		b.WriteByte('}')
	case []any:
		var shapes []string
		for _, e := range x {
			var eb strings.Builder
			describe(&eb, e, depth+1)
			shapes = append(shapes, eb.String())
		}
		slices.Sort(shapes)
		shapes = slices.Compact(shapes)
		b.WriteByte('[')
		b.WriteString(strings.Join(shapes, "|"))
		b.WriteByte(']')
	default:
		b.WriteString(trace.TypeName(v))
	}
}
