package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/crystallize-dev/crystallize/internal/harness"
	"github.com/crystallize-dev/crystallize/internal/store"
)

const harnessDoc = `harness profiles a repository, plans the harness its risks need, writes
template kits as reviewable files, runs the harness as evidence, calibrates
model judges and notices drift.

Tracked files are the contract (harness/manifest.json, gates/*.sh, eval
suites); run history, profile snapshots and observations of untracked files
live in the local database (.crystallize/state.db of the repository, or
--db). Untracked files are observed only: no harness command stages, moves,
rewrites or deletes them.`

// harnessFlags are the flags every harness subcommand shares.
type harnessFlags struct {
	db     string
	asJSON bool
}

func (f *harnessFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.db, "db", "", "database path (default: .crystallize/state.db in the repository)")
	resultJSONFlag(cmd.Flags(), &f.asJSON)
}

// open resolves the repository root of dir and opens its database.
func (f *harnessFlags) open(ctx context.Context, dir string) (string, *store.DB, error) {
	return harness.OpenRepo(ctx, dir, f.db)
}

func newHarnessCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "harness",
		Short: "Profile a repository and plan, write, run and evolve its harness",
		Long:  harnessDoc,
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(newHarnessProfileCmd(e), newHarnessPlanCmd(e), newHarnessWriteCmd(e), newHarnessRunCmd(e),
		newHarnessJudgeCmd(e), newHarnessDriftCmd(e), newHarnessMemoryCmd(e), newHarnessWebCmd(e))
	return cmd
}

func dirArg(args []string) string {
	if len(args) == 1 {
		return args[0]
	}
	return "."
}

// harnessNow is the time stamped on stored rows: SOURCE_DATE_EPOCH when
// set, else the current time.
func harnessNow(e *env) (time.Time, error) { return sourceDate(e.getenv) }

// openAt opens the repository of dir, as open does, and returns the
// time to stamp what the command records (harnessNow). The caller
// closes db; on an error nothing is left open.
func (f *harnessFlags) openAt(ctx context.Context, e *env, dir string) (string, *store.DB, time.Time, error) {
	root, db, err := f.open(ctx, dir)
	if err != nil {
		return "", nil, time.Time{}, err
	}
	now, err := harnessNow(e)
	if err != nil {
		db.Close()
		return "", nil, time.Time{}, err
	}
	return root, db, now, nil
}

// openProfiled opens the repository of dir, profiles it and stores the
// snapshot: the first steps of profile, plan and write. The caller closes
// db; on an error nothing is left open.
func (f *harnessFlags) openProfiled(ctx context.Context, e *env, dir string, stamp bool) (string, *store.DB, *harness.RepoProfile, error) {
	root, db, now, err := f.openAt(ctx, e, dir)
	if err != nil {
		return "", nil, nil, err
	}
	p, err := harness.ProfileStored(ctx, root, db, now, stamp)
	if err != nil {
		db.Close()
		return "", nil, nil, err
	}
	return root, db, p, nil
}

const harnessProfileDoc = `profile reads the repository containing DIR (default ".") and prints its
RepoProfile: stacks, entry points, tests, CI and lint, docs, data stores,
network surfaces, risk hints, and the git state with every changed file as
an observation (untracked files are observed_only). The same tree gives the
same profileId. The snapshot is stored in the database.

--created-at stamps createdAt and the observations' seen times
(SOURCE_DATE_EPOCH when set); without it the output is deterministic.

--json prints the RepoProfile.`

