package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/crystallize-dev/crystallize/internal/atomicfile"
	"github.com/crystallize-dev/crystallize/internal/bundle"
	"github.com/crystallize-dev/crystallize/internal/codegen"
	"github.com/crystallize-dev/crystallize/internal/normalize"
	"github.com/crystallize-dev/crystallize/internal/redact"
	sessionlog "github.com/crystallize-dev/crystallize/internal/session"
	"github.com/crystallize-dev/crystallize/internal/source"
	"github.com/crystallize-dev/crystallize/internal/trace"
	"github.com/crystallize-dev/crystallize/internal/tracestore"
)

// ImportOptions says what Import reads and where it writes.
type ImportOptions struct {
	// From is the directory of session logs and traces, or one such
	// file.
	From string
	// Out is the directory each trace is written into.
	Out string
	// SkipInvalid imports the valid sessions and lists the invalid files.
	SkipInvalid bool
	// Rules extend the normalization of agent sessions.
	Rules *normalize.Rules
	// Progress reports the load in source.Load's units of work.
	Progress func(done, total int)
	// Format is what each session is written as: FormatTrace (the
	// default, also for "") or FormatSessionMD.
	Format string
}

// Import formats, the values of ImportOptions.Format.
const (
	// FormatTrace writes <agent>-<id>.json, a normalized trace.
	FormatTrace = "trace"
	// FormatSessionMD writes <agent>-<id>.md, a session log
	// (session.FromTrace) of the redacted trace, for session resume,
	// learn, index and split.
	FormatSessionMD = "session-md"
)

// ImportedTrace is one trace Import wrote.
type ImportedTrace struct {
	Path    string `json:"path"`
	TraceID string `json:"trace_id"`
	Format  string `json:"format"`
	// Source is the file (and line) the session was read from.
	Source  string `json:"source"`
	Actions int    `json:"actions"`
}

// ImportedFormat counts what Import read of one format (an agent, or
// "trace" for documents that were traces already).
type ImportedFormat struct {
	Format          string `json:"format"`
	Sessions        int    `json:"sessions"`
	Actions         int    `json:"actions"`
	Observations    int    `json:"observations"`
	SkippedSessions int    `json:"skipped_sessions"`
}

// Imported is what Import read and wrote.
type Imported struct {
	// Traces are the normalized traces, in load order.
	Traces []*trace.Trace
	// Files are the traces written, in the order of Traces.
	Files []ImportedTrace
	// Formats count each format, sorted by name.
	Formats         []ImportedFormat
	SkippedSessions []source.SkippedSession
	Skipped         []source.Skipped
	// PassedOver groups what the load read past without counting it:
	// records of unknown types, files that are not session logs, and
	// sessions that repeat another (GroupNotes).
	PassedOver []NoteGroup
}

// NoteGroup is the notes of a load (source.Note) of one cause: their code,
// what they are about (a record type, the session a copy repeats), how
// many there are, the message of the first, and the places of the first
// three.
type NoteGroup struct {
	Code    string   `json:"code"`
	Detail  string   `json:"detail,omitempty"`
	Count   int      `json:"count"`
	Message string   `json:"message"`
	First   []string `json:"first"`
}

// maxNotePlaces is how many places of a group of notes a summary names.
const maxNotePlaces = 3

// GroupNotes groups notes by code and detail, in the order of their first
// note, so that a summary of a home directory says "passed over 212 files
// that are not session logs" once, with the first places, rather than
// once per file. Copies are not grouped: each names the session it
// repeats, which is what a reader checks.
func GroupNotes(notes []source.Note) []NoteGroup {
	out := []NoteGroup{}
	at := map[[2]string]int{}
	for _, n := range notes {
		place := n.Path
		if n.Line > 0 {
			place += fmt.Sprintf(":%d", n.Line)
		}
		key := [2]string{n.Code, n.Detail}
		if n.Code == source.NoteCopy || n.Code == source.NoteRepeats {
			key[1] = place
		}
		i, ok := at[key]
		if !ok {
			i = len(out)
			at[key] = i
			out = append(out, NoteGroup{Code: n.Code, Detail: n.Detail, Message: n.Message, First: []string{}})
		}
		g := &out[i]
		g.Count++
		if len(g.First) < maxNotePlaces {
			g.First = append(g.First, place)
		}
	}
	return out
}

