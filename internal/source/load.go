package source

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/crystallize-dev/crystallize/internal/normalize"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// DefaultMaxFileBytes is the size limit of one trace document (a *.json
// file, or a line of a *.jsonl file) when Options.MaxFileBytes is zero: far
// above any real trace, low enough that a stray dump in the directory
// cannot exhaust memory.
const DefaultMaxFileBytes = 64 << 20

// Options configures Load. The zero value is the documented default.
type Options struct {
	// SkipInvalid makes Load return the valid traces and list the bad
	// files and lines in Result.Skipped, instead of failing.
	SkipInvalid bool
	// MaxFileBytes is the size limit of one trace document: of a *.json
	// file, which is read whole, and of each line of a *.jsonl file, which
	// is read as a stream, one line at a time, so that the file itself
	// has no size limit. A larger file, or line, is an error naming it,
	// and costs no memory: Load reads on past an oversized line to the
	// next one. Zero means DefaultMaxFileBytes.
	MaxFileBytes int64
	// Progress, if not nil, is called as the load advances with the units
	// of work done and the total. A *.json file is one unit, and so is a
	// *.jsonl file of up to 256 KiB; a larger *.jsonl file is one unit per
	// started MiB, counted as its records are decoded, so that a load of
	// one multi-gigabyte file shows progress too. done grows with each
	// call and reaches total at the end of the load. Progress is called
	// from the goroutine that called Load, never concurrently, so it may
	// draw on a terminal.
	Progress func(done, total int)
	// Found, if not nil, is called once the directory has been walked and
	// before anything is decoded, with the number of trace files and
	// their total size in bytes, so a caller can size its work (the
	// command line sets its memory limit from it).
	Found func(files int, bytes int64)
	// Rules is the normalization table that turns the tool calls of agent
	// session logs into actions. Nil means normalize.Default().
	Rules *normalize.Rules
	// Known, if not nil, is asked by Scan for the source hash of each
	// crystallization trace document before it is decoded; a document it
	// reports as known is neither decoded nor visited, only counted in
	// ScanResult.Known. A trace store uses it to read only what it does
	// not hold yet. It is called concurrently. Load does not use it.
	Known func(sourceHash string) bool
	// Unchanged, if not nil, is asked by Load and Scan for each trace
	// file the walk finds, with its size and modification time, before
	// anything is read: a file it reports unchanged is not opened, only
	// counted in Result.Unchanged (ScanResult.Unchanged). A trace store
	// uses it to skip the files an earlier import read. It is called on
	// the goroutine that called Load or Scan.
	Unchanged func(FileStat) bool
	// Summarize, when set, makes Load keep of each trace of an agent
	// session only its summary, which Summarize makes of the decoded
	// trace as soon as it is decoded, and a thin copy of the trace (see
	// thinTrace): enough to tell copies apart, to hold sessions out and
	// to name them, not to mine or replay them. Result.Summaries has the
	// summaries and Result.Reread decodes the traces again. A load in
	// which a session is cut to its own calls or named as a part (which
	// a summary of the whole session would not tell) fails with
	// ErrThinChanged. Scan does not use it.
	Summarize func(*trace.Trace) any
}

// Result is what Load found.
type Result struct {
	// Traces are the valid traces, ordered by file path, then line.
	Traces []*trace.Trace
	// Skipped lists the bad files and lines, ordered by path, then line.
	// Without Options.SkipInvalid it lists only the lines of session
	// logs that are not JSON, which are passed over in any case (the
	// rest of their file is read); a load with other bad input fails.
	Skipped []Skipped
	// Notes list what the load read past without counting it and that
	// is no error (see Note), ordered by path, then line.
	Notes []Note
	// SkippedSessions lists the sessions of agent logs that did not
	// become traces, with a reason (ReasonNoToolCalls), ordered by path,
	// then line. They are not errors, and are listed whether or not
	// Options.SkipInvalid is set.
	SkippedSessions []SkippedSession
	// Files is the number of *.json and *.jsonl files read.
	Files int
	// Read are those files, in path order; Unchanged counts the files
	// Options.Unchanged left out.
	Read      []FileStat
	Unchanged int
	// Summaries, with Options.Summarize, holds at index i the summary
	// of Traces[i] when that is a thin session trace, nil otherwise,
	// until ReleaseThin.
	Summaries []any
	// reread decodes the files of thin traces again (see Reread), and
	// spooled says where in its spool each of Traces is.
	reread  *rereader
	spooled []spoolRef
	thin    []bool // Traces[i] is a thin session trace
}

