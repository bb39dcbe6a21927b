package candidate

import (
	"regexp"
	"strings"
	"testing"
)

// skillNamePattern is the Agent Skills specification's rule for a skill
// name (package skill checks SKILL.md against the same).
var skillNamePattern = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

func TestSkillName(t *testing.T) {
	tests := []struct {
		c    *Candidate
		want string
	}{
		{&Candidate{Name: "release_package_maintenance"}, "release-package-maintenance"},
		{&Candidate{Name: "__Release--Flow__"}, "release-flow"},
		{&Candidate{Name: "triageTicket"}, "triage-ticket"},
		{&Candidate{Name: "HTTPServer restart"}, "http-server-restart"},
		{&Candidate{Name: "if"}, "if"},
		{&Candidate{Name: "42 steps"}, "42-steps"},
		{&Candidate{Name: "Ünïcödé 名前 flow"}, "n-c-d-flow"},
		{&Candidate{Name: "名前", ID: "candidate_92144cef9e215de6"}, "candidate-92144cef9e215de6"},
		{&Candidate{Name: "!!!---???", ID: "***"}, "workflow"},
		{&Candidate{}, "workflow"},
		{nil, "workflow"},
		{&Candidate{Name: strings.Repeat("a", 100)}, strings.Repeat("a", 64)},
		// The cut at 64 lands on a hyphen, which is trimmed.
		{&Candidate{Name: strings.Repeat("a", 63) + "_bcd"}, strings.Repeat("a", 63)},
	}
	for _, tt := range tests {
		got := SkillName(tt.c)
		if got != tt.want {
			t.Errorf("SkillName(%+v) = %q, want %q", tt.c, got, tt.want)
		}
		if !skillNamePattern.MatchString(got) || len(got) > MaxSkillNameLen {
			t.Errorf("SkillName(%+v) = %q, which is not a valid skill name", tt.c, got)
		}
	}
}

func TestSkillID(t *testing.T) {
	// The value is sha256("candidate_92144cef9e215de6:release_package_maintenance"),
	// pinned so that a change to the formula shows.
	const want = "skill_c994ea048aa1fc7e"
	if got := SkillID("candidate_92144cef9e215de6", "release_package_maintenance"); got != want {
		t.Errorf("SkillID = %q, want %q", got, want)
	}
	if regexp.MustCompile(`^skill_[0-9a-f]{16}$`).FindString(SkillID("", "")) == "" {
		t.Errorf("SkillID(\"\", \"\") = %q, want skill_ and 16 hex digits", SkillID("", ""))
	}
}
