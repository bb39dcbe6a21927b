package session

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/trace"
)

// TestLearnFiles checks that the JSON Lines of several logs are the cases
// Learn gives for each, in file order, and that a bad log fails the whole
// call naming its file.
func TestLearnFiles(t *testing.T) {
	files := []string{"testdata/learn/deploy.md", "testdata/learn/release-notes.md"}
	got, err := LearnFiles(files)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, f := range files {
		s, err := Open(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range Learn(s, f) {
			b, _ := json.Marshal(c)
			want = append(want, string(b))
		}
	}
	if len(want) == 0 {
		t.Fatal("the corpus gives no learning case")
	}
	if g := strings.TrimSuffix(string(got), "\n"); g != strings.Join(want, "\n") {
		t.Errorf("LearnFiles = %s\nwant %s", g, strings.Join(want, "\n"))
	}

	bad := filepath.Join(t.TempDir(), "bad.md")
	if err := os.WriteFile(bad, []byte("no frontmatter\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := LearnFiles(append(files, bad))
	var list trace.ErrorList
	if !errors.As(err, &list) || list[0].File != bad || out != nil {
		t.Errorf("LearnFiles with a bad log = %q, %v; want no output and the problems of %s", out, err, bad)
	}
}

// TestDirLoader checks the three answers a nested session can get: found,
// not available (missing, or outside the directory), and an error that
// counts the problems of a bad log.
func TestDirLoader(t *testing.T) {
	dir := t.TempDir()
	good, err := os.ReadFile("testdata/learn/deploy.md")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "child.md"), good, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "broken.md"), []byte("no frontmatter\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	load := DirLoader(dir)
	if s, err := load("child"); err != nil || s == nil {
		t.Errorf("load(child) = %v, %v; want the session", s, err)
	}
	for _, id := range []string{"missing", "../child", "/etc/passwd"} {
		if s, err := load(id); s != nil || err != nil {
			t.Errorf("load(%q) = %v, %v; want not available", id, s, err)
		}
	}
	_, err = load("broken")
	if err == nil || !strings.Contains(err.Error(), "broken.md: ") || !strings.Contains(err.Error(), "problems (see session lint)") {
		t.Errorf("load(broken) = %v; want the count of its problems", err)
	}
}

// TestOpenRoute checks that a route file's problems name the file, and
// that a missing file is the read error.
func TestOpenRoute(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "route.toml")
	if err := os.WriteFile(file, []byte("default = \"fast\"\n[[tiers]]\nname = \"fast\"\ncolour = 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := OpenRoute(file)
	var list trace.ErrorList
	if !errors.As(err, &list) || list[0].File != file {
		t.Errorf("OpenRoute(bad) = %v; want problems naming %s", err, file)
	}
	if _, err := OpenRoute(filepath.Join(dir, "none.toml")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("OpenRoute(missing) = %v; want not exist", err)
	}
}
