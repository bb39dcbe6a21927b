package store

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/crystallize-dev/crystallize/internal/proc"
)

// The trace store: normalized traces kept so that a corpus can be mined
// again without decoding it. Each trace is one row of traces, small enough
// that reading every row is cheap: its identity, where it was read from,
// what the first pass of mining keeps of it (its summary and its symbol
// sequence, as ids into trace_signatures) and a reference to its body, the
// normalized trace document, in trace_bodies. Bodies are read only for the
// traces a caller asks for (the examples of candidates, an export).
//
// A trace is identified by its source hash (the sha256 of the bytes it was
// decoded from) and its id (the sessions of one agent's log share the
// log's hash): a trace already stored is never stored twice. Its id is
// unique too; a trace whose source changed at the same place (a session
// log that grew) replaces the one stored from there.
//
// This package only keeps bytes and ids; what they mean (the trace format,
// the miner's summary) is package tracestore's.

// Import statuses. An import is interrupted when its context was
// cancelled, or when its process ended without recording its end (killed)
// and a later import or a look at the store found it gone
// (InterruptStaleTraceImports).
const (
	ImportRunning     = "running"
	ImportComplete    = "complete"
	ImportFailed      = "failed"
	ImportInterrupted = "interrupted"
)

// StoredTrace is a trace as PutTraces stores it.
type StoredTrace struct {
	TraceID    string
	SourceHash string
	// OriginPath and OriginLine are where the trace was read from: the
	// path relative to the imported directory, slash-separated, and the
	// line of a JSON Lines record (0 for a whole file).
	OriginPath string
	OriginLine int
	Actions    int
	// Excluded says the miner leaves the trace out.
	Excluded bool
	// Summary is the miner's summary of the trace besides its
	// signatures, opaque here.
	Summary string
	// Signatures are the action signatures of an eligible trace, nil for
	// an excluded one; PutTraces keeps them as ids.
	Signatures []string
	// Flags are the miner's flags of each action, opaque here: one byte
	// per action of an eligible trace, none for an excluded one.
	Flags []byte
	// Body is the normalized trace document.
	Body []byte
}

// TraceRow is a stored trace without its body.
type TraceRow struct {
	Seq        int64
	TraceID    string
	SourceHash string
	OriginPath string
	OriginLine int
	Actions    int
	Bytes      int64
	Summary    string
	// Symbols are ids into the signature table (TraceIndex.Signatures).
	Symbols []int32
	// Flags are as StoredTrace's; HasFlags is false for a trace stored
	// before the store kept them, whose flags are not known yet (see
	// SetTraceFlags).
	Flags    []byte
	HasFlags bool
	BodyID   int64
	Import   int64
}

// TraceIndex is every stored trace without its body, in the order they
// were stored, and the signature table their symbols index.
type TraceIndex struct {
	Traces     []TraceRow
	Signatures []string
}

// PutResult counts what PutTraces did with a batch.
type PutResult struct {
	// Added traces were new; Replaced ones took the place of a trace with
	// the same id from the same origin; Duplicates had a source hash and
	// id already stored (or stored earlier in the batch).
	Added, Replaced, Duplicates int
}

// ErrTraceConflict is returned by PutTraces for a trace whose id is
// already stored from another origin: two different traces with one id.
var ErrTraceConflict = errors.New("trace id already stored from another source")

// BeginTraceImport records the start of an import of root (the imported
// directory, its absolute path) at now (RFC 3339), by this process (its
// id and, where it can be read, its start), and returns its id.
func (s *DB) BeginTraceImport(ctx context.Context, root, now string) (int64, error) {
	pid := os.Getpid()
	res, err := s.db.ExecContext(ctx, `INSERT INTO trace_imports (root, started_at, status, pid, process_start) VALUES (?, ?, ?, ?, ?)`,
		root, now, ImportRunning, pid, proc.Start(pid))
	if err != nil {
		return 0, fmt.Errorf("recording import of %s: %w", root, s.writeErr(err))
	}
	return res.LastInsertId()
}