func newHarnessProfileCmd(e *env) *cobra.Command {
	var f harnessFlags
	var createdAt bool
	cmd := &cobra.Command{
		Use:   "profile [DIR]",
		Short: "Profile a repository",
		Long:  harnessProfileDoc,
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			_, db, p, err := f.openProfiled(cmd.Context(), e, dirArg(args), createdAt)
			if err != nil {
				return err
			}
			defer db.Close()
			if f.asJSON {
				return writeJSON(e.stdout, p)
			}
			w := e.stdout
			fmt.Fprintf(w, "profile %s (project %s)\n", p.ProfileID, p.ProjectHash)
			for _, x := range p.Stacks {
				fmt.Fprintf(w, "stack %s %s %s\n", x.Kind, x.Path, x.Detail)
			}
			fmt.Fprintf(w, "%d entry points, %d test signals, %d ci signals, %d docs, %d data stores, %d network surfaces\n",
				len(p.Entrypoints), len(p.Tests), len(p.CI), len(p.Docs), len(p.DataStores), len(p.NetworkSurfaces))
			for _, h := range p.RiskHints {
				fmt.Fprintf(w, "risk %s: %s (%d: %s)\n", h.Family, h.Signal, h.Count, strings.Join(h.Paths, ", "))
			}
			for _, o := range p.Git.ChangedFiles {
				fmt.Fprintf(w, "changed %s %s %s\n", o.GitStatus, o.Ownership, o.Path)
			}
			return nil
		},
	}
	f.register(cmd)
	cmd.Flags().BoolVar(&createdAt, "created-at", false, "stamp createdAt and seen times")
	return cmd
}

const harnessPlanDoc = `plan profiles the repository, classifies its risk families (web, agent, rag,
infrastructure, database, windows_service, security, performance) with the
signals that triggered each, compares them with harness/manifest.json and
prints what is missing, weak, stale and overbroad, and the template kits it
proposes, each with purpose, consumer, risk protected, files written,
commands run, blocking criteria and rollback path. It writes no file.

Before all that it shows the memories ("harness memory add") that apply to
this plan: those with a scope entry naming a file changed in the work
tree, a file a risk signal names, a harness file or one a proposed kit
would write (path:GLOB), a gate or eval suite of the manifest or of a
proposed kit (gate:ID), a kit applied or proposed (kit:ID), a risk family
(family:NAME) or a stack (stack:KIND) of the profile. The ones with most
matching scope entries come first, then the newest; each says which of
its entries matched what. A memory that matches nothing is not shown.

--json prints {"profileId", "risks", "missing", "weak", "stale",
"overbroad", "proposed", "memories": [{"id", "text", "scope", "source",
"created", "matches": [{"scope", "matched"}]}]}.`

func newHarnessPlanCmd(e *env) *cobra.Command {
	var f harnessFlags
	cmd := &cobra.Command{
		Use:   "plan [DIR]",
		Short: "Plan the harness a repository's risks need",
		Long:  harnessPlanDoc,
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			root, db, p, err := f.openProfiled(cmd.Context(), e, dirArg(args), false)
			if err != nil {
				return err
			}
			defer db.Close()
			pl, err := harness.PlanStored(cmd.Context(), root, db, p)
			if err != nil {
				return err
			}
			if f.asJSON {
				return writeJSON(e.stdout, pl)
			}
			w := e.stdout
			writeRecalled(w, pl.Memories)
			for _, r := range pl.Risks {
				var sig []string
				for _, s := range r.Signals {
					sig = append(sig, s.Signal)
				}
				fmt.Fprintf(w, "risk %s: %s\n", r.Family, strings.Join(sig, ", "))
			}
			for _, x := range []struct {
				name string
				list []harness.Finding
			}{{"missing", pl.Missing}, {"weak", pl.Weak}, {"stale", pl.Stale}, {"overbroad", pl.Overbroad}} {
				for _, fd := range x.list {
					fmt.Fprintf(w, "%s %s: %s\n", x.name, fd.Subject, fd.Reason)
				}
			}
			for _, pr := range pl.Proposed {
				fmt.Fprintf(w, "proposed kit %s: %s\n  writes %s\n  runs %s\n  blocks when %s\n  rollback: %s\n",
					pr.Kit, pr.Purpose, strings.Join(pr.FilesWritten, ", "), strings.Join(pr.CommandsRun, "; "), pr.BlockingCriteria, pr.RollbackPath)
			}
			return nil
		},
	}
	f.register(cmd)
	return cmd
}

const harnessWriteDoc = `write prints the diff of template kit ID against the repository: its gate
scripts, eval suites and harness/manifest.json (schema sf.harness.v1). With
--apply it also writes them. It never overwrites a file it did not write
(or that was edited since), and never touches untracked files: such a
conflict fails the whole write and nothing is written.

Kits: agent-runtime, charm-service, database, go-service, nix-project, rag-system,
typescript-cli, web-app. The charm-service kit's ssh-smoke entry is yours to
adapt: write how your server starts into its --server, and a rewrite of the
kit keeps that line.

--json prints {"kit", "applied", "files": [{"path", "action", "mode"}],
"diff"}.`