// Import reads every session log and trace under o.From and writes each
// as a normalized trace file into o.Out, all files or none: the traces
// mine would see, in a form a person can read and diff, redacted by the
// redactor of a bundle's fixtures for sharing (bundle.RedactTrace,
// ForSharing: no secret, no user's home directory or name), since trace
// files are made to be shared. Each file is named
// by TraceFileName after the redacted id. Imported.Traces are the traces
// as read, unredacted, for a caller that mines them.
//
// Out must be given, and must not lie inside From, where the next import
// would read the written traces back as sessions of their own.
func Import(ctx context.Context, o ImportOptions) (*Imported, error) {
	if o.Out == "" {
		return nil, errors.New("importing sessions: no output directory (ImportOptions.Out)")
	}
	if o.From == "" {
		return nil, errors.New("importing sessions: no directory to read (ImportOptions.From)")
	}
	if Within(o.Out, o.From) {
		return nil, fmt.Errorf("importing sessions: output directory %s is inside %s, where the next import would read the traces back", o.Out, o.From)
	}
	res, err := source.Load(ctx, o.From, source.Options{SkipInvalid: o.SkipInvalid, Progress: o.Progress, Rules: o.Rules})
	if err != nil {
		return nil, fmt.Errorf("reading sessions from %s: %w", o.From, err)
	}
	im := &Imported{Traces: res.Traces, Files: []ImportedTrace{}, SkippedSessions: res.SkippedSessions, Skipped: res.Skipped, PassedOver: GroupNotes(res.Notes)}
	// --from names a directory, or one file, which is then every
	// trace's source.
	fromFile := false
	if info, err := os.Stat(o.From); err == nil && !info.IsDir() {
		fromFile = true
	}
	formats := map[string]*ImportedFormat{}
	format := func(name string) *ImportedFormat {
		if formats[name] == nil {
			formats[name] = &ImportedFormat{Format: name}
		}
		return formats[name]
	}
	if o.Format == "" {
		o.Format = FormatTrace
	}
	if o.Format != FormatTrace && o.Format != FormatSessionMD {
		return nil, fmt.Errorf("importing sessions: unknown format %q; want %s or %s", o.Format, FormatTrace, FormatSessionMD)
	}
	files := make(map[string][]byte, len(res.Traces))
	used := map[string]bool{}
	// A session log is written from the redacted trace, which the first
	// pass keeps, so that the markdown hides what the trace file would.
	var redacted []*trace.Trace
	for _, tr := range res.Traces {
		agent, _ := tr.Metadata["agent"].(string)
		if agent == "" {
			agent = "trace"
		}
		raw, err := json.Marshal(tr)
		if err != nil {
			return nil, fmt.Errorf("encoding trace %s: %w", tr.ID, err)
		}
		data, err := traceFile(raw)
		if err != nil {
			return nil, fmt.Errorf("encoding trace %s: %w", tr.ID, err)
		}
		// The id names the file: a token or a home directory in it is
		// redacted as in the document.
		id, _ := redact.Text(tr.ID)
		path := filepath.Join(o.Out, TraceFileName(agent, id, used))
		if o.Format == FormatSessionMD {
			path = strings.TrimSuffix(path, ".json") + ".md"
			rt, err := trace.Decode(data, path, 0)
			if err != nil {
				return nil, fmt.Errorf("reading back redacted trace %s: %w", id, err)
			}
			redacted = append(redacted, rt)
		}
		files[path] = data
		fm := format(agent)
		fm.Sessions++
		fm.Actions += len(tr.Actions)
		for _, a := range tr.Actions {
			if a.Kind == trace.KindObservation {
				fm.Observations++
			}
		}
		src := filepath.Join(o.From, filepath.FromSlash(tr.Origin.Path))
		if fromFile {
			src = o.From
		}
		if tr.Origin.Line > 0 {
			src += fmt.Sprintf(":%d", tr.Origin.Line)
		}
		im.Files = append(im.Files, ImportedTrace{Path: path, TraceID: id, Format: agent, Source: src, Actions: len(tr.Actions)})
	}
	if o.Format == FormatSessionMD {
		if err := sessionFiles(files, im.Files, redacted); err != nil {
			return nil, err
		}
	}
	for _, s := range res.SkippedSessions {
		format(s.Format).SkippedSessions++
	}
	for _, name := range slices.Sorted(maps.Keys(formats)) {
		im.Formats = append(im.Formats, *formats[name])
	}
	if err := atomicfile.WriteAll(files, 0o644); err != nil {
		return nil, err
	}
	return im, nil
}

