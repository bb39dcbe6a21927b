package synth

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"sort"
)

// Built-in transforms. Each takes the input and returns a new value; the
// input is never modified.
const (
	TransformIdentity           = "identity"
	TransformPermuteRows        = "permute_rows"
	TransformPermuteRowsAligned = "permute_rows_aligned"
	TransformScale              = "scale"
	TransformShift              = "shift"
	TransformDuplicateRows      = "duplicate_rows"
	TransformDropNulls          = "drop_nulls"
)

// Transforms lists the built-in transforms.
var Transforms = []string{TransformIdentity, TransformPermuteRows, TransformPermuteRowsAligned, TransformScale, TransformShift, TransformDuplicateRows, TransformDropNulls}

// transformSeed derives the permutation seed of one property in one
// replicate, so runs are reproducible and properties independent.
func transformSeed(seed int, replicate int, property string) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d\x00%d\x00%s", seed, replicate, property)
	return h.Sum64()
}

// applyBuiltin applies a built-in transform. Rows are the elements of a
// list; aligned transforms also accept columns, a dict of equal-length
// lists, or parallel arrays, a list of equal-length lists (the (X, y)
// shape), and move the same rows in every one of them.
func applyBuiltin(name string, p Property, data any, seed uint64) (any, error) {
	switch name {
	case TransformIdentity:
		return data, nil
	case TransformPermuteRows:
		rows, ok := data.([]any)
		if !ok {
			return nil, fmt.Errorf("permute_rows needs a list of rows, got %s (use permute_rows_aligned for columns)", typeName(data))
		}
		return permute(rows, cycle(len(rows), seed)), nil
	case TransformPermuteRowsAligned:
		n, err := alignedLen(data)
		if err != nil {
			return nil, fmt.Errorf("permute_rows_aligned: %v", err)
		}
		perm := cycle(n, seed)
		return mapAligned(data, func(col []any) []any { return permute(col, perm) }), nil
	case TransformDuplicateRows:
		if _, err := alignedLen(data); err != nil {
			if rows, ok := data.([]any); ok {
				return duplicate(rows), nil
			}
			return nil, fmt.Errorf("duplicate_rows: %v", err)
		}
		if rows, ok := data.([]any); ok && !allLists(rows) {
			return duplicate(rows), nil
		}
		return mapAligned(data, duplicate), nil
	case TransformDropNulls:
		return dropNulls(data)
	case TransformScale:
		f := p.factor()
		return mapNumbers(data, func(x float64) float64 { return x * f }, func(i int64) (int64, bool) {
			if f == float64(int64(f)) {
				return i * int64(f), true
			}
			return 0, false
		}), nil
	case TransformShift:
		o := p.offset()
		return mapNumbers(data, func(x float64) float64 { return x + o }, func(i int64) (int64, bool) {
			if o == float64(int64(o)) {
				return i + int64(o), true
			}
			return 0, false
		}), nil
	}
	return nil, fmt.Errorf("unknown transform %q", name)
}

// cycle returns a random cyclic permutation of n elements (Sattolo's
// algorithm): for n ≥ 2 every element moves, so code that depends on row
// order, even only on the first row, sees a different input. A uniformly
// random shuffle would leave some rows in place and miss such code.
func cycle(n int, seed uint64) []int {
	perm := make([]int, n)
	for i := range perm {
		perm[i] = i
	}
	rng := rand.New(rand.NewPCG(seed, 0xc0ffee))
	for i := n - 1; i > 0; i-- {
		j := rng.IntN(i)
		perm[i], perm[j] = perm[j], perm[i]
	}
	return perm
}

func permute(rows []any, perm []int) []any {
	out := make([]any, len(rows))
	for i, j := range perm {
		out[i] = rows[j]
	}
	return out
}

func duplicate(rows []any) []any {
	out := make([]any, 0, 2*len(rows))
	for _, r := range rows {
		out = append(out, r, r)
	}
	return out
}

func allLists(rows []any) bool {
	if len(rows) == 0 {
		return false
	}
	for _, r := range rows {
		if _, ok := r.([]any); !ok {
			return false
		}
	}
	return true
}

// alignedLen checks that data is columns or parallel arrays and returns
// their common length.
func alignedLen(data any) (int, error) {
	var cols [][]any
	switch d := data.(type) {
	case map[string]any:
		for _, k := range sortedKeys(d) {
			c, ok := d[k].([]any)
			if !ok {
				return 0, fmt.Errorf("column %q is %s, not a list", k, typeName(d[k]))
			}
			cols = append(cols, c)
		}
	case []any:
		if !allLists(d) {
			return 0, fmt.Errorf("a list must hold only lists (parallel arrays) to be aligned")
		}
		for _, c := range d {
			cols = append(cols, c.([]any))
		}
	default:
		return 0, fmt.Errorf("needs columns (a dict of lists) or parallel arrays (a list of lists), got %s", typeName(data))
	}
	if len(cols) == 0 {
		return 0, fmt.Errorf("no columns")
	}
	for i, c := range cols {
		if len(c) != len(cols[0]) {
			return 0, fmt.Errorf("columns of different lengths (%d and %d)", len(cols[0]), len(cols[i]))
		}
	}
	return len(cols[0]), nil
}

