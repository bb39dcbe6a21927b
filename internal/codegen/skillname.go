package codegen

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"unicode/utf8"

	"github.com/crystallize-dev/crystallize/internal/candidate"
)

// A skill's name and id are projections of the candidate, like the
// workflow's function name: package skill renders and checks SKILL.md,
// and the eval pack names its fixtures with the same rules.

// MaxSkillNameLen is the Agent Skills specification's limit on a skill
// name, in characters.
const MaxSkillNameLen = 64

// skillNameFallback is the name of a skill whose candidate has no usable
// name or id.
const skillNameFallback = "workflow"

// Trace roles of a skill gate and an eval pack: the candidate's.
const (
	RoleSource  = candidate.RoleSource
	RoleHeldout = candidate.RoleHeldout
)

// SkillName returns the name of the skill projected from c: the candidate
// name as candidate.Identifier spells it (camelCase split, every run of
// other characters one separator, ASCII lower case) with underscores turned
// into hyphens, cut to MaxSkillNameLen at a hyphen-free end. A name with
// no ASCII letter or digit falls back to the candidate id, then to
// "workflow", so the result is never empty and always matches the
// specification's pattern. The bundle stores the skill as
// skill/<name>/SKILL.md, and skill.Check requires the directory to match.
func SkillName(c *candidate.Candidate) string {
	if c == nil {
		return skillNameFallback
	}
	for _, s := range []string{c.Name, c.ID} {
		if n := slug(s); n != "" {
			return n
		}
	}
	return skillNameFallback
}

// slug reduces s to a skill name, or "" when s has no ASCII letter or
// digit.
func slug(s string) string {
	hasAlnum := strings.ContainsFunc(s, func(r rune) bool {
		return r < utf8.RuneSelf && (isASCIILetter(byte(r)) || ('0' <= r && r <= '9'))
	})
	if !hasAlnum {
		return ""
	}
	// Identifier already collapses separators and lower-cases; its extra
	// "_" for keywords and leading digits disappears with the trim.
	n := strings.Trim(strings.ReplaceAll(candidate.Identifier(s), "_", "-"), "-")
	if len(n) > MaxSkillNameLen {
		n = strings.TrimRight(n[:MaxSkillNameLen], "-")
	}
	return n
}

func isASCIILetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

// SkillID returns the stable id of the skill projected from a candidate
// under a workflow name: "skill_" and the first 16 hex digits of
// sha256(candidateID + ":" + workflowName).
func SkillID(candidateID, workflowName string) string {
	sum := sha256.Sum256([]byte(candidateID + ":" + workflowName))
	return "skill_" + hex.EncodeToString(sum[:])[:16]
}
