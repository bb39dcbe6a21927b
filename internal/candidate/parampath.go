package candidate

import (
	"fmt"
	"strconv"
	"strings"
)

// ParameterPath is the source path of the argument key of step (1-based)
// as the report writes it in parameters[].source_paths and bindings:
// "steps[N].parameters.KEY".
func ParameterPath(step int, key string) string {
	return fmt.Sprintf("steps[%d].parameters.%s", step, key)
}

// ParseParameterPath reads a path written by ParameterPath back into its
// step (1-based, at least 1) and key; ok is false for anything else.
func ParseParameterPath(path string) (step int, key string, ok bool) {
	rest, ok := strings.CutPrefix(path, "steps[")
	if !ok {
		return 0, "", false
	}
	idx, key, ok := strings.Cut(rest, "].parameters.")
	if !ok {
		return 0, "", false
	}
	step, err := strconv.Atoi(idx)
	if err != nil || step < 1 || strconv.Itoa(step) != idx {
		return 0, "", false
	}
	return step, key, true
}
