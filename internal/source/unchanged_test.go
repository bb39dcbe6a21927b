package source

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/trace"
)

// TestUnchanged: Load and Scan ask Options.Unchanged about each file with
// the walk's stat, leave out the files it reports unchanged (counted, not
// read: an unreadable one is no error), list the files they read with
// their stat and a document's source hash, and a directory whose files
// are all unchanged is no error.
func TestUnchanged(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"a.json", "b.json", "c.json"} {
		data, err := os.ReadFile(filepath.Join("../../examples/traces", firstExample(t)))
		if err != nil {
			t.Fatal(err)
		}
		data = []byte(strings.Replace(string(data), `"id": "`, `"id": "`+name+`-`, 1))
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	info, err := os.Stat(filepath.Join(dir, "b.json"))
	if err != nil {
		t.Fatal(err)
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	var asked []FileStat
	skipB := func(f FileStat) bool {
		asked = append(asked, f)
		return f.Rel == "b.json"
	}
	check := func(what string, read []FileStat, unchanged int) {
		t.Helper()
		if len(asked) != 3 || asked[1] != (FileStat{Rel: "b.json", Path: filepath.Join(real, "b.json"), Size: info.Size(), ModTime: info.ModTime().UnixNano()}) {
			t.Errorf("%s asked %+v", what, asked)
		}
		if unchanged != 1 || len(read) != 2 || read[0].Rel != "a.json" || read[1].Rel != "c.json" {
			t.Errorf("%s: unchanged %d, read %+v; want 1, a.json and c.json", what, unchanged, read)
		}
		for _, f := range read {
			data, err := os.ReadFile(filepath.Join(dir, f.Rel))
			if err != nil {
				t.Fatal(err)
			}
			if f.SourceHash != trace.HashBytes(data) {
				t.Errorf("%s: %s has source hash %q, want its bytes' %q", what, f.Rel, f.SourceHash, trace.HashBytes(data))
			}
		}
		asked = nil
	}
	res, err := Load(context.Background(), dir, Options{Unchanged: skipB})
	if err != nil {
		t.Fatal(err)
	}
	check("Load", res.Read, res.Unchanged)
	if len(res.Traces) != 2 {
		t.Errorf("Load returned %d traces, want 2", len(res.Traces))
	}
	scan, err := Scan(context.Background(), dir, Options{Unchanged: skipB}, func(*trace.Trace) int { return 0 }, func(Location, int) error { return nil }, nil)
	if err != nil {
		t.Fatal(err)
	}
	check("Scan", scan.Read, scan.Unchanged)
	if scan.Traces != 2 {
		t.Errorf("Scan visited %d traces, want 2", scan.Traces)
	}

	all := func(FileStat) bool { return true }
	if res, err := Load(context.Background(), dir, Options{Unchanged: all}); err != nil || res.Unchanged != 3 || len(res.Traces) != 0 {
		t.Errorf("Load of unchanged files: %+v, %v", res, err)
	}
	if res, err := Scan(context.Background(), dir, Options{Unchanged: all}, func(*trace.Trace) int { return 0 }, func(Location, int) error { return nil }, nil); err != nil || res.Unchanged != 3 || res.Traces != 0 {
		t.Errorf("Scan of unchanged files: %+v, %v", res, err)
	}
}

func firstExample(t *testing.T) string {
	t.Helper()
	entries, err := os.ReadDir("../../examples/traces")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".json") {
			return e.Name()
		}
	}
	t.Fatal("no trace in ../../examples/traces")
	return ""
}
