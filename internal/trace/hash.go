package trace

import (
	"crypto/sha256"
	"encoding/hex"
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
