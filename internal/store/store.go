// Package store is crystallize's embedded database: SQLite in pure Go
// (modernc.org/sqlite, no cgo), by default at .crystallize/state.db.
//
// Everything in it is derived from plain files and can be rebuilt from
// them; the files stay the interface. The schema is versioned: a
// schema_version table records how many of the migrations have run, and
// Open runs the rest in one transaction each, so an old database is
// brought up to date and a new one is created from nothing the same way.
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"modernc.org/sqlite" // registers the "sqlite" driver
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/crystallize-dev/crystallize/internal/atomicfile"
)

// DefaultPath is where the database lives unless a command is told
// otherwise, relative to the working directory.
const DefaultPath = ".crystallize/state.db"

// migrations are the schema's steps, in order; migrations[i] takes the
// schema from version i to i+1. A released step is never edited: a
// change is a new step, so that every existing database can follow it.
var migrations = []string{
	`CREATE TABLE sessions (
		path       TEXT PRIMARY KEY,
		sha256     TEXT NOT NULL,
		mtime      INTEGER NOT NULL,
		session_id TEXT NOT NULL,
		status     TEXT NOT NULL,
		started    TEXT NOT NULL,
		ended      TEXT NOT NULL,
		model      TEXT NOT NULL,
		tokens     INTEGER NOT NULL,
		title      TEXT NOT NULL
	);
	CREATE TABLE callouts (
		session_path TEXT NOT NULL REFERENCES sessions(path) ON DELETE CASCADE,
		position     INTEGER NOT NULL,
		phase        TEXT NOT NULL,
		type         TEXT NOT NULL,
		title        TEXT NOT NULL,
		body         TEXT NOT NULL,
		PRIMARY KEY (session_path, position)
	);
	CREATE INDEX callouts_type ON callouts(type);`,
	// Harness evidence (see harness.go): profile snapshots, untracked-file
	// observations, the run ledger, drift events, judge calibrations and
	// retained lessons. Bodies are JSON documents owned by package
	// harness; the columns are what queries select on.
	`CREATE TABLE harness_profiles (
		seq          INTEGER PRIMARY KEY AUTOINCREMENT,
		profile_id   TEXT NOT NULL,
		project_hash TEXT NOT NULL,
		created_at   TEXT NOT NULL,
		accepted     INTEGER NOT NULL DEFAULT 0,
		body         TEXT NOT NULL
	);
	CREATE INDEX harness_profiles_project ON harness_profiles(project_hash, seq);
	CREATE TABLE harness_observations (
		project_hash  TEXT NOT NULL,
		path          TEXT NOT NULL,
		git_status    TEXT NOT NULL,
		ownership     TEXT NOT NULL,
		content_hash  TEXT NOT NULL,
		size_bytes    INTEGER NOT NULL,
		first_seen_at TEXT NOT NULL,
		last_seen_at  TEXT NOT NULL,
		PRIMARY KEY (project_hash, path)
	);
	CREATE TABLE harness_runs (
		seq           INTEGER PRIMARY KEY AUTOINCREMENT,
		run_id        TEXT NOT NULL UNIQUE,
		project_hash  TEXT NOT NULL,
		profile_id    TEXT NOT NULL,
		manifest_hash TEXT NOT NULL,
		phase         TEXT NOT NULL,
		started_at    TEXT NOT NULL,
		finished_at   TEXT NOT NULL,
		passed        INTEGER NOT NULL,
		report_path   TEXT NOT NULL
	);
	CREATE TABLE harness_cases (
		run_id   TEXT NOT NULL REFERENCES harness_runs(run_id) ON DELETE CASCADE,
		suite_id TEXT NOT NULL,
		case_id  TEXT NOT NULL,
		passed   INTEGER NOT NULL,
		blocking INTEGER NOT NULL,
		PRIMARY KEY (run_id, suite_id, case_id)
	);
	CREATE TABLE harness_results (
		run_id      TEXT NOT NULL REFERENCES harness_runs(run_id) ON DELETE CASCADE,
		subject     TEXT NOT NULL,
		position    INTEGER NOT NULL,
		type        TEXT NOT NULL,
		passed      INTEGER NOT NULL,
		blocking    INTEGER NOT NULL,
		score       REAL NOT NULL,
		message     TEXT NOT NULL,
		output_path TEXT NOT NULL,
		PRIMARY KEY (run_id, subject, position)
	);
	CREATE TABLE harness_drift (
		seq          INTEGER PRIMARY KEY AUTOINCREMENT,
		project_hash TEXT NOT NULL,
		detected_at  TEXT NOT NULL,
		kind         TEXT NOT NULL,
		subject      TEXT NOT NULL,
		detail       TEXT NOT NULL
	);
	CREATE TABLE harness_calibrations (
		seq         INTEGER PRIMARY KEY AUTOINCREMENT,
		suite_id    TEXT NOT NULL,
		config_hash TEXT NOT NULL,
		created_at  TEXT NOT NULL,
		promoted    INTEGER NOT NULL,
		body        TEXT NOT NULL
	);
	CREATE TABLE harness_lessons (
		id           TEXT PRIMARY KEY,
		project_hash TEXT NOT NULL,
		body         TEXT NOT NULL
	);`,
	// 3: the live registry of runs (see registry.go) and the inbox of
	// what they ask or tell a person.
	`CREATE TABLE live_sessions (
		session_id TEXT PRIMARY KEY,
		workspace  TEXT NOT NULL,
		state_dir  TEXT NOT NULL,
		agent_type TEXT NOT NULL,
		name       TEXT NOT NULL,
		status     TEXT NOT NULL,
		pid        INTEGER NOT NULL,
		started    INTEGER NOT NULL,
		heartbeat  INTEGER NOT NULL,
		ended      INTEGER NOT NULL DEFAULT 0
	);
	CREATE INDEX live_sessions_status ON live_sessions(status);
	CREATE TABLE inbox (
		id          INTEGER PRIMARY KEY AUTOINCREMENT,
		session_id  TEXT NOT NULL,
		type        TEXT NOT NULL,
		step        INTEGER NOT NULL,
		boundary    TEXT NOT NULL,
		text        TEXT NOT NULL,
		options     TEXT NOT NULL,
		created     INTEGER NOT NULL,
		answered    INTEGER NOT NULL DEFAULT 0,
		answer      TEXT NOT NULL DEFAULT '',
		reason      TEXT NOT NULL DEFAULT '',
		answered_at INTEGER NOT NULL DEFAULT 0
	);
	CREATE INDEX inbox_open ON inbox(answered, id);
	CREATE INDEX inbox_session ON inbox(session_id);`,
	// 4: the trace store (see traces.go): imports, the signature table,
	// one small row per trace and the trace documents apart, so that
	// reading every trace's symbols does not read the documents.
	`CREATE TABLE trace_imports (
		id          INTEGER PRIMARY KEY AUTOINCREMENT,
		root        TEXT NOT NULL,
		started_at  TEXT NOT NULL,
		finished_at TEXT NOT NULL DEFAULT '',
		status      TEXT NOT NULL,
		added       INTEGER NOT NULL DEFAULT 0,
		replaced    INTEGER NOT NULL DEFAULT 0,
		known       INTEGER NOT NULL DEFAULT 0
	);
	CREATE TABLE trace_signatures (
		id        INTEGER PRIMARY KEY,
		signature TEXT NOT NULL UNIQUE
	);
	CREATE TABLE trace_bodies (
		id   INTEGER PRIMARY KEY,
		body BLOB NOT NULL
	);
	CREATE TABLE traces (
		seq         INTEGER PRIMARY KEY AUTOINCREMENT,
		trace_id    TEXT NOT NULL UNIQUE,
		source_hash TEXT NOT NULL,
		origin_path TEXT NOT NULL,
		origin_line INTEGER NOT NULL,
		actions     INTEGER NOT NULL,
		bytes       INTEGER NOT NULL,
		excluded    INTEGER NOT NULL,
		summary     TEXT NOT NULL,
		symbols     BLOB NOT NULL,
		body_id     INTEGER NOT NULL REFERENCES trace_bodies(id),
		import_id   INTEGER NOT NULL REFERENCES trace_imports(id),
		replaced    INTEGER NOT NULL,
		UNIQUE (source_hash, trace_id)
	);
	CREATE INDEX traces_import ON traces(import_id);
	CREATE TABLE trace_skipped_sessions (
		path       TEXT NOT NULL,
		line       INTEGER NOT NULL,
		format     TEXT NOT NULL,
		session_id TEXT NOT NULL,
		reason     TEXT NOT NULL,
		message    TEXT NOT NULL,
		import_id  INTEGER NOT NULL REFERENCES trace_imports(id),
		PRIMARY KEY (path, session_id)
	);`,
	// 5: each trace's action flags (what the gapped miner needs of an
	// action besides its signature, one byte per action), so that the
	// gapped miner, like the exact one, mines the store without decoding
	// it. NULL for the traces stored before: tracestore computes theirs
	// once, the first time it mines them (SetTraceFlags).
	`ALTER TABLE traces ADD COLUMN flags BLOB;`,
	// 6: the files imports read (trace_files: size and modification time,
	// so that an import skips a file that did not change without reading
	// it), the process of each import (pid, so that one whose process is
	// gone is not left running), and skipped sessions keyed by their
	// file's absolute path (file) rather than the path as an import named
	// it, which two spellings of one directory made two rows. Rows kept
	// from before are keyed by the path they were stored under.
	`CREATE TABLE trace_files (
		path        TEXT PRIMARY KEY,
		root        TEXT NOT NULL,
		rel         TEXT NOT NULL,
		size        INTEGER NOT NULL,
		mtime       INTEGER NOT NULL,
		source_hash TEXT NOT NULL,
		import_id   INTEGER NOT NULL REFERENCES trace_imports(id)
	);
	ALTER TABLE trace_imports ADD COLUMN pid INTEGER NOT NULL DEFAULT 0;
	CREATE TABLE trace_skipped_sessions_6 (
		file       TEXT NOT NULL,
		path       TEXT NOT NULL,
		line       INTEGER NOT NULL,
		format     TEXT NOT NULL,
		session_id TEXT NOT NULL,
		reason     TEXT NOT NULL,
		message    TEXT NOT NULL,
		import_id  INTEGER NOT NULL REFERENCES trace_imports(id),
		PRIMARY KEY (file, session_id)
	);
	INSERT INTO trace_skipped_sessions_6 SELECT path, path, line, format, session_id, reason, message, import_id FROM trace_skipped_sessions;
	DROP TABLE trace_skipped_sessions;
	ALTER TABLE trace_skipped_sessions_6 RENAME TO trace_skipped_sessions;`,
	// 7: per-example verdicts kept across mines (see verdicts.go): the
	// example of a candidate, by the candidate's content fingerprint, the
	// example trace's source hash and where the example starts in it;
	// whether it passed, and the example as the report lists it (opaque
	// here). Looked up a candidate at a time; removed by source hash when
	// the trace goes.
	`CREATE TABLE trace_verdicts (
		candidate   TEXT NOT NULL,
		source_hash TEXT NOT NULL,
		start_index INTEGER NOT NULL,
		passed      INTEGER NOT NULL,
		example     BLOB NOT NULL,
		PRIMARY KEY (candidate, source_hash, start_index)
	) WITHOUT ROWID;
	CREATE INDEX trace_verdicts_source ON trace_verdicts(source_hash);`,
	// 8: what identifies an import's process beyond its id, which the
	// system reuses (see proc.Start): a live process with the id but
	// another start is another process, and the import's is gone. ''
	// where it could not be read, and for imports recorded before.
	`ALTER TABLE trace_imports ADD COLUMN process_start TEXT NOT NULL DEFAULT '';`,
	// 9: the action flags gained two bits (side effects, approval
	// required: what the gap rule reads), which the flags stored before
	// lack, and a miner reading them would let any action sit between
	// two steps. They are cleared, so tracestore computes them anew the
	// first time it mines those traces, as for traces stored before 5.
	// (A read-only open of a schema 8 store mines them as stored.)
	`UPDATE traces SET flags = NULL WHERE excluded = 0;`,
	// 10: who a live session is, for the status line: the git branch of
	// its workspace, the agent behind it and its model ('' where not
	// known, and for sessions registered before). Read-only opens (the
	// trace store) never read the registry, so readOnlyVersion stays.
	`ALTER TABLE live_sessions ADD COLUMN branch TEXT NOT NULL DEFAULT '';
	ALTER TABLE live_sessions ADD COLUMN agent TEXT NOT NULL DEFAULT '';
	ALTER TABLE live_sessions ADD COLUMN model TEXT NOT NULL DEFAULT '';`,
	// 11: questions an agent outside crystallize asks a person
	// (registry.Agents): who answered an item, and the option a question
	// takes when nobody answers it by its deadline (Unix milliseconds; 0
	// is none). Items posted before have neither.
	`ALTER TABLE inbox ADD COLUMN answered_by TEXT NOT NULL DEFAULT '';
	ALTER TABLE inbox ADD COLUMN default_option TEXT NOT NULL DEFAULT '';
	ALTER TABLE inbox ADD COLUMN deadline INTEGER NOT NULL DEFAULT 0;`,
}