func newHarnessWriteCmd(e *env) *cobra.Command {
	var f harnessFlags
	var kit string
	var apply bool
	cmd := &cobra.Command{
		Use:   "write --kit ID [--apply] [DIR]",
		Short: "Write a template kit as reviewable files",
		Long:  harnessWriteDoc,
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if kit == "" {
				return usagef("harness write: --kit is required")
			}
			root, db, p, err := f.openProfiled(cmd.Context(), e, dirArg(args), false)
			if err != nil {
				return err
			}
			defer db.Close()
			now, err := harnessNow(e)
			if err != nil {
				return err
			}
			res, err := harness.WriteStored(cmd.Context(), root, db, kit, p, apply, now)
			if err != nil {
				return err
			}
			if f.asJSON {
				return writeJSON(e.stdout, res)
			}
			fmt.Fprint(e.stdout, res.Diff)
			for _, fc := range res.Files {
				fmt.Fprintf(e.stdout, "%s %s\n", fc.Action, fc.Path)
			}
			if !apply {
				fmt.Fprintf(e.stdout, "nothing written; rerun with --apply to write kit %s\n", kit)
			}
			return nil
		},
	}
	f.register(cmd)
	cmd.Flags().StringVar(&kit, "kit", "", "template kit id (required)")
	cmd.Flags().BoolVar(&apply, "apply", false, "write the files")
	return cmd
}

const harnessRunDoc = `run executes harness/manifest.json: each command (a gate, run with sh -c
from the repository root under its timeout) and each eval suite (JSONL
cases checked by the assertion engine). Gate logs and the full report go to
.crystallize/reports/<run id>/; the run, its cases and results go to the
ledger in the database. It exits 1 when a blocking gate or suite fails.
The manifest's commands are the repository's code: run a manifest only when
you would run the repository's own tests.

--phase P runs only the commands of phase P and the suites of phase P or of
none. Model-judged assertions (llm_rubric, factuality, select_best) use the
judge given by --judge-url and --judge-model (API key from
CRYSTALLIZE_JUDGE_API_KEY) and stay advisory unless "harness judge
calibrate" promoted that judge for the suite, on the golden set the suite
holds now. Each answer the judge gave is stored, redacted, under the run's
report directory; a case's judgeOutputs give its path, size and sha256.

Gates and case commands start with PATH, HOME, the locale, TMPDIR, TZ,
USER and LOGNAME only (as workflow commands do): the judge's API key and
other tokens in your environment are not the repository's to read.
--pass-env NAME passes a further variable (repeat it, or give a
comma-separated list).

A gate's whole output, redacted, is in its log; the report keeps its last
lines (at most 4 KiB), the log's size (outputBytes) and its digest
(outputSha256). Each gate gets an evidence directory in
$CRYSTALLIZE_EVIDENCE_DIR; the files it leaves there (screenshots, diff
images, recordings) are listed as its evidence.

A gate that exits 77 could not check anything (a browser or tool is
missing): it is reported as not evidence, never as a pass. It blocks the
run under --ci, which is on when the CI variable is "true" or "1".

--json prints the run report: {"runId", "profileId", "manifestHash",
"phase", "passed", "gates", "suites", "reportPath", ...}.

A blocking gate that failed, and that no memory names (gate:ID), gets a
proposed memory: the command that would record it, printed and never
run (in --json, "proposedMemories"). Rewrite its text into the lesson
the failure taught before you record it with "harness memory add".`

// passEnvFlag registers --pass-env, the variables a harness's commands
// get beyond the base environment.
func passEnvFlag(cmd *cobra.Command, p *[]string) {
	cmd.Flags().StringSliceVar(p, "pass-env", nil, "pass this environment variable to gates and case commands (repeatable)")
}

// judgeFlags configure a judge endpoint.
type judgeFlags struct {
	provider, url, model string
	temperature          float64
}

