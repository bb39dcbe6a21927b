package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/crystallize-dev/crystallize/internal/session"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// newSessionCmd is "crystallize session": session logs, the markdown
// record of an agent session (seed 003).
func newSessionCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "session",
		Short: "Check and resume session logs (markdown records of agent sessions)",
		Long: `session works on session logs: markdown files with YAML frontmatter
(type: session, session_id, status, resume_point, …), one "## Phase @agent
#channel" heading per resumable phase, "**Tool calls:**" lists and callouts
such as [!decision], [!error], [!user] and [!subagent]. crystallize run
writes one for every run, as <state-dir>/runs/<run-id>/session.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newSessionLintCmd(e), newSessionResumeCmd(e))
	return cmd
}

// lintReport is the --json output of session lint.
type lintReport struct {
	Files []lintFile `json:"files"`
}

type lintFile struct {
	File     string        `json:"file"`
	Problems []lintProblem `json:"problems"`
}

type lintProblem struct {
	Line    int    `json:"line"`
	Message string `json:"message"`
}

func newSessionLintCmd(e *env) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "lint FILE...",
		Short: "Report every problem in session logs",
		Long: `lint parses each session log and reports every problem it finds, one per
line as FILE:LINE: message on stderr: frontmatter that is missing or not
YAML, a missing session_id or status, a status or task status outside its
values, a time that is not RFC 3339, a resume_point that names no phase, a
tool call without its code span or result arrow, a subagent callout without
@agent or with a mode and no link, an empty decision or error callout, and
so on. It prints nothing when every file is clean.

--json prints {"files": [{"file", "problems": [{"line", "message"}]}]} on
stdout, one entry per FILE in the order given, problems sorted by line.

Exit status: 0 when every file is clean, 1 when any has a problem or cannot
be read, 2 on a usage error.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var all trace.ErrorList
			report := lintReport{Files: []lintFile{}}
			for _, name := range args {
				lf := lintFile{File: name, Problems: []lintProblem{}}
				list, err := lintFileProblems(name)
				if err != nil {
					return err
				}
				for _, p := range list {
					lf.Problems = append(lf.Problems, lintProblem{Line: p.Line, Message: p.Msg})
				}
				all = append(all, list...)
				report.Files = append(report.Files, lf)
			}
			if asJSON {
				if err := writeJSON(e.stdout, report); err != nil {
					return err
				}
				if len(all) > 0 {
					noun := "problems"
					if len(all) == 1 {
						noun = "problem"
					}
					return exitError{code: exitFailure, err: fmt.Errorf("session lint: %d %s", len(all), noun)}
				}
				return nil
			}
			switch len(all) {
			case 0:
				return nil
			case 1:
				return all
			}
			return fmt.Errorf("session lint: %w", all)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the problems as JSON on stdout")
	return cmd
}

// lintFileProblems parses one file and returns its problems; err is only
// for a file that cannot be read.
func lintFileProblems(name string) (trace.ErrorList, error) {
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	_, err = session.Parse(name, data)
	var list trace.ErrorList
	if err != nil && !errors.As(err, &list) {
		return nil, err
	}
	return list, nil
}

func newSessionResumeCmd(e *env) *cobra.Command {
	var phase string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "resume FILE [--phase ID] [--json]",
		Short: "Rebuild the context to resume a session from its log",
		Long: `resume reads a session log and prints the context an agent needs to
continue it: the objective, the completed phases with their tool calls, the
phase to resume at, the decisions, the errors and what handled each (the
next tool call, decision or user intervention after it), the user
interventions, the subagents with their summaries, the inbox callouts
(decision_needed, approval_required, task_complete) and the open tasks.

It resumes at the frontmatter's resume_point, or at --phase ID. A phase
is named by its id (the heading's name lowercased, other characters
replaced by "-", such as research-phase or step-3-git-commit), by phase-N
for the Nth phase, or by a prefix of its id ending before a "-" (step-3).
Phases before it are completed; notes are gathered from them and from the
phase resumed at. A resume_point of "none", or none at all, resumes after
the last phase. A subagent's linked session is read from ID.md beside FILE
when it exists, for its status and objective.

resume rebuilds context for an agent; it does not run anything. When the
log is a crystallize run record (its frontmatter has workflow:, and the
session_id is the run id), continuing the run itself is the runtime's
"crystallize resume RUN-ID", not this.

The default output is markdown. --json prints the same as one JSON object:
{"session_id", "status", "workflow"?, "objective", "background"?,
"tokens_used", "resume_at": {"index", "id", "name"} or null,
"later_phases", "completed_phases": [{"id", "name", "agent"?, "channel"?,
"tool_calls": [{"tool", "args", "result", "side_effects"?}]}],
"current_phase" (same shape, or null), "decisions": [{"phase", "type",
"text"}], "errors": [{"phase", "text", "handled_by"}],
"user_interventions", "inbox" (as decisions), "subagents": [{"phase",
"agent", "model"?, "mode", "session"?, "tokens"?, "summary", "status"?,
"objective"?, "load_error"?}], "open_tasks": [{"title", "status"}]}.
A phase of "" is the preamble before the first phase.

Exit status: 0 on success, 1 when the log has problems (see session lint)
or cannot be read, 2 on a usage error, including a --phase that names no
phase.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			data, err := os.ReadFile(name)
			if err != nil {
				return err
			}
			s, err := session.Parse(name, data)
			if err != nil {
				return listError(name, err)
			}
			dir := filepath.Dir(name)
			pack, err := session.Resume(s, session.ResumeOptions{
				Phase: phase,
				Load: func(id string) (*session.Session, error) {
					if !filepath.IsLocal(id) {
						return nil, nil
					}
					file := filepath.Join(dir, id+".md")
					data, err := os.ReadFile(file)
					if errors.Is(err, fs.ErrNotExist) {
						return nil, nil
					}
					if err != nil {
						return nil, err
					}
					nested, err := session.Parse(file, data)
					if err != nil {
						return nil, fmt.Errorf("%s: %d problems (see session lint)", file, problemCount(err))
					}
					return nested, nil
				},
			})
			if errors.Is(err, session.ErrNoPhase) {
				// Parse has checked resume_point: only --phase gets here.
				return usagef("--phase: %v", err)
			}
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(e.stdout, pack)
			}
			return pack.WriteMarkdown(e.stdout)
		},
	}
	cmd.Flags().StringVar(&phase, "phase", "", "resume at this phase instead of the resume_point")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the context pack as JSON")
	return cmd
}

// listError returns a parse error as printError shows it best: a single
// problem bare, several under "reading FILE".
func listError(name string, err error) error {
	var list trace.ErrorList
	if errors.As(err, &list) && len(list) > 1 {
		return fmt.Errorf("reading %s: %w", name, err)
	}
	return err
}

func problemCount(err error) int {
	var list trace.ErrorList
	if errors.As(err, &list) {
		return len(list)
	}
	return 1
}
