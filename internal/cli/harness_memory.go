package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/crystallize-dev/crystallize/internal/harness"
	"github.com/crystallize-dev/crystallize/internal/harness/memory"
)

const harnessMemoryDoc = `memory keeps the lessons a repository's harness should not forget, and
"harness plan" recalls them before work.

A memory is one line of plain text with a scope: where it applies. It is
kept in harness/memory.jsonl, a file of the repository, beside the
manifest: review it and commit it like code, and every clone recalls it.
It is not in the run ledger (.crystallize/state.db): deleting the ledger
loses no memory, and "memory lessons" lists what the ledger tallied from
runs instead.

  crystallize harness memory add "run every migration down, then up" \
      --scope path:db/migrations/** --scope family:database
  crystallize harness plan        # shows it while db/migrations changes
  crystallize harness memory list
  crystallize harness memory forget mem_3f1c0a9b2e77`

func newHarnessMemoryCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "memory",
		Short: "Keep lessons for the harness plan to recall",
		Long:  harnessMemoryDoc,
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(newHarnessMemoryAddCmd(e), newHarnessMemoryListCmd(e), newHarnessMemoryForgetCmd(e), newHarnessMemoryLessonsCmd(e))
	return cmd
}

const harnessMemoryAddDoc = `add records TEXT, a lesson, in harness/memory.jsonl of the repository
containing DIR (default "."). Review and commit the file.

--scope says where the lesson applies; give it once per entry, at least
once. "harness plan" shows the memory when one of its entries names
something the plan is about:

  path:GLOB     a path the plan touches: a file changed in the work tree,
                a file a risk signal names, a harness file, or a file a
                proposed kit would write. "*" matches within a directory,
                "**" any number of directories; a directory matches what
                is under it (path:db/migrations, path:**/*.sql)
  gate:ID       a gate or eval suite of the manifest or of a proposed kit
                (gate:go-vet)
  kit:ID        a kit the manifest applied or the plan proposes
                (kit:go-service)
  family:NAME   a risk family the profile shows (family:database)
  stack:KIND    a stack the profile shows (stack:go)

--source says who or what taught it: person (the default),
person:NAME, gate:ID, case:SUITE/ID, drift:KIND or review.

TEXT is one line of plain text, at most 2000 bytes: no control
characters, no markup. The same TEXT with the same scope is the same
memory (its id is their hash), and adding it twice is an error.

--json prints the memory: {"id", "text", "scope", "source", "created"}.
created is SOURCE_DATE_EPOCH when set, else now.`

func newHarnessMemoryAddCmd(e *env) *cobra.Command {
	var asJSON bool
	var scope []string
	var source string
	cmd := &cobra.Command{
		Use:   "add TEXT [DIR] --scope KIND:VALUE...",
		Short: "Record a lesson and where it applies",
		Long:  harnessMemoryAddDoc,
		Args:  cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(scope) == 0 {
				return usagef("harness memory add: --scope is required: say where the lesson applies (path:GLOB, gate:ID, kit:ID, family:NAME or stack:KIND)")
			}
			root, err := harness.Root(cmd.Context(), dirArg(args[1:]))
			if err != nil {
				return err
			}
			now, err := harnessNow(e)
			if err != nil {
				return err
			}
			m, err := memory.New(args[0], scope, source, now)
			if err != nil {
				return fmt.Errorf("harness memory add: %w", err)
			}
			if m, err = memory.Add(root, m); err != nil {
				return err
			}
			return printResult(e, asJSON, m, func(w io.Writer) {
				fmt.Fprintf(w, "remembered %s in %s (scope %s); review and commit it\n", m.ID, memory.File, strings.Join(m.Scope, ", "))
			})
		},
	}
	resultJSONFlag(cmd.Flags(), &asJSON)
	// StringArray, not StringSlice: one entry per flag, so a comma in a
	// glob stays in it.
	cmd.Flags().StringArrayVar(&scope, "scope", nil, "where the lesson applies, KIND:VALUE (repeatable; required)")
	cmd.Flags().StringVar(&source, "source", "", "who or what taught it: person[:NAME], gate:ID, case:SUITE/ID, drift:KIND, review (default person)")
	return cmd
}

