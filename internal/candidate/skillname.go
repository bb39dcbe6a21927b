package candidate

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"unicode/utf8"
)

// A skill's name and id are projections of the candidate, like the
// workflow's function name (Identifier): package skill renders and
// checks SKILL.md, and code generation names the eval pack's fixtures
// with the same rules, so they live here, below both.

// MaxSkillNameLen is the Agent Skills specification's limit on a skill
// name, in characters.
const MaxSkillNameLen = 64

// skillNameFallback is the name of a skill whose candidate has no usable
// name or id.
const skillNameFallback = "workflow"

// SkillName returns the name of the skill projected from c: the candidate
// name as Identifier spells it (camelCase split, every run of
// other characters one separator, ASCII lower case) with underscores turned
// into hyphens, cut to MaxSkillNameLen at a hyphen-free end. A name with
// no ASCII letter or digit falls back to the candidate id, then to
// "workflow", so the result is never empty and always matches the
// specification's pattern. The bundle stores the skill as
// skill/<name>/SKILL.md, and skill.Check requires the directory to match.
func SkillName(c *Candidate) string {
	if c == nil {
		return skillNameFallback
	}
	for _, s := range []string{c.Name, c.ID} {
		if n := Slug(s); n != "" {
			return n
		}
	}
	return skillNameFallback
}

// Slug reduces s to the form of a skill name (see SkillName), or "" when
// s has no ASCII letter or digit. Code generation reduces the names of
// eval packs and of files with it too.
func Slug(s string) string {
	hasAlnum := strings.ContainsFunc(s, func(r rune) bool {
		return r < utf8.RuneSelf && (isLower(byte(r)) || isUpper(byte(r)) || isDigit(byte(r)))
	})
	if !hasAlnum {
		return ""
	}
	// Identifier already collapses separators and lower-cases; its extra
	// "_" for keywords and leading digits disappears with the trim.
	n := strings.Trim(strings.ReplaceAll(Identifier(s), "_", "-"), "-")
	if len(n) > MaxSkillNameLen {
		n = strings.TrimRight(n[:MaxSkillNameLen], "-")
	}
	return n
}

// SkillID returns the stable id of the skill projected from a candidate
// under a workflow name: "skill_" and the first 16 hex digits of
// sha256(candidateID + ":" + workflowName).
func SkillID(candidateID, workflowName string) string {
	sum := sha256.Sum256([]byte(candidateID + ":" + workflowName))
	return "skill_" + hex.EncodeToString(sum[:])[:16]
}
