package synth

import (
	"fmt"
	"math"
	"sort"

	starjson "go.starlark.net/lib/json"
	starmath "go.starlark.net/lib/math"
	startime "go.starlark.net/lib/time"
	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
)

// hostModules are the modules a capsule may load, each only when the
// spec's allowed_imports names it. None of them gives access to the file
// system, the network, the environment or the clock: the capsule's result
// depends on its input alone, which is what makes re-running it on
// transformed inputs a test.
var hostModules = map[string]*starlarkstruct.Module{
	"math":  starmath.Module,
	"json":  starjson.Module,
	"time":  timeModule(),
	"stats": statsModule,
	"table": tableModule,
}

// ModuleNames lists the modules capsules can load, sorted.
func ModuleNames() []string {
	names := make([]string, 0, len(hostModules))
	for n := range hostModules {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// timeModule is Starlark's time module without now(): durations, parsing
// and arithmetic stay, the clock goes, so results do not depend on when
// the capsule runs.
func timeModule() *starlarkstruct.Module {
	m := &starlarkstruct.Module{Name: "time", Members: starlark.StringDict{}}
	for k, v := range startime.Module.Members {
		if k != "now" {
			m.Members[k] = v
		}
	}
	return m
}

var statsModule = &starlarkstruct.Module{
	Name: "stats",
	Members: starlark.StringDict{
		"mean":     starlark.NewBuiltin("stats.mean", statsFunc(func(xs []float64) (float64, error) { return mean(xs), nil })),
		"stdev":    starlark.NewBuiltin("stats.stdev", statsFunc(stdevChecked)),
		"median":   starlark.NewBuiltin("stats.median", statsFunc(func(xs []float64) (float64, error) { return quantile(xs, 0.5), nil })),
		"quantile": starlark.NewBuiltin("stats.quantile", statsQuantile),
		"rmse":     starlark.NewBuiltin("stats.rmse", statsRMSE),
	},
}

// numbers reads a Starlark sequence of numbers.
func numbers(fn string, v starlark.Value) ([]float64, error) {
	it, ok := v.(starlark.Iterable)
	if !ok {
		return nil, fmt.Errorf("%s: got %s, want a sequence of numbers", fn, v.Type())
	}
	var xs []float64
	iter := it.Iterate()
	defer iter.Done()
	var x starlark.Value
	for iter.Next(&x) {
		f, ok := starlark.AsFloat(x)
		if !ok {
			return nil, fmt.Errorf("%s: element %d is %s, want a number", fn, len(xs), x.Type())
		}
		xs = append(xs, f)
	}
	return xs, nil
}

func statsFunc(f func([]float64) (float64, error)) func(*starlark.Thread, *starlark.Builtin, starlark.Tuple, []starlark.Tuple) (starlark.Value, error) {
	return func(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		var seq starlark.Value
		if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &seq); err != nil {
			return nil, err
		}
		xs, err := numbers(b.Name(), seq)
		if err != nil {
			return nil, err
		}
		if len(xs) == 0 {
			return nil, fmt.Errorf("%s: empty sequence", b.Name())
		}
		r, err := f(xs)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", b.Name(), err)
		}
		return starlark.Float(r), nil
	}
}

func stdevChecked(xs []float64) (float64, error) {
	if len(xs) < 2 {
		return 0, fmt.Errorf("needs at least 2 values, got %d", len(xs))
	}
	return math.Sqrt(variance(xs)), nil
}

func statsQuantile(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var seq starlark.Value
	var q float64
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 2, &seq, &q); err != nil {
		return nil, err
	}
	if q < 0 || q > 1 || math.IsNaN(q) {
		return nil, fmt.Errorf("%s: q must be between 0 and 1, got %g", b.Name(), q)
	}
	xs, err := numbers(b.Name(), seq)
	if err != nil {
		return nil, err
	}
	if len(xs) == 0 {
		return nil, fmt.Errorf("%s: empty sequence", b.Name())
	}
	return starlark.Float(quantile(xs, q)), nil
}

func statsRMSE(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var ys, preds starlark.Value
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 2, &ys, &preds); err != nil {
		return nil, err
	}
	a, err := numbers(b.Name(), ys)
	if err != nil {
		return nil, err
	}
	p, err := numbers(b.Name(), preds)
	if err != nil {
		return nil, err
	}
	if len(a) != len(p) || len(a) == 0 {
		return nil, fmt.Errorf("%s: sequences of lengths %d and %d; want equal, non-zero lengths", b.Name(), len(a), len(p))
	}
	var s float64
	for i := range a {
		d := a[i] - p[i]
		s += d * d
	}
	return starlark.Float(math.Sqrt(s / float64(len(a)))), nil
}

