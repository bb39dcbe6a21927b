package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/crystallize-dev/crystallize/internal/pipeline"
	"github.com/crystallize-dev/crystallize/internal/source"
	"github.com/spf13/cobra"

	"github.com/crystallize-dev/crystallize/internal/runner"
)

const importDoc = `import reads the session logs that coding agents write, and any traces,
under --from, and writes each session as a normalized crystallization trace
(trace v1, schemas/trace.v1.json) into --out: exactly what mine sees, in a
form a person can read and diff.

--from is a directory, searched recursively, or one *.json or *.jsonl file.
It may be an agent's home directory (~/.claude, ~/.codex): its session logs
are read, and its other files (settings, prompt history, todos, caches) are
passed over with the note "not a session log".

The format of each file is recognized from its first records (any of the
first 20: agents start their logs with bookkeeping records):

  Claude Code   ~/.claude/projects/<project>/<session>.jsonl
                one trace per sessionId; subagent (sidechain) turns are kept
                and marked metadata.sidechain; a subagent's own log
                (agent-*.jsonl) is the trace <sessionId>.agent-<agentId>
  Codex CLI     ~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl
                one trace per session_meta
  Gemini CLI    gemini --output-format stream-json > run.jsonl
                one trace per init event;
                ~/.gemini/tmp/<project>/chats/session-*.json and *.jsonl
                one trace per chat (rewound messages are dropped and counted)
  OpenTelemetry OTLP/JSON exports: spans (resourceSpans), one trace per
                trace id; the log events of Claude Code, Codex and Gemini
                CLI (resourceLogs: tool results, API responses), one trace
                per session id
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
file:line: $.json.path: message (more than 20 are grouped by cause, with a
count and the first three places), and nothing is written, unless
--skip-invalid is given, which imports the rest and lists what it skipped.
A line of a session log that is not JSON at all (a write cut short) is
listed as skipped and the rest of its file read, with or without
--skip-invalid.

One event is counted once. A record or a tool call an agent wrote twice is
read once. A session that only repeats another's calls (a Claude Code
compaction or side question, an older copy of a log) is dropped as a copy of
it, and one that repeats calls and goes on (a forked Codex rollout, a
resumed session) keeps only its own calls; the summary names each, and mine
lists the copies among the excluded traces. A subagent that makes its own
calls stays a trace of its own. Records of types the reader does not know,
and files with nothing to read, are passed over and counted in the summary.

Trace files are made to be shared, so each is written through the
redactor of bundles: a credential (an API key an agent printed, a private
key, a token in a URL) becomes [redacted:<kind>], a user's home directory
(/home/NAME, /Users/NAME, C:\Users\NAME, Claude Code's -home-NAME-…
project directories) becomes ~, and so does that user's name wherever the
agent saw it (ls -l output, a git author). The summary, text or --json,
is redacted the same way. The trace store keeps the traces as read, on
this machine; crystallize store export redacts them on the way out.

Each trace is written to --out as <agent>-<redacted id>.json (a name with
characters outside A-Z a-z 0-9 . _ -, a leading dot, a device name such as
CON, or more than 100 bytes becomes its words and a hash of it), all files
or none. Files of earlier imports
with the same names are replaced; nothing is written outside --out, and --out
may not lie inside --from, where the next import would read it back.

--store keeps the traces in the trace store (<state-dir>/state.db, --state-dir
default .crystallize) instead of writing files, for crystallize mine --store:
importing a directory again decodes only the traces not stored yet, and does
not open a file an earlier import read that kept its size and modification
time (unchanged_files). --rehash reads every file again, for files changed
by a tool that restores their modification time; a file whose size changed
(a session log that grew) is always read. See crystallize store --help for
what is stored and how to export it. With --json it prints {"from", "store",
"added", "replaced", "already_stored", "duplicates", "unchanged_files",
"formats": [{"format", "traces", "actions", "observations",
"skipped_sessions"}], "skipped_sessions", "skipped_invalid"}.

--format session-md writes each session as a session log instead,
<agent>-<redacted id>.md (see crystallize session --help), so that session
resume, learn, index, inbox and split read what an agent did outside
crystallize: the first prompt is the title and, in full, the preamble; the
tool calls (a shell command as the command line the agent ran, any other
tool as its name and short arguments, each with its exit code and the first
line of its output) are grouped into phases of work, a new phase where the
agent starts to look again; a failed call is followed by an [!error]
callout; a subagent with a log of its own is a session of its own, linked
from its parent by a [!subagent] callout. The status is paused: a log ends
where the agent stopped, and does not say whether the work was done. A log
is written from the redacted trace, so it hides what the trace would.
--format session-md is for --out; --store keeps traces.

Exit status: 0 on success, 1 on invalid input or an error, 2 on a usage error.

--json prints instead:
  {"from", "out", "traces", "formats": [{"format", "sessions", "actions",
   "observations", "skipped_sessions"}], "files": [{"path", "trace_id",
   "format", "source", "actions"}], "skipped_sessions": [{"path", "line",
   "format", "id", "reason", "message"}], "skipped_invalid": [{"path", "line",
   "errors"}], "passed_over": [{"code", "detail", "count", "message",
   "first"}]}
  where passed_over groups what was passed over by cause: code is
  unknown_record_type (detail: the type), not_session_log (detail: the
  agent), copy or repeats (detail: the session repeated), or empty_file.`

type importFlags struct {
	from, out   string
	format      string
	asJSON      bool
	skipInvalid bool
	config      string
	// store and stateDir: import --store (store.go).
	store    bool
	stateDir string
	rehash   bool
}