// Skipped is a file, or one line of a JSON Lines file, that Load left out
// because of the listed errors.
type Skipped struct {
	// Path is the file as errors show it: the loaded directory joined
	// with the path below it.
	Path string
	// Line is the 1-based line of a JSON Lines record, or 0.
	Line int
	// Errors are the full messages, as they would be printed
	// ("runs/a.json: $.actions[0].kind: missing required field").
	Errors []string
}

// file is one trace file found under the directory.
type file struct {
	rel     string // slash path relative to the directory: Origin.Path
	display string // filepath.Join(dir, rel): the name in messages
	open    string // the path to read; for a symlink, its resolved target
	lines   bool   // JSON Lines: one trace per non-blank line
	size    int64  // the size when found; for JSON Lines it decides how the file is read
	path    string // the walked path: the resolved directory joined with rel
	mtime   int64  // the modification time when found, Unix nanoseconds
	// home is set for a file of an agent's home directory outside its
	// session directories (see agentHome): the name of the agent, and
	// the directories its sessions are in. Such a file is read as a
	// session log when it is one, and otherwise passed over with a
	// note, not decoded as a trace.
	home *agentHome
	// inHome is set for every file of an agent's home, its session
	// logs among them: an empty file there is one the agent left
	// behind, noted, not a broken trace.
	inHome bool
}

// entry is the outcome for one document or session: a trace, its errors,
// or the reason a session was left out.
type entry struct {
	line    int
	trace   *trace.Trace
	errs    trace.ErrorList
	skipped *SkippedSession
	// passed are the problems of a line read past whatever
	// Options.SkipInvalid says (a line of a session log that is not
	// JSON), listed in Result.Skipped.
	passed trace.ErrorList
	note   *Note
	// summary is what Options.Summarize made of a session's trace
	// before the trace was thinned, spooled where the whole trace was
	// written, and calls its actions as dropCopies compares them.
	summary any
	spooled spoolRef
	calls   []thinCall
	// session is set for the trace of an agent session, which
	// dropCopies compares with the others.
	session bool
}