// InterruptStaleTraceImports records as interrupted, at now, every
// running import whose process is gone: one killed before it could
// record its end. What it committed is kept, whole (each batch is a
// transaction), as for an import whose context was cancelled. An import
// recorded before the store kept processes (pid 0) counts as gone: its
// process was an older crystallize. It returns how many it marked.
//
// A process id is given again once its process ends, so a live process
// with the recorded id is the import's only if it started when the
// import's did (proc.Start, recorded since schema 8); where the start
// could not be read, the id alone decides, and a reused id keeps the
// import running until that process ends. The state directory is
// assumed to be used from one machine, whose processes these are.
func (s *DB) InterruptStaleTraceImports(ctx context.Context, now string) (int, error) {
	marked := 0
	err := s.tx(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT id, pid, process_start FROM trace_imports WHERE status = ?`, ImportRunning)
		if err != nil {
			return err
		}
		var stale []int64
		for rows.Next() {
			var id int64
			var pid int
			var start string
			if err := rows.Scan(&id, &pid, &start); err != nil {
				rows.Close()
				return err
			}
			if !proc.Running(pid, start) {
				stale = append(stale, id)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, id := range stale {
			if _, err := tx.ExecContext(ctx, `UPDATE trace_imports SET status = ?1, finished_at = ?2,
				added = (SELECT count(*) FROM traces WHERE import_id = ?3 AND replaced = 0),
				replaced = (SELECT count(*) FROM traces WHERE import_id = ?3 AND replaced = 1)
				WHERE id = ?3`, ImportInterrupted, now, id); err != nil {
				return err
			}
		}
		marked = len(stale)
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("recording interrupted imports: %w", err)
	}
	return marked, nil
}

// TraceFile is a file an import read, as it was then: what tells the
// next import, without reading it, that it did not change.
type TraceFile struct {
	// Path is the file's absolute, cleaned path; Root the directory the
	// import was given, as given, and Rel the path below it.
	Path, Root, Rel string
	// Size and ModTime (Unix nanoseconds) are the file's when read.
	Size, ModTime int64
	// SourceHash is its document's source hash, "" for a JSON Lines
	// file (each record has its own).
	SourceHash string
}

// TraceFiles returns the files imports read, by path.
func (s *DB) TraceFiles(ctx context.Context) (map[string]TraceFile, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT path, root, rel, size, mtime, source_hash FROM trace_files`)
	if err != nil {
		return nil, fmt.Errorf("reading imported files: %w", err)
	}
	defer rows.Close()
	m := map[string]TraceFile{}
	for rows.Next() {
		var f TraceFile
		if err := rows.Scan(&f.Path, &f.Root, &f.Rel, &f.Size, &f.ModTime, &f.SourceHash); err != nil {
			return nil, fmt.Errorf("reading imported files: %w", err)
		}
		m[f.Path] = f
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading imported files: %w", err)
	}
	return m, nil
}