const harnessMemoryListDoc = `list prints the memories of the repository containing DIR (default "."),
oldest first, each with its id, scope, source and time.

--json prints [{"id", "text", "scope", "source", "created"}], [] when
there is none. A memory file with a bad line is an error naming the file,
line and JSON path of each problem.`

func newHarnessMemoryListCmd(e *env) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list [DIR]",
		Short: "List the recorded memories",
		Long:  harnessMemoryListDoc,
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			root, err := harness.Root(cmd.Context(), dirArg(args))
			if err != nil {
				return err
			}
			list, err := memory.Load(root)
			if err != nil {
				return err
			}
			return printResult(e, asJSON, list, func(w io.Writer) {
				if len(list) == 0 {
					fmt.Fprintf(w, "no memories in %s\n", memory.File)
				}
				for _, m := range list {
					fmt.Fprintf(w, "%s %s\n  scope %s · %s · %s\n", m.ID, m.Text, strings.Join(m.Scope, ", "), m.Source, m.Created)
				}
			})
		},
	}
	resultJSONFlag(cmd.Flags(), &asJSON)
	return cmd
}

const harnessMemoryForgetDoc = `forget removes the memory ID (as "memory list" prints it) from
harness/memory.jsonl of the repository containing DIR (default ".").
Review and commit the file. An unknown ID is an error and changes
nothing.

--json prints the memory forgotten: {"id", "text", "scope", "source",
"created"}.`

func newHarnessMemoryForgetCmd(e *env) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "forget ID [DIR]",
		Short: "Remove a memory",
		Long:  harnessMemoryForgetDoc,
		Args:  cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			root, err := harness.Root(cmd.Context(), dirArg(args[1:]))
			if err != nil {
				return err
			}
			m, err := memory.Forget(root, args[0])
			if err != nil {
				return err
			}
			return printResult(e, asJSON, m, func(w io.Writer) {
				fmt.Fprintf(w, "forgot %s: %s\n", m.ID, m.Text)
			})
		},
	}
	resultJSONFlag(cmd.Flags(), &asJSON)
	return cmd
}

const harnessMemoryLessonsDoc = `lessons lists what the run ledger tallied from harness runs of the
repository: a lesson for each blocking gate or case that held in a passing
run, an anti-pattern for each that failed, with their maturity
(candidate, established, proven, or decayed) and links to the runs and
reports that showed them. They are derived from the ledger
(.crystallize/state.db, or --db) and go with it; keep what should outlast
it with "memory add".

--json prints [{"id", "kind", "subject", "text", "maturity", "count",
"lastSeq", "evidence": [{"runId", "reportPath"}]}].`

func newHarnessMemoryLessonsCmd(e *env) *cobra.Command {
	var f harnessFlags
	cmd := &cobra.Command{
		Use:   "lessons [DIR]",
		Short: "List the lessons and anti-patterns the ledger tallied from runs",
		Long:  harnessMemoryLessonsDoc,
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			root, db, err := f.open(ctx, dirArg(args))
			if err != nil {
				return err
			}
			defer db.Close()
			lessons, err := harness.LessonsStored(ctx, root, db)
			if err != nil {
				return err
			}
			if f.asJSON {
				return writeJSON(e.stdout, lessons)
			}
			for _, l := range lessons {
				fmt.Fprintf(e.stdout, "%s %s (%s, %d runs): %s\n", l.Kind, l.Subject, l.Maturity, l.Count, l.Text)
			}
			return nil
		},
	}
	f.register(cmd)
	return cmd
}

// writeRecalled prints the memories a plan recalls, each with the scope
// entries that brought it up.
func writeRecalled(w io.Writer, list []memory.Recalled) {
	for _, r := range list {
		fmt.Fprintf(w, "memory %s: %s\n", r.ID, r.Text)
		for _, m := range r.Matches {
			fmt.Fprintf(w, "  scope %s matches %s\n", m.Scope, m.Matched)
		}
	}
}
