package pipeline

import (
	"path/filepath"
	"strings"
	"testing"
)

// Every workflow --out-dir writes stays in the directory under a short
// name, and names that meet on disk get distinct files, in report order.
func TestWorkflowFile(t *testing.T) {
	used := map[string]bool{}
	names := []string{
		"bump", "Bump", "bump", // a second "bump" cannot come from mine, but a file must not be lost
		"../../etc/cron.d/x", "a/b", "nul", strings.Repeat("please_fix_the_tests_", 15), "\x00", "日本語",
	}
	var got []string
	for _, n := range names {
		got = append(got, filepath.ToSlash(WorkflowFile("out", n, used)))
	}
	want := []string{"out/bump.star", "out/Bump-2.star", "out/bump-3.star"}
	for i, w := range want {
		if got[i] != w {
			t.Errorf("WorkflowFile(%q) = %q, want %q", names[i], got[i], w)
		}
	}
	seen := map[string]bool{}
	for i, p := range got {
		dir, file := filepath.Split(filepath.FromSlash(p))
		if filepath.Clean(dir) != "out" || len(file) > 64 || strings.HasPrefix(file, ".") || strings.ContainsRune(file, 0) {
			t.Errorf("WorkflowFile(%q) = %q: not a short file name in out", names[i], p)
		}
		if seen[strings.ToLower(p)] {
			t.Errorf("WorkflowFile(%q) = %q twice", names[i], p)
		}
		seen[strings.ToLower(p)] = true
	}
}

// A candidate's bundle directory is named as its workflow file, without
// the extension, so that bundles/<name>/ and workflows/<name>.star of a
// run are the same candidate's, names that meet on disk included.
func TestBundleDirIsWorkflowFile(t *testing.T) {
	names := []string{"bump", "Bump", "../../etc/cron.d/x", "a/b", "nul", strings.Repeat("please_fix_the_tests_", 15), "\x00", "日本語"}
	files, dirs := map[string]bool{}, map[string]bool{}
	for _, n := range names {
		file := WorkflowFile("out", n, files)
		dir := BundleDir("out", n, dirs)
		if want := strings.TrimSuffix(file, ".star"); dir != want {
			t.Errorf("BundleDir(%q) = %q, want %q", n, dir, want)
		}
	}
}
