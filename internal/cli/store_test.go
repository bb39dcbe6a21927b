package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/crystallize-dev/crystallize/internal/pipeline"
	"github.com/crystallize-dev/crystallize/internal/registry"
	"github.com/crystallize-dev/crystallize/internal/store"
	"github.com/crystallize-dev/crystallize/internal/tracetest"
)

// mineStoreOutputs imports from into a fresh trace store, mines it with
// mine --store and returns every file mine wrote, its exit code and its
// stdout. out is the same directory minePasses writes to, emptied first,
// since the report records the paths it wrote.
func mineStoreOutputs(t *testing.T, out, from string, extra ...string) (map[string][]byte, int, string) {
	t.Helper()
	state := filepath.Join(t.TempDir(), "state")
	e, _, stderr := e2eEnv()
	if code := run(context.Background(), e, []string{"import", "--from", from, "--store", "--state-dir", state}); code != 0 {
		t.Fatalf("import --store: exit %d\n%s", code, stderr)
	}
	if err := os.RemoveAll(out); err != nil {
		t.Fatal(err)
	}
	e, stdout, stderr := e2eEnv()
	args := append([]string{"mine", "--store", "--state-dir", state,
		"--out", filepath.Join(out, "w.star"), "--out-dir", filepath.Join(out, "all"),
		"--report", filepath.Join(out, "report.json"), "--bundle", filepath.Join(out, "bundle")}, extra...)
	code := run(context.Background(), e, args)
	if code > 1 {
		t.Fatalf("mine --store: exit %d\n%s", code, stderr)
	}
	return readTree(t, out), code, stdout.String()
}

// TestMineStoreSameOutput checks that mine --store writes what mine --from
// writes on the imported directory, byte for byte (the report, every
// workflow, the bundle and the summary): on the examples, with and
// without a candidate, on generated corpora as files and as JSON Lines,
// and on agents' session logs, which the gapped miner mines whole.
func TestMineStoreSameOutput(t *testing.T) {
	corpora := sameOutputCorpora(t, 1, 5)
	agents := filepath.Join(t.TempDir(), "claude")
	ac := tracetest.GenerateAgents(tracetest.AgentConfig{Sessions: 40, Seed: 1})
	if err := ac.Write(agents, tracetest.AgentFormats[0]); err != nil {
		t.Fatal(err)
	}
	corpora = append(corpora, sameOutputCorpus{"agents", agents, nil})
	for _, c := range corpora {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			var from, stored mineRun
			from.files, from.code, from.stdout = minePasses(t, out, c.dir, pipeline.PassesTwo, c.extra...)
			stored.files, stored.code, stored.stdout = mineStoreOutputs(t, out, c.dir, c.extra...)
			sameOutput(t, "from --from", from, "from --store", stored)
		})
	}
}

// TestStoreExportRoundTrip checks that store export writes, byte for
// byte, the files import --out writes from the same directory, for traces
// and for agents' session logs.
func TestStoreExportRoundTrip(t *testing.T) {
	tmp := t.TempDir()
	agents := filepath.Join(tmp, "codex")
	ac := tracetest.GenerateAgents(tracetest.AgentConfig{Sessions: 12, Seed: 2})
	if err := ac.Write(agents, tracetest.AgentFormats[1]); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{"../../examples/traces", "../../examples/composition", agents} {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			work := t.TempDir()
			state, imported, exported := filepath.Join(work, "state"), filepath.Join(work, "imported"), filepath.Join(work, "exported")
			for _, args := range [][]string{
				{"import", "--from", dir, "--out", imported},
				{"import", "--from", dir, "--store", "--state-dir", state},
				{"store", "export", "--state-dir", state, "--out", exported},
			} {
				e, _, stderr := e2eEnv()
				if code := run(context.Background(), e, args); code != 0 {
					t.Fatalf("%v: exit %d\n%s", args, code, stderr)
				}
			}
			want, got := readTree(t, imported), readTree(t, exported)
			if len(want) == 0 {
				t.Fatal("import --out wrote nothing")
			}
			for name, b := range want {
				if !bytes.Equal(b, got[name]) {
					t.Errorf("%s: exported bytes differ from imported", name)
				}
			}
			if len(got) != len(want) {
				t.Errorf("exported %d files, import --out wrote %d", len(got), len(want))
			}
		})
	}
}