// Load reads every trace under dir: each *.json file is one document, each
// non-blank line of a *.jsonl file is one, and each document is decoded by
// the adapter that recognizes its format (see DecodeDocument). Files are
// taken in path order, from the whole tree below dir, and the traces come
// back in that order, then by line, whatever the parallelism. Each trace
// gets its Origin (path relative to dir, line for JSON Lines), Source (the
// origin as text) and SourceHash (trace.HashBytes of the file's bytes, or
// of the line's bytes without its line ending), and is normalized with
// trace.Normalize.
//
// Agent session logs are files, not lines: when one of the first records
// of a *.jsonl file (or the document of a *.json file) is claimed by one
// of the SessionAdapters, every record of the file goes to that adapter,
// which returns one trace per session, in the order of the sessions in the
// file. A session's Origin is its file and first line, and its SourceHash
// covers its own records (HashRecords). Its tool calls are normalized with
// Options.Rules. A session without tool calls is listed in
// Result.SkippedSessions, never an error. A line of a session log that is
// not JSON is listed in Result.Skipped and the rest of the file read. A
// session that repeats another is dropped or cut to its own calls
// (dropCopies), and the same session log found twice is read once; both
// are listed in Result.Notes, with the files of an agent's home directory
// that are not session logs and its empty files. A session written to
// several files that share no call (a Gemini CLI chat that started over)
// is a trace per file, the later ones named as its parts (nameParts).
//
// dir may also be a *.json or *.jsonl file, read as the only file of its
// directory and named as given.
//
// Messages name files as filepath.Join(dir, relative path), so that they
// read as the user typed the directory: "runs/a.json: $.actions[2]: …".
//
// Load refuses what could make it read outside dir or without bound, each
// as an error naming the file: a *.json file larger than
// Options.MaxFileBytes (checked before reading, and the read is bounded
// too), a symlink whose target resolves outside dir, a symlink to a
// directory (not followed, so a link cannot loop or escape), and a file
// that is not a regular file. A *.jsonl file is read as a stream and has
// no size limit of its own; its lines do: a line larger than
// Options.MaxFileBytes, even a blank one, is an error at that line, read
// past without being kept, and the lines after it load as usual. A trace
// id used twice in the load is an error at the later occurrence, naming
// the earlier.
//
// Without Options.SkipInvalid, any bad file or line makes Load return no
// traces and a trace.ErrorList with every problem of every file, sorted by
// file and line. With it, the bad files and lines (including the later of
// two traces with one id) are listed in Result.Skipped instead.
//
// Files are decoded by runtime.GOMAXPROCS workers, and the records of a
// large *.jsonl file are spread over them too. Each worker parses with its
// own trace.Parser, so that the strings and numbers that repeat between
// traces (member names, kinds, tool names, capabilities) are stored once
// per worker rather than once per action. Cancelling ctx stops the load,
// also in the middle of a file, and returns ctx's error.
func Load(ctx context.Context, dir string, opts Options) (*Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("loading traces: %w", err)
	}
	limit := opts.MaxFileBytes
	if limit <= 0 {
		limit = DefaultMaxFileBytes
	}
	// A limit of math.MaxInt64 means no limit; one less means the same,
	// and reading limit+1 bytes to detect a file that grew cannot overflow.
	limit = min(limit, math.MaxInt64-1)
	files, bad, err := find(dir)
	if err != nil {
		return nil, err
	}
	if len(files) == 0 && len(bad) == 0 {
		return nil, fmt.Errorf("no *.json or *.jsonl trace files under %s", dir)
	}
	files, unchanged := skipUnchanged(files, opts.Unchanged)
	if opts.Found != nil {
		var total int64
		for _, f := range files {
			total += f.size
		}
		opts.Found(len(files), total)
	}
	rules := opts.Rules
	if rules == nil {
		rules = normalize.Default()
	}
	var sp *spool
	if opts.Summarize != nil {
		sp = newSpool()
	}
	results, err := decodeAll(ctx, files, limit, rules, opts.Progress, opts.Summarize, sp)
	if err != nil {
		return nil, err
	}

	res := &Result{Files: len(files), Read: stats(files), Unchanged: unchanged}
	c := newCollector(bad)
	// The traces in load order. Those of agent sessions are admitted
	// (checked for a duplicate id) once dropCopies has dropped the
	// sessions that repeat another, such as an older copy of a session
	// log that grew since, which has the session's id.
	type found struct {
		trace   *trace.Trace
		display string
		line    int
		session bool
		summary any
		spooled spoolRef
		calls   []thinCall
	}
	var all []found
	sessionHash := map[string]string{} // session id and source hash → where first read
	for i, f := range files {
		for _, e := range results[i] {
			if e.trace != nil && !f.lines {
				res.Read[i].SourceHash = e.trace.SourceHash
			}
			if e.skipped != nil {
				res.SkippedSessions = append(res.SkippedSessions, *e.skipped)
				continue
			}
			if e.note != nil {
				res.Notes = append(res.Notes, *e.note)
				continue
			}
			if e.passed != nil {
				c.pass(f.display, e.line, e.passed)
				continue
			}
			if e.errs != nil {
				c.reject(f.display, e.line, e.errs)
				continue
			}
			if !e.session {
				if c.admit(f.display, e.line, e.trace.ID) {
					all = append(all, found{e.trace, f.display, e.line, false, nil, spoolRef{}, nil})
				}
				continue
			}
			// The same session log in two places (a copy, a backup)
			// is one session, read once.
			key := e.trace.ID + "\x00" + e.trace.SourceHash
			if first, seen := sessionHash[key]; seen {
				res.Notes = append(res.Notes, Note{Path: f.display, Line: e.line, Format: agentOf(e.trace), Code: NoteCopy, Detail: e.trace.ID, ID: e.trace.ID,
					Message: fmt.Sprintf("session %s is a copy of the one in %s, read once", e.trace.ID, first)})
				continue
			}
			sessionHash[key] = trace.Origin{Path: f.display, Line: e.line}.String()
			all = append(all, found{e.trace, f.display, e.line, true, e.summary, e.spooled, e.calls})
		}
	}
	acts := &calls{traces: make([]*trace.Trace, len(all)), thin: make([][]thinCall, len(all)), isThin: make([]bool, len(all))}
	isSession := make([]bool, len(all))
	display := make([]string, len(all))
	for i := range all {
		x := &all[i]
		acts.traces[i], isSession[i], display[i] = x.trace, x.session, x.display
		acts.thin[i], acts.isThin[i] = x.calls, x.session && opts.Summarize != nil
		x.calls = nil
	}
	thinBefore := thinShapes(acts, opts.Summarize != nil)
	keep, copies := dropCopies(acts, isSession, display)
	res.Notes = append(res.Notes, copies...)
	nameParts(acts, isSession, keep)
	if thinChanged(acts, keep, thinBefore) {
		return nil, ErrThinChanged
	}
	acts = nil
	for i, x := range all {
		if !keep[i] || x.session && !c.admit(x.display, x.line, x.trace.ID) {
			continue
		}
		res.Traces = append(res.Traces, x.trace)
		if opts.Summarize != nil {
			res.Summaries = append(res.Summaries, x.summary)
			res.spooled = append(res.spooled, x.spooled)
			res.thin = append(res.thin, x.session)
		}
	}
	if opts.Summarize != nil {
		res.reread = &rereader{files: files, limit: limit, rules: rules, spool: sp}
	}
	if res.Skipped, err = c.finish(opts.SkipInvalid); err != nil {
		return nil, err
	}
	slices.SortStableFunc(res.Notes, func(a, b Note) int {
		return cmp.Or(cmp.Compare(a.Path, b.Path), cmp.Compare(a.Line, b.Line))
	})
	if len(res.Traces) == 0 && len(c.errs) == 0 && unchanged == 0 {
		if n := len(res.SkippedSessions); n > 0 {
			return nil, fmt.Errorf("no traces in the *.json or *.jsonl files under %s: %d agent sessions, none with a tool call", dir, n)
		}
		return nil, fmt.Errorf("no traces in the *.json or *.jsonl files under %s", dir)
	}
	return res, nil
}

