package statekey

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
)

// Runs that start at once in a fresh state directory must all end up with
// the one key on disk: none may read the file while another is still
// writing it, and no temporary file may be left behind.
func TestStateKeyConcurrentCreate(t *testing.T) {
	for round := 0; round < 20; round++ {
		dir := filepath.Join(t.TempDir(), "state")
		const n = 8
		keys := make([][]byte, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				keys[i], errs[i] = Load(filepath.Join(dir, "state.key"), true, (*os.File).Sync)
			}()
		}
		wg.Wait()
		for i := range n {
			if errs[i] != nil {
				t.Fatalf("round %d run %d: %v", round, i, errs[i])
			}
			if !bytes.Equal(keys[i], keys[0]) {
				t.Fatalf("round %d: run %d holds a different key", round, i)
			}
		}
		onDisk, err := read(filepath.Join(dir, "state.key"))
		if err != nil || !bytes.Equal(onDisk, keys[0]) {
			t.Fatalf("round %d: key on disk %x, %v; runs hold %x", round, onDisk, err, keys[0])
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		// The key, and the .gitignore of a state directory crystallize
		// created: no temporary file left behind.
		if want := []string{".gitignore", "state.key"}; !slices.Equal(names, want) {
			t.Fatalf("round %d: state directory holds %q, want %q", round, names, want)
		}
	}
}