// TestStoreStatsKilledImport: an import whose process ended without
// recording its end (as a kill leaves it) shows as interrupted in store
// stats, not as running forever.
func TestStoreStatsKilledImport(t *testing.T) {
	const helperEnv = "CRYSTALLIZE_TEST_BEGIN_IMPORT"
	if path := os.Getenv(helperEnv); path != "" {
		// The process that dies: it begins an import and exits.
		db, err := store.Open(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.BeginTraceImport(context.Background(), "/corpus", "2026-01-01T00:00:00Z"); err != nil {
			t.Fatal(err)
		}
		db.Close()
		return
	}
	if goruntime.GOOS == "windows" {
		t.Skip("a killed import is found only where a process can be asked whether it lives")
	}
	state := t.TempDir()
	helper := exec.Command(os.Args[0], "-test.run=^TestStoreStatsKilledImport$")
	helper.Env = append(os.Environ(), helperEnv+"="+registry.Path(state))
	if out, err := helper.CombinedOutput(); err != nil {
		t.Fatalf("beginning an import in another process: %v\n%s", err, out)
	}
	e, stdout, stderr := e2eEnv()
	if code := run(context.Background(), e, []string{"store", "stats", "--state-dir", state}); code != 0 {
		t.Fatalf("store stats: exit %d\n%s", code, stderr)
	}
	epoch, err := strconv.ParseInt(sourceDateEpoch, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	want := "Last import: from /corpus, started 2026-01-01T00:00:00Z, finished " + time.Unix(epoch, 0).UTC().Format(time.RFC3339) + ", interrupted: 0 new, 0 replaced, 0 already stored\n"
	if !strings.Contains(stdout.String(), want) {
		t.Errorf("store stats says:\n%s\nwant the line %q", stdout, want)
	}
}

// TestImportStoreRehash: import --store does not open the files an
// earlier import read while they keep their size and modification time
// (unchanged_files), --rehash reads them all, and --rehash without
// --store is a usage error.
func TestImportStoreRehash(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "corpus")
	if err := tracetest.Generate(tracetest.Config{Traces: 12, Seed: 3, Support: 0.2}).WriteDir(dir); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if err := os.Chtimes(filepath.Join(dir, e.Name()), old, old); err != nil {
			t.Fatal(err)
		}
	}
	state := filepath.Join(t.TempDir(), "state")
	importJSON := func(extra ...string) pipeline.StoreImportSummary {
		t.Helper()
		e, stdout, stderr := e2eEnv()
		if code := run(context.Background(), e, append([]string{"import", "--from", dir, "--store", "--state-dir", state, "--json"}, extra...)); code != 0 {
			t.Fatalf("import --store %v: exit %d\n%s", extra, code, stderr)
		}
		var sum pipeline.StoreImportSummary
		if err := json.Unmarshal(stdout.Bytes(), &sum); err != nil {
			t.Fatalf("import --store --json: %v\n%s", err, stdout)
		}
		return sum
	}
	if s := importJSON(); s.Added != 12 || s.UnchangedFiles != 0 {
		t.Errorf("first import: added %d, unchanged_files %d; want 12, 0", s.Added, s.UnchangedFiles)
	}
	if s := importJSON(); s.Added != 0 || s.AlreadyStored != 0 || s.UnchangedFiles != len(entries) {
		t.Errorf("second import: added %d, already_stored %d, unchanged_files %d; want 0, 0, %d", s.Added, s.AlreadyStored, s.UnchangedFiles, len(entries))
	}
	if s := importJSON("--rehash"); s.AlreadyStored != 12 || s.UnchangedFiles != 0 {
		t.Errorf("import --rehash: already_stored %d, unchanged_files %d; want 12, 0", s.AlreadyStored, s.UnchangedFiles)
	}
	e, _, stderr := e2eEnv()
	if code := run(context.Background(), e, []string{"import", "--from", dir, "--out", t.TempDir(), "--rehash"}); code != 2 || !strings.Contains(stderr.String(), "--rehash is for --store") {
		t.Errorf("import --out --rehash: exit %d, %s; want 2 and a word on --store", code, stderr)
	}
}
