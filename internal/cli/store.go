package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/crystallize-dev/crystallize/internal/pipeline"
	"github.com/crystallize-dev/crystallize/internal/registry"
	"github.com/crystallize-dev/crystallize/internal/runner"
	"github.com/crystallize-dev/crystallize/internal/source"
	"github.com/crystallize-dev/crystallize/internal/store"
	"github.com/crystallize-dev/crystallize/internal/tracestore"
)

// The trace store: crystallize import --store, crystallize mine --store
// and crystallize store stats|gc|export. The store is the state
// directory's database (<state-dir>/state.db), the one the registry of
// runs uses.

const storeFlagHelp = "keep the traces in the trace store, <state-dir>/" + registry.DBFile + ", instead of writing files (see crystallize store)"

const stateDirStoreHelp = "state directory whose trace store to use (<dir>/" + registry.DBFile + ")"

// openTraceStore opens the trace store of stateDir (tracestore.OpenStore:
// created for an import, opened read-only for a reader that may not
// write it) and returns it with its path.
func openTraceStore(ctx context.Context, stateDir string, create bool) (*store.DB, string, error) {
	if stateDir == "" {
		return nil, "", usagef("--state-dir: empty path")
	}
	path := registry.Path(stateDir)
	db, err := tracestore.OpenStore(ctx, path, create)
	return db, path, err
}

// storeReadOnlyWarning is the one warning a command that reads the trace
// store gives when the store could not be written: what it skipped
// (skipped, a phrase) and that its result is whole all the same. It is ""
// for a store that was written as usual.
func storeReadOnlyWarning(db *store.DB, path, skipped string) string {
	if !db.ReadOnly() {
		return ""
	}
	return fmt.Sprintf("the trace store %s is read-only: %s", path, skipped)
}

// printStoreWarning writes a warning of storeReadOnlyWarning on stderr.
func printStoreWarning(e *env, warning string) {
	if warning != "" {
		fmt.Fprintf(e.stderr, "crystallize: warning: %s\n", warning)
	}
}

// runImportStore is import --store: the traces under --from go into the
// trace store instead of files.
func runImportStore(ctx context.Context, e *env, f *importFlags) error {
	if f.out != "" {
		return usagef("--out and --store: pass one (crystallize store export writes the stored traces as files)")
	}
	rules, err := agentRules(f.config)
	if err != nil {
		return err
	}
	now, err := harnessNow(e)
	if err != nil {
		return err
	}
	stamp := now.Format("2006-01-02T15:04:05Z07:00")
	db, path, err := openTraceStore(ctx, f.stateDir, true)
	if err != nil {
		return err
	}
	defer db.Close()
	prog := newProgress(e, !f.asJSON, "storing traces")
	res, err := tracestore.Import(ctx, db, f.from, tracestore.ImportOptions{
		SkipInvalid: f.skipInvalid, Rules: rules, Rehash: f.rehash,
		Now:      func() string { return stamp },
		Progress: func(p source.ScanProgress) { prog.update(int(p.Bytes>>10), int(p.TotalBytes>>10)) },
	})
	prog.done()
	if err != nil {
		return err
	}
	s := pipeline.SummarizeStoreImport(res, f.from, path)
	if f.asJSON {
		return writeJSON(e.stdout, s)
	}
	w := e.stdout
	fmt.Fprintf(w, "Stored %d traces from %s in %s (%d new, %d replaced; %d already stored, %d duplicates)\n",
		res.Added+res.Replaced, s.From, s.Store, res.Added, res.Replaced, res.Known, res.Duplicates)
	if res.Unchanged > 0 {
		fmt.Fprintf(w, "  %d files unchanged since an earlier import, not read (--rehash reads them)\n", res.Unchanged)
	}
	for _, fm := range res.Formats {
		fmt.Fprintf(w, "  %s: %d traces, %d actions (%d observations), %d sessions skipped\n", fm.Format, fm.Traces, fm.Actions, fm.Observations, fm.SkippedSessions)
	}
	writeSkipped(w, s.SkippedSession, s.SkippedInvalid)
	return nil
}

// openStoreCorpus opens the trace store of stateDir for mine --store
// (pipeline.CorpusOptions.Store). The returned close must run once the
// outputs are written: examples are read back from the store while they
// are. warning, called once mining is done, gives the warning of a store
// that could not be written (storeReadOnlyWarning), or "".
func openStoreCorpus(ctx context.Context, stateDir string) (c *tracestore.Corpus, closeStore func() error, warning func() string, err error) {
	db, path, err := openTraceStore(ctx, stateDir, false)
	if err != nil {
		return nil, nil, nil, err
	}
	c, err = tracestore.Open(ctx, db)
	if err != nil {
		db.Close()
		return nil, nil, nil, err
	}
	if c.Len() == 0 {
		db.Close()
		return nil, nil, nil, fmt.Errorf("the trace store %s holds no trace: store traces first with crystallize import --from DIR --store", path)
	}
	warning = func() string {
		return storeReadOnlyWarning(db, path, "mined all the same, but the verdicts of the examples it checked are not remembered, so the next mine reads them again")
	}
	return c, db.Close, warning, nil
}