func mean(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// variance is the sample variance (n − 1 in the denominator), computed
// around the mean in two passes, which loses less precision than the
// sum-of-squares formula when values are large and close together.
func variance(xs []float64) float64 {
	m := mean(xs)
	var s float64
	for _, x := range xs {
		d := x - m
		s += d * d
	}
	return s / float64(len(xs)-1)
}

// quantile interpolates linearly between order statistics (the method
// R calls type 7 and numpy its default), so median of [1, 2, 3, 4] is 2.5.
func quantile(xs []float64, q float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	h := q * float64(len(s)-1)
	lo := math.Floor(h)
	i := int(lo)
	if i+1 >= len(s) {
		return s[len(s)-1]
	}
	return s[i] + (h-lo)*(s[i+1]-s[i])
}

var tableModule = &starlarkstruct.Module{
	Name: "table",
	Members: starlark.StringDict{
		"columns": starlark.NewBuiltin("table.columns", tableColumns),
		"rows":    starlark.NewBuiltin("table.rows", tableRows),
		"column":  starlark.NewBuiltin("table.column", tableColumn),
	},
}

// tableColumns turns rows (a list of dicts) into columns (a dict of
// lists), in the order keys first appear; a row without a key gives None.
func tableColumns(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var rows *starlark.List
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &rows); err != nil {
		return nil, err
	}
	var names []starlark.Value
	seen := map[string]bool{}
	dicts := make([]*starlark.Dict, rows.Len())
	for i := range rows.Len() {
		d, ok := rows.Index(i).(*starlark.Dict)
		if !ok {
			return nil, fmt.Errorf("%s: row %d is %s, want a dict", b.Name(), i, rows.Index(i).Type())
		}
		dicts[i] = d
		for _, k := range d.Keys() {
			s, ok := k.(starlark.String)
			if !ok {
				return nil, fmt.Errorf("%s: row %d has a %s key", b.Name(), i, k.Type())
			}
			if !seen[string(s)] {
				seen[string(s)] = true
				names = append(names, s)
			}
		}
	}
	out := starlark.NewDict(len(names))
	for _, n := range names {
		col := make([]starlark.Value, len(dicts))
		for i, d := range dicts {
			v, found, _ := d.Get(n)
			if !found {
				v = starlark.None
			}
			col[i] = v
		}
		if err := out.SetKey(n, starlark.NewList(col)); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// tableRows turns columns (a dict of equal-length lists) into rows.
func tableRows(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var cols *starlark.Dict
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &cols); err != nil {
		return nil, err
	}
	n := -1
	items := cols.Items()
	for _, it := range items {
		l, ok := it[1].(starlark.Indexable)
		if !ok {
			return nil, fmt.Errorf("%s: column %s is %s, want a list", b.Name(), it[0], it[1].Type())
		}
		if n >= 0 && l.Len() != n {
			return nil, fmt.Errorf("%s: column %s has %d values, others %d", b.Name(), it[0], l.Len(), n)
		}
		n = l.Len()
	}
	rows := make([]starlark.Value, max(n, 0))
	for i := range rows {
		d := starlark.NewDict(len(items))
		for _, it := range items {
			if err := d.SetKey(it[0], it[1].(starlark.Indexable).Index(i)); err != nil {
				return nil, err
			}
		}
		rows[i] = d
	}
	return starlark.NewList(rows), nil
}

// tableColumn returns one column of rows.
func tableColumn(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var rows *starlark.List
	var name string
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 2, &rows, &name); err != nil {
		return nil, err
	}
	col := make([]starlark.Value, rows.Len())
	for i := range rows.Len() {
		d, ok := rows.Index(i).(starlark.Mapping)
		if !ok {
			return nil, fmt.Errorf("%s: row %d is %s, want a dict", b.Name(), i, rows.Index(i).Type())
		}
		v, found, err := d.Get(starlark.String(name))
		if err != nil {
			return nil, err
		}
		if !found {
			v = starlark.None
		}
		col[i] = v
	}
	return starlark.NewList(col), nil
}