// Version is the schema version Open brings a database to.
var Version = len(migrations)

// readOnlyVersion is the oldest schema OpenReadOnly reads, which it cannot
// migrate: every migration after it adds only what writes use (8: the
// process start of imports), so what reads select is there. A migration
// that adds something reads select raises it to its own version.
const readOnlyVersion = 7

// ErrNewerSchema is returned by Open for a database written by a newer
// crystallize, whose schema this one does not know.
var ErrNewerSchema = errors.New("database schema is newer than this crystallize")

// ErrReadOnly is wrapped by the error of a write to a database this
// process may not write: opened with OpenReadOnly, or one whose file or
// directory turned out read-only when SQLite tried to write (a read-only
// file system, a shared copy).
var ErrReadOnly = errors.New("the database is read-only")

// DB is an open database. It is safe for concurrent use, as sql.DB is.
type DB struct {
	db *sql.DB
	// readOnly is set when the database was opened read-only or a write
	// to it failed because it cannot be written: a caller that writes
	// only to save work later (remembered verdicts, the record of a
	// killed import) skips that write and says so once (ReadOnly).
	readOnly atomic.Bool
}

// ReadOnly reports whether the database cannot be written: opened with
// OpenReadOnly, or a write to it failed for that reason.
func (s *DB) ReadOnly() bool { return s.readOnly.Load() }

