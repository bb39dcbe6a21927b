package runrecord

import "fmt"

// MaxString is the longest string a run record keeps whole; a longer one
// is cut and says how much was cut.
const MaxString = 64 << 10

// Clip returns v with every string longer than MaxString cut, for a run
// record; v is not changed. A value with no such string is returned as it
// is: what is recorded is the scrubber's copy, which nothing changes
// after.
func Clip(v any) any {
	if !needsClip(v) {
		return v
	}
	switch v := v.(type) {
	case string:
		if len(v) > MaxString {
			cut := MaxString
			for cut > 0 && v[cut]&0xC0 == 0x80 { // not inside a UTF-8 sequence
				cut--
			}
			return fmt.Sprintf("%s…[%d more bytes not recorded]", v[:cut], len(v)-cut)
		}
		return v
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = Clip(e)
		}
		return out
	case map[string]any:
		if v == nil {
			return v
		}
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = Clip(e)
		}
		return out
	}
	return v
}

// needsClip reports whether v holds a string Clip cuts.
func needsClip(v any) bool {
	switch v := v.(type) {
	case string:
		return len(v) > MaxString
	case []any:
		for _, e := range v {
			if needsClip(e) {
				return true
			}
		}
	case map[string]any:
		for _, e := range v {
			if needsClip(e) {
				return true
			}
		}
	}
	return false
}
