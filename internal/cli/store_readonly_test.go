package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/mine"
	"github.com/crystallize-dev/crystallize/internal/pipeline"
	"github.com/crystallize-dev/crystallize/internal/registry"
	"github.com/crystallize-dev/crystallize/internal/replay"
	"github.com/crystallize-dev/crystallize/internal/store"
	"github.com/crystallize-dev/crystallize/internal/tracestore"
	"github.com/crystallize-dev/crystallize/internal/tracetest"
)

// readOnlyState takes the write permission off the trace store of state
// and its directory, as a shared read-only copy has it, and gives it back
// when the test ends. It returns the store's bytes as they are now.
//
// Tests may run as root, which writes such files all the same: what keeps
// the store unwritten then is that crystallize reads the permission bits
// (store.Writable) and opens the store in SQLite's read-only mode
// (mode=ro), which refuses every write whoever asks.
func readOnlyState(t *testing.T, state string) []byte {
	t.Helper()
	path := registry.Path(state)
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o444); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(state, 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		os.Chmod(state, 0o755)
		os.Chmod(path, 0o644)
	})
	return before
}

// sameStoreBytes fails the test when the trace store of state holds other
// bytes than before.
func sameStoreBytes(t *testing.T, state string, before []byte) {
	t.Helper()
	after, err := os.ReadFile(registry.Path(state))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, after) {
		t.Error("the read-only trace store's file changed")
	}
}

// TestMineStoreReadOnly: mine --store and store stats work on a trace
// store in a read-only state directory, with one warning on stderr (and in
// --json), the files mine --from writes, and the store left as it was;
// store export works; store gc and import --store, which must write, fail
// and say why.
func TestMineStoreReadOnly(t *testing.T) {
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "corpus")
	if err := tracetest.Generate(tracetest.Config{Traces: 120, Seed: 9}).WriteDir(dir); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(tmp, "state")
	e, _, stderr := e2eEnv()
	if code := run(context.Background(), e, []string{"import", "--from", dir, "--store", "--state-dir", state}); code != 0 {
		t.Fatalf("import --store: exit %d\n%s", code, stderr)
	}
	out := filepath.Join(tmp, "out")
	want, wantCode, _ := minePasses(t, out, dir, pipeline.PassesTwo)
	before := readOnlyState(t, state)

	if err := os.RemoveAll(out); err != nil {
		t.Fatal(err)
	}
	e, stdout, stderr := e2eEnv()
	code := run(context.Background(), e, []string{"mine", "--store", "--state-dir", state, "--json",
		"--out", filepath.Join(out, "w.star"), "--out-dir", filepath.Join(out, "all"),
		"--report", filepath.Join(out, "report.json"), "--bundle", filepath.Join(out, "bundle")})
	if code != wantCode {
		t.Fatalf("mine --store of a read-only store: exit %d, mine --from %d\n%s", code, wantCode, stderr)
	}
	got := readTree(t, out)
	for name, w := range want {
		if !bytes.Equal(got[name], w) {
			t.Errorf("%s differs from mine --from's", name)
		}
	}
	if len(got) != len(want) {
		t.Errorf("mine --store wrote %d files, mine --from %d", len(got), len(want))
	}
	oneWarning(t, "mine --store", stderr.String())
	var sum struct {
		Warnings []pipeline.SummaryWarning `json:"warnings"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &sum); err != nil {
		t.Fatalf("mine --json: %v\n%s", err, stdout)
	}
	found := 0
	for _, w := range sum.Warnings {
		if w.Code == "store_read_only" && strings.Contains(w.Message, "read-only") {
			found++
		}
	}
	if found != 1 {
		t.Errorf("mine --json warnings = %+v, want one store_read_only", sum.Warnings)
	}

	e, stdout, stderr = e2eEnv()
	if code := run(context.Background(), e, []string{"store", "stats", "--state-dir", state, "--json"}); code != 0 {
		t.Fatalf("store stats of a read-only store: exit %d\n%s", code, stderr)
	}
	oneWarning(t, "store stats", stderr.String())
	var st struct {
		Traces   int      `json:"traces"`
		Warnings []string `json:"warnings"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &st); err != nil {
		t.Fatalf("store stats --json: %v\n%s", err, stdout)
	}
	if st.Traces != 120 || len(st.Warnings) != 1 {
		t.Errorf("store stats --json: %d traces, warnings %q; want 120 and one warning", st.Traces, st.Warnings)
	}

	e, _, stderr = e2eEnv()
	if code := run(context.Background(), e, []string{"store", "export", "--state-dir", state, "--out", filepath.Join(tmp, "export")}); code != 0 {
		t.Errorf("store export of a read-only store: exit %d\n%s", code, stderr)
	}
	for _, args := range [][]string{
		{"store", "gc", "--state-dir", state},
		{"import", "--from", dir, "--store", "--state-dir", state, "--rehash"},
	} {
		e, _, stderr = e2eEnv()
		if code := run(context.Background(), e, args); code != 1 || !strings.Contains(stderr.String(), "read-only") {
			t.Errorf("%s of a read-only store: exit %d, stderr %q; want 1 and an error saying it is read-only", strings.Join(args[:2], " "), code, stderr)
		}
	}
	sameStoreBytes(t, state, before)
}

