package tracestore

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/mine"
	"github.com/crystallize-dev/crystallize/internal/source"
	"github.com/crystallize-dev/crystallize/internal/store"
	"github.com/crystallize-dev/crystallize/internal/trace"
	"github.com/crystallize-dev/crystallize/internal/tracetest"
)

func openDB(t *testing.T, path string) *store.DB {
	t.Helper()
	db, err := store.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func writeCorpus(t *testing.T, dir string, n int, seed uint64, jsonl bool) *tracetest.Corpus {
	t.Helper()
	c := tracetest.Generate(tracetest.Config{Traces: n, Seed: seed, Support: 0.05, FuzzyEvery: 3})
	var err error
	if jsonl {
		if err = os.MkdirAll(dir, 0o755); err == nil {
			err = c.WriteJSONL(filepath.Join(dir, "traces.jsonl"))
		}
	} else {
		err = c.WriteDir(dir)
	}
	if err != nil {
		t.Fatal(err)
	}
	return c
}

var opts = mine.Options{MinExamples: 3, GeneratedAt: "2026-01-01T00:00:00Z"}

// mineDir mines dir as crystallize mine does, the traces in memory.
func mineDir(t *testing.T, dir string) []byte {
	t.Helper()
	res, err := source.Load(context.Background(), dir, source.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := mine.Mine(context.Background(), res.Traces, opts)
	if err != nil {
		t.Fatal(err)
	}
	b, err := r.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mineStore(t *testing.T, db *store.DB) []byte {
	t.Helper()
	c, err := Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	m, err := c.Mine(context.Background(), opts, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := m.Report.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestMineStoreSameReport checks that mining the store gives the report
// mining the imported directory gives, byte for byte, for traces as files
// (in nested directories, whose walk order is not the paths' string
// order) and as JSON Lines, and for a store filled by two imports.
func TestMineStoreSameReport(t *testing.T) {
	tmp := t.TempDir()
	for _, jsonl := range []bool{false, true} {
		t.Run(fmt.Sprintf("jsonl=%v", jsonl), func(t *testing.T) {
			dir := filepath.Join(tmp, fmt.Sprintf("corpus-%v", jsonl))
			writeCorpus(t, dir, 300, 2, jsonl)
			if !jsonl {
				// "a/" is walked before "a.json": a string sort of the
				// paths would put it after.
				moveSome(t, dir)
			}
			want := mineDir(t, dir)
			db := openDB(t, filepath.Join(tmp, fmt.Sprintf("state-%v.db", jsonl)))
			res, err := Import(context.Background(), db, dir, ImportOptions{BatchTraces: 64})
			if err != nil {
				t.Fatal(err)
			}
			if res.Added != 300 || res.Known != 0 || res.Duplicates != 0 {
				t.Errorf("import: added %d, known %d, duplicates %d; want 300, 0, 0", res.Added, res.Known, res.Duplicates)
			}
			if got := mineStore(t, db); !bytes.Equal(got, want) {
				t.Errorf("report from the store differs from the report from %s:\n%s", dir, firstDiff(got, want))
			}
			// Importing again decodes nothing and stores nothing: with
			// Rehash every document is read and known by its hash;
			// without, the files, older than an import, are not read.
			res, err = Import(context.Background(), db, dir, ImportOptions{Rehash: true})
			if err != nil {
				t.Fatal(err)
			}
			if res.Added != 0 || res.Known != 300 || res.Unchanged != 0 {
				t.Errorf("second import: added %d, known %d, unchanged %d; want 0, 300, 0", res.Added, res.Known, res.Unchanged)
			}
			files := backdate(t, dir)
			if _, err := Import(context.Background(), db, dir, ImportOptions{Rehash: true}); err != nil {
				t.Fatal(err)
			}
			res, err = Import(context.Background(), db, dir, ImportOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if res.Added != 0 || res.Known != 0 || res.Unchanged != files {
				t.Errorf("third import: added %d, known %d, unchanged %d; want 0, 0, %d", res.Added, res.Known, res.Unchanged, files)
			}
		})
	}
}

// moveSome moves the first 20 traces into a subdirectory named like a
// trace file without its extension.
func moveSome(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "trace-000100")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, e := range entries[:20] {
		if err := os.Rename(filepath.Join(dir, e.Name()), filepath.Join(sub, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
}

func firstDiff(a, b []byte) string {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			lo := max(0, i-200)
			return fmt.Sprintf("at byte %d:\ngot:  %s\nwant: %s", i, a[lo:min(len(a), i+200)], b[lo:min(len(b), i+200)])
		}
	}
	return fmt.Sprintf("lengths %d and %d", len(a), len(b))
}

// TestIncrementalImport adds traces to an imported directory: the second
// import decodes only the new ones, and mining the store gives the report
// of the grown directory.
func TestIncrementalImport(t *testing.T) {
	tmp := t.TempDir()
	all := filepath.Join(tmp, "all")
	writeCorpus(t, all, 220, 3, false)
	dir := filepath.Join(tmp, "corpus")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(all)
	for _, e := range entries[:200] {
		os.Rename(filepath.Join(all, e.Name()), filepath.Join(dir, e.Name()))
	}
	backdate(t, dir)
	db := openDB(t, filepath.Join(tmp, "state.db"))
	if _, err := Import(context.Background(), db, dir, ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, e := range entries[200:] {
		os.Rename(filepath.Join(all, e.Name()), filepath.Join(dir, e.Name()))
	}
	res, err := Import(context.Background(), db, dir, ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Added != 20 || res.Known != 0 || res.Unchanged != 200 {
		t.Errorf("second import: added %d, known %d, unchanged files %d; want 20, 0, 200", res.Added, res.Known, res.Unchanged)
	}
	if got, want := mineStore(t, db), mineDir(t, dir); !bytes.Equal(got, want) {
		t.Errorf("report after the second import differs:\n%s", firstDiff(got, want))
	}
}

// TestImportInterrupted cancels an import in the middle of a transaction:
// the store still opens, passes SQLite's integrity check, holds whole
// batches only, and importing again stores the rest with no duplicate.
func TestImportInterrupted(t *testing.T) {
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "corpus")
	writeCorpus(t, dir, 400, 4, true)
	path := filepath.Join(tmp, "state.db")
	db, err := store.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	parent, cancel := context.WithCancel(context.Background())
	defer cancel()
	// The context cancels itself at the 40th time it is asked whether it
	// is done once the first batch is committed: inside the second
	// batch's transaction, between two of its statements.
	ctx := &tripContext{Context: parent, cancel: cancel, trip: 40}
	committed := 0
	_, err = Import(ctx, db, dir, ImportOptions{
		BatchTraces: 50,
		Committed: func(n int) {
			committed = n
			ctx.armed.Store(true)
		},
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted import: err = %v, want context.Canceled", err)
	}
	db.Close()

	if committed != 50 {
		t.Fatalf("the import committed %d traces before it was cancelled, want one batch of 50", committed)
	}
	if ctx.calls.Load() < ctx.trip {
		t.Fatalf("the context was asked %d times after the first commit, never cancelled", ctx.calls.Load())
	}
	db = openDB(t, path)
	bg := context.Background()
	if ok, err := db.IntegrityCheck(bg); err != nil || ok != "ok" {
		t.Fatalf("integrity check: %q, %v", ok, err)
	}
	st, err := db.TraceStats(bg)
	if err != nil {
		t.Fatal(err)
	}
	if st.Traces != committed || st.Traces%50 != 0 || st.Traces == 0 || st.Traces == 400 {
		t.Errorf("after the interruption the store holds %d traces, committed %d: want whole batches, some but not all", st.Traces, committed)
	}
	if st.LastImport == nil || st.LastImport.Status != StatusInterrupted {
		t.Errorf("last import = %+v, want status %s", st.LastImport, StatusInterrupted)
	}
	res, err := Import(bg, db, dir, ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Known != committed || res.Added != 400-committed || res.Duplicates != 0 {
		t.Errorf("re-run: known %d, added %d, duplicates %d; want %d, %d, 0", res.Known, res.Added, res.Duplicates, committed, 400-committed)
	}
	c, err := Open(bg, db)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for i := range c.Len() {
		ids[c.Row(i).TraceID] = true
	}
	if len(ids) != 400 || c.Len() != 400 {
		t.Errorf("store holds %d traces with %d ids, want 400", c.Len(), len(ids))
	}
	if got, want := mineStore(t, db), mineDir(t, dir); !bytes.Equal(got, want) {
		t.Errorf("report after the re-run differs:\n%s", firstDiff(got, want))
	}
}

// TestImportInvalidStoresNothing: a corpus with an invalid file fails
// the import and leaves nothing of it in the store, even from batches
// committed before the bad file was met.
func TestImportInvalidStoresNothing(t *testing.T) {
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "corpus")
	writeCorpus(t, dir, 120, 5, false)
	if err := os.WriteFile(filepath.Join(dir, "zz-bad.json"), []byte(`{"actions": 3}`), 0o644); err != nil {
		t.Fatal(err)
	}
	db := openDB(t, filepath.Join(tmp, "state.db"))
	_, err := Import(context.Background(), db, dir, ImportOptions{BatchTraces: 10})
	var list trace.ErrorList
	if !errors.As(err, &list) {
		t.Fatalf("err = %v, want the trace.ErrorList naming zz-bad.json", err)
	}
	st, err := db.TraceStats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.Traces != 0 || st.LastImport.Status != store.ImportFailed {
		t.Errorf("after a failed import: %d traces, status %s; want 0, failed", st.Traces, st.LastImport.Status)
	}
	res, err := Import(context.Background(), db, dir, ImportOptions{SkipInvalid: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Added != 120 || len(res.Skipped) != 1 {
		t.Errorf("with SkipInvalid: added %d, skipped %v", res.Added, res.Skipped)
	}
}

// TestDecodeRoundTrip checks that every stored body decodes to the trace
// the import decoded, for every kind of input the examples hold.
func TestDecodeRoundTrip(t *testing.T) {
	for _, dir := range []string{"../../examples/traces", "../../examples/heldout", "../../examples/composition", "../source/testdata/agents"} {
		t.Run(dir, func(t *testing.T) {
			if _, err := os.Stat(dir); err != nil {
				t.Skip(err)
			}
			res, err := source.Load(context.Background(), dir, source.Options{SkipInvalid: true})
			if err != nil {
				t.Fatal(err)
			}
			db := openDB(t, filepath.Join(t.TempDir(), "state.db"))
			if _, err := Import(context.Background(), db, dir, ImportOptions{SkipInvalid: true}); err != nil {
				t.Fatal(err)
			}
			c, err := Open(context.Background(), db)
			if err != nil {
				t.Fatal(err)
			}
			got, err := c.All(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(res.Traces) {
				t.Fatalf("store holds %d traces, the directory %d", len(got), len(res.Traces))
			}
			for i, want := range res.Traces {
				wb, _ := Encode(want)
				wb, _ = Indent(wb)
				gb, _ := Encode(got[i])
				gb, _ = Indent(gb)
				if !bytes.Equal(gb, wb) || got[i].Origin != want.Origin {
					t.Errorf("trace %d (%s at %v) decodes from the store as %s at %v", i, want.ID, want.Origin, got[i].ID, got[i].Origin)
				}
			}
		})
	}
}

// tripContext is a context that cancels itself at the trip-th call of
// Done once armed.
type tripContext struct {
	context.Context
	cancel func()
	armed  atomic.Bool
	calls  atomic.Int64
	trip   int64
}

func (c *tripContext) Done() <-chan struct{} {
	if c.armed.Load() && c.calls.Add(1) == c.trip {
		c.cancel()
	}
	return c.Context.Done()
}

func TestComparePaths(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"a/b.json", "a.json", -1},
		{"a.json", "a/b.json", 1},
		{"a/b.json", "a/b.json", 0},
		{"a/b/c.json", "a/bc.json", -1},
		{"x.json", "y.json", -1},
	} {
		if got := comparePaths(c.a, c.b); got != c.want {
			t.Errorf("comparePaths(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}

// TestMineStoreGapped checks that the gapped miner mines the store from
// the stored summaries and flags, decoding only its candidates' examples,
// into the report mining the sessions' files gives; and that over traces
// stored before the store kept flags (NULL, as migration 5 leaves them)
// it computes their flags once, records them, and gives the same report.
func TestMineStoreGapped(t *testing.T) {
	ctx := context.Background()
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "claude")
	ac := tracetest.GenerateAgents(tracetest.AgentConfig{Sessions: 60, Seed: 3})
	if err := ac.Write(dir, tracetest.AgentFormats[0]); err != nil {
		t.Fatal(err)
	}
	want := mineDir(t, dir)
	if !bytes.Contains(want, []byte(`"miner": "gapped"`)) || !bytes.Contains(want, []byte(`"actions"`)) {
		t.Fatalf("the sessions are not mined by the gapped miner into candidates: the comparison proves little")
	}
	path := filepath.Join(tmp, "state.db")
	db := openDB(t, path)
	res, err := Import(ctx, db, dir, ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	stored := res.Added

	mineCounting := func() ([]byte, int) {
		t.Helper()
		c, err := Open(ctx, db)
		if err != nil {
			t.Fatal(err)
		}
		decoded := 0
		m, err := c.Mine(ctx, opts, func(n int) { decoded += n })
		if err != nil {
			t.Fatal(err)
		}
		b, err := m.Report.Encode()
		if err != nil {
			t.Fatal(err)
		}
		return b, decoded
	}
	got, decoded := mineCounting()
	if !bytes.Equal(got, want) {
		t.Errorf("gapped report from the store differs from the report from %s:\n%s", dir, firstDiff(got, want))
	}
	if decoded == 0 || decoded >= stored {
		t.Errorf("the gapped miner decoded %d of %d stored traces, want its examples only", decoded, stored)
	}

	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.ExecContext(ctx, `UPDATE traces SET flags = NULL`); err != nil {
		t.Fatal(err)
	}
	c, err := Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	if c.Row(0).HasFlags {
		t.Fatalf("flags still set after clearing them")
	}
	got, _ = mineCounting()
	if !bytes.Equal(got, want) {
		t.Errorf("gapped report over traces stored without flags differs:\n%s", firstDiff(got, want))
	}
	c, err = Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	for i := range c.Len() {
		if !c.Row(i).HasFlags {
			t.Fatalf("trace %s: flags not recorded by the mine that computed them", c.Row(i).TraceID)
		}
	}
	if n, err := c.FillFlags(ctx); err != nil || n != 0 {
		t.Errorf("FillFlags after the flags were recorded: decoded %d, err %v; want 0", n, err)
	}

	// Flags that do not match the trace's actions stop the run, naming
	// the trace, rather than misleading the miner.
	var id string
	if err := raw.QueryRowContext(ctx, `SELECT trace_id FROM traces WHERE excluded = 0 AND actions > 1 ORDER BY seq LIMIT 1`).Scan(&id); err != nil {
		t.Fatal(err)
	}
	if _, err := raw.ExecContext(ctx, `UPDATE traces SET flags = x'00' WHERE trace_id = ?`, id); err != nil {
		t.Fatal(err)
	}
	if c, err = Open(ctx, db); err != nil {
		t.Fatal(err)
	}
	_, err = c.Mine(ctx, opts, nil)
	if err == nil || !strings.Contains(err.Error(), "stored trace "+id+": 1 action flags for") {
		t.Errorf("mining with a trace's flags cut short: err = %v, want one naming trace %s", err, id)
	}
}

// TestMineStoreSessions checks that the store keeps the session of a
// trace that continues another (metadata.parent_session_id): mining the
// store counts support in sessions as mining the directory does, for
// traces as files and as JSON Lines.
func TestMineStoreSessions(t *testing.T) {
	tmp := t.TempDir()
	for _, jsonl := range []bool{false, true} {
		t.Run(fmt.Sprintf("jsonl=%v", jsonl), func(t *testing.T) {
			c := tracetest.Generate(tracetest.Config{Traces: 120, Seed: 4, Support: 0.1})
			// Every three traces are one session: the first, and two
			// that continue it.
			for i, tr := range c.Traces {
				if i%3 != 0 {
					if tr.Metadata == nil {
						tr.Metadata = map[string]any{}
					}
					tr.Metadata["parent_session_id"] = c.Traces[i-i%3].ID
				}
			}
			dir := filepath.Join(tmp, fmt.Sprintf("corpus-%v", jsonl))
			var err error
			if jsonl {
				if err = os.MkdirAll(dir, 0o755); err == nil {
					err = c.WriteJSONL(filepath.Join(dir, "traces.jsonl"))
				}
			} else {
				err = c.WriteDir(dir)
			}
			if err != nil {
				t.Fatal(err)
			}
			want := mineDir(t, dir)
			if !bytes.Contains(want, []byte(`"eligible_sessions": 40`)) {
				t.Fatalf("mining %s: no eligible_sessions 40 in the report:\n%.600s", dir, want)
			}
			db := openDB(t, filepath.Join(tmp, fmt.Sprintf("state-%v.db", jsonl)))
			if _, err := Import(context.Background(), db, dir, ImportOptions{}); err != nil {
				t.Fatal(err)
			}
			if got := mineStore(t, db); !bytes.Equal(got, want) {
				t.Errorf("report from the store differs from the report from %s:\n%s", dir, firstDiff(got, want))
			}
		})
	}
}