const storeDoc = `store looks after the trace store: the normalized traces that
crystallize import --store keeps in the state directory's database
(<state-dir>/state.db, SQLite, the database of the registry of runs), and
that crystallize mine --store mines.

What it holds, per trace: the normalized trace document (trace v1, compact;
store export writes it as crystallize import --out does), where it was read from (the path
relative to the imported directory, and the line of a JSON Lines record),
its source hash (the sha256 of those bytes) and what the first pass of
mining keeps of it: whether it is excluded, and its action signatures, as
ids into one table of signatures. Mining the store reads these, not the
documents, and decodes only the traces the candidates are built from: after
adding a few traces, mining again costs their decoding plus the search for
repeats, not a decode of the whole corpus. The report is the one crystallize
mine --from gives on the imported directory, byte for byte.

Importing a directory again reads only what is new: a file an earlier import
read that has the same size and modification time is not opened (import
--rehash reads it all the same); a trace document whose source hash is
stored is not decoded (it keeps the place it was first stored from); a trace
whose id is stored from the same place but whose bytes changed
(a session log that grew) replaces the stored one. Two different traces with
one id are an error. Files skipped as invalid (--skip-invalid) are not
stored.

A store this process may not write (a shared read-only copy: the file or
the state directory without write permission, or a read-only mount) is
opened read-only: mine --store, store stats and store export work as usual,
with one warning on stderr (and in --json) saying what they could not
record (the verdicts mine remembers for the next mine; a killed import's
end); store gc and import --store fail, leaving it as it was.

Every write is a transaction (SQLite's write-ahead log). An import stores
its traces in batches: interrupted, it keeps the batches it committed, and
importing the same directory again stores the rest. An import that fails on
invalid input removes the traces it added; a trace it replaced (a session log
that grew) keeps its new version.

  store stats    counts: traces (eligible, excluded), actions, signatures,
                 the bytes of the documents and of the database, the
                 directories traces came from, and the last import
  store gc       removes what no stored trace needs (documents no trace
                 refers to, signatures no trace uses, records of imports
                 that did not complete and left no trace), then gives the
                 space of deleted rows back to the file system
                 (checkpoint of the write-ahead log, VACUUM)
  store export   writes every stored trace to --out as
                 <format>-<id>.json, the bytes crystallize import --out
                 writes for it: redacted (no secret, no user's home
                 directory or name), while the store keeps them as read

Exit status: 0 on success, 1 on an error (no store, an unreadable one),
2 on a usage error.`

func newStoreCmd(e *env) *cobra.Command {
	var stateDir string
	cmd := &cobra.Command{
		Use:   "store stats|gc|export [--state-dir DIR] [--json]",
		Short: "Look after the trace store that import --store fills and mine --store mines",
		Long:  storeDoc,
		Args:  cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usagef("unknown store command %q: want stats, gc or export", args[0])
			}
			return usagef("store needs a command: stats, gc or export (crystallize store --help)")
		},
	}
	cmd.PersistentFlags().StringVar(&stateDir, "state-dir", runner.DefaultStateDir, stateDirStoreHelp)
	cmd.AddCommand(newStoreStatsCmd(e, &stateDir), newStoreGCCmd(e, &stateDir), newStoreExportCmd(e, &stateDir))
	return cmd
}

const storeStatsDoc = `stats counts what the trace store holds: traces (eligible for mining and
excluded), their actions, distinct action signatures, the bytes of the trace
documents, the database's size and the part of it free (what store gc gives
back), the directories the traces were imported from, and the last import
(its status is complete, failed, interrupted, or running while it goes on;
an import whose process was killed is recorded as interrupted by the next
import or store stats).

--json prints {"store", "traces", "eligible", "excluded", "actions",
"signatures", "body_bytes", "file_bytes", "free_bytes", "imports",
"sources": [{"root", "traces", "bytes"}], "last_import": {"id", "root",
"started_at", "finished_at", "status", "added", "replaced",
"already_stored"} or null}.`

