package tracestore

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/crystallize-dev/crystallize/internal/store"
)

// backdate sets the modification time of every file under dir an hour
// back, out of the window in which an import does not trust a file's
// time, and returns how many files it touched.
func backdate(t *testing.T, dir string) int {
	t.Helper()
	old := time.Now().Add(-time.Hour)
	n := 0
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		n++
		return os.Chtimes(p, old, old)
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// editSameSize rewrites the trace file at path with other bytes of the
// same size (its start a year earlier) and returns its modification time
// before the edit.
func editSameSize(t *testing.T, path string) time.Time {
	t.Helper()
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	edited := bytes.Replace(data, []byte(`"started_at":"2025-`), []byte(`"started_at":"2024-`), 1)
	if bytes.Equal(edited, data) {
		t.Fatalf("%s: no started_at to edit", path)
	}
	if err := os.WriteFile(path, edited, 0o644); err != nil {
		t.Fatal(err)
	}
	return info.ModTime()
}

// TestImportSkipsUnchangedFiles: a file an import read is not opened
// again while its size and modification time stay (an edit that keeps
// both goes unnoticed, and an unreadable file imports); a same-size edit
// with a new modification time is read; Rehash reads every file.
func TestImportSkipsUnchangedFiles(t *testing.T) {
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "corpus")
	writeCorpus(t, dir, 30, 6, false)
	files := backdate(t, dir)
	db := openDB(t, filepath.Join(tmp, "state.db"))
	ctx := context.Background()
	res, err := Import(ctx, db, dir, ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Added != 30 || res.Unchanged != 0 {
		t.Fatalf("first import: added %d, unchanged %d; want 30, 0", res.Added, res.Unchanged)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	first, second := filepath.Join(dir, entries[0].Name()), filepath.Join(dir, entries[1].Name())

	// New bytes under the old size and time: the import does not read
	// the file, so it cannot see them. Made unreadable too, where the
	// permission holds (not for root), which fails any read.
	old := editSameSize(t, first)
	if err := os.Chtimes(first, old, old); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(first, 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(first, 0o644) })
	res, err = Import(ctx, db, dir, ImportOptions{})
	if err != nil {
		t.Fatalf("import with an unreadable unchanged file: %v", err)
	}
	if res.Unchanged != files || res.Added != 0 || res.Replaced != 0 || res.Known != 0 {
		t.Errorf("second import: unchanged %d, added %d, replaced %d, known %d; want %d, 0, 0, 0", res.Unchanged, res.Added, res.Replaced, res.Known, files)
	}

	// A same-size edit that moves the modification time is read.
	editSameSize(t, second)
	later := time.Now().Add(-30 * time.Minute)
	if err := os.Chtimes(second, later, later); err != nil {
		t.Fatal(err)
	}
	res, err = Import(ctx, db, dir, ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Replaced != 1 || res.Unchanged != files-1 {
		t.Errorf("after a same-size edit: replaced %d, unchanged %d; want 1, %d", res.Replaced, res.Unchanged, files-1)
	}

	// Rehash reads every file: the first one's edit is found (and, where
	// the permission holds, its unreadable file fails the import).
	if err := os.Chmod(first, 0o644); err != nil {
		t.Fatal(err)
	}
	res, err = Import(ctx, db, dir, ImportOptions{Rehash: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Unchanged != 0 || res.Replaced != 1 || res.Known != files-1 {
		t.Errorf("rehash: unchanged %d, replaced %d, known %d; want 0, 1, %d", res.Unchanged, res.Replaced, res.Known, files-1)
	}
	if got, want := mineStore(t, db), mineDir(t, dir); !bytes.Equal(got, want) {
		t.Errorf("report after the edits differs from the directory's:\n%s", firstDiff(got, want))
	}
}

// TestImportRereadsRecentFiles: a file modified just before the import
// read it is read again next time, whatever its time: an edit within the
// file system's timestamp granularity could keep both size and time.
func TestImportRereadsRecentFiles(t *testing.T) {
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "corpus")
	writeCorpus(t, dir, 10, 7, false)
	now := time.Now()
	if err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		return os.Chtimes(p, now, now)
	}); err != nil {
		t.Fatal(err)
	}
	db := openDB(t, filepath.Join(tmp, "state.db"))
	if _, err := Import(context.Background(), db, dir, ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	res, err := Import(context.Background(), db, dir, ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Unchanged != 0 || res.Known != 10 {
		t.Errorf("second import: unchanged %d, known %d; want 0, 10", res.Unchanged, res.Known)
	}
}

// A session without a tool call, in a Claude Code log of its own.
const quietSession = `{"type":"user","sessionId":"q1","message":{"role":"user","content":"What is a semver pre-release?"}}
{"type":"assistant","sessionId":"q1","message":{"id":"m9","role":"assistant","content":[{"type":"text","text":"A version with a hyphen suffix."}]}}
`

// A session with one: the directory has a trace to store.
const busySession = `{"type":"user","sessionId":"s1","uuid":"a1","timestamp":"2025-10-14T09:00:00Z","cwd":"/w","message":{"role":"user","content":"Show the notes"}}
{"type":"assistant","sessionId":"s1","uuid":"a2","timestamp":"2025-10-14T09:00:02Z","message":{"id":"m2","role":"assistant","content":[{"type":"tool_use","id":"t3","name":"Read","input":{"file_path":"/w/NOTES.md"}}]}}
{"type":"user","sessionId":"s1","uuid":"a3","timestamp":"2025-10-14T09:00:03Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t3","content":"notes"}]}}
`

// TestSkippedSessionsOnePerFile imports one directory of session logs
// under three spellings: its skipped session is listed once, under the
// spelling of the last import.
func TestSkippedSessionsOnePerFile(t *testing.T) {
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "logs", "claude", "p")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{"quiet.jsonl": quietSession, "busy.jsonl": busySession} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(tmp)
	db := openDB(t, filepath.Join(tmp, "state.db"))
	ctx := context.Background()
	spellings := []string{"logs", "./logs/", filepath.Join(tmp, "logs", ".", "claude", "..")}
	for _, spelling := range spellings {
		// Rehash: the files are read each time, as a new or changed
		// file would be.
		if _, err := Import(ctx, db, spelling, ImportOptions{Rehash: true}); err != nil {
			t.Fatal(err)
		}
	}
	list, err := db.SkippedSessions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 {
		t.Fatalf("skipped sessions after importing one directory under %d spellings: %+v, want one", len(spellings), list)
	}
	want := filepath.Join(spellings[2], "claude", "p", "quiet.jsonl")
	if list[0].Path != want || list[0].File != filepath.Join(tmp, "logs", "claude", "p", "quiet.jsonl") {
		t.Errorf("skipped session listed as %q (file %q), want %q", list[0].Path, list[0].File, want)
	}

	// Session logs that did not change are not read again either, and
	// what the store knows of them stays.
	backdate(t, dir)
	if _, err := Import(ctx, db, "logs", ImportOptions{Rehash: true}); err != nil {
		t.Fatal(err)
	}
	res, err := Import(ctx, db, "logs", ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Unchanged != 2 || res.Added != 0 || res.Known != 0 || len(res.SkippedSessions) != 0 {
		t.Errorf("import of unchanged logs: unchanged %d, added %d, known %d, skipped sessions %v; want 2, 0, 0, none", res.Unchanged, res.Added, res.Known, res.SkippedSessions)
	}
	if list, err := db.SkippedSessions(ctx); err != nil || len(list) != 1 {
		t.Errorf("skipped sessions after an import of unchanged logs: %+v, %v; want one", list, err)
	}
}

// The test binary runs an import that stops after its first batch, for
// TestKilledImportIsInterrupted, when these are set.
const (
	hangDBEnv   = "CRYSTALLIZE_TEST_HANG_DB"
	hangDirEnv  = "CRYSTALLIZE_TEST_HANG_DIR"
	hangMarkEnv = "CRYSTALLIZE_TEST_HANG_MARK"
)

// TestKilledImportIsInterrupted kills (SIGKILL) a process in the middle
// of an import: its record says running until the next import, which
// finds the process gone and records it as interrupted, keeping the batch
// it committed, then stores the rest.
func TestKilledImportIsInterrupted(t *testing.T) {
	if path := os.Getenv(hangDBEnv); path != "" {
		hangImport(t, path)
		return
	}
	if runtime.GOOS == "windows" {
		t.Skip("a killed import is found only where a process can be asked whether it lives")
	}
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "corpus")
	writeCorpus(t, dir, 120, 8, true)
	path, mark := filepath.Join(tmp, "state.db"), filepath.Join(tmp, "committed")
	cmd := exec.Command(os.Args[0], "-test.run=^TestKilledImportIsInterrupted$")
	cmd.Env = append(os.Environ(), hangDBEnv+"="+path, hangDirEnv+"="+dir, hangMarkEnv+"="+mark)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if _, err := os.Stat(mark); err == nil {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("the import did not commit its first batch:\n%s", out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()

	db := openDB(t, path)
	ctx := context.Background()
	st, err := db.TraceStats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.LastImport == nil || st.LastImport.Status != store.ImportRunning || st.Traces != 50 {
		t.Fatalf("after the kill: last import %+v, %d traces; want running, 50", st.LastImport, st.Traces)
	}
	res, err := Import(ctx, db, dir, ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Known != 50 || res.Added != 70 {
		t.Errorf("re-run: known %d, added %d; want 50, 70", res.Known, res.Added)
	}
	imports := importStatuses(t, db)
	if want := []string{"interrupted 50", "complete 70"}; strings.Join(imports, ", ") != strings.Join(want, ", ") {
		t.Errorf("imports: %v, want %v", imports, want)
	}
}

// hangImport is the killed process of TestKilledImportIsInterrupted: it
// imports in batches of 50 and, once the first is committed, says so and
// waits to be killed.
func hangImport(t *testing.T, path string) {
	db := openDB(t, path)
	_, err := Import(context.Background(), db, os.Getenv(hangDirEnv), ImportOptions{
		BatchTraces: 50,
		Committed: func(int) {
			if err := os.WriteFile(os.Getenv(hangMarkEnv), nil, 0o644); err != nil {
				t.Error(err)
			}
			time.Sleep(time.Hour)
		},
	})
	t.Fatalf("the import was to be killed, it returned %v", err)
}

// importStatuses lists each import as "status added", in order.
func importStatuses(t *testing.T, db *store.DB) []string {
	t.Helper()
	list, err := db.TraceImports(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, im := range list {
		out = append(out, fmt.Sprintf("%s %d", im.Status, im.Added))
	}
	return out
}
