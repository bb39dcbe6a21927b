package cli

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/crystallize-dev/crystallize/internal/runtime"
	"github.com/crystallize-dev/crystallize/internal/source"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

const importDoc = `import reads the session logs that coding agents write, and any traces,
under --from, and writes each session as a normalized crystallization trace
(trace v1, schemas/trace.v1.json) into --out: exactly what mine sees, in a
form a person can read and diff.

The format of each file is recognized from its first record:

  Claude Code   ~/.claude/projects/<project>/<session>.jsonl
                one trace per sessionId; subagent (sidechain) turns are kept
                and marked metadata.sidechain; a subagent's own log
                (agent-*.jsonl) is the trace <sessionId>.agent-<agentId>
  Codex CLI     ~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl
                one trace per session_meta
  traces        crystallization traces, workflow run records and
                composition reports, as mine reads them

Every tool call becomes one or more actions through the normalization table:
a shell command is split into its command heads, file edits become
file_mutation actions, reads and searches become observations. A model's turn
is not an action: its tokens and latency are divided over the tool calls it
made (cost), and the trace's usage holds the session's totals. The user's
first prompt is metadata.goal.

A session with no tool call is skipped with the reason no_tool_calls; that is
not an error. A malformed record is: every problem is listed as
file:line: $.json.path: message, and nothing is written, unless
--skip-invalid is given, which imports the rest and lists what it skipped.

Each trace is written to --out as <agent>-<id>.json (characters outside
A-Z a-z 0-9 . _ - replaced by _), all files or none. Files of earlier imports
with the same names are replaced; nothing is written outside --out, and --out
may not lie inside --from, where the next import would read it back.

--store keeps the traces in the trace store (<state-dir>/state.db, --state-dir
default .crystallize) instead of writing files, for crystallize mine --store:
importing a directory again decodes only the traces not stored yet. See
crystallize store --help for what is stored and how to export it. With
--json it prints {"from", "store", "added", "replaced", "already_stored",
"duplicates", "formats": [{"format", "traces", "actions", "observations",
"skipped_sessions"}], "skipped_sessions", "skipped_invalid"}.

Exit status: 0 on success, 1 on invalid input or an error, 2 on a usage error.

--json prints instead:
  {"from", "out", "traces", "formats": [{"format", "sessions", "actions",
   "observations", "skipped_sessions"}], "files": [{"path", "trace_id",
   "format", "source", "actions"}], "skipped_sessions": [{"path", "line",
   "format", "id", "reason", "message"}], "skipped_invalid": [{"path", "line",
   "errors"}]}`

type importFlags struct {
	from, out   string
	asJSON      bool
	skipInvalid bool
	config      string
	// store and stateDir: import --store (store.go).
	store    bool
	stateDir string
}

func newImportCmd(e *env) *cobra.Command {
	f := &importFlags{}
	cmd := &cobra.Command{
		Use:   "import --from DIR --out DIR [--json] [--skip-invalid]",
		Short: "Turn agent session logs into normalized traces, one file per session",
		Long:  importDoc,
		Example: `  crystallize import --from ~/.claude/projects/-home-me-shop --out traces/
  crystallize import --from ~/.codex/sessions --out traces/ --json
  crystallize import --from runs/ --store`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runImport(cmd.Context(), e, f)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&f.from, "from", "", "directory of session logs and traces (*.json, *.jsonl; searched recursively)")
	fs.StringVar(&f.out, "out", "", "directory to write one trace file per session into")
	fs.BoolVar(&f.asJSON, "json", false, "print the summary as JSON on stdout")
	fs.BoolVar(&f.skipInvalid, "skip-invalid", false, "import the valid sessions and list each invalid file and line instead of failing")
	fs.StringVar(&f.config, "config", "", configFlagHelp)
	fs.BoolVar(&f.store, "store", false, storeFlagHelp)
	fs.StringVar(&f.stateDir, "state-dir", runtime.DefaultStateDir, stateDirStoreHelp)
	return cmd
}

// importSummary is the --json output; its shape is documented in importDoc.
type importSummary struct {
	From           string           `json:"from"`
	Out            string           `json:"out"`
	Traces         int              `json:"traces"`
	Formats        []importFormat   `json:"formats"`
	Files          []importFile     `json:"files"`
	SkippedSession []importSkipped  `json:"skipped_sessions"`
	SkippedInvalid []importRejected `json:"skipped_invalid"`
}

type importFormat struct {
	Format          string `json:"format"`
	Sessions        int    `json:"sessions"`
	Actions         int    `json:"actions"`
	Observations    int    `json:"observations"`
	SkippedSessions int    `json:"skipped_sessions"`
}

type importFile struct {
	Path    string `json:"path"`
	TraceID string `json:"trace_id"`
	Format  string `json:"format"`
	Source  string `json:"source"`
	Actions int    `json:"actions"`
}