func mapAligned(data any, f func([]any) []any) any {
	switch d := data.(type) {
	case map[string]any:
		out := make(map[string]any, len(d))
		for k, c := range d {
			out[k] = f(c.([]any))
		}
		return out
	case []any:
		out := make([]any, len(d))
		for i, c := range d {
			out[i] = f(c.([]any))
		}
		return out
	}
	return data
}

// dropNulls removes rows holding a null: null rows, dict rows with a null
// value and list rows with a null element; for columns or parallel
// arrays, the positions where any column is null.
func dropNulls(data any) (any, error) {
	if n, err := alignedLen(data); err == nil {
		if rows, ok := data.([]any); !ok || allLists(rows) {
			keep := make([]bool, n)
			for i := range keep {
				keep[i] = true
			}
			mapAligned(data, func(col []any) []any {
				for i, x := range col {
					if x == nil {
						keep[i] = false
					}
				}
				return col
			})
			return mapAligned(data, func(col []any) []any {
				var out []any
				for i, x := range col {
					if keep[i] {
						out = append(out, x)
					}
				}
				if out == nil {
					out = []any{}
				}
				return out
			}), nil
		}
	}
	rows, ok := data.([]any)
	if !ok {
		return nil, fmt.Errorf("drop_nulls needs rows, columns or parallel arrays, got %s", typeName(data))
	}
	out := []any{}
	for _, r := range rows {
		if !hasNull(r) {
			out = append(out, r)
		}
	}
	return out, nil
}

func hasNull(row any) bool {
	switch r := row.(type) {
	case nil:
		return true
	case map[string]any:
		for _, v := range r {
			if v == nil {
				return true
			}
		}
	case []any:
		for _, v := range r {
			if v == nil {
				return true
			}
		}
	}
	return false
}

// mapNumbers applies f to every number in data, at any depth. An integer
// stays an integer when asInt says the result is one.
func mapNumbers(data any, f func(float64) float64, asInt func(int64) (int64, bool)) any {
	switch d := data.(type) {
	case int64:
		if i, ok := asInt(d); ok {
			return i
		}
		return f(float64(d))
	case float64:
		return f(d)
	case []any:
		out := make([]any, len(d))
		for i, x := range d {
			out[i] = mapNumbers(x, f, asInt)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(d))
		for k, x := range d {
			out[k] = mapNumbers(x, f, asInt)
		}
		return out
	}
	return data
}

// resampleRows draws len(rows) rows with replacement (a bootstrap
// resample) from a list of rows, columns or parallel arrays.
func resampleRows(data any, seed uint64) (any, error) {
	rng := rand.New(rand.NewPCG(seed, 0xb007))
	draw := func(n int) []int {
		idx := make([]int, n)
		for i := range idx {
			idx[i] = rng.IntN(n)
		}
		return idx
	}
	if rows, ok := data.([]any); ok && !allLists(rows) {
		if len(rows) == 0 {
			return rows, nil
		}
		return permute(rows, draw(len(rows))), nil
	}
	n, err := alignedLen(data)
	if err != nil {
		return nil, fmt.Errorf("bootstrap resampling: %v", err)
	}
	idx := draw(n)
	return mapAligned(data, func(col []any) []any { return permute(col, idx) }), nil
}

// compareMetric checks the relation a property expects between a metric
// on the original input (a) and on the transformed one (b).
func compareMetric(p Property, a, b any) (bool, string) {
	tol := p.tolerance()
	fa, okA := asFloat(a)
	fb, okB := asFloat(b)
	switch p.Expect {
	case "", "equal":
		if sameValue(a, b, tol) {
			return true, ""
		}
		return false, fmt.Sprintf("%v on the original input, %v on the transformed one", a, b)
	case "scaled", "shifted":
		if !okA || !okB {
			return false, "the metric is not a number"
		}
		want := fa * p.factor()
		if p.Expect == "shifted" {
			want = fa + p.offset()
		}
		if diff := fb - want; diff <= tol && -diff <= tol {
			return true, ""
		}
		return false, fmt.Sprintf("expected %v on the transformed input, got %v", want, fb)
	}
	return false, fmt.Sprintf("unknown relation %q", p.Expect)
}

// metricKeys returns the keys a property compares: its metric, or every
// key of the original result.
func metricKeys(p Property, m Metrics) []string {
	if p.Metric != "" {
		return []string{p.Metric}
	}
	keys := sortedKeys(m)
	sort.Strings(keys)
	return keys
}
