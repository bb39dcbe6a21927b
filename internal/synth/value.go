package synth

import (
	"fmt"
	"math"
	"math/big"
	"sort"

	"go.starlark.net/starlark"
)

// toStarlark converts a value of this package's model (see normalize) to a
// frozen Starlark value, so a capsule cannot change the input it was given
// and every execution sees the same data.
func toStarlark(v any) (starlark.Value, error) {
	out, err := toStarlarkValue(v)
	if err != nil {
		return nil, err
	}
	out.Freeze()
	return out, nil
}

func toStarlarkValue(v any) (starlark.Value, error) {
	switch x := v.(type) {
	case nil:
		return starlark.None, nil
	case bool:
		return starlark.Bool(x), nil
	case string:
		return starlark.String(x), nil
	case int64:
		return starlark.MakeInt64(x), nil
	case int:
		return starlark.MakeInt(x), nil
	case float64:
		return starlark.Float(x), nil
	case []any:
		elems := make([]starlark.Value, len(x))
		for i, e := range x {
			sv, err := toStarlarkValue(e)
			if err != nil {
				return nil, err
			}
			elems[i] = sv
		}
		return starlark.NewList(elems), nil
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		d := starlark.NewDict(len(x))
		for _, k := range keys {
			sv, err := toStarlarkValue(x[k])
			if err != nil {
				return nil, err
			}
			if err := d.SetKey(starlark.String(k), sv); err != nil {
				return nil, err
			}
		}
		return d, nil
	}
	return nil, fmt.Errorf("cannot convert %T to a Starlark value", v)
}

// fromStarlark converts a Starlark value built of None, bools, numbers,
// strings, lists, tuples and string-keyed dicts back to the value model;
// a custom transform's result goes through it.
func fromStarlark(v starlark.Value) (any, error) {
	switch x := v.(type) {
	case starlark.NoneType:
		return nil, nil
	case starlark.Bool:
		return bool(x), nil
	case starlark.String:
		return string(x), nil
	case starlark.Int:
		return intValue(x)
	case starlark.Float:
		return float64(x), nil
	case *starlark.List:
		return fromIterable(x, x.Len())
	case starlark.Tuple:
		return fromIterable(x, x.Len())
	case *starlark.Dict:
		out := make(map[string]any, x.Len())
		for _, item := range x.Items() {
			k, ok := item[0].(starlark.String)
			if !ok {
				return nil, fmt.Errorf("dict key %s is a %s, not a string", item[0], item[0].Type())
			}
			e, err := fromStarlark(item[1])
			if err != nil {
				return nil, err
			}
			out[string(k)] = e
		}
		return out, nil
	}
	return nil, fmt.Errorf("value of type %s cannot leave a capsule", v.Type())
}

func fromIterable(it starlark.Indexable, n int) (any, error) {
	out := make([]any, n)
	for i := range n {
		e, err := fromStarlark(it.Index(i))
		if err != nil {
			return nil, err
		}
		out[i] = e
	}
	return out, nil
}

func intValue(x starlark.Int) (any, error) {
	if i, ok := x.Int64(); ok {
		return i, nil
	}
	f, _ := new(big.Float).SetInt(x.BigInt()).Float64()
	if math.IsInf(f, 0) {
		return nil, fmt.Errorf("integer %s is too large", x)
	}
	return f, nil
}

// Metrics is what a capsule's entrypoint returns: metric name → number
// (int64 or float64), string or bool.
type Metrics map[string]any

// metricsFrom checks that v is a mapping of string keys to numbers,
// strings and booleans, and converts it.
func metricsFrom(v starlark.Value) (Metrics, error) {
	m, ok := v.(starlark.IterableMapping)
	if !ok {
		return nil, fmt.Errorf("entrypoint returned %s, want a dict of metric name to number, string or bool", v.Type())
	}
	out := Metrics{}
	for _, item := range m.Items() {
		k, ok := item[0].(starlark.String)
		if !ok {
			return nil, fmt.Errorf("result key %s is a %s, not a string", item[0], item[0].Type())
		}
		switch x := item[1].(type) {
		case starlark.Bool:
			out[string(k)] = bool(x)
		case starlark.String:
			out[string(k)] = string(x)
		case starlark.Int:
			n, err := intValue(x)
			if err != nil {
				return nil, fmt.Errorf("result %q: %v", string(k), err)
			}
			out[string(k)] = n
		case starlark.Float:
			f := float64(x)
			if math.IsNaN(f) || math.IsInf(f, 0) {
				return nil, fmt.Errorf("result %q is %v, not a finite number", string(k), f)
			}
			out[string(k)] = f
		default:
			return nil, fmt.Errorf("result %q is a %s, want a number, string or bool", string(k), item[1].Type())
		}
	}
	return out, nil
}