// oneWarning fails the test unless stderr holds exactly one warning, the
// one that says the trace store is read-only.
func oneWarning(t *testing.T, what, stderr string) {
	t.Helper()
	if n := strings.Count(stderr, "warning:"); n != 1 || !strings.Contains(stderr, "is read-only") {
		t.Errorf("%s: stderr has %d warnings, want one saying the store is read-only:\n%s", what, n, stderr)
	}
}

// TestMineStoreReadOnlyVerdicts mines a read-only store whose candidates
// are built from samples, so that a writable store would remember the
// verdicts of the examples checked: the outputs are mine --from's, and
// nothing is written. The same mine once the store is writable again
// remembers verdicts, which shows that the corpus asks for them.
func TestMineStoreReadOnlyVerdicts(t *testing.T) {
	ctx := context.Background()
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "corpus")
	if err := tracetest.Generate(tracetest.Config{Traces: 300, Seed: 9}).WriteDir(dir); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(tmp, "state")
	db, err := store.Open(ctx, registry.Path(state))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tracestore.Import(ctx, db, dir, tracestore.ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	out := filepath.Join(tmp, "out")
	opts := mine.Options{MinExamples: 2, GeneratedAt: "2026-01-01T00:00:00Z", ExampleSample: 4}
	mineInto := func(co pipeline.CorpusOptions) map[string][]byte {
		t.Helper()
		if err := os.RemoveAll(out); err != nil {
			t.Fatal(err)
		}
		co.Mine = opts
		_, _, err := pipeline.MineDir(ctx, pipeline.MineDirOptions{
			Corpus: co,
			Outputs: pipeline.Outputs{Out: filepath.Join(out, "w.star"), OutDir: filepath.Join(out, "all"), Report: filepath.Join(out, "report.json"),
				Shadow: replay.Options{ListPassing: 4}},
		})
		if err != nil {
			t.Fatal(err)
		}
		return readTree(t, out)
	}
	fromStore := func(db *store.DB) map[string][]byte {
		t.Helper()
		c, err := tracestore.Open(ctx, db)
		if err != nil {
			t.Fatal(err)
		}
		return mineInto(pipeline.CorpusOptions{Store: c})
	}
	want := mineInto(pipeline.CorpusOptions{Dir: dir, Passes: pipeline.PassesTwo})

	before := readOnlyState(t, state)
	if store.Writable(registry.Path(state)) {
		t.Fatal("store.Writable is true in a read-only state directory")
	}
	ro, err := store.OpenReadOnly(ctx, registry.Path(state))
	if err != nil {
		t.Fatal(err)
	}
	got := fromStore(ro)
	ro.Close()
	for name, w := range want {
		if !bytes.Equal(got[name], w) {
			t.Errorf("mining the read-only store: %s differs from mine --from's", name)
		}
	}
	if !ro.ReadOnly() {
		t.Error("the read-only store does not say it is read-only")
	}
	sameStoreBytes(t, state, before)

	os.Chmod(state, 0o755)
	os.Chmod(registry.Path(state), 0o644)
	rw, err := store.Open(ctx, registry.Path(state))
	if err != nil {
		t.Fatal(err)
	}
	defer rw.Close()
	fromStore(rw)
	if n, err := rw.CountVerdicts(ctx); err != nil || n == 0 {
		t.Errorf("the writable store remembered %d verdicts (%v): the corpus does not exercise them", n, err)
	}
}
