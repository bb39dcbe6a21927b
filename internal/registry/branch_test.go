package registry

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/store"
)

// gitTree makes a directory that git would take for a work tree whose
// HEAD is head, without running git.
func gitTree(t *testing.T, head string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".git", "HEAD"), []byte(head+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestBranch(t *testing.T) {
	main := gitTree(t, "ref: refs/heads/feat/auth")
	sub := filepath.Join(main, "a", "b")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	// A linked work tree: .git is a file naming its git directory.
	linked := t.TempDir()
	gitDir := filepath.Join(main, ".git", "worktrees", "w")
	if err := os.MkdirAll(gitDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(gitDir, "HEAD"), []byte("ref: refs/heads/side\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(linked, ".git"), []byte("gitdir: "+gitDir+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for dir, want := range map[string]string{
		main:   "feat/auth",
		sub:    "feat/auth", // a directory inside the work tree
		linked: "side",
		gitTree(t, "0123456789abcdef0123456789abcdef01234567"): "", // detached
	} {
		if got := Branch(dir); got != want {
			t.Errorf("Branch(%s) = %q, want %q", dir, got, want)
		}
	}
}

// TestRegisterWho: a session records the branch of its workspace and
// the agent and model it was started with, and the status line shows
// them.
func TestRegisterWho(t *testing.T) {
	ctx := context.Background()
	state := t.TempDir()
	db, err := store.Open(ctx, Path(state))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ws := gitTree(t, "ref: refs/heads/main")
	h, err := Register(ctx, db, Start{ID: "r1", Workspace: ws, StateDir: state, AgentType: TypeAgent, Name: "wf", Agent: "claude", Model: "claude-opus"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer h.End(ctx, StatusCompleted)
	line, err := Status(ctx, db, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := line.String(), "[1] main/claude  |  0  /sessions"; got != want {
		t.Errorf("status line = %q, want %q", got, want)
	}
	s := line.Summary().Sessions[0]
	if s.Branch != "main" || s.Agent != "claude" || s.Model != "claude-opus" {
		t.Errorf("summary = %+v, want branch main, agent claude, model claude-opus", s)
	}
}