// isReadOnly reports whether err is SQLite's refusal to write: the file,
// its directory (where the write-ahead log would go) or the file system
// is read-only, or the connection was opened read-only.
func isReadOnly(err error) bool {
	var e *sqlite.Error
	return errors.As(err, &e) && e.Code()&0xff == sqlite3.SQLITE_READONLY
}

// writeErr marks the database read-only when err says it cannot be
// written, and wraps ErrReadOnly into err then, so that callers can tell
// this failure from others.
func (s *DB) writeErr(err error) error {
	if err == nil || errors.Is(err, ErrReadOnly) || !isReadOnly(err) {
		return err
	}
	s.readOnly.Store(true)
	return fmt.Errorf("%w: %w", ErrReadOnly, err)
}

// Open opens the database at path, creating it and its directory when
// they do not exist, and migrates it to Version. ":memory:" opens a
// private in-memory database.
func Open(ctx context.Context, path string) (*DB, error) {
	dsn := path
	if path != ":memory:" {
		if dir := filepath.Dir(path); dir != "." {
			// The directory is crystallize's own: kept out of git.
			if err := atomicfile.MkdirUntracked(dir); err != nil {
				return nil, fmt.Errorf("opening database: %w", err)
			}
		}
		dsn = "file:" + filepath.ToSlash(path)
	}
	// Foreign keys make deleting a session delete its callouts; the busy
	// timeout lets commands share the file instead of failing at once. It
	// is generous because a loaded machine running many registered runs
	// at once (each writing heartbeats and inbox items) can hold the
	// write lock in turn for seconds; an uncontended command never waits.
	dsn += "?_pragma=foreign_keys(1)&_pragma=busy_timeout(20000)"
	if path != ":memory:" {
		// Every run writes its heartbeat here while others read the
		// registry: write-ahead logging lets readers go on while one
		// process writes. Transactions begin IMMEDIATE, taking the write
		// lock up front, so that a transaction that reads and then
		// writes waits its turn under the busy timeout instead of
		// failing when another writer got there between the two.
		dsn += "&_pragma=journal_mode(WAL)&_txlock=immediate"
	}
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("opening database %s: %w", path, err)
	}
	// One connection: an in-memory database is per connection, and SQLite
	// serializes writers anyway.
	db.SetMaxOpenConns(1)
	s := &DB{db: db}
	if err := s.migrateWaiting(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("opening database %s: %w", path, err)
	}
	return s, nil
}

