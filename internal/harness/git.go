package harness

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// git runs a read-only git command in dir and returns its stdout.
// GIT_OPTIONAL_LOCKS=0 keeps "git status" from refreshing the index's
// stat cache, so profiling leaves even .git/index as it found it; LC_ALL=C
// keeps messages parseable.
func git(ctx context.Context, dir string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_OPTIONAL_LOCKS=0", "LC_ALL=C", "GIT_TERMINAL_PROMPT=0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// statusEntry is one entry of "git status --porcelain=v1 -z".
type statusEntry struct {
	Path   string
	Status string // a RepoFileObservation git status
}

// parseStatus reads porcelain v1 -z output: "XY path\0", where a rename
// or copy is followed by its original path as a second NUL-terminated
// field.
func parseStatus(out []byte) []statusEntry {
	var list []statusEntry
	fields := strings.Split(string(out), "\x00")
	for i := 0; i < len(fields); i++ {
		f := fields[i]
		if len(f) < 4 {
			continue
		}
		xy, p := f[:2], f[3:]
		e := statusEntry{Path: p}
		switch {
		case xy == "??":
			e.Status = StatusUntracked
		case xy == "!!":
			e.Status = StatusIgnored
		case xy[0] == 'R' || xy[0] == 'C' || xy[1] == 'R' || xy[1] == 'C':
			e.Status = StatusRenamed
			i++ // the original path
		case xy[0] == 'D' || xy[1] == 'D':
			e.Status = StatusDeleted
		default:
			e.Status = StatusModified
		}
		list = append(list, e)
	}
	return list
}

// splitNUL splits NUL-terminated output into its fields.
func splitNUL(out []byte) []string {
	var list []string
	for _, f := range strings.Split(string(out), "\x00") {
		if f != "" {
			list = append(list, f)
		}
	}
	return list
}

// Root is the directory a harness command works on: the top level of
// the git work tree containing dir, or dir itself outside a repository.
func Root(ctx context.Context, dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	if st, err := os.Stat(abs); err != nil {
		return "", err
	} else if !st.IsDir() {
		return "", fmt.Errorf("%s: not a directory", dir)
	}
	out, err := git(ctx, abs, "rev-parse", "--show-toplevel")
	if err != nil {
		return abs, nil
	}
	if t := strings.TrimSpace(string(out)); t != "" {
		return t, nil
	}
	return abs, nil
}

// ErrUntracked marks a file that git does not track.
var ErrUntracked = errors.New("not tracked by git")

// checkTracked returns an error naming the file at path as name unless
// git tracks it in the work tree holding it. A symlink is refused too: git would track the
// link while the content read comes from wherever it points.
func checkTracked(ctx context.Context, path, name string) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	st, err := os.Lstat(abs)
	if err != nil {
		return err
	}
	if st.Mode()&os.ModeSymlink != 0 {
		return fmt.Errorf("%s: %w: it is a symlink, and its target is what would be read", name, ErrUntracked)
	}
	dir, base := filepath.Split(abs)
	if _, err := git(ctx, dir, "rev-parse", "--is-inside-work-tree"); err != nil {
		return fmt.Errorf("%s: %w: it is not in a git work tree", name, ErrUntracked)
	}
	// ls-files lists the path only when the index holds it.
	out, err := git(ctx, dir, "ls-files", "-z", "--", base)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if !slices.Contains(splitNUL(out), base) {
		return fmt.Errorf("%s: %w: git add and commit it first", name, ErrUntracked)
	}
	return nil
}