func newImportCmd(e *env) *cobra.Command {
	f := &importFlags{}
	cmd := &cobra.Command{
		Use:   "import --from DIR|FILE --out DIR [--json] [--skip-invalid]",
		Short: "Turn agent session logs into normalized traces, one file per session",
		Long:  importDoc,
		Example: `  crystallize import --from ~/.claude --out traces/
  crystallize import --from ~/.claude/projects/-home-me-shop --out traces/
  crystallize import --from ~/.codex/sessions --out traces/ --json
  crystallize import --from ~/.claude/projects/-home-me-shop --out sessions/ --format session-md
  crystallize import --from runs/ --store`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runImport(cmd.Context(), e, f)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&f.from, "from", "", "directory of session logs and traces (*.json, *.jsonl; searched recursively), an agent's home (~/.claude, ~/.codex), or one such file")
	fs.StringVar(&f.out, "out", "", "directory to write one trace file per session into")
	fs.BoolVar(&f.asJSON, "json", false, "print the summary as JSON on stdout")
	fs.StringVar(&f.format, "format", pipeline.FormatTrace, "what to write for each session: trace (<agent>-<id>.json) or session-md (<agent>-<id>.md, a session log)")
	fs.BoolVar(&f.skipInvalid, "skip-invalid", false, "import the valid sessions and list each invalid file and line instead of failing")
	fs.StringVar(&f.config, "config", "", configFlagHelp)
	fs.BoolVar(&f.store, "store", false, storeFlagHelp)
	fs.StringVar(&f.stateDir, "state-dir", runner.DefaultStateDir, stateDirStoreHelp)
	fs.BoolVar(&f.rehash, "rehash", false, "with --store, read every file again, also those unchanged in size and modification time since an earlier import")
	return cmd
}

func runImport(ctx context.Context, e *env, f *importFlags) error {
	switch {
	case f.from == "":
		return usagef("--from is required: the directory (or file) of session logs to import")
	case f.format != pipeline.FormatTrace && f.format != pipeline.FormatSessionMD:
		return usagef("--format %q: want %s or %s", f.format, pipeline.FormatTrace, pipeline.FormatSessionMD)
	case f.store && f.format != pipeline.FormatTrace:
		return usagef("--format %s writes files into --out; --store keeps traces", f.format)
	case f.store:
		return runImportStore(ctx, e, f)
	case f.rehash:
		return usagef("--rehash is for --store: an import into --out reads every file")
	case f.out == "":
		return usagef("--out is required: the directory to write the traces into")
	}
	if pipeline.Within(f.out, f.from) {
		return usagef("--out %s is inside --from %s: the next import would read the traces back", f.out, f.from)
	}
	rules, err := agentRules(f.config)
	if err != nil {
		return err
	}
	prog := newProgress(e, !f.asJSON, "reading sessions")
	im, err := pipeline.Import(ctx, pipeline.ImportOptions{From: f.from, Out: f.out, Format: f.format, SkipInvalid: f.skipInvalid, Rules: rules, Progress: prog.update})
	prog.done()
	if err != nil {
		return err
	}
	// The summary is redacted (no secret, no home directory): the text
	// is printed from it too.
	s := im.Summary(f.from, f.out)
	if f.asJSON {
		return writeIndentedJSON(e.stdout, s)
	}
	w := e.stdout
	noun := "traces"
	if f.format == pipeline.FormatSessionMD {
		noun = "session logs"
	}
	fmt.Fprintf(w, "Imported %d %s from %s into %s\n", s.Traces, noun, s.From, s.Out)
	for _, fm := range s.Formats {
		fmt.Fprintf(w, "  %s: %d sessions, %d actions (%d observations), %d skipped\n", fm.Format, fm.Sessions, fm.Actions, fm.Observations, fm.SkippedSessions)
	}
	writeSkipped(w, s.SkippedSession, s.SkippedInvalid)
	writePassedOver(w, s.PassedOver)
	return nil
}

// writePassedOver prints what a load read past without counting it, one
// line per cause with its count and first places.
func writePassedOver(w io.Writer, groups []pipeline.NoteGroup) {
	for _, g := range groups {
		switch {
		case g.Code == source.NoteCopy:
			fmt.Fprintf(w, "  copy %s: %s\n", g.First[0], g.Message)
		case g.Code == source.NoteRepeats:
			fmt.Fprintf(w, "  repeats %s: %s\n", g.First[0], g.Message)
		case g.Count == 1:
			fmt.Fprintf(w, "  passed over %s: %s\n", g.First[0], g.Message)
		default:
			fmt.Fprintf(w, "  passed over %d × %s (first %s)\n", g.Count, g.Message, strings.Join(g.First, ", "))
		}
	}
}

// writeSkipped prints what an import (import, import --store) left out:
// each session that did not become a trace, and each problem of a file
// skipped as invalid, which already starts with its file, line and JSON
// path.
func writeSkipped(w io.Writer, sessions []pipeline.SummarySkipped, files []pipeline.SummaryInvalidFile) {
	for _, sk := range sessions {
		fmt.Fprintf(w, "  skipped session %s%s: %s: %s\n", sk.Path, lineSuffix(sk.Line), sk.Reason, sk.Message)
	}
	for _, sk := range files {
		for _, msg := range sk.Errors {
			fmt.Fprintf(w, "  skipped %s\n", msg)
		}
	}
}

func lineSuffix(line int) string {
	if line > 0 {
		return fmt.Sprintf(":%d", line)
	}
	return ""
}