// migrateWaiting migrates, trying again while the database is busy.
// Switching a new database to write-ahead logging takes an exclusive lock
// that SQLite does not wait for under the busy timeout: several processes
// creating the same state directory at once (runs started together) would
// otherwise fail at once with "database is locked". The wait is bounded by
// the same 20 seconds as the busy timeout.
func (s *DB) migrateWaiting(ctx context.Context) error {
	deadline := time.Now().Add(20 * time.Second)
	for pause := time.Millisecond; ; pause = min(2*pause, 100*time.Millisecond) {
		err := s.migrate(ctx)
		if err == nil || !isBusy(err) || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(pause):
		}
	}
}

// isBusy reports whether err is SQLite's "database is locked".
func isBusy(err error) bool {
	var e *sqlite.Error
	return errors.As(err, &e) && e.Code()&0xff == sqlite3.SQLITE_BUSY
}

// OpenReadOnly opens the existing database at path without writing
// anything to it or beside it: for a state directory this process may
// only read (a shared copy, a read-only mount). It neither creates nor
// migrates: a database of a schema older than reads need
// (readOnlyVersion) is an error saying to open it once where it can be
// written, one of a newer schema ErrNewerSchema.
// Every write to it fails with ErrReadOnly.
//
// A database in write-ahead-log mode is read through its shared-memory
// index (path-shm), which SQLite creates beside it when missing; where the
// directory is read-only it cannot, and the database is then opened as
// immutable (SQLite reads the file alone, with no locks). That is only
// right when the log holds nothing the file lacks: a non-empty log beside
// it (a writer that has not checkpointed, or one that crashed) is an
// error instead, rather than a silently older corpus.
func OpenReadOnly(ctx context.Context, path string) (*DB, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("opening database: %w", err)
	}
	base := "file:" + filepath.ToSlash(path) + "?mode=ro&_pragma=foreign_keys(1)&_pragma=busy_timeout(20000)"
	s, err := openReadOnly(ctx, base)
	if err != nil && isReadOnly(err) {
		if fi, werr := os.Stat(path + "-wal"); werr == nil && fi.Size() > 0 {
			return nil, fmt.Errorf("opening database %s read-only: its write-ahead log %s holds changes not yet in the file, and the directory cannot be written to read them: open it once where it can be written", path, path+"-wal")
		}
		s, err = openReadOnly(ctx, "file:"+filepath.ToSlash(path)+"?mode=ro&immutable=1&_pragma=foreign_keys(1)")
	}
	if err != nil {
		return nil, fmt.Errorf("opening database %s read-only: %w", path, err)
	}
	return s, nil
}

