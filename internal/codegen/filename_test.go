package codegen

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/crystallize-dev/crystallize/internal/candidate"
)

func TestFileName(t *testing.T) {
	hashOf := func(s string) string { return strings.TrimPrefix(candidate.SkillID(s, ""), "skill_")[:12] }
	long := strings.Repeat("deploy_the_service_", 16) // 304 bytes
	for _, tc := range []struct {
		in, want string
	}{
		{"git_add_commit_push", "git_add_commit_push"},
		{"run-42.v2", "run-42.v2"},
		{"../etc/passwd", "etc-passwd-" + hashOf("../etc/passwd")},
		{"..", "file-" + hashOf("..")},
		{"a/b", "a-b-" + hashOf("a/b")},
		{`a\b`, "a-b-" + hashOf(`a\b`)},
		{"/abs", "abs-" + hashOf("/abs")},
		{"nul\x00byte", "nul-byte-" + hashOf("nul\x00byte")},
		{long, "deploy-the-service-deploy-the-service-de-" + hashOf(long)},
		{"日本語のワークフロー", "file-" + hashOf("日本語のワークフロー")},
		{"café_au_lait", "caf-au-lait-" + hashOf("café_au_lait")},
		{"CON", "con-" + hashOf("CON")},
		{"nul.star", "nul-star-" + hashOf("nul.star")},
		{"lpt1", "lpt1-" + hashOf("lpt1")},
		{"com10", "com10"}, // not a device
		{"console", "console"},
		{".hidden", "hidden-" + hashOf(".hidden")},
		{"-rf", "rf-" + hashOf("-rf")},
		{"trailing.", "trailing-" + hashOf("trailing.")},
		{"", "file-" + hashOf("")},
		{"[redacted:github]", "redacted-github-" + hashOf("[redacted:github]")},
	} {
		got := FileName(tc.in, "file")
		if got != tc.want {
			t.Errorf("FileName(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if !plainFileName(got) || len(got) > 64 || !utf8.ValidString(got) {
			t.Errorf("FileName(%q) = %q is not a short plain name", tc.in, got)
		}
	}
	// Two names that differ only where the slug drops characters stay
	// apart.
	if a, b := FileName("a/b", ""), FileName("a:b", ""); a == b {
		t.Errorf("FileName(a/b) = FileName(a:b) = %q", a)
	}
}

func FuzzFileName(f *testing.F) {
	for _, s := range []string{"../x", "CON", "", ".", "a\x00b", strings.Repeat("x", 300), "日本"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := FileName(s, "file")
		if !plainFileName(got) {
			t.Fatalf("FileName(%q) = %q is not plain", s, got)
		}
		if plainFileName(s) && got != s {
			t.Fatalf("FileName(%q) = %q changed a plain name", s, got)
		}
	})
}