type importSkipped struct {
	Path    string `json:"path"`
	Line    int    `json:"line"`
	Format  string `json:"format"`
	ID      string `json:"id"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

type importRejected struct {
	Path   string   `json:"path"`
	Line   int      `json:"line"`
	Errors []string `json:"errors"`
}

func runImport(ctx context.Context, e *env, f *importFlags) error {
	switch {
	case f.from == "":
		return usagef("--from is required: the directory of session logs to import")
	case f.store:
		return runImportStore(ctx, e, f)
	case f.out == "":
		return usagef("--out is required: the directory to write the traces into")
	}
	if inside(f.out, f.from) {
		return usagef("--out %s is inside --from %s: the next import would read the traces back", f.out, f.from)
	}
	rules, err := agentRules(f.config)
	if err != nil {
		return err
	}
	prog := newProgress(e, !f.asJSON, "reading sessions")
	res, err := source.Load(ctx, f.from, source.Options{SkipInvalid: f.skipInvalid, Progress: prog.update, Rules: rules})
	prog.done()
	if err != nil {
		return fmt.Errorf("reading sessions from %s: %w", f.from, err)
	}

	sum := importSummary{From: f.from, Out: f.out, Traces: len(res.Traces), Files: []importFile{}, SkippedSession: []importSkipped{}, SkippedInvalid: []importRejected{}}
	formats := map[string]*importFormat{}
	format := func(name string) *importFormat {
		if formats[name] == nil {
			formats[name] = &importFormat{Format: name}
		}
		return formats[name]
	}
	files := make(map[string][]byte, len(res.Traces))
	used := map[string]bool{}
	for _, tr := range res.Traces {
		agent, _ := tr.Metadata["agent"].(string)
		if agent == "" {
			agent = "trace"
		}
		name := traceFileName(agent, tr.ID, used)
		data, err := json.MarshalIndent(tr, "", "  ")
		if err != nil {
			return fmt.Errorf("encoding trace %s: %w", tr.ID, err)
		}
		path := filepath.Join(f.out, name)
		files[path] = append(data, '\n')
		fm := format(agent)
		fm.Sessions++
		fm.Actions += len(tr.Actions)
		for _, a := range tr.Actions {
			if a.Kind == trace.KindObservation {
				fm.Observations++
			}
		}
		sum.Files = append(sum.Files, importFile{Path: path, TraceID: tr.ID, Format: agent, Source: filepath.Join(f.from, filepath.FromSlash(tr.Origin.Path)) + lineSuffix(tr.Origin.Line), Actions: len(tr.Actions)})
	}
	for _, s := range res.SkippedSessions {
		format(s.Format).SkippedSessions++
		sum.SkippedSession = append(sum.SkippedSession, importSkipped{Path: s.Path, Line: s.Line, Format: s.Format, ID: s.ID, Reason: s.Reason, Message: s.Message})
	}
	for _, s := range res.Skipped {
		sum.SkippedInvalid = append(sum.SkippedInvalid, importRejected{Path: s.Path, Line: s.Line, Errors: s.Errors})
	}
	for _, name := range slices.Sorted(maps.Keys(formats)) {
		sum.Formats = append(sum.Formats, *formats[name])
	}
	if err := writeFiles(files); err != nil {
		return err
	}
	if f.asJSON {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(sum)
	}
	printImport(e.stdout, &sum)
	return nil
}

func printImport(w io.Writer, s *importSummary) {
	fmt.Fprintf(w, "Imported %d traces from %s into %s\n", s.Traces, s.From, s.Out)
	for _, fm := range s.Formats {
		fmt.Fprintf(w, "  %s: %d sessions, %d actions (%d observations), %d skipped\n", fm.Format, fm.Sessions, fm.Actions, fm.Observations, fm.SkippedSessions)
	}
	for _, sk := range s.SkippedSession {
		fmt.Fprintf(w, "  skipped session %s%s: %s: %s\n", sk.Path, lineSuffix(sk.Line), sk.Reason, sk.Message)
	}
	for _, sk := range s.SkippedInvalid {
		for _, e := range sk.Errors {
			fmt.Fprintf(w, "  skipped %s\n", e)
		}
	}
}

func lineSuffix(line int) string {
	if line > 0 {
		return fmt.Sprintf(":%d", line)
	}
	return ""
}

// maxNameBytes bounds a trace file name, well under the 255 bytes file
// systems allow, leaving room for a disambiguating suffix.
const maxNameBytes = 160

// traceFileName returns the file name of a trace: "<agent>-<id>.json" with
// every character outside [A-Za-z0-9._-] replaced by "_", so that an id
// cannot name a directory, escape --out or hide as a dot file. A name
// shortened to maxNameBytes ends with a hash of the id, and a name already
// used in this import (two ids that differ only in replaced characters)
// gets "-2", "-3"…, so that no trace overwrites another.
func traceFileName(agent, id string, used map[string]bool) string {
	clean := func(s string) string {
		return strings.Map(func(r rune) rune {
			switch {
			case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '_', r == '-':
				return r
			}
			return '_'
		}, s)
	}
	base := clean(agent) + "-" + clean(id)
	if len(base) > maxNameBytes {
		sum := sha256.Sum256([]byte(id))
		base = base[:maxNameBytes-17] + "-" + hex.EncodeToString(sum[:8])
	}
	name := base + ".json"
	for n := 2; used[strings.ToLower(name)]; n++ {
		name = fmt.Sprintf("%s-%d.json", base, n)
	}
	// Compared case-blind: on a case-insensitive file system two names
	// that differ only in case are one file.
	used[strings.ToLower(name)] = true
	return name
}

// inside reports whether dir is sub, or lies below it.
func inside(dir, sub string) bool {
	a, err1 := filepath.Abs(dir)
	b, err2 := filepath.Abs(sub)
	if err1 != nil || err2 != nil {
		return false
	}
	rel, err := filepath.Rel(b, a)
	return err == nil && (rel == "." || rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)))
}
