// Gencorpus writes a seeded synthetic trace corpus for testing and
// benchmarking the miner: random noise with procedures planted into it
// (see package tracetest).
//
// Usage:
//
//	go run ./internal/tools/gencorpus -traces N -out DIR [flags]
//
// It writes one JSON file per trace (DIR/trace-000001.json, ...), or with
// -jsonl a single DIR/traces.jsonl, and prints a one-line summary. The
// same flags always give the same bytes.
//
// The list of planted procedures, what a miner should recover, is written
// only when -manifest names a file for it, and never inside DIR, where the
// miner would read it as a trace.
//
// Flags:
//
//	-traces N        number of traces (required)
//	-out DIR         directory to write; created if missing (required)
//	-seed S          random seed (default 1)
//	-procedures K    planted procedures (default 8)
//	-actions L       average actions per trace (default 50)
//	-support F       fraction of traces each procedure is planted into (default 0.05)
//	-min-len N       length of the shortest procedure (default 2)
//	-max-len N       length of the longest procedure (default 40)
//	-noise N         distinct noise tools (default 200)
//	-fuzzy-every N   make every Nth procedure's middle step a fuzzy model call
//	-jsonl           write DIR/traces.jsonl instead of one file per trace
//	-manifest FILE   write the planted procedures to FILE as JSON
//	-force           write into a non-empty DIR, first removing the trace
//	                 files an earlier run wrote there, and replace FILE
//
// Exit status is 0 on success, 1 when writing fails and 2 for bad flags.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/crystallize-dev/crystallize/internal/tracetest"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

const usageLine = "usage: gencorpus -traces N -out DIR [-seed S] [-procedures K] [-actions L] [-jsonl] [-manifest FILE] [-force] [flags]"

// jsonlName is the file -jsonl writes in DIR.
const jsonlName = "traces.jsonl"

// usageError is a bad command line (exit status 2).
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{fmt.Sprintf(format, args...)}
}

// run is the command: it parses args, writes the corpus and returns the
// exit status. It writes only to stdout and stderr, so tests run it
// in-process.
func run(args []string, stdout, stderr io.Writer) int {
	err := gencorpus(args, stdout)
	var ue *usageError
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "gencorpus: %v\n%s\nRun 'gencorpus -h' for the list of flags.\n", err, usageLine)
		return 2
	default:
		fmt.Fprintf(stderr, "gencorpus: %v\n", err)
		return 1
	}
}

func gencorpus(args []string, stdout io.Writer) error {
	flags := flag.NewFlagSet("gencorpus", flag.ContinueOnError)
	flags.SetOutput(io.Discard) // errors are reported once, by run
	var (
		cfg      tracetest.Config
		out      = flags.String("out", "", "directory to write; created if missing (required)")
		jsonl    = flags.Bool("jsonl", false, "write DIR/"+jsonlName+" instead of one file per trace")
		manifest = flags.String("manifest", "", "write the planted procedures to `FILE` as JSON (outside DIR)")
		force    = flags.Bool("force", false, "write into a non-empty DIR, removing an earlier run's trace files, and replace FILE")
	)
	flags.IntVar(&cfg.Traces, "traces", 0, "number of traces (required)")
	flags.Uint64Var(&cfg.Seed, "seed", 1, "random seed")
	flags.IntVar(&cfg.Procedures, "procedures", tracetest.DefaultProcedures, "number of planted procedures")
	flags.IntVar(&cfg.Actions, "actions", tracetest.DefaultActions, "average actions per trace")
	flags.Float64Var(&cfg.Support, "support", tracetest.DefaultSupport, "fraction of traces each procedure is planted into")
	flags.IntVar(&cfg.MinLen, "min-len", tracetest.DefaultMinLen, "length of the shortest procedure")
	flags.IntVar(&cfg.MaxLen, "max-len", tracetest.DefaultMaxLen, "length of the longest procedure")
	flags.IntVar(&cfg.NoiseVocabulary, "noise", tracetest.DefaultNoiseVocabulary, "number of distinct noise tools")
	flags.IntVar(&cfg.FuzzyEvery, "fuzzy-every", 0, "make every `N`th procedure's middle step a fuzzy model call (0: none)")

	if err := flags.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stdout, usageLine)
			flags.SetOutput(stdout)
			flags.PrintDefaults()
			return err
		}
		return usagef("%v", err)
	}
	if err := checkFlags(flags, cfg, *out, *manifest); err != nil {
		return err
	}

	if err := prepareDir(*out, *force); err != nil {
		return err
	}
	if *manifest != "" && !*force {
		if _, err := os.Lstat(*manifest); err == nil {
			return fmt.Errorf("%s already exists (use -force to replace it)", *manifest)
		}
	}

	c := tracetest.Generate(cfg)
	var err error
	if *jsonl {
		err = c.WriteJSONL(filepath.Join(*out, jsonlName))
	} else {
		err = c.WriteDir(*out)
	}
	if err != nil {
		return err
	}
	if *manifest != "" {
		data, err := json.MarshalIndent(c.Planted, "", "  ")
		if err != nil {
			return fmt.Errorf("writing manifest: %w", err)
		}
		if err := os.WriteFile(*manifest, append(data, '\n'), 0o644); err != nil {
			return fmt.Errorf("writing manifest: %w", err)
		}
	}

	actions, plantings := 0, 0
	for _, t := range c.Traces {
		actions += len(t.Actions)
	}
	for _, p := range c.Planted {
		plantings += len(p.TraceIDs)
	}
	where := *out
	if *jsonl {
		where = filepath.Join(*out, jsonlName)
	}
	fmt.Fprintf(stdout, "wrote %d traces, %d actions, %d procedures planted %d times (seed %d) to %s\n",
		len(c.Traces), actions, len(c.Planted), plantings, cfg.Seed, where)
	return nil
}

