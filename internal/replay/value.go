package replay

import (
	"encoding/json"
	"math/big"
	"reflect"
	"strconv"
	"strings"
)

// equal reports whether two generic JSON values are the same document:
// objects member by member regardless of order, arrays element by element,
// numbers by value ("1", "1.0" and "10e-1" are equal, whichever Go type
// holds them). Values of other Go types, which decoding never produces,
// are compared with reflect.DeepEqual.
func equal(a, b any) bool {
	switch a := a.(type) {
	case nil:
		return b == nil
	case string:
		b, ok := b.(string)
		return ok && a == b
	case bool:
		b, ok := b.(bool)
		return ok && a == b
	case map[string]any:
		b, ok := b.(map[string]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for k, av := range a {
			bv, ok := b[k]
			if !ok || !equal(av, bv) {
				return false
			}
		}
		return true
	case []any:
		b, ok := b.([]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for i := range a {
			if !equal(a[i], b[i]) {
				return false
			}
		}
		return true
	}
	if x, ok := numberText(a); ok {
		y, ok := numberText(b)
		return ok && sameNumber(x, y)
	}
	return reflect.DeepEqual(a, b)
}

// numberText returns the decimal text of a numeric value.
func numberText(v any) (string, bool) {
	switch n := v.(type) {
	case json.Number:
		return string(n), true
	case float64:
		return strconv.FormatFloat(n, 'g', -1, 64), true
	case float32:
		return strconv.FormatFloat(float64(n), 'g', -1, 32), true
	case int:
		return strconv.Itoa(n), true
	case int64:
		return strconv.FormatInt(n, 10), true
	case int32:
		return strconv.FormatInt(int64(n), 10), true
	case uint64:
		return strconv.FormatUint(n, 10), true
	case uint:
		return strconv.FormatUint(uint64(n), 10), true
	}
	return "", false
}

// sameNumber compares two number texts by value. Texts that are not
// decimal numbers (a json.Number can hold anything) are compared as
// written.
func sameNumber(x, y string) bool {
	if x == y {
		return true
	}
	nx, okx := normNumber(x)
	ny, oky := normNumber(y)
	if !okx || !oky {
		return false
	}
	return nx == ny
}

// normNumber rewrites a decimal number as sign, significant digits and
// exponent ("-12.50e1" → "-125e0"), which is the same text for every
// spelling of the same value. It is exact at any size and precision,
// unlike a float64 conversion (which would call 2^53 and 2^53+1 equal),
// and cheap even for exponents such as 1e999999999, unlike big.Rat, which
// would expand them: a decoded trace may hold any number literal.
func normNumber(s string) (string, bool) {
	neg := false
	if s != "" && (s[0] == '-' || s[0] == '+') {
		neg = s[0] == '-'
		s = s[1:]
	}
	mant, exp := s, "0"
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		mant, exp = s[:i], s[i+1:]
	}
	intPart, frac := mant, ""
	if i := strings.IndexByte(mant, '.'); i >= 0 {
		intPart, frac = mant[:i], mant[i+1:]
	}
	if intPart == "" && frac == "" {
		return "", false
	}
	digits := intPart + frac
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return "", false
		}
	}
	e, ok := new(big.Int).SetString(exp, 10)
	if !ok {
		return "", false
	}
	e.Sub(e, big.NewInt(int64(len(frac))))
	digits = strings.TrimLeft(digits, "0")
	if digits == "" {
		return "0", true // every zero is zero, whatever its sign or exponent
	}
	trimmed := strings.TrimRight(digits, "0")
	e.Add(e, big.NewInt(int64(len(digits)-len(trimmed))))
	sign := ""
	if neg {
		sign = "-"
	}
	return sign + trimmed + "e" + e.String(), true
}
