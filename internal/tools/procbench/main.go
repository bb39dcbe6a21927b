// Procbench measures, on real agent sessions, whether crystallize mine
// finds the procedures a person would name.
//
// Usage:
//
//	go run ./internal/tools/procbench -crystallize BIN [flags] DIR...
//	go run ./internal/tools/procbench -report R.json [flags] DIR
//
// For each DIR (a directory of Claude Code or Codex session logs, Gemini
// CLI chats or crystallization traces, searched recursively) it
//
//  1. reads the sessions itself and counts, with a small detector of its
//     own, the sessions in which each named procedure occurs: commit-push
//     (git add → git commit → git push), commit-push-pr (git commit → git
//     push → gh pr create), test-fix-retest (a test command, a file edit,
//     the same test command again: go test, pytest, npm/yarn/pnpm test,
//     cargo test), dependency-bump (go get, npm install PKG, cargo update …
//     → go mod tidy or a test → git commit) and release (git tag TAG → git
//     push, or gh release create). A procedure occurs when its steps
//     appear in order within one session, whatever happens between them;
//  2. runs BIN mine --from DIR --report R.json --json --min-examples N
//     (or reads R.json given with -report) and reads every candidate of
//     the report, safe and rejected, with its steps;
//  3. prints recall: of the named procedures that occur in at least N
//     sessions, how many mine reports as a candidate whose steps contain
//     the procedure's steps in order (and how many as a safe one);
//     precision: the share of candidates that contain some named
//     procedure; and the junk candidates by name (observations only,
//     edits only, no command, one step repeated).
//
// The detector reads the raw logs rather than crystallize's import of
// them, so that what counts as a procedure does not depend on the code
// being measured: a session the importer refuses still counts, as a
// procedure the miner missed. When mine refuses a directory (exit status
// 1 without a report), procbench runs it again with --skip-invalid and
// says so (mine_skip_invalid in the JSON); -skip-invalid asks for it
// from the start. mine's exit status 1 with a report ("no safe
// candidate") is a result, not a failure.
//
// Flags:
//
//	-crystallize BIN   the crystallize binary to run mine with
//	-report FILE       read this report instead of running mine (one DIR)
//	-min-examples N    sessions a procedure needs to be expected of mine,
//	                   and mine's own --min-examples (default 2)
//	-skip-invalid      pass --skip-invalid to mine
//	-mine-arg ARG      one more argument for mine (repeatable), such as
//	                   -mine-arg=--max-candidates=50
//	-json              print the results as JSON
//
// Run on the fixtures and on any other directory, from the module root:
//
//	go build -o /tmp/cz ./cmd/crystallize
//	go run ./internal/tools/procbench -crystallize /tmp/cz ../shared/fixtures/real-agents/*
//	go run ./internal/tools/procbench -crystallize /tmp/cz -json ~/corpus/* > bench.json
//
// Exit status is 0 when every directory was measured, 1 when one could
// not be (unreadable, or mine failed without a report) and 2 for bad
// flags.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

const usageLine = "usage: procbench -crystallize BIN [-min-examples N] [-skip-invalid] [-mine-arg ARG]... [-json] DIR...\n" +
	"       procbench -report R.json [-min-examples N] [-json] DIR"

type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, " ") }
func (l *stringList) Set(s string) error { *l = append(*l, s); return nil }

// options are procbench's flags.
type options struct {
	crystallize string
	report      string
	minExamples int
	skipInvalid bool
	mineArgs    []string
	json        bool
}

// Result is the benchmark of one directory.
type Result struct {
	Dir string `json:"dir"`
	// Files counts the files read by format; Sessions the sessions with
	// at least one command or edit.
	Files    map[string]int `json:"files"`
	Sessions int            `json:"sessions"`
	// Ignored are files of no format the detector knows; Problems the
	// records it could not read.
	Ignored  []string  `json:"ignored"`
	Problems []Problem `json:"problems"`
	// Mine says how mine ran.
	MineSkipInvalid bool   `json:"mine_skip_invalid"`
	MineExit        int    `json:"mine_exit"`
	MineError       string `json:"mine_error,omitempty"`
	MineTraces      int    `json:"mine_traces"`
	Score
}

func run(args []string, stdout, stderr io.Writer) int {
	results, err := procbench(context.Background(), args, stdout, stderr)
	var ue *usageError
	switch {
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "procbench: %v\n%s\n", err, usageLine)
		return 2
	case err != nil:
		fmt.Fprintf(stderr, "procbench: %v\n", err)
		return 1
	}
	for _, r := range results {
		if r.MineError != "" {
			return 1
		}
	}
	return 0
}