// checkFlags reports the first bad flag as a usage error. Values that
// tracetest would quietly replace by a default are refused here, so what
// the user asked for is what is generated.
func checkFlags(flags *flag.FlagSet, cfg tracetest.Config, out, manifest string) error {
	switch {
	case flags.NArg() > 0:
		return usagef("unexpected argument %q", flags.Arg(0))
	case out == "":
		return usagef("-out is required")
	case cfg.Traces <= 0:
		return usagef("-traces must be at least 1, got %d", cfg.Traces)
	case cfg.Procedures < 1:
		return usagef("-procedures must be at least 1, got %d", cfg.Procedures)
	case cfg.Actions < 1:
		return usagef("-actions must be at least 1, got %d", cfg.Actions)
	case !(cfg.Support > 0 && cfg.Support <= 1):
		return usagef("-support must be in (0, 1], got %v", cfg.Support)
	case cfg.MinLen < 1:
		return usagef("-min-len must be at least 1, got %d", cfg.MinLen)
	case cfg.MaxLen < cfg.MinLen:
		return usagef("-max-len (%d) must not be below -min-len (%d)", cfg.MaxLen, cfg.MinLen)
	case cfg.NoiseVocabulary < 1:
		return usagef("-noise must be at least 1, got %d", cfg.NoiseVocabulary)
	case cfg.FuzzyEvery < 0:
		return usagef("-fuzzy-every must not be negative, got %d", cfg.FuzzyEvery)
	}
	if manifest != "" {
		absOut, err1 := filepath.Abs(out)
		absMan, err2 := filepath.Abs(manifest)
		if err1 == nil && err2 == nil {
			if rel, err := filepath.Rel(absOut, absMan); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
				return usagef("-manifest %s is inside -out %s, where the miner would read it as a trace", manifest, out)
			}
		}
	}
	return nil
}

// prepareDir creates dir, or checks that it is empty. With force, a
// non-empty dir is accepted after removing the files an earlier run wrote
// (trace-*.json and traces.jsonl), so a smaller corpus does not leave
// traces of a larger one behind. Other files are left alone.
func prepareDir(dir string, force bool) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		return nil
	}
	if err != nil {
		return err
	}
	if len(entries) == 0 {
		return nil
	}
	if !force {
		return fmt.Errorf("%s is not empty (use -force to write into it)", dir)
	}
	for _, e := range entries {
		name := e.Name()
		if e.Type().IsRegular() && (name == jsonlName || strings.HasPrefix(name, "trace-") && strings.HasSuffix(name, ".json")) {
			if err := os.Remove(filepath.Join(dir, name)); err != nil {
				return err
			}
		}
	}
	return nil
}