func newStoreStatsCmd(e *env, stateDir *string) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "stats [--state-dir DIR] [--json]",
		Short: "Count what the trace store holds",
		Long:  storeStatsDoc,
		Example: `  crystallize store stats
  crystallize store stats --state-dir ci/.crystallize --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			db, path, err := openTraceStore(ctx, *stateDir, false)
			if err != nil {
				return err
			}
			defer db.Close()
			now, err := harnessNow(e)
			if err != nil {
				return err
			}
			// A store that cannot be written keeps a killed import
			// recorded as running; the counts are whole all the same.
			if _, err := db.InterruptStaleTraceImports(ctx, now.Format("2006-01-02T15:04:05Z07:00")); err != nil && !errors.Is(err, store.ErrReadOnly) {
				return err
			}
			st, err := db.TraceStats(ctx)
			if err != nil {
				return err
			}
			warning := storeReadOnlyWarning(db, path, "an import whose process was killed is shown as recorded (running), not as interrupted")
			printStoreWarning(e, warning)
			if asJSON {
				sum := pipeline.StoreStatsSummary{Store: path, TraceStats: st}
				if warning != "" {
					sum.Warnings = []string{warning}
				}
				return writeJSON(e.stdout, sum)
			}
			w := e.stdout
			fmt.Fprintf(w, "Store: %s\n", path)
			fmt.Fprintf(w, "Traces: %d (%d eligible, %d excluded), %d actions, %d distinct signatures\n", st.Traces, st.Eligible, st.Excluded, st.Actions, st.Signatures)
			fmt.Fprintf(w, "Bytes: %d of trace documents; database %d, of which %d free\n", st.BodyBytes, st.FileBytes, st.FreeBytes)
			for _, s := range st.Sources {
				fmt.Fprintf(w, "  from %s: %d traces, %d bytes\n", s.Root, s.Traces, s.Bytes)
			}
			if l := st.LastImport; l != nil {
				fmt.Fprintf(w, "Last import: from %s, started %s, finished %s, %s: %d new, %d replaced, %d already stored\n",
					l.Root, orDash(l.StartedAt), orDash(l.FinishedAt), l.Status, l.Added, l.Replaced, l.Known)
			} else {
				fmt.Fprintln(w, "Last import: none")
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the counts as JSON")
	return cmd
}

const storeGCDoc = `gc removes, in one transaction, what no stored trace needs: trace documents
no trace refers to, action signatures no stored trace uses (left by traces
that were replaced), the records of imports that did not complete and left
no trace, and the verdicts mine --store remembered of examples whose trace
is no longer stored. It then checkpoints the write-ahead log and rebuilds the
database file (VACUUM), which gives the space of everything deleted
(replaced traces, failed imports) back to the file system. Stored traces,
their summaries and the history of completed imports are kept.

gc needs the database to itself for a moment: while another crystallize
process writes to it, gc waits, then fails with nothing lost.

It prints what it removed and the database's size before and after; --json
prints {"store", "bodies", "signatures", "imports", "verdicts",
"bytes_before", "bytes_after"}.`

func newStoreGCCmd(e *env, stateDir *string) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "gc [--state-dir DIR] [--json]",
		Short: "Remove what no stored trace needs and give the space back",
		Long:  storeGCDoc,
		Example: `  crystallize store gc
  crystallize store gc --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			db, path, err := openTraceStore(ctx, *stateDir, false)
			if err != nil {
				return err
			}
			defer db.Close()
			gc, err := db.GCTraces(ctx)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(e.stdout, pipeline.StoreGCSummary{Store: path, TraceGC: gc})
			}
			fmt.Fprintf(e.stdout, "Removed %d unreferenced trace documents, %d unused signatures, %d records of incomplete imports\n", gc.Bodies, gc.Signatures, gc.Imports)
			if gc.Verdicts > 0 {
				fmt.Fprintf(e.stdout, "Removed %d remembered verdicts of examples no longer stored\n", gc.Verdicts)
			}
			fmt.Fprintf(e.stdout, "Database %s: %d bytes before, %d after\n", path, gc.BytesBefore, gc.BytesAfter)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON")
	return cmd
}

const storeExportDoc = `export writes every stored trace into --out as <format>-<id>.json (format:
the agent of a session, or trace; named as import --out names it),
holding exactly the bytes crystallize import --out writes for
it: the normalized trace v1 document, redacted for sharing (secrets become
[redacted:<kind>], users' home directories and names ~, and the id in the
file name is the redacted one). The store keeps the traces as read, on this
machine. Exporting what import --store stored from a directory gives the
files import --out writes from it, byte for byte. mine --from on the
exported files finds the procedures mine --store finds, except where a
redacted value was part of one; only the traces' paths (source) differ.

All files or none: each is written and synced beside its destination first,
and they are renamed into place when every one is complete. Files of the same names
are replaced; nothing else in --out is touched.

It prints the number of traces and bytes written; --json prints {"store",
"out", "traces", "bytes"}.`

func newStoreExportCmd(e *env, stateDir *string) *cobra.Command {
	var out string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "export --out DIR [--state-dir DIR] [--json]",
		Short: "Write every stored trace back as a file",
		Long:  storeExportDoc,
		Example: `  crystallize store export --out traces/
  crystallize store export --out /tmp/backup --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return usagef("--out is required: the directory to write the traces into")
			}
			ctx := cmd.Context()
			db, path, err := openTraceStore(ctx, *stateDir, false)
			if err != nil {
				return err
			}
			defer db.Close()
			c, err := tracestore.Open(ctx, db)
			if err != nil {
				return err
			}
			n, err := pipeline.Export(ctx, c, out)
			if err != nil {
				return err
			}
			sum := pipeline.StoreExportSummary{Store: path, Out: out, Traces: n.Traces, Bytes: n.Bytes}
			if asJSON {
				return writeJSON(e.stdout, sum)
			}
			fmt.Fprintf(e.stdout, "Exported %d traces (%d bytes) from %s into %s\n", sum.Traces, sum.Bytes, path, out)
			return nil
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "directory to write one trace file per stored trace into")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON")
	return cmd
}
