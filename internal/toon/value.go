package toon

import (
	"math/big"
	"strings"
)

// Member is one key/value pair of an Object.
type Member struct {
	Key   string
	Value any
}

// Object is a JSON object that keeps its key order. Decode and ReadJSON
// return objects as Object; Encode accepts it wherever it accepts a map.
// Keys are expected to be unique; when they are not, Encode keeps the
// first position and the last value, as JSON.parse does.
type Object []Member

// Get returns the value of the first member named key, and whether there
// is one. It is a linear search: objects in TOON documents are small, and
// a map index would cost more to build than it saves.
func (o Object) Get(key string) (any, bool) {
	for _, m := range o {
		if m.Key == key {
			return m.Value, true
		}
	}
	return nil, false
}

// isNumberToken reports whether s matches the number grammar of §4,
// /^-?[0-9]+(?:\.[0-9]+)?(?:e[+-]?[0-9]+)?$/i, without checking leading
// zeros (the decoder does that; JSON numbers never carry them).
func isNumberToken(s string) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	n := digits(s, i)
	if n == 0 {
		return false
	}
	i += n
	if i < len(s) && s[i] == '.' {
		n = digits(s, i+1)
		if n == 0 {
			return false
		}
		i += 1 + n
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		n = digits(s, i)
		if n == 0 {
			return false
		}
		i += n
	}
	return i == len(s)
}

func digits(s string, i int) int {
	n := 0
	for i+n < len(s) && s[i+n] >= '0' && s[i+n] <= '9' {
		n++
	}
	return n
}

// canonicalNumber rewrites a token that satisfies isNumberToken into the
// canonical form of §2. It works on the decimal digits as text: the value
// is D × 10^e with D free of leading and trailing zeros, printed plainly
// when its scientific exponent lies in [-6, 20] (that is, 1e-6 ≤ |n| <
// 1e21) and as d.ddde±x otherwise. Going through float64 instead would
// round integers above 2^53 and long fractions, which §2 forbids for
// values the host can hold exactly. The exponent is a big.Int because a
// token such as 1e99999999999999999999 is well-formed and must not wrap.
func canonicalNumber(tok string) string {
	neg := strings.HasPrefix(tok, "-")
	if neg {
		tok = tok[1:]
	}
	mant, expText := tok, ""
	if i := strings.IndexAny(tok, "eE"); i >= 0 {
		mant, expText = tok[:i], tok[i+1:]
	}
	intPart, frac, _ := strings.Cut(mant, ".")
	d := strings.TrimLeft(intPart+frac, "0")
	exp := new(big.Int)
	if expText != "" {
		exp.SetString(strings.TrimPrefix(expText, "+"), 10)
	}
	exp.Sub(exp, big.NewInt(int64(len(frac))))
	if d == "" {
		return "0"
	}
	trimmed := strings.TrimRight(d, "0")
	exp.Add(exp, big.NewInt(int64(len(d)-len(trimmed))))
	d = trimmed
	n := len(d)
	sci := new(big.Int).Add(exp, big.NewInt(int64(n-1)))
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	if sci.Cmp(big.NewInt(-6)) >= 0 && sci.Cmp(big.NewInt(20)) <= 0 {
		e := int(exp.Int64()) // within [-6-n, 20]: fits
		switch {
		case e >= 0:
			b.WriteString(d)
			b.WriteString(strings.Repeat("0", e))
		case -e < n:
			b.WriteString(d[:n+e])
			b.WriteByte('.')
			b.WriteString(d[n+e:])
		default:
			b.WriteString("0.")
			b.WriteString(strings.Repeat("0", -e-n))
			b.WriteString(d)
		}
		return b.String()
	}
	b.WriteByte(d[0])
	if n > 1 {
		b.WriteByte('.')
		b.WriteString(d[1:])
	}
	b.WriteByte('e')
	if sci.Sign() >= 0 {
		b.WriteByte('+')
	}
	b.WriteString(sci.String())
	return b.String()
}

// number is the canonical text of a number inside the encoder's
// normalized tree, kept apart from string so that "42" and 42 differ.
type number string