func (j *judgeFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&j.provider, "judge-provider", harness.ProviderOpenAI, "judge API: openai (any OpenAI-compatible endpoint) or anthropic")
	cmd.Flags().StringVar(&j.url, "judge-url", "", "judge endpoint base URL, such as http://localhost:8080/v1")
	cmd.Flags().StringVar(&j.model, "judge-model", "", "judge model id")
	cmd.Flags().Float64Var(&j.temperature, "judge-temperature", 0, "judge sampling temperature")
}

func (j *judgeFlags) config(e *env) *harness.JudgeConfig {
	if j.url == "" {
		return nil
	}
	return &harness.JudgeConfig{Provider: j.provider, BaseURL: j.url, Model: j.model, Temperature: j.temperature, APIKey: e.getenv("CRYSTALLIZE_JUDGE_API_KEY")}
}

func newHarnessRunCmd(e *env) *cobra.Command {
	var f harnessFlags
	var jf judgeFlags
	var phase string
	var passEnv []string
	var ci bool
	cmd := &cobra.Command{
		Use:   "run [DIR]",
		Short: "Run the harness and record the evidence",
		Long:  harnessRunDoc,
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			root, db, now, err := f.openAt(ctx, e, dirArg(args))
			if err != nil {
				return err
			}
			defer db.Close()
			if !cmd.Flags().Changed("ci") {
				v := e.getenv("CI")
				ci = v == "true" || v == "1"
			}
			rep, err := harness.RunRecorded(ctx, root, db, now, jf.config(e), harness.RunOptions{Phase: phase, Environ: os.Environ(), PassEnv: passEnv, CI: ci})
			if err != nil {
				return err
			}
			if err := printResult(e, f.asJSON, rep, func(w io.Writer) { writeHarnessRun(w, rep) }); err != nil {
				return err
			}
			if !rep.Passed {
				return failuref("harness run %s failed: %s", rep.RunID, strings.Join(rep.Failures(ci), "; "))
			}
			return nil
		},
	}
	f.register(cmd)
	jf.register(cmd)
	cmd.Flags().StringVar(&phase, "phase", "", "run only this phase")
	cmd.Flags().BoolVar(&ci, "ci", false, "a gate that is not evidence (exit 77) blocks the run (default: on when CI is true or 1)")
	passEnvFlag(cmd, &passEnv)
	return cmd
}

func writeHarnessRun(w io.Writer, rep *harness.RunReport) {
	for _, g := range rep.Gates {
		verdict := passOrFail(g.Passed)
		if g.NotEvidence {
			verdict = "NOT EVIDENCE"
		}
		fmt.Fprintf(w, "%s gate %s (blocks=%t, exit %d, %dms) log %s\n", verdict, g.ID, g.Blocks, g.ExitCode, g.DurationMS, g.OutputPath)
		for _, p := range g.Evidence {
			fmt.Fprintf(w, "    evidence %s\n", p)
		}
		if !g.Passed && g.Tail != "" {
			for _, line := range strings.Split(g.Tail, "\n") {
				fmt.Fprintf(w, "    %s\n", line)
			}
		}
	}
	for _, s := range rep.Suites {
		fmt.Fprintf(w, "%s suite %s score %.3g threshold %.3g (blocking=%t)\n", passOrFail(s.Passed), s.ID, s.Score, s.Threshold, s.Blocking)
		if s.Error != "" {
			fmt.Fprintf(w, "    %s\n", s.Error)
		}
		for _, c := range s.Cases {
			for _, r := range c.Results {
				if !r.Passed {
					fmt.Fprintf(w, "    %s %s/%s (blocking=%t): %s\n", passOrFail(r.Passed), c.ID, r.Type, r.Blocking, r.Message)
				}
			}
		}
	}
	fmt.Fprintf(w, "run %s %s, report %s\n", rep.RunID, map[bool]string{true: "passed", false: "failed"}[rep.Passed], rep.ReportPath)
	for _, m := range rep.ProposedMemories {
		line := "crystallize harness memory add " + harness.ShellQuote(m.Text)
		for _, sc := range m.Scope {
			line += " --scope " + harness.ShellQuote(sc)
		}
		line += " --source " + harness.ShellQuote(m.Source)
		fmt.Fprintf(w, "proposed memory (not written; rewrite it as the lesson, then run):\n  %s\n", line)
	}
}