func procbench(ctx context.Context, args []string, stdout, stderr io.Writer) ([]Result, error) {
	flags := flag.NewFlagSet("procbench", flag.ContinueOnError)
	flags.SetOutput(io.Discard)
	var o options
	var mineArgs stringList
	flags.StringVar(&o.crystallize, "crystallize", "", "crystallize `binary` to run mine with")
	flags.StringVar(&o.report, "report", "", "read this mine report instead of running mine (one DIR)")
	flags.IntVar(&o.minExamples, "min-examples", 2, "sessions a procedure must occur in to be expected of mine")
	flags.BoolVar(&o.skipInvalid, "skip-invalid", false, "pass --skip-invalid to mine")
	flags.Var(&mineArgs, "mine-arg", "one more argument for mine (repeatable)")
	flags.BoolVar(&o.json, "json", false, "print the results as JSON")
	if err := flags.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stdout, usageLine)
			flags.SetOutput(stdout)
			flags.PrintDefaults()
			return nil, err
		}
		return nil, &usageError{err.Error()}
	}
	o.mineArgs = mineArgs
	dirs := flags.Args()
	switch {
	case len(dirs) == 0:
		return nil, &usageError{"no DIR given"}
	case o.report == "" && o.crystallize == "":
		return nil, &usageError{"-crystallize or -report is required"}
	case o.report != "" && len(dirs) > 1:
		return nil, &usageError{"-report reads one DIR's report; give one DIR"}
	case o.minExamples < 1:
		return nil, &usageError{"-min-examples must be at least 1"}
	}
	var results []Result
	for _, dir := range dirs {
		r, err := benchDir(ctx, dir, o)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", dir, err)
		}
		results = append(results, r)
	}
	if o.json {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return results, enc.Encode(struct {
			MinExamples int      `json:"min_examples"`
			Results     []Result `json:"results"`
			Total       Total    `json:"total"`
		}{o.minExamples, results, total(results)})
	}
	printResults(stdout, results, o.minExamples)
	return results, nil
}

func benchDir(ctx context.Context, dir string, o options) (Result, error) {
	c, err := readDir(dir)
	if err != nil {
		return Result{}, err
	}
	res := Result{Dir: dir, Files: c.Files, Sessions: len(c.Sessions), Ignored: c.Ignored, Problems: c.Problems}
	if res.Ignored == nil {
		res.Ignored = []string{}
	}
	if res.Problems == nil {
		res.Problems = []Problem{}
	}
	det := Detect(Procedures, c.Sessions)
	rep := &report{}
	if o.report != "" {
		if rep, err = readReport(o.report); err != nil {
			return Result{}, err
		}
	} else {
		rep, err = runMine(ctx, dir, o, &res)
		if err != nil {
			return Result{}, err
		}
	}
	res.MineTraces = rep.SourceTraceCount
	res.Score = score(det, judge(Procedures, rep), o.minExamples)
	return res, nil
}

// runMine runs mine on dir and reads its report. mine exits 1 both when
// it refuses its input and when it finds no safe candidate; only the
// first leaves no report. A refused directory is mined again with
// --skip-invalid, and a directory refused even so is measured with no
// candidate, its error kept in res.MineError.
func runMine(ctx context.Context, dir string, o options, res *Result) (*report, error) {
	tmp, err := os.MkdirTemp("", "procbench-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	path := filepath.Join(tmp, "report.json")
	// mine runs in tmp, so that it writes no state into the caller's
	// directory; the directory it reads must then be absolute.
	from, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	attempt := func(skip bool) (*report, error) {
		os.Remove(path)
		args := []string{"mine", "--from", from, "--report", path, "--json", "--progress", "none", "--min-examples", fmt.Sprint(o.minExamples)}
		if skip {
			args = append(args, "--skip-invalid")
		}
		args = append(args, o.mineArgs...)
		cmd := exec.CommandContext(ctx, o.crystallize, args...)
		var stderr bytes.Buffer
		cmd.Stdout = io.Discard
		cmd.Stderr = &stderr
		cmd.Dir = tmp // mine may write state next to where it runs
		err := cmd.Run()
		res.MineExit = cmd.ProcessState.ExitCode()
		if rep, rerr := readReport(path); rerr == nil {
			return rep, nil
		}
		if err == nil {
			err = errors.New("mine wrote no report")
		}
		msg := strings.TrimSpace(stderr.String())
		if i := strings.IndexByte(msg, '\n'); i >= 0 {
			msg = msg[:i]
		}
		return nil, fmt.Errorf("%v: %s", err, msg)
	}
	res.MineSkipInvalid = o.skipInvalid
	rep, err := attempt(o.skipInvalid)
	if err != nil && !o.skipInvalid {
		res.MineSkipInvalid = true
		rep, err = attempt(true)
	}
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) && res.MineExit < 0 {
			return nil, err // the binary did not run at all
		}
		res.MineError = err.Error()
		return &report{}, nil
	}
	return rep, nil
}

