package synth

import (
	"fmt"
	"math"

	"go.starlark.net/starlark"
	"go.starlark.net/syntax"
)

// predeclared adds to Starlark's universe the two Python built-ins that
// numeric code reaches for first and Starlark lacks, sum and round, with
// Python's meaning, so that code written by a model for Python runs
// unchanged as often as possible.
var predeclared = starlark.StringDict{
	"sum":   starlark.NewBuiltin("sum", builtinSum),
	"round": starlark.NewBuiltin("round", builtinRound),
}

// builtinSum is sum(iterable, start=0): integers stay integers until a
// float joins, as in Python.
func builtinSum(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var seq starlark.Iterable
	var acc starlark.Value = starlark.MakeInt(0)
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "iterable", &seq, "start?", &acc); err != nil {
		return nil, err
	}
	iter := seq.Iterate()
	defer iter.Done()
	var x starlark.Value
	for iter.Next(&x) {
		switch x.(type) {
		case starlark.Int, starlark.Float:
		default:
			return nil, fmt.Errorf("sum: element is %s, want a number", x.Type())
		}
		var err error
		if acc, err = starlark.Binary(syntax.PLUS, acc, x); err != nil {
			return nil, fmt.Errorf("sum: %v", err)
		}
	}
	return acc, nil
}

// builtinRound is round(x, ndigits=None): round half to even, returning
// an int without ndigits and a float with it, as in Python.
func builtinRound(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var x starlark.Value
	var nd starlark.Value = starlark.None
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "number", &x, "ndigits?", &nd); err != nil {
		return nil, err
	}
	f, ok := starlark.AsFloat(x)
	if !ok {
		return nil, fmt.Errorf("round: got %s, want a number", x.Type())
	}
	if nd == starlark.None {
		if i, isInt := x.(starlark.Int); isInt {
			return i, nil
		}
		r := math.RoundToEven(f)
		if math.IsInf(r, 0) || math.IsNaN(r) {
			return nil, fmt.Errorf("round: cannot round %v to an integer", f)
		}
		return starlark.NumberToInt(starlark.Float(r))
	}
	var n int
	if err := starlark.AsInt(nd, &n); err != nil {
		return nil, fmt.Errorf("round: ndigits: %v", err)
	}
	if n > 300 || n < -300 {
		return starlark.Float(f), nil
	}
	p := math.Pow(10, float64(n))
	return starlark.Float(math.RoundToEven(f*p) / p), nil
}
