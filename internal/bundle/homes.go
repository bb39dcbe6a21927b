package bundle

import (
	"regexp"
)

// homePath matches the home directory of a named user in the usual
// spellings: /Users/NAME, /home/NAME, C:\Users\NAME (also with forward
// slashes or doubled backslashes). The user name says who ran the agent
// and where; it is not part of any procedure.
var homePath = regexp.MustCompile(`(?:/Users/|/home/|[A-Za-z]:(?:\\\\|\\|/)Users(?:\\\\|\\|/))[^/\\"\s]+`)

// anonymizeHomes returns v with every user home directory inside a string
// value replaced by "~", so that a bundle names no local account. Object
// keys are left alone. v is a generic JSON value and is modified in place.
func anonymizeHomes(v any) (any, int) {
	n := 0
	var walk func(any) any
	walk = func(v any) any {
		switch x := v.(type) {
		case string:
			if out := homePath.ReplaceAllString(x, "~"); out != x {
				n++
				return out
			}
		case map[string]any:
			for k, e := range x {
				x[k] = walk(e)
			}
		case []any:
			for i, e := range x {
				x[i] = walk(e)
			}
		}
		return v
	}
	return walk(v), n
}