// dirError is an error about the directory given to Load itself.
type dirError struct {
	dir, msg string
	err      error
}

// Error returns "trace directory DIR msg".
func (e *dirError) Error() string { return "trace directory " + e.dir + " " + e.msg }

// Unwrap returns the underlying error, so that errors.Is(err,
// fs.ErrNotExist) holds for a missing directory.
func (e *dirError) Unwrap() error { return e.err }

// find walks dir and returns its trace files sorted by relative path, and
// one error for each entry that must not be read (a symlink out of dir, a
// directory symlink, a special file, an unreadable directory). A file of
// an agent's home outside its session directories is marked (file.home)
// for the decoder, which passes it over when it is not a session log.
// dir may also be one *.json or *.jsonl file, which is then the only
// file, named as given.
func find(dir string) ([]file, []*trace.Error, error) {
	info, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil, &dirError{dir, "does not exist", err}
	case err != nil:
		return nil, nil, &dirError{dir, "cannot be read: " + unwrapPathError(err), err}
	case !info.IsDir():
		return findFile(dir, info)
	}
	// The directory the user named may itself be a symlink; that one is
	// followed, and "outside" means outside its resolved location.
	root, err := filepath.EvalSymlinks(dir)
	if err == nil {
		root, err = filepath.Abs(root)
	}
	if err != nil {
		return nil, nil, &dirError{dir, "cannot be resolved: " + unwrapPathError(err), err}
	}

	var homes []agentHome
	if h, ok := enclosingHome(root); ok {
		homes = append(homes, h)
	}
	var files []file
	var bad []*trace.Error
	walkErr := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		rel, relErr := filepath.Rel(root, p)
		if relErr != nil {
			return relErr // cannot happen: WalkDir yields paths under root
		}
		display := filepath.Join(dir, rel)
		if err != nil {
			if p == root {
				return &dirError{dir, "cannot be read: " + unwrapPathError(err), err}
			}
			bad = append(bad, &trace.Error{File: display, Msg: "reading directory: " + unwrapPathError(err)})
			return nil
		}
		if d.IsDir() {
			if h, ok := findHome(p, d.Name(), p == root); ok {
				homes = append(homes, h)
			}
			return nil
		}
		lines, isTrace := traceExt(d.Name())
		f := file{rel: filepath.ToSlash(rel), display: display, open: p, lines: lines, path: p}
		if h := homeOf(homes, p); isTrace && h != nil {
			f.inHome = true
			if !h.holdsSessions(p) {
				f.home = h
			}
		}
		switch {
		case isTrace && isRunJournal(p, d.Name()):
			// A suspended run's resume state, not a record of what
			// happened: its actions are the run's trace.json's too.
		case d.Type()&fs.ModeSymlink != 0:
			target, size, problem := checkSymlink(root, p, dir)
			switch {
			case problem == "" && isTrace:
				f.open = target
				f.size = size
				if info, err := os.Stat(target); err == nil {
					f.mtime = info.ModTime().UnixNano()
				}
				files = append(files, f)
			case problem != "" && (isTrace || problem == errDirSymlink):
				bad = append(bad, &trace.Error{File: display, Msg: problem})
			}
		case !isTrace:
			// Not ours: READMEs, fixtures of other formats.
		case !d.Type().IsRegular():
			bad = append(bad, &trace.Error{File: display, Msg: "not a regular file"})
		default:
			// An error here is met again, and reported, on reading;
			// a size of 0 only means a JSON Lines file is read by one
			// worker and is not counted in Options.Found.
			if info, err := d.Info(); err == nil {
				f.size, f.mtime = info.Size(), info.ModTime().UnixNano()
			}
			files = append(files, f)
		}
		return nil
	})
	if walkErr != nil {
		return nil, nil, walkErr
	}
	slices.SortFunc(files, func(a, b file) int { return strings.Compare(a.rel, b.rel) })
	return files, bad, nil
}

