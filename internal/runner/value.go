package runner

import (
	"encoding/json"
	"fmt"
	"math/big"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
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
