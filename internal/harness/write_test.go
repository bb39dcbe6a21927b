package harness

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWriteUndoesAFailedApply fails the manifest write, the last one, and
// checks that the gates written before it are gone: left behind without
// their manifest entries they would be files Write does not own.
func TestWriteUndoesAFailedApply(t *testing.T) {
	dir := makeRepo(t, repos[0])
	p, err := Profile(context.Background(), dir, ProfileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	failing := errors.New("disk full")
	writeFile = func(path string, data []byte, mode fs.FileMode) error {
		if filepath.ToSlash(path) == filepath.ToSlash(filepath.Join(dir, ManifestPath)) {
			return failing
		}
		return writeAtomic(path, data, mode)
	}
	defer func() { writeFile = writeAtomic }()
	if _, err := Write(dir, "go-service", p, true); !errors.Is(err, failing) {
		t.Fatalf("Write with a failing manifest write: %v, want %v", err, failing)
	}
	if _, err := os.Stat(filepath.Join(dir, "gates/go-test.sh")); !os.IsNotExist(err) {
		t.Errorf("a failed apply left gates/go-test.sh: %v", err)
	}
	writeFile = writeAtomic
	if _, err := Write(dir, "go-service", p, true); err != nil {
		t.Errorf("Write after a failed apply: %v", err)
	}
}

// TestKitsAreValid checks every kit against the parsers that read what
// it writes: a kit whose manifest entries or eval suite the parsers
// refuse would write a harness that `harness run` cannot load.
func TestKitsAreValid(t *testing.T) {
	for _, k := range Kits() {
		t.Run(k.ID, func(t *testing.T) {
			res, err := Write(t.TempDir(), k.ID, &RepoProfile{}, false)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := ParseManifest(res.Manifest.Encode(), ManifestPath); err != nil {
				t.Errorf("the kit's manifest does not parse:\n%v", err)
			}
			for _, w := range k.Writes {
				if strings.HasSuffix(w.Path, ".jsonl") {
					if _, err := ParseSuite(strings.NewReader(w.Content), w.Path); err != nil {
						t.Errorf("the kit's suite does not parse:\n%v", err)
					}
				}
			}
		})
	}
}

// TestWriteLeavesAnEditedGate: a gate the kit wrote is the tool's only
// while it keeps the hash the manifest records; once edited it is the
// user's, and writing the kit again refuses to replace it.
func TestWriteLeavesAnEditedGate(t *testing.T) {
	dir := makeRepo(t, repos[0])
	p, err := Profile(context.Background(), dir, ProfileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Write(dir, "go-service", p, true); err != nil {
		t.Fatal(err)
	}
	gate := filepath.Join(dir, "gates/go-test.sh")
	if err := os.WriteFile(gate, []byte("go test -short ./...\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	manifest, _ := os.ReadFile(filepath.Join(dir, ManifestPath))
	if _, err := Write(dir, "go-service", p, true); !errors.Is(err, ErrNotOwned) || !strings.Contains(err.Error(), "gates/go-test.sh") {
		t.Fatalf("Write over an edited gate: %v, want ErrNotOwned naming gates/go-test.sh", err)
	}
	if data, _ := os.ReadFile(gate); string(data) != "go test -short ./...\n" {
		t.Errorf("the edited gate was rewritten: %q", data)
	}
	if now, _ := os.ReadFile(filepath.Join(dir, ManifestPath)); string(now) != string(manifest) {
		t.Errorf("a refused write changed the manifest")
	}
}
