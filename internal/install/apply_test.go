package install

import (
	"os"
	"path/filepath"
	"testing"
)

// TestApplyPutsBackOnFailure: when one write of an install fails, the
// files written before it hold their old bytes again, a file that did not
// exist is gone, the directories the install created are removed, and no
// record says the install happened.
func TestApplyPutsBackOnFailure(t *testing.T) {
	dir := t.TempDir()
	config := filepath.Join(dir, ".mcp.json")
	if err := os.WriteFile(config, []byte(`{"mcpServers": {"other": {}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	skill := filepath.Join(dir, ".claude", "skills", "x", "SKILL.md")
	// A regular file where a directory must be: the third write fails
	// whoever runs the test (root included).
	blocker := filepath.Join(dir, "blocker")
	if err := os.WriteFile(blocker, []byte("not a directory"), 0o644); err != nil {
		t.Fatal(err)
	}
	record := filepath.Join(dir, ".crystallize", "installs", "claude-code-x.json")
	p := &Plan{
		Files: []File{
			{Path: config, New: []byte(`{"mcpServers": {"other": {}, "crystallize-x": {}}}`), Mode: 0o644},
			{Path: skill, New: []byte("---\nname: x\n---\n"), Mode: 0o644},
			{Path: filepath.Join(blocker, "settings.json"), New: []byte("{}"), Mode: 0o644},
		},
		record:     record,
		recordData: []byte(`{"version": 1}`),
	}
	if err := p.Apply(); err == nil {
		t.Fatal("Apply succeeded with a file where a directory must be")
	}
	if got, _ := os.ReadFile(config); string(got) != `{"mcpServers": {"other": {}}}` {
		t.Errorf(".mcp.json after the failed install = %s, want its old bytes", got)
	}
	for _, gone := range []string{skill, filepath.Join(dir, ".claude"), record} {
		if _, err := os.Lstat(gone); err == nil {
			t.Errorf("%s is left after the failed install", gone)
		}
	}
}

// TestApplyStateDirIgnored: the state directory an install creates in a
// project carries a .gitignore, so that `git add -A` does not commit the
// record (which holds the configurations as they were).
func TestApplyStateDirIgnored(t *testing.T) {
	dir := t.TempDir()
	p := &Plan{
		Files:      []File{{Path: filepath.Join(dir, ".mcp.json"), New: []byte("{}\n"), Mode: 0o644}},
		record:     filepath.Join(dir, ".crystallize", "installs", "claude-code-x.json"),
		recordData: []byte(`{"version": 1}`),
	}
	if err := p.Apply(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, ".crystallize", ".gitignore")); err != nil {
		t.Errorf("the install's state directory has no .gitignore: %v", err)
	}
}