// findFile is find for one file, given as path: a *.json or *.jsonl file
// is read as if it were the only file of its directory, and named in
// messages as given.
func findFile(path string, info fs.FileInfo) ([]file, []*trace.Error, error) {
	lines, ok := traceExt(path)
	if !ok || !info.Mode().IsRegular() {
		return nil, nil, &dirError{path, "is neither a directory nor a *.json or *.jsonl file", nil}
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, nil, &dirError{path, "cannot be resolved: " + unwrapPathError(err), err}
	}
	f := file{rel: filepath.Base(path), display: path, open: abs, path: abs, lines: lines, size: info.Size(), mtime: info.ModTime().UnixNano()}
	return []file{f}, nil, nil
}

// agentHome is an agent's home directory (~/.claude, ~/.codex, ~/.gemini) met by a
// walk: it holds the agent's session logs in some subdirectories, and
// beside them settings, prompt history, todos and caches, in JSON too,
// which are not session logs and are passed over with a note.
type agentHome struct {
	agent    string
	dir      string   // the home, as walked
	sessions []string // its subdirectories of session logs
}

// The agent homes find recognizes: a directory holding the sessions
// subdirectory and one of the other entries the agent keeps beside it
// (or named like the home), so that a project that happens to have a
// "sessions" directory is not taken for a home.
var agentHomes = [...]struct {
	agent    string
	name     string
	sessions []string
	beside   []string
}{
	{"Claude Code", ".claude", []string{"projects"}, []string{"settings.json", "history.jsonl", "todos", "statsig", "shell-snapshots", "session-env", "file-history", "plugins", "ide", "stats-cache.json"}},
	{"Codex", ".codex", []string{"sessions", "archived_sessions"}, []string{"config.toml", "auth.json", "history.jsonl", "version.json", "log", "models_cache.json"}},
	// Gemini CLI keeps a project's chats in tmp/<project hash>/chats,
	// beside the project's logs.json (the prompts the user typed).
	{"Gemini CLI", ".gemini", []string{"tmp/*/chats"}, []string{"settings.json", "oauth_creds.json", "google_accounts.json", "installation_id", "user_id", "GEMINI.md"}},
}

