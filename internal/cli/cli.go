package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"regexp"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/crystallize-dev/crystallize/internal/trace"
	"github.com/crystallize-dev/crystallize/internal/tracestore"
)

// Exit codes.
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
)

// usageError marks an error in how the command was called; it exits 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

// exitError carries a specific exit code for an error that has already
// been explained on stdout or stderr, such as "no safe candidate".
type exitError struct {
	code int
	err  error
}

func (e exitError) Error() string { return e.err.Error() }
func (e exitError) Unwrap() error { return e.err }

// failure marks err, whose cause the command has already printed (an
// invalid bundle, no candidate, a failed gate), as a failure: exit 1.
func failure(err error) error { return exitError{code: exitFailure, err: err} }

// failuref is failure with a formatted error.
func failuref(format string, args ...any) error { return failure(fmt.Errorf(format, args...)) }

// env is what a command may know about the process it runs in. Main fills
// it from the real process; tests can fill it themselves.
type env struct {
	stdout, stderr io.Writer
	getenv         func(string) string
	// stderrTTY is true when stderr is an interactive terminal, which
	// enables progress bars.
	stderrTTY bool
	// storeCorpus, when set, is handed the trace store corpus mine
	// --store opens, so that a benchmark of the command can ask what it
	// decoded (tracestore.Corpus.Decoded).
	storeCorpus func(*tracestore.Corpus)
}

// Main runs the command line in os.Args and returns the exit code. SIGINT
// cancels the context every command runs under.
func Main() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	e := &env{stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv, stderrTTY: isTerminal(os.Stderr)}
	return run(ctx, e, os.Args[1:])
}

func run(ctx context.Context, e *env, args []string) int {
	root := newRoot(e)
	root.SetArgs(args)
	root.SetOut(e.stdout)
	root.SetErr(e.stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	printError(e.stderr, err)
	var ue usageError
	var ee exitError
	switch {
	case errors.As(err, &ee):
		return ee.code
	case errors.As(err, &ue):
		return exitUsage
	case isCobraUsage(err):
		return exitUsage
	}
	return exitFailure
}

// printError writes err as "crystallize: <err>". A list of input errors is
// printed one per line after a count, each already prefixed with its file,
// line and JSON path, so editors and grep can jump to them.
func printError(w io.Writer, err error) {
	err = withHints(err)
	var list trace.ErrorList
	if errors.As(err, &list) && len(list) > 1 {
		head := strings.TrimSuffix(err.Error(), list.Error())
		head = strings.TrimSuffix(strings.TrimSpace(head), ":")
		if head == "" {
			head = "invalid input"
		}
		fmt.Fprintf(w, "crystallize: %s: %d problems\n", head, len(list))
		if len(list) > maxListedProblems {
			writeGrouped(w, list)
			return
		}
		for _, e := range list {
			fmt.Fprintf(w, "  %s\n", e.Error())
		}
		return
	}
	fmt.Fprintf(w, "crystallize: %s\n", err)
}

// maxListedProblems is how many input problems are listed one per line;
// more are grouped by cause (writeGrouped), so that a directory a
// format is not recognized in reads as one cause, not a line per record.
const maxListedProblems = 20

// maxGroupPlaces is how many places of a cause are named.
const maxGroupPlaces = 3

// causeDigits and causeQuoted are what two problems of one cause differ
// in: the numbers (an index in a JSON path, a line) and the quoted
// values (an id, a type name) of their paths and messages.
var (
	causeDigits = regexp.MustCompile(`[0-9]+`)
	causeQuoted = regexp.MustCompile(`"[^"]*"`)
)

// writeGrouped writes the problems of list grouped by cause, in the order
// each cause is first met: the count, the first problem's JSON path and
// message, and the first places (file:line) of the cause.
func writeGrouped(w io.Writer, list trace.ErrorList) {
	type group struct {
		first  *trace.Error
		count  int
		places []string
	}
	var groups []*group
	byCause := map[string]*group{}
	for _, e := range list {
		cause := causeQuoted.ReplaceAllString(causeDigits.ReplaceAllString(e.Path+": "+e.Msg, "N"), `"…"`)
		g := byCause[cause]
		if g == nil {
			g = &group{first: e}
			byCause[cause] = g
			groups = append(groups, g)
		}
		g.count++
		if len(g.places) < maxGroupPlaces {
			g.places = append(g.places, trace.Origin{Path: e.File, Line: e.Line}.String())
		}
	}
	for _, g := range groups {
		what := g.first.Msg
		if g.first.Path != "" {
			what = g.first.Path + ": " + what
		}
		more := ""
		if g.count > len(g.places) {
			more = ", …"
		}
		fmt.Fprintf(w, "  %d × %s\n    at %s%s\n", g.count, what, strings.Join(g.places, ", "), more)
	}
}

// isCobraUsage recognizes cobra's own argument errors, which it returns as
// plain errors.
func isCobraUsage(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown command", "unknown flag", "unknown shorthand flag", "flag needs an argument", "invalid argument", "accepts ", "requires at least", "required flag"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}

// version is the tool version: set at link time with
// -ldflags "-X github.com/crystallize-dev/crystallize/internal/cli.version=v1.2.3",
// else taken from the module build info.
var version = ""

func toolVersion() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "devel"
}

const rootDoc = `crystallize reads the traces your agents leave behind, finds the procedures
they repeat, and writes each one as a readable Starlark workflow with a
machine-readable report, so the stable part runs on CPU and only the truly
ambiguous steps still need a model or a person.

Start with:
  crystallize mine --from traces/ --out workflow.star --report report.json

For compatibility, "crystallize --from DIR --out FILE --report FILE" without
a subcommand does the same as "crystallize mine".`

func newRoot(e *env) *cobra.Command {
	mf := &mineFlags{}
	root := &cobra.Command{
		Use:           "crystallize",
		Short:         "Turn repeated agent traces into reviewed, replay-gated workflows",
		Long:          rootDoc,
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if !cmd.Flags().Changed("from") {
				return cmd.Help()
			}
			return runMine(cmd.Context(), e, mf, cmd.Flags())
		},
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	mf.register(root.Flags())
	// The compatibility form takes mine's flags, but the root's help lists
	// the commands: mine's flags are in crystallize mine --help.
	root.Flags().VisitAll(func(f *pflag.Flag) { f.Hidden = true })
	root.AddCommand(newMineCmd(e), newValidateCmd(e), newShadowCmd(e), newApproveCmd(e), newEvalCmd(e), newIngestCmd(e), newImportCmd(e), newPersonaCmd(e), newRunCmd(e), newResumeCmd(e), newSessionCmd(e), newPlanCmd(e), newToonCmd(e), newVersionCmd(e))
	root.AddCommand(newCaptureCmd(e), newServeCmd(e), newStatsCmd(e))
	root.AddCommand(newInstallCmd(e), newUninstallCmd(e))
	root.AddCommand(newHarnessCmd(e))
	root.AddCommand(newSessionsCmd(e), newStatusCmd(e))
	root.AddCommand(newSynthCmd(e))
	root.AddCommand(newStoreCmd(e))
	root.AddCommand(newReviewCmd(e))
	root.AddCommand(newWorkerCmd(e), newApproveRunCmd(e), newRunsCmd(e))
	return root
}