// PutTraceFiles records the files import importID read, in one
// transaction, each replacing what an earlier import recorded of it; the
// files of forget, read but not to be trusted next time, are removed.
func (s *DB) PutTraceFiles(ctx context.Context, importID int64, files []TraceFile, forget []string) error {
	if len(files) == 0 && len(forget) == 0 {
		return nil
	}
	err := s.tx(ctx, func(tx *sql.Tx) error {
		put, err := tx.PrepareContext(ctx, `INSERT OR REPLACE INTO trace_files (path, root, rel, size, mtime, source_hash, import_id) VALUES (?, ?, ?, ?, ?, ?, ?)`)
		if err != nil {
			return err
		}
		defer put.Close()
		for _, f := range files {
			if _, err := put.ExecContext(ctx, f.Path, f.Root, f.Rel, f.Size, f.ModTime, f.SourceHash, importID); err != nil {
				return err
			}
		}
		for _, p := range forget {
			if _, err := tx.ExecContext(ctx, `DELETE FROM trace_files WHERE path = ?`, p); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("recording imported files: %w", err)
	}
	return nil
}

// FinishTraceImport records how an import ended. With status
// ImportFailed the traces it added are removed first, in the same
// transaction. A trace it replaced (same id and place, new bytes) keeps
// its new version: the old one went with the batch that replaced it, and
// removing the new one would lose the trace.
func (s *DB) FinishTraceImport(ctx context.Context, id int64, status, now string, known int) error {
	err := s.tx(ctx, func(tx *sql.Tx) error {
		if status == ImportFailed {
			if err := deleteTraces(ctx, tx, `import_id = ? AND replaced = 0`, id); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `DELETE FROM trace_skipped_sessions WHERE import_id = ?`, id); err != nil {
				return err
			}
		}
		_, err := tx.ExecContext(ctx, `UPDATE trace_imports SET status = ?1, finished_at = ?2, known = ?3,
			added = (SELECT count(*) FROM traces WHERE import_id = ?4 AND replaced = 0),
			replaced = (SELECT count(*) FROM traces WHERE import_id = ?4 AND replaced = 1)
			WHERE id = ?4`, status, now, known, id)
		return err
	})
	if err != nil {
		return fmt.Errorf("recording the end of import %d: %w", id, err)
	}
	return nil
}

// deleteTraces deletes the traces matching where, and their bodies.
func deleteTraces(ctx context.Context, tx *sql.Tx, where string, args ...any) error {
	if _, err := tx.ExecContext(ctx, `CREATE TEMP TABLE IF NOT EXISTS doomed_bodies (id INTEGER PRIMARY KEY)`); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM doomed_bodies`); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO doomed_bodies SELECT body_id FROM traces WHERE `+where, args...); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM traces WHERE `+where, args...); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, `DELETE FROM trace_bodies WHERE id IN (SELECT id FROM doomed_bodies)`)
	return err
}

// TraceKey identifies a stored trace.
type TraceKey struct{ SourceHash, TraceID string }

// TraceKeys returns the key of every stored trace.
func (s *DB) TraceKeys(ctx context.Context) (map[TraceKey]bool, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT source_hash, trace_id FROM traces`)
	if err != nil {
		return nil, fmt.Errorf("reading stored traces: %w", err)
	}
	defer rows.Close()
	m := map[TraceKey]bool{}
	for rows.Next() {
		var k TraceKey
		if err := rows.Scan(&k.SourceHash, &k.TraceID); err != nil {
			return nil, fmt.Errorf("reading stored traces: %w", err)
		}
		m[k] = true
	}
	return m, rows.Err()
}