// sessionFiles replaces the trace documents in files with the session
// logs of the redacted traces, written at the paths of written (in the
// order of traces). A subagent's trace (metadata parent_session_id) is
// linked from its parent's log by the name of its own log, as the
// session format links nested sessions.
func sessionFiles(files map[string][]byte, written []ImportedTrace, traces []*trace.Trace) error {
	stem := func(i int) string { return strings.TrimSuffix(filepath.Base(written[i].Path), ".md") }
	byID := map[string]int{}
	for i, t := range traces {
		if _, nested := t.Metadata["parent_session_id"]; !nested {
			byID[t.ID] = i
		}
	}
	children := map[int][]sessionlog.Nested{}
	for i, t := range traces {
		parent, _ := t.Metadata["parent_session_id"].(string)
		p, ok := byID[parent]
		if parent == "" || !ok {
			continue
		}
		n := sessionlog.Nested{Session: stem(i), Agent: "subagent"}
		n.Model, _ = t.Metadata["model"].(string)
		n.Goal, _ = t.Metadata["goal"].(string)
		if t.Usage != nil {
			n.Tokens = t.Usage.InputTokens + t.Usage.OutputTokens
		}
		children[p] = append(children[p], n)
	}
	for i, t := range traces {
		s, err := sessionlog.FromTrace(t, children[i])
		if err != nil {
			return fmt.Errorf("writing %s: %w", written[i].Path, err)
		}
		data, err := sessionlog.Format(s)
		if err != nil {
			return fmt.Errorf("writing %s: %w", written[i].Path, err)
		}
		files[written[i].Path] = data
	}
	return nil
}

// Within reports whether dir is root or lies below it, comparing absolute
// paths with their symlinks resolved as far as they exist (so that a
// directory not created yet, below a symlink to root, is inside too).
func Within(dir, root string) bool {
	a, err1 := resolve(dir)
	b, err2 := resolve(root)
	if err1 != nil || err2 != nil {
		return false
	}
	rel, err := filepath.Rel(b, a)
	return err == nil && (rel == "." || rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)))
}

// resolve returns the absolute form of p with the symlinks of its longest
// existing prefix resolved.
func resolve(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	rest := ""
	for cur := abs; ; {
		if real, err := filepath.EvalSymlinks(cur); err == nil {
			return filepath.Join(real, rest), nil
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return abs, nil
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}

// traceFile is the file Import and Export write for the trace document
// raw: redacted by bundle.RedactTrace, indented, with a final newline.
// Both write through it, so exporting what an import stored gives the
// bytes of importing into a directory.
func traceFile(raw []byte) ([]byte, error) {
	red, _, err := bundle.RedactTrace(raw, bundle.ForSharing)
	if err != nil {
		return nil, err
	}
	return tracestore.Indent(red)
}

// TraceFileName returns the file name of a trace: "<agent>-<id>.json",
// the stem passed through codegen.FileName, so that an id cannot name a
// directory, escape the output directory, hide as a dot file, name a
// device or run past what file systems allow (such a stem becomes its
// words and a hash of it). A name already in used (two ids that differ
// only in case) gets "-2", "-3"…, so that no trace overwrites another;
// the name returned is added to used.
func TraceFileName(agent, id string, used map[string]bool) string {
	base := codegen.FileName(agent+"-"+id, "trace")
	name := base + ".json"
	for n := 2; used[strings.ToLower(name)]; n++ {
		name = fmt.Sprintf("%s-%d.json", base, n)
	}
	// Compared case-blind: on a case-insensitive file system two names
	// that differ only in case are one file.
	used[strings.ToLower(name)] = true
	return name
}