// findHome reports whether the directory p, named name, is an agent's
// home. Only the walked directory itself and directories named like a
// home are looked into, so that a walk of a large tree costs no more
// reads.
func findHome(p, name string, isRoot bool) (agentHome, bool) {
	for _, a := range agentHomes {
		if !isRoot && name != a.name {
			continue
		}
		top, _, _ := strings.Cut(a.sessions[0], "/")
		info, err := os.Stat(filepath.Join(p, top))
		if err != nil || !info.IsDir() {
			continue
		}
		beside := name == a.name
		for _, b := range a.beside {
			if _, err := os.Lstat(filepath.Join(p, b)); err == nil {
				beside = true
				break
			}
		}
		if beside {
			return agentHome{agent: a.agent, dir: p, sessions: a.sessions}, true
		}
	}
	return agentHome{}, false
}

// enclosingHome returns the agent home that the walked directory root
// lies inside, if any: a walk of ~/.gemini/tmp, of one project's
// directory in it or of its chats/, or of ~/.claude/projects/<project>,
// reads that part of the home as a walk of the home itself would, passing
// over what is not a session log (Gemini CLI's logs.json beside a
// project's chats) and noting an empty session rather than refusing it.
func enclosingHome(root string) (agentHome, bool) {
	for p := filepath.Dir(root); p != filepath.Dir(p); p = filepath.Dir(p) {
		if h, ok := findHome(p, filepath.Base(p), false); ok {
			return h, true
		}
	}
	return agentHome{}, false
}

// notSessionLog is the entry of a file of an agent's home that is not a
// session log.
func notSessionLog(f file) entry {
	h := f.home
	return entry{note: &Note{Path: f.display, Code: NoteNotSessionLog, Detail: h.agent,
		Message: fmt.Sprintf("not a session log: %s keeps its sessions under %s", h.agent, strings.Join(h.sessions, " and "))}}
}

// homeOf returns the innermost home that p lies in, or nil.
func homeOf(homes []agentHome, p string) *agentHome {
	for i := len(homes) - 1; i >= 0; i-- {
		if under(p, homes[i].dir) {
			return &homes[i]
		}
	}
	return nil
}

// holdsSessions reports whether p lies in one of h's session
// directories, whose names are slash patterns (path.Match) below h.dir.
func (h *agentHome) holdsSessions(p string) bool {
	if !under(p, h.dir) {
		return false
	}
	rel := strings.Split(filepath.ToSlash(p[len(h.dir)+1:]), "/")
	for _, s := range h.sessions {
		dirs := strings.Split(s, "/")
		if len(rel) <= len(dirs) {
			continue
		}
		in := true
		for i, pat := range dirs {
			if ok, _ := path.Match(pat, rel[i]); !ok {
				in = false
				break
			}
		}
		if in {
			return true
		}
	}
	return false
}

// under reports whether p lies below dir.
func under(p, dir string) bool {
	return strings.HasPrefix(p, dir+string(filepath.Separator))
}

// The files of a run directory (<state-dir>/runs/<id>/): the run's trace,
// and, once the run was suspended at an approval, its journal.
const (
	runTraceFile   = "trace.json"
	runJournalFile = "journal.json"
	runJournalMAC  = "journal.mac"
)

// isRunJournal reports whether the file p named name is the journal of a
// run directory: journal.json beside that run's trace.json. The journal
// carries the run's actions so far to the run resumed from it, which
// writes them into trace.json again; read as a trace of its own, a
// resumed run would count twice (its fallbacks among them).
func isRunJournal(p, name string) bool {
	if name != runJournalFile {
		return false
	}
	// A run directory holds the journal's MAC beside it, written before
	// the journal: a user's own trace named journal.json next to a
	// trace.json has none, and is read.
	for _, sibling := range []string{runTraceFile, runJournalMAC} {
		info, err := os.Stat(filepath.Join(filepath.Dir(p), sibling))
		if err != nil || !info.Mode().IsRegular() {
			return false
		}
	}
	return true
}

