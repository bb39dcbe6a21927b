package pipeline

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/store"
	"github.com/crystallize-dev/crystallize/internal/tracestore"
)

// TestExportIsImport: exporting what an import into the store kept gives
// the files Import writes from the same directory, name for name and
// byte for byte, and leaves other files of the directory alone.
func TestExportIsImport(t *testing.T) {
	ctx := context.Background()
	const from = "../../internal/source/testdata/agents"
	imported := t.TempDir()
	if _, err := Import(ctx, ImportOptions{From: from, Out: imported}); err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := tracestore.Import(ctx, db, from, tracestore.ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	c, err := tracestore.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	if err := os.WriteFile(filepath.Join(out, "keep.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	n, err := Export(ctx, c, out)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadDir(imported)
	if err != nil {
		t.Fatal(err)
	}
	if n.Traces != len(want) || n.Traces == 0 {
		t.Fatalf("Export wrote %d traces, Import %d", n.Traces, len(want))
	}
	var total int64
	for _, e := range want {
		w, err := os.ReadFile(filepath.Join(imported, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(out, e.Name()))
		if err != nil {
			t.Errorf("Export did not write %s: %v", e.Name(), err)
			continue
		}
		if !bytes.Equal(w, got) {
			t.Errorf("%s differs from the file Import writes", e.Name())
		}
		total += int64(len(got))
	}
	if n.Bytes != total {
		t.Errorf("Export counted %d bytes, wrote %d", n.Bytes, total)
	}
	if b, err := os.ReadFile(filepath.Join(out, "keep.txt")); err != nil || string(b) != "mine" {
		t.Errorf("keep.txt = %q, %v: a file Export does not write was touched", b, err)
	}
}