// Total sums the directories: recall over every eligible (directory,
// procedure) pair, precision over every candidate.
type Total struct {
	Sessions     int            `json:"sessions"`
	ProcSessions map[string]int `json:"procedure_sessions"`
	Eligible     int            `json:"eligible"`
	Recalled     int            `json:"recalled"`
	RecalledSafe int            `json:"recalled_safe"`
	Recall       float64        `json:"recall"`
	RecallSafe   float64        `json:"recall_safe"`
	Candidates   int            `json:"candidates"`
	Safe         int            `json:"safe_candidates"`
	Matched      int            `json:"matched_candidates"`
	Junk         int            `json:"junk_candidates"`
	// JunkSafe is the junk mine called safe; the rest it rejected, with
	// the reason in its report.
	JunkSafe    int      `json:"junk_safe"`
	Precision   float64  `json:"precision"`
	MineFailed  []string `json:"mine_failed"`
	SkipInvalid []string `json:"mine_skip_invalid"`
}

func total(results []Result) Total {
	t := Total{ProcSessions: map[string]int{}, MineFailed: []string{}, SkipInvalid: []string{}}
	for _, r := range results {
		t.Sessions += r.Sessions
		for _, p := range r.Procedures {
			t.ProcSessions[p.Procedure] += p.Sessions
		}
		t.Eligible += r.Eligible
		t.Recalled += r.Recalled
		t.RecalledSafe += r.RecalledSafe
		t.Candidates += r.Candidates
		t.Safe += r.Safe
		t.Matched += r.Matched
		t.Junk += len(r.Junk)
		for _, c := range r.Junk {
			if c.Safe {
				t.JunkSafe++
			}
		}
		if r.MineError != "" {
			t.MineFailed = append(t.MineFailed, r.Dir)
		}
		if r.MineSkipInvalid {
			t.SkipInvalid = append(t.SkipInvalid, r.Dir)
		}
	}
	t.Recall = ratio(t.Recalled, t.Eligible)
	t.RecallSafe = ratio(t.RecalledSafe, t.Eligible)
	t.Precision = ratio(t.Matched, t.Candidates)
	return t
}

func pct(f float64) string {
	if f < 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f%%", 100*f)
}

func printResults(w io.Writer, results []Result, minExamples int) {
	for _, r := range results {
		var formats []string
		for f, n := range r.Files {
			formats = append(formats, fmt.Sprintf("%s %d", f, n))
		}
		sort.Strings(formats)
		fmt.Fprintf(w, "%s: %d sessions (files: %s; %d ignored, %d unreadable records)\n", r.Dir, r.Sessions, strings.Join(formats, ", "), len(r.Ignored), len(r.Problems))
		switch {
		case r.MineError != "":
			fmt.Fprintf(w, "  mine failed: %s\n", r.MineError)
		case r.MineSkipInvalid:
			fmt.Fprintf(w, "  mine ran with --skip-invalid: %d traces\n", r.MineTraces)
		default:
			fmt.Fprintf(w, "  mine: %d traces\n", r.MineTraces)
		}
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "  procedure\tsessions\tcandidate\tsafe\tpartly")
		for _, p := range r.Procedures {
			found, safe, partly := "-", "-", "-"
			if p.Eligible {
				found, safe = "no", "no"
				if len(p.Found) > 0 {
					found = shortName(p.Found[0])
				}
				if len(p.FoundSafe) > 0 {
					safe = "yes"
				}
			}
			if len(p.Partly) > 0 {
				partly = shortName(p.Partly[0])
			}
			fmt.Fprintf(tw, "  %s\t%d\t%s\t%s\t%s\n", p.Procedure, p.Sessions, found, safe, partly)
		}
		tw.Flush()
		fmt.Fprintf(w, "  recall %s (%d/%d), as safe %s (%d/%d); precision %s (%d/%d candidates, %d safe)\n",
			pct(r.Recall), r.Recalled, r.Eligible, pct(r.RecallSafe), r.RecalledSafe, r.Eligible,
			pct(r.Precision), r.Matched, r.Candidates, r.Safe)
		for _, c := range r.Junk {
			verdict := "rejected"
			if c.Safe {
				verdict = "safe"
			}
			fmt.Fprintf(w, "  junk %s (%s): %s [%s]\n", c.Junk, verdict, shortName(c.Name), strings.Join(c.Steps, " → "))
		}
		for _, c := range r.Unnamed {
			what := "unnamed"
			if len(c.Partly) > 0 {
				what = "near miss (" + strings.Join(c.Partly, ", ") + ")"
			}
			fmt.Fprintf(w, "  %s: %s [%s]\n", what, shortName(c.Name), strings.Join(c.Steps, " → "))
		}
	}
	t := total(results)
	fmt.Fprintf(w, "total: %d sessions; procedures expected of mine (in >= %d sessions of one directory): %d; recall %s (%d), as safe %s (%d); precision %s (%d/%d candidates); %d junk, %d of it safe\n",
		t.Sessions, minExamples, t.Eligible, pct(t.Recall), t.Recalled, pct(t.RecallSafe), t.RecalledSafe, pct(t.Precision), t.Matched, t.Candidates, t.Junk, t.JunkSafe)
}