func traceExt(name string) (lines, ok bool) {
	switch filepath.Ext(name) {
	case ".json":
		return false, true
	case ".jsonl":
		return true, true
	}
	return false, false
}

const errDirSymlink = "symlink to a directory, not followed"

// checkSymlink resolves the symlink at p and returns its target and the
// target's size, or a problem: the target is missing, is a directory, is not a regular file,
// or resolves outside root. A symlink is read only when it stays inside
// the directory, so that a trace directory cannot be used to read files
// its owner did not put there.
func checkSymlink(root, p, dir string) (target string, size int64, problem string) {
	target, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", 0, "broken symlink: " + unwrapPathError(err)
	}
	abs, err := filepath.Abs(target)
	if err != nil {
		return "", 0, "symlink cannot be resolved: " + unwrapPathError(err)
	}
	info, err := os.Stat(abs)
	if err != nil {
		return "", 0, "broken symlink: " + unwrapPathError(err)
	}
	if info.IsDir() {
		return "", 0, errDirSymlink
	}
	if rel, err := filepath.Rel(root, abs); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", 0, fmt.Sprintf("symlink target %s is outside %s", abs, dir)
	}
	if !info.Mode().IsRegular() {
		return "", 0, "symlink to something that is not a regular file"
	}
	return abs, info.Size(), ""
}

// unwrapPathError returns the message of err without the path an
// *fs.PathError repeats, since our messages already name the file.
func unwrapPathError(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// collector gathers what Load and Scan make of the documents, in load
// order: the problems of each rejected file or line, and the ids of the
// traces kept, so that a second trace with an id is rejected as a
// duplicate naming where the first was.
type collector struct {
	errs      trace.ErrorList
	skipped   []Skipped
	passed    []Skipped // listed whatever SkipInvalid says
	firstSeen map[string]string
}

// pass records the problems of the line at path:line, which the load
// read past.
func (c *collector) pass(path string, line int, list trace.ErrorList) {
	msgs := make([]string, len(list))
	for i, e := range list {
		msgs[i] = e.Error()
	}
	c.passed = append(c.passed, Skipped{Path: path, Line: line, Errors: msgs})
}

// newCollector returns a collector that starts with the problems find
// reported about the files themselves.
func newCollector(bad []*trace.Error) *collector {
	c := &collector{firstSeen: make(map[string]string)}
	for _, e := range bad {
		c.reject(e.File, 0, trace.ErrorList{e})
	}
	return c
}

// reject records the problems of the document at path:line.
func (c *collector) reject(path string, line int, list trace.ErrorList) {
	c.errs = append(c.errs, list...)
	msgs := make([]string, len(list))
	for i, e := range list {
		msgs[i] = e.Error()
	}
	c.skipped = append(c.skipped, Skipped{Path: path, Line: line, Errors: msgs})
}

// admit reports whether the trace with id at path:line is kept; a second
// trace with an id already seen is rejected.
func (c *collector) admit(path string, line int, id string) bool {
	if first, dup := c.firstSeen[id]; dup {
		c.reject(path, line, trace.ErrorList{{
			File: path, Line: line, Path: "$.id",
			Msg: fmt.Sprintf("duplicate trace id %q (first in %s)", id, first),
		}})
		return false
	}
	c.firstSeen[id] = trace.Origin{Path: path, Line: line}.String()
	return true
}

// finish returns every problem, sorted, unless skipInvalid is set; then
// it returns the rejected documents ordered by path, then line.
func (c *collector) finish(skipInvalid bool) ([]Skipped, error) {
	out := c.passed
	if !skipInvalid {
		if len(c.errs) > 0 {
			c.errs.Sort()
			return nil, c.errs
		}
	} else {
		out = append(out, c.skipped...)
	}
	slices.SortStableFunc(out, func(a, b Skipped) int {
		return cmp.Or(cmp.Compare(a.Path, b.Path), cmp.Compare(a.Line, b.Line))
	})
	return out, nil
}
