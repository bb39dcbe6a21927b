package synth

import (
	"math"
	"strconv"
	"strings"
)

// FormatMetrics writes a condition's metrics as the original harness
// printed them, a Python dict literal of lists in report order:
// {'total': [15], 'perm_pass': [True]}.
func FormatMetrics(c *Condition) string {
	var b strings.Builder
	b.WriteByte('{')
	for i, k := range c.Keys {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(pyRepr(k))
		b.WriteString(": [")
		for j, v := range c.Metrics[k] {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteString(pyRepr(v))
		}
		b.WriteByte(']')
	}
	b.WriteByte('}')
	return b.String()
}

// pyRepr is Python's repr of a metric value.
func pyRepr(v any) string {
	switch x := v.(type) {
	case bool:
		if x {
			return "True"
		}
		return "False"
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		switch {
		case math.IsInf(x, 1):
			return "inf"
		case math.IsInf(x, -1):
			return "-inf"
		case math.IsNaN(x):
			return "nan"
		}
		s := strconv.FormatFloat(x, 'g', -1, 64)
		if !strings.ContainsAny(s, ".e") {
			s += ".0"
		}
		return s
	case string:
		return "'" + strings.NewReplacer(`\`, `\\`, "'", `\'`, "\n", `\n`).Replace(x) + "'"
	case nil:
		return "None"
	}
	return "?"
}