func openReadOnly(ctx context.Context, dsn string) (*DB, error) {
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	s := &DB{db: db}
	s.readOnly.Store(true)
	var v int
	if err := db.QueryRowContext(ctx, `SELECT version FROM schema_version`).Scan(&v); err != nil {
		db.Close()
		return nil, fmt.Errorf("schema version: %w", err)
	}
	switch {
	case v > len(migrations):
		db.Close()
		return nil, fmt.Errorf("version %d: %w (knows %d)", v, ErrNewerSchema, len(migrations))
	case v < readOnlyVersion:
		db.Close()
		return nil, fmt.Errorf("schema version %d is older than this crystallize reads (%d) and a read-only database cannot be migrated: open it once where it can be written", v, readOnlyVersion)
	}
	return s, nil
}

// Close closes the database.
func (s *DB) Close() error { return s.db.Close() }

func (s *DB) migrate(ctx context.Context) error {
	// Creating the version table, reading the version and running the
	// steps is one IMMEDIATE transaction: several processes opening a new
	// database at once (runs started together) must not each see version
	// 0 and run the same step twice, and a statement that would read
	// before it writes outside a transaction could not wait its turn.
	return s.tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)`); err != nil {
			return fmt.Errorf("schema version: %w", err)
		}
		var v int
		err := tx.QueryRowContext(ctx, `SELECT version FROM schema_version`).Scan(&v)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			if _, err := tx.ExecContext(ctx, `INSERT INTO schema_version VALUES (0)`); err != nil {
				return fmt.Errorf("schema version: %w", err)
			}
		case err != nil:
			return fmt.Errorf("schema version: %w", err)
		}
		if v > len(migrations) {
			return fmt.Errorf("version %d: %w (knows %d)", v, ErrNewerSchema, len(migrations))
		}
		for ; v < len(migrations); v++ {
			if _, err := tx.ExecContext(ctx, migrations[v]); err != nil {
				return fmt.Errorf("migration %d: %w", v+1, err)
			}
			if _, err := tx.ExecContext(ctx, `UPDATE schema_version SET version = ?`, v+1); err != nil {
				return fmt.Errorf("migration %d: %w", v+1, err)
			}
		}
		return nil
	})
}

// tx runs f in a write transaction, committing when it returns nil. A
// database that cannot be written fails it with ErrReadOnly (see
// writeErr): on a read-only one, before it begins.
func (s *DB) tx(ctx context.Context, f func(*sql.Tx) error) error {
	if s.readOnly.Load() {
		return ErrReadOnly
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return s.writeErr(cancelled(ctx, err))
	}
	if err := f(tx); err != nil {
		tx.Rollback()
		return s.writeErr(cancelled(ctx, err))
	}
	return s.writeErr(cancelled(ctx, tx.Commit()))
}

// cancelled returns the error of a transaction that failed: its context's
// when that is done. database/sql rolls back a transaction whose context
// ends, on a goroutine of its own, and closes its statements; the
// statement or rows the transaction uses next then fail with "sql:
// statement is closed" or "sql: Rows are closed", which do not say why.
// The transaction was rolled back whole either way.
func cancelled(ctx context.Context, err error) error {
	if err == nil || ctx.Err() == nil || errors.Is(err, ctx.Err()) {
		return err
	}
	return fmt.Errorf("%w (%v)", ctx.Err(), err)
}

// Session is one row of the sessions table: a session log file.
type Session struct {
	Path      string `json:"path"` // relative to the indexed directory, with "/"
	SHA256    string `json:"sha256"`
	MTime     int64  `json:"mtime"` // Unix nanoseconds
	SessionID string `json:"session_id"`
	Status    string `json:"status"`
	Started   string `json:"started"` // RFC 3339 as written, or ""
	Ended     string `json:"ended"`
	Model     string `json:"model"`
	Tokens    int64  `json:"tokens"`
	Title     string `json:"title"`
}

// Callout is one row of the callouts table: a callout of a session,
// Position counting the session's callouts from 0 in document order.
type Callout struct {
	SessionPath string `json:"path"`
	Position    int    `json:"position"`
	Phase       string `json:"phase"` // phase id, "" for the preamble
	Type        string `json:"type"`  // lowercased
	Title       string `json:"title"`
	Body        string `json:"body"`
}

// Hashes returns the sha256 of every indexed path.
func (s *DB) Hashes(ctx context.Context) (map[string]string, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT path, sha256 FROM sessions`)
	if err != nil {
		return nil, fmt.Errorf("reading sessions: %w", err)
	}
	defer rows.Close()
	m := map[string]string{}
	for rows.Next() {
		var p, h string
		if err := rows.Scan(&p, &h); err != nil {
			return nil, fmt.Errorf("reading sessions: %w", err)
		}
		m[p] = h
	}
	return m, rows.Err()
}