// PutTraces stores a batch of traces of import importID in one
// transaction: all of them or, on an error, none. A trace whose source
// hash and id are stored is a duplicate and skipped; one whose id is stored from
// the same origin replaces it (its body is deleted with it); one whose id
// is stored from another origin is an ErrTraceConflict.
func (s *DB) PutTraces(ctx context.Context, importID int64, batch []StoredTrace) (PutResult, error) {
	var res PutResult
	err := s.tx(ctx, func(tx *sql.Tx) error {
		res = PutResult{}
		sigs := map[string]int32{}
		lookup, err := tx.PrepareContext(ctx, `SELECT id FROM trace_signatures WHERE signature = ?`)
		if err != nil {
			return err
		}
		defer lookup.Close()
		insertSig, err := tx.PrepareContext(ctx, `INSERT INTO trace_signatures (signature) VALUES (?)`)
		if err != nil {
			return err
		}
		defer insertSig.Close()
		symbol := func(sig string) (int32, error) {
			if id, ok := sigs[sig]; ok {
				return id, nil
			}
			var id int64
			err := lookup.QueryRowContext(ctx, sig).Scan(&id)
			if errors.Is(err, sql.ErrNoRows) {
				r, ierr := insertSig.ExecContext(ctx, sig)
				if ierr != nil {
					return 0, ierr
				}
				id, err = r.LastInsertId()
			}
			if err != nil {
				return 0, err
			}
			sigs[sig] = int32(id)
			return int32(id), nil
		}
		byHash, err := tx.PrepareContext(ctx, `SELECT 1 FROM traces WHERE source_hash = ? AND trace_id = ?`)
		if err != nil {
			return err
		}
		defer byHash.Close()
		// An origin is a path relative to the imported directory: the
		// same path under another directory is another place.
		var root string
		if err := tx.QueryRowContext(ctx, `SELECT root FROM trace_imports WHERE id = ?`, importID).Scan(&root); err != nil {
			return fmt.Errorf("import %d: %w", importID, err)
		}
		byID, err := tx.PrepareContext(ctx, `SELECT t.seq, t.origin_path, t.origin_line, i.root FROM traces t JOIN trace_imports i ON i.id = t.import_id WHERE t.trace_id = ?`)
		if err != nil {
			return err
		}
		defer byID.Close()
		insertBody, err := tx.PrepareContext(ctx, `INSERT INTO trace_bodies (body) VALUES (?)`)
		if err != nil {
			return err
		}
		defer insertBody.Close()
		insertTrace, err := tx.PrepareContext(ctx, `INSERT INTO traces
			(trace_id, source_hash, origin_path, origin_line, actions, bytes, excluded, summary, symbols, body_id, import_id, replaced, flags)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, coalesce(?, x''))`)
		if err != nil {
			return err
		}
		defer insertTrace.Close()
		var anySkipped bool
		if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM trace_skipped_sessions)`).Scan(&anySkipped); err != nil {
			return err
		}
		for i := range batch {
			t := &batch[i]
			var one int
			switch err := byHash.QueryRowContext(ctx, t.SourceHash, t.TraceID).Scan(&one); {
			case err == nil:
				res.Duplicates++
				continue
			case !errors.Is(err, sql.ErrNoRows):
				return err
			}
			replaced := 0
			var seq int64
			var path, otherRoot string
			var line int
			switch err := byID.QueryRowContext(ctx, t.TraceID).Scan(&seq, &path, &line, &otherRoot); {
			case err == nil:
				if path != t.OriginPath || line != t.OriginLine || otherRoot != root {
					return fmt.Errorf("%s: trace %s: %w (%s in %s)", originString(t.OriginPath, t.OriginLine), t.TraceID, ErrTraceConflict, originString(path, line), otherRoot)
				}
				if err := deleteTraces(ctx, tx, `seq = ?`, seq); err != nil {
					return err
				}
				replaced = 1
				res.Replaced++
			case errors.Is(err, sql.ErrNoRows):
				res.Added++
			default:
				return err
			}
			symbols := make([]byte, 4*len(t.Signatures))
			for j, sig := range t.Signatures {
				id, err := symbol(sig)
				if err != nil {
					return err
				}
				binary.LittleEndian.PutUint32(symbols[4*j:], uint32(id))
			}
			r, err := insertBody.ExecContext(ctx, t.Body)
			if err != nil {
				return err
			}
			bodyID, err := r.LastInsertId()
			if err != nil {
				return err
			}
			// A session once skipped (no tool call yet) that is now a
			// trace is no longer skipped. Its path is the file as the
			// import named it, which ends with the trace's origin path.
			if anySkipped {
				if _, err := tx.ExecContext(ctx, `DELETE FROM trace_skipped_sessions WHERE session_id = ?1
					AND (path = ?2 OR substr(path, -length(?2) - 1) = '/' || ?2)`, t.TraceID, t.OriginPath); err != nil {
					return err
				}
			}
			if _, err := insertTrace.ExecContext(ctx, t.TraceID, t.SourceHash, t.OriginPath, t.OriginLine, t.Actions,
				len(t.Body), t.Excluded, t.Summary, symbols, bodyID, importID, replaced, t.Flags); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return PutResult{}, fmt.Errorf("storing traces: %w", err)
	}
	return res, nil
}

func originString(path string, line int) string {
	if line > 0 {
		return fmt.Sprintf("%s:%d", path, line)
	}
	return path
}

// TraceIndex reads every stored trace but its body, and the signature
// table, in one read transaction, so that the two agree.
func (s *DB) TraceIndex(ctx context.Context) (*TraceIndex, error) {
	idx := &TraceIndex{}
	err := s.readTx(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT id, signature FROM trace_signatures ORDER BY id`)
		if err != nil {
			return err
		}
		byID := map[int64]int32{}
		for rows.Next() {
			var id int64
			var sig string
			if err := rows.Scan(&id, &sig); err != nil {
				rows.Close()
				return err
			}
			byID[id] = int32(len(idx.Signatures))
			idx.Signatures = append(idx.Signatures, sig)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		rows, err = tx.QueryContext(ctx, `SELECT seq, trace_id, source_hash, origin_path, origin_line, actions, bytes, summary, symbols, body_id, import_id,
			coalesce(flags, x''), flags IS NOT NULL
			FROM traces ORDER BY seq`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var r TraceRow
			var symbols []byte
			if err := rows.Scan(&r.Seq, &r.TraceID, &r.SourceHash, &r.OriginPath, &r.OriginLine, &r.Actions, &r.Bytes, &r.Summary, &symbols, &r.BodyID, &r.Import, &r.Flags, &r.HasFlags); err != nil {
				return err
			}
			if len(symbols)%4 != 0 {
				return fmt.Errorf("trace %s: symbol sequence of %d bytes is not a sequence of 4-byte ids", r.TraceID, len(symbols))
			}
			r.Symbols = make([]int32, len(symbols)/4)
			for j := range r.Symbols {
				id, ok := byID[int64(binary.LittleEndian.Uint32(symbols[4*j:]))]
				if !ok {
					return fmt.Errorf("trace %s: action %d has a signature id the store does not hold", r.TraceID, j)
				}
				r.Symbols[j] = id
			}
			idx.Traces = append(idx.Traces, r)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("reading stored traces: %w", err)
	}
	return idx, nil
}

// SetTraceFlags records the action flags of stored traces, by their seq,
// in one transaction: all of them or, on an error, none. A trace that is
// no longer stored (replaced or gone since the caller read it) is
// skipped.
func (s *DB) SetTraceFlags(ctx context.Context, flags map[int64][]byte) error {
	if len(flags) == 0 {
		return nil
	}
	err := s.tx(ctx, func(tx *sql.Tx) error {
		update, err := tx.PrepareContext(ctx, `UPDATE traces SET flags = coalesce(?, x'') WHERE seq = ?`)
		if err != nil {
			return err
		}
		defer update.Close()
		for seq, f := range flags {
			if _, err := update.ExecContext(ctx, f, seq); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("storing action flags: %w", err)
	}
	return nil
}

// bodyBatch is how many bodies one query reads: few enough for SQLite's
// limit on parameters, many enough that a query costs little per body.
const bodyBatch = 256

// TraceBodies returns the bodies with the given ids, in that order.
func (s *DB) TraceBodies(ctx context.Context, ids []int64) ([][]byte, error) {
	out := make([][]byte, len(ids))
	pos := make(map[int64][]int, len(ids))
	for i, id := range ids {
		pos[id] = append(pos[id], i)
	}
	err := s.readTx(ctx, func(tx *sql.Tx) error {
		for start := 0; start < len(ids); start += bodyBatch {
			part := ids[start:min(start+bodyBatch, len(ids))]
			args := make([]any, len(part))
			for i, id := range part {
				args[i] = id
			}
			rows, err := tx.QueryContext(ctx, `SELECT id, body FROM trace_bodies WHERE id IN (`+strings.Repeat(",?", len(part))[1:]+`)`, args...)
			if err != nil {
				return err
			}
			for rows.Next() {
				var id int64
				var body []byte
				if err := rows.Scan(&id, &body); err != nil {
					rows.Close()
					return err
				}
				for _, i := range pos[id] {
					out[i] = body
				}
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading stored traces: %w", err)
	}
	for i, b := range out {
		if b == nil {
			return nil, fmt.Errorf("reading stored traces: body %d is missing", ids[i])
		}
	}
	return out, nil
}

// readTx runs f in a read transaction: a snapshot, under WAL, that
// writers do not disturb.
func (s *DB) readTx(ctx context.Context, f func(*sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return cancelled(ctx, err)
	}
	defer tx.Rollback()
	return cancelled(ctx, f(tx))
}

// TraceImport is one import of traces into the store.
type TraceImport struct {
	ID         int64  `json:"id"`
	Root       string `json:"root"`
	StartedAt  string `json:"started_at"`
	FinishedAt string `json:"finished_at"`
	Status     string `json:"status"`
	Added      int    `json:"added"`
	Replaced   int    `json:"replaced"`
	Known      int    `json:"already_stored"`
}

// TraceImports returns every recorded import, oldest first.
func (s *DB) TraceImports(ctx context.Context) ([]TraceImport, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, root, started_at, finished_at, status, added, replaced, known FROM trace_imports ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("reading imports: %w", err)
	}
	defer rows.Close()
	var list []TraceImport
	for rows.Next() {
		var im TraceImport
		if err := rows.Scan(&im.ID, &im.Root, &im.StartedAt, &im.FinishedAt, &im.Status, &im.Added, &im.Replaced, &im.Known); err != nil {
			return nil, fmt.Errorf("reading imports: %w", err)
		}
		list = append(list, im)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading imports: %w", err)
	}
	return list, nil
}

// TraceSource is a directory traces were imported from, with how many of
// the stored traces came from it.
type TraceSource struct {
	Root   string `json:"root"`
	Traces int    `json:"traces"`
	Bytes  int64  `json:"bytes"`
}

// TraceStats describes the trace store.
type TraceStats struct {
	Traces     int   `json:"traces"`
	Eligible   int   `json:"eligible"`
	Excluded   int   `json:"excluded"`
	Actions    int64 `json:"actions"`
	Signatures int   `json:"signatures"`
	// BodyBytes is the size of the stored trace documents.
	BodyBytes int64 `json:"body_bytes"`
	// FileBytes is the size of the database (pages in use and free);
	// FreeBytes the part of it a gc would give back.
	FileBytes  int64         `json:"file_bytes"`
	FreeBytes  int64         `json:"free_bytes"`
	Imports    int           `json:"imports"`
	Sources    []TraceSource `json:"sources"`
	LastImport *TraceImport  `json:"last_import"`
}

// TraceStats counts what the trace store holds.
func (s *DB) TraceStats(ctx context.Context) (*TraceStats, error) {
	st := &TraceStats{Sources: []TraceSource{}}
	err := s.readTx(ctx, func(tx *sql.Tx) error {
		if err := tx.QueryRowContext(ctx, `SELECT count(*), coalesce(sum(excluded = 0), 0), coalesce(sum(actions), 0), coalesce(sum(bytes), 0) FROM traces`).
			Scan(&st.Traces, &st.Eligible, &st.Actions, &st.BodyBytes); err != nil {
			return err
		}
		st.Excluded = st.Traces - st.Eligible
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM trace_signatures`).Scan(&st.Signatures); err != nil {
			return err
		}
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM trace_imports`).Scan(&st.Imports); err != nil {
			return err
		}
		var pages, free, size int64
		if err := tx.QueryRowContext(ctx, `PRAGMA page_count`).Scan(&pages); err != nil {
			return err
		}
		if err := tx.QueryRowContext(ctx, `PRAGMA freelist_count`).Scan(&free); err != nil {
			return err
		}
		if err := tx.QueryRowContext(ctx, `PRAGMA page_size`).Scan(&size); err != nil {
			return err
		}
		st.FileBytes, st.FreeBytes = pages*size, free*size
		rows, err := tx.QueryContext(ctx, `SELECT i.root, count(*), sum(t.bytes) FROM traces t JOIN trace_imports i ON i.id = t.import_id
			GROUP BY i.root ORDER BY i.root`)
		if err != nil {
			return err
		}
		for rows.Next() {
			var src TraceSource
			if err := rows.Scan(&src.Root, &src.Traces, &src.Bytes); err != nil {
				rows.Close()
				return err
			}
			st.Sources = append(st.Sources, src)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		var last TraceImport
		err = tx.QueryRowContext(ctx, `SELECT id, root, started_at, finished_at, status, added, replaced, known FROM trace_imports ORDER BY id DESC LIMIT 1`).
			Scan(&last.ID, &last.Root, &last.StartedAt, &last.FinishedAt, &last.Status, &last.Added, &last.Replaced, &last.Known)
		switch {
		case err == nil:
			st.LastImport = &last
		case !errors.Is(err, sql.ErrNoRows):
			return err
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading the trace store: %w", err)
	}
	return st, nil
}

// TraceGC is what GCTraces removed and gave back.
type TraceGC struct {
	// Bodies no trace refers to, signatures no stored trace uses,
	// records of imports that did not complete and left no trace, and
	// verdicts of examples whose trace is no longer stored.
	Bodies     int `json:"bodies"`
	Signatures int `json:"signatures"`
	Imports    int `json:"imports"`
	// Verdicts of examples whose trace is no longer stored.
	Verdicts int `json:"verdicts"`
	// BytesBefore and BytesAfter are the database's size (and its
	// write-ahead log's) before and after.
	BytesBefore int64 `json:"bytes_before"`
	BytesAfter  int64 `json:"bytes_after"`
}

// GCTraces removes what no stored trace needs (see TraceGC) in one
// transaction, then checkpoints the write-ahead log and rebuilds the
// database file (VACUUM), which gives the space of deleted rows back to
// the file system. It needs the database to itself for the VACUUM; a
// reader or writer in another process makes it wait (the busy timeout),
// then fail, with nothing lost.
func (s *DB) GCTraces(ctx context.Context) (*TraceGC, error) {
	gc := &TraceGC{}
	var err error
	if gc.BytesBefore, err = s.size(ctx); err != nil {
		return nil, fmt.Errorf("trace store gc: %w", err)
	}
	err = s.tx(ctx, func(tx *sql.Tx) error {
		// Every signature id any sequence uses, read in Go: a sequence is
		// a blob of ids, which SQL cannot look into.
		used := map[uint32]bool{}
		rows, err := tx.QueryContext(ctx, `SELECT symbols FROM traces`)
		if err != nil {
			return err
		}
		for rows.Next() {
			var b []byte
			if err := rows.Scan(&b); err != nil {
				rows.Close()
				return err
			}
			for j := 0; j+4 <= len(b); j += 4 {
				used[binary.LittleEndian.Uint32(b[j:])] = true
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		rows, err = tx.QueryContext(ctx, `SELECT id FROM trace_signatures`)
		if err != nil {
			return err
		}
		var unused []int64
		for rows.Next() {
			var id int64
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return err
			}
			if !used[uint32(id)] {
				unused = append(unused, id)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, id := range unused {
			if _, err := tx.ExecContext(ctx, `DELETE FROM trace_signatures WHERE id = ?`, id); err != nil {
				return err
			}
		}
		gc.Signatures = len(unused)
		r, err := tx.ExecContext(ctx, `DELETE FROM trace_bodies WHERE id NOT IN (SELECT body_id FROM traces)`)
		if err != nil {
			return err
		}
		n, _ := r.RowsAffected()
		gc.Bodies = int(n)
		// Only imports that ended: a running one may not have committed
		// its first batch yet, and removing its record would fail it.
		r, err = tx.ExecContext(ctx, `DELETE FROM trace_imports WHERE status NOT IN (?, ?) AND id NOT IN (SELECT import_id FROM traces)
			AND id NOT IN (SELECT import_id FROM trace_skipped_sessions) AND id NOT IN (SELECT import_id FROM trace_files)`, ImportComplete, ImportRunning)
		if err != nil {
			return err
		}
		n, _ = r.RowsAffected()
		gc.Imports = int(n)
		// A verdict is about a trace's bytes: once no stored trace has
		// them (replaced by a grown session log), it cannot be asked for.
		r, err = tx.ExecContext(ctx, `DELETE FROM trace_verdicts WHERE source_hash NOT IN (SELECT source_hash FROM traces)`)
		if err != nil {
			return err
		}
		n, _ = r.RowsAffected()
		gc.Verdicts = int(n)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("trace store gc: %w", err)
	}
	if _, err := s.db.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		return nil, fmt.Errorf("trace store gc: checkpoint: %w", err)
	}
	if _, err := s.db.ExecContext(ctx, `VACUUM`); err != nil {
		return nil, fmt.Errorf("trace store gc: vacuum: %w", err)
	}
	if _, err := s.db.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		return nil, fmt.Errorf("trace store gc: checkpoint: %w", err)
	}
	if gc.BytesAfter, err = s.size(ctx); err != nil {
		return nil, fmt.Errorf("trace store gc: %w", err)
	}
	return gc, nil
}

// size is the bytes of the database's pages.
func (s *DB) size(ctx context.Context) (int64, error) {
	var pages, size int64
	if err := s.db.QueryRowContext(ctx, `PRAGMA page_count`).Scan(&pages); err != nil {
		return 0, err
	}
	if err := s.db.QueryRowContext(ctx, `PRAGMA page_size`).Scan(&size); err != nil {
		return 0, err
	}
	return pages * size, nil
}

// IntegrityCheck runs SQLite's integrity check and returns its verdict:
// "ok", or the problems it found, one per line.
func (s *DB) IntegrityCheck(ctx context.Context) (string, error) {
	rows, err := s.db.QueryContext(ctx, `PRAGMA integrity_check`)
	if err != nil {
		return "", fmt.Errorf("integrity check: %w", err)
	}
	defer rows.Close()
	var lines []string
	for rows.Next() {
		var l string
		if err := rows.Scan(&l); err != nil {
			return "", fmt.Errorf("integrity check: %w", err)
		}
		lines = append(lines, l)
	}
	if err := rows.Err(); err != nil {
		return "", fmt.Errorf("integrity check: %w", err)
	}
	return strings.Join(lines, "\n"), nil
}

// SkippedSession is a session of an agent's log that an import read but
// that did not become a trace (it made no tool call), as the import
// listed it. Path is the file as the import named it; File is its
// absolute, cleaned path, which identifies it whatever the spelling.
type SkippedSession struct {
	File      string
	Path      string
	Line      int
	Format    string
	SessionID string
	Reason    string
	Message   string
}

// PutSkippedSessions records the sessions import importID skipped, in
// one transaction, each replacing what an earlier import recorded of the
// same session of the same file (by File, or, for a row stored before
// schema 6, by the path it was stored under).
func (s *DB) PutSkippedSessions(ctx context.Context, importID int64, list []SkippedSession) error {
	if len(list) == 0 {
		return nil
	}
	err := s.tx(ctx, func(tx *sql.Tx) error {
		for _, k := range list {
			if k.File == "" {
				return fmt.Errorf("skipped session %s of %s: no absolute path", k.SessionID, k.Path)
			}
			if _, err := tx.ExecContext(ctx, `DELETE FROM trace_skipped_sessions WHERE file = ? AND session_id = ?`, k.Path, k.SessionID); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO trace_skipped_sessions (file, path, line, format, session_id, reason, message, import_id)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, k.File, k.Path, k.Line, k.Format, k.SessionID, k.Reason, k.Message, importID); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("storing skipped sessions: %w", err)
	}
	return nil
}

// SkippedSessions returns every recorded skipped session.
func (s *DB) SkippedSessions(ctx context.Context) ([]SkippedSession, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT file, path, line, format, session_id, reason, message FROM trace_skipped_sessions`)
	if err != nil {
		return nil, fmt.Errorf("reading skipped sessions: %w", err)
	}
	defer rows.Close()
	var list []SkippedSession
	for rows.Next() {
		var k SkippedSession
		if err := rows.Scan(&k.File, &k.Path, &k.Line, &k.Format, &k.SessionID, &k.Reason, &k.Message); err != nil {
			return nil, fmt.Errorf("reading skipped sessions: %w", err)
		}
		list = append(list, k)
	}
	return list, rows.Err()
}
