package registry

import (
	"os"
	"path/filepath"
	"strings"
)

// Branch returns the git branch checked out in the work tree that holds
// dir, as the status line names a session by it: "" when dir is in no
// git work tree or its HEAD is detached. It reads HEAD itself rather than
// running git: registration happens at the start of every run, and a
// process per run (on a machine that may have no git) would cost more
// than the two small files it reads. A linked work tree's .git is a file
// naming its git directory, whose HEAD is the work tree's own.
func Branch(dir string) string {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return ""
	}
	for {
		dot := filepath.Join(dir, ".git")
		if info, err := os.Stat(dot); err == nil {
			gitDir := dot
			if !info.IsDir() {
				data, err := os.ReadFile(dot)
				if err != nil {
					return ""
				}
				line, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir:")
				if !ok {
					return ""
				}
				gitDir = strings.TrimSpace(line)
				if !filepath.IsAbs(gitDir) {
					gitDir = filepath.Join(dir, gitDir)
				}
			}
			head, err := os.ReadFile(filepath.Join(gitDir, "HEAD"))
			if err != nil {
				return ""
			}
			ref, ok := strings.CutPrefix(strings.TrimSpace(string(head)), "ref: refs/heads/")
			if !ok {
				return "" // detached: a commit, not a branch
			}
			return ref
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}