// Put replaces the session at sess.Path and its callouts, in one
// transaction.
func (s *DB) Put(ctx context.Context, sess Session, callouts []Callout) error {
	err := s.tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM sessions WHERE path = ?`, sess.Path); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO sessions (path, sha256, mtime, session_id, status, started, ended, model, tokens, title)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			sess.Path, sess.SHA256, sess.MTime, sess.SessionID, sess.Status, sess.Started, sess.Ended, sess.Model, sess.Tokens, sess.Title)
		if err != nil {
			return err
		}
		for _, c := range callouts {
			_, err := tx.ExecContext(ctx, `INSERT INTO callouts (session_path, position, phase, type, title, body) VALUES (?, ?, ?, ?, ?, ?)`,
				sess.Path, c.Position, c.Phase, c.Type, c.Title, c.Body)
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("storing session %s: %w", sess.Path, err)
	}
	return nil
}

// Delete removes the session at path and its callouts; a path not in the
// index is not an error.
func (s *DB) Delete(ctx context.Context, path string) error {
	if _, err := s.db.ExecContext(ctx, `DELETE FROM sessions WHERE path = ?`, path); err != nil {
		return fmt.Errorf("deleting session %s: %w", path, err)
	}
	return nil
}

// sessionOrder is newest first: by started, then by path so that sessions
// without a start time still come in a stable order.
const sessionOrder = ` ORDER BY s.started DESC, s.path`

const sessionCols = `s.path, s.sha256, s.mtime, s.session_id, s.status, s.started, s.ended, s.model, s.tokens, s.title`

// Sessions returns every indexed session, newest first.
func (s *DB) Sessions(ctx context.Context) ([]Session, error) {
	return s.sessions(ctx, `SELECT `+sessionCols+` FROM sessions s`+sessionOrder)
}

// Search returns the sessions whose session id or title, or one of whose
// callouts' title or body, contains query, ignoring ASCII case; newest
// first.
func (s *DB) Search(ctx context.Context, query string) ([]Session, error) {
	like := "%" + escapeLike(query) + "%"
	return s.sessions(ctx, `SELECT `+sessionCols+` FROM sessions s
		WHERE s.session_id LIKE ?1 ESCAPE '\' OR s.title LIKE ?1 ESCAPE '\'
		OR EXISTS (SELECT 1 FROM callouts c WHERE c.session_path = s.path
			AND (c.title LIKE ?1 ESCAPE '\' OR c.body LIKE ?1 ESCAPE '\'))`+sessionOrder, like)
}

// escapeLike makes q match itself in a LIKE pattern with ESCAPE '\'.
func escapeLike(q string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return r.Replace(q)
}

func (s *DB) sessions(ctx context.Context, query string, args ...any) ([]Session, error) {
	rows, err := s.db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("reading sessions: %w", err)
	}
	defer rows.Close()
	list := []Session{}
	for rows.Next() {
		var r Session
		if err := rows.Scan(&r.Path, &r.SHA256, &r.MTime, &r.SessionID, &r.Status, &r.Started, &r.Ended, &r.Model, &r.Tokens, &r.Title); err != nil {
			return nil, fmt.Errorf("reading sessions: %w", err)
		}
		list = append(list, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading sessions: %w", err)
	}
	return list, nil
}

// Item is a callout with the session it came from.
type Item struct {
	Session Session
	Callout Callout
}

// Callouts returns the callouts of the given types (lowercase) across all
// sessions: newest session first, then in document order.
func (s *DB) Callouts(ctx context.Context, types []string) ([]Item, error) {
	if len(types) == 0 {
		return []Item{}, nil
	}
	marks := strings.Repeat(", ?", len(types))[2:]
	args := make([]any, len(types))
	for i, t := range types {
		args[i] = t
	}
	rows, err := s.db.QueryContext(ctx, `SELECT `+sessionCols+`, c.position, c.phase, c.type, c.title, c.body
		FROM callouts c JOIN sessions s ON s.path = c.session_path
		WHERE c.type IN (`+marks+`)`+sessionOrder+`, c.position`, args...)
	if err != nil {
		return nil, fmt.Errorf("reading callouts: %w", err)
	}
	defer rows.Close()
	list := []Item{}
	for rows.Next() {
		var it Item
		r, c := &it.Session, &it.Callout
		if err := rows.Scan(&r.Path, &r.SHA256, &r.MTime, &r.SessionID, &r.Status, &r.Started, &r.Ended, &r.Model, &r.Tokens, &r.Title,
			&c.Position, &c.Phase, &c.Type, &c.Title, &c.Body); err != nil {
			return nil, fmt.Errorf("reading callouts: %w", err)
		}
		c.SessionPath = r.Path
		list = append(list, it)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading callouts: %w", err)
	}
	return list, nil
}
