package trace

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"sort"
	"strings"
)

// HashBytes returns the content hash of b as "sha256:" followed by the
// lowercase hex SHA-256 digest. It is the source hash of a file-loaded
// trace, and candidate ids are computed from it, so its form is part of
// the interchange format and must not change.
func HashBytes(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Signature returns the action's identity for mining: kind, name and the
// sorted parameter keys, as in "tool_call:git.checkout_branch:branch_name,repo_path".
// Two actions with the same signature are taken to be the same step done
// with possibly different values. Parameter values are left out on purpose:
// they are what varies between repetitions of a procedure.
func (a *Action) Signature() string {
	keys := make([]string, 0, len(a.Parameters))
	for k := range a.Parameters {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return string(a.Kind) + ":" + a.Name + ":" + strings.Join(keys, ",")
}

// Failed reports whether the action's metadata records a failure: "error"
// true, or a non-zero "exit_code". Agents' logs record failed tool calls
// this way (see package normalize); a retried step is a failed attempt
// followed by a successful one with the same signature.
func (a *Action) Failed() bool {
	for _, key := range [...]string{"error", "exit_code"} {
		if v, ok := a.Metadata[key]; ok && failureMarker(key, v) {
			return true
		}
	}
	return false
}

// failureMarker reports whether the metadata member key: v records a
// failure (see Action.Failed).
func failureMarker(key string, v any) bool {
	switch key {
	case "error":
		e, ok := v.(bool)
		return ok && e
	case "exit_code":
		switch c := v.(type) {
		case json.Number:
			if f, err := c.Float64(); err == nil {
				return f != 0
			}
		case float64:
			return c != 0
		case int:
			return c != 0
		case int64:
			return c != 0
		}
	}
	return false
}
