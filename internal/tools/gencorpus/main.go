// Gencorpus writes a seeded synthetic corpus for testing and benchmarking
// the miner and the importers: random noise with procedures planted into
// it (see package tracetest), as crystallization traces or as the session
// logs of real agents.
//
// Usage:
//
//	go run ./internal/tools/gencorpus -traces N -out DIR [flags]
//	go run ./internal/tools/gencorpus -format claude|codex|otel -sessions N -out DIR [flags]
//
// With -format trace (the default) it writes one JSON file per trace
// (DIR/trace-000001.json, ...), or with -jsonl a single DIR/traces.jsonl.
// With -format claude, codex or otel it writes agent sessions with three
// planted procedures (bump a Go dependency, triage an issue, cut a
// release) among exploration, retries and chained commands: Claude Code
// session logs (DIR/<project>/<session>.jsonl), Codex CLI rollouts
// (DIR/YYYY/MM/DD/rollout-<ts>-<session>.jsonl) or OpenTelemetry GenAI
// spans in OTLP/JSON (DIR/traces-0001.jsonl, ...). It prints a one-line
// summary. The same flags always give the same bytes.
//
// What was planted where, what a miner should recover, is written only
// when -manifest names a file for it, and never inside DIR, where the
// miner would read it as input.
//
// Flags:
//
//	-format F        trace (default), claude, codex or otel
//	-out DIR         directory to write; created if missing (required)
//	-seed S          random seed (default 1)
//	-support F       fraction of traces or sessions each procedure is
//	                 planted into (default 0.05 for traces, 0.25 for sessions)
//	-manifest FILE   write what was planted where to FILE as JSON
//	-force           write into a non-empty DIR, first removing the files
//	                 an earlier run wrote there, and replace FILE
//
// Flags of -format trace:
//
//	-traces N        number of traces (required)
//	-procedures K    planted procedures (default 8)
//	-actions L       average actions per trace (default 50)
//	-min-len N       length of the shortest procedure (default 2)
//	-max-len N       length of the longest procedure (default 40)
//	-noise N         distinct noise tools (default 200)
//	-fuzzy-every N   make every Nth procedure's middle step a fuzzy model call
//	-jsonl           write DIR/traces.jsonl instead of one file per trace
//
// Flags of the agent formats:
//
//	-sessions N      number of sessions (required)
//	-calls N         average tool calls per session (default 60)
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
	"regexp"
	"slices"
	"strings"

	"github.com/crystallize-dev/crystallize/internal/tracetest"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

const usageLine = "usage: gencorpus -traces N -out DIR [-seed S] [-procedures K] [-actions L] [-jsonl] [-manifest FILE] [-force] [flags]\n" +
	"       gencorpus -format claude|codex|otel -sessions N -out DIR [-seed S] [-calls N] [-manifest FILE] [-force]"

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
		agents   tracetest.AgentConfig
		format   = flags.String("format", "trace", "what to write: `trace`, claude, codex or otel")
		out      = flags.String("out", "", "directory to write; created if missing (required)")
		jsonl    = flags.Bool("jsonl", false, "write DIR/"+jsonlName+" instead of one file per trace (-format trace)")
		manifest = flags.String("manifest", "", "write what was planted where to `FILE` as JSON (outside DIR)")
		force    = flags.Bool("force", false, "write into a non-empty DIR, removing an earlier run's files, and replace FILE")
		support  = flags.Float64("support", tracetest.DefaultSupport, "fraction of traces (default 0.05) or sessions (default 0.25) each procedure is planted into")
		seed     = flags.Uint64("seed", 1, "random seed")
	)
	flags.IntVar(&cfg.Traces, "traces", 0, "number of traces (required with -format trace)")
	flags.IntVar(&cfg.Procedures, "procedures", tracetest.DefaultProcedures, "number of planted procedures")
	flags.IntVar(&cfg.Actions, "actions", tracetest.DefaultActions, "average actions per trace")
	flags.IntVar(&cfg.MinLen, "min-len", tracetest.DefaultMinLen, "length of the shortest procedure")
	flags.IntVar(&cfg.MaxLen, "max-len", tracetest.DefaultMaxLen, "length of the longest procedure")
	flags.IntVar(&cfg.NoiseVocabulary, "noise", tracetest.DefaultNoiseVocabulary, "number of distinct noise tools")
	flags.IntVar(&cfg.FuzzyEvery, "fuzzy-every", 0, "make every `N`th procedure's middle step a fuzzy model call (0: none)")
	flags.IntVar(&agents.Sessions, "sessions", 0, "number of agent sessions (required with -format claude, codex or otel)")
	flags.IntVar(&agents.Calls, "calls", tracetest.DefaultAgentCalls, "average tool calls per agent session")

	if err := flags.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stdout, usageLine)
			flags.SetOutput(stdout)
			flags.PrintDefaults()
			return err
		}
		return usagef("%v", err)
	}
	set := map[string]bool{}
	flags.Visit(func(f *flag.Flag) { set[f.Name] = true })
	cfg.Seed, agents.Seed = *seed, *seed
	cfg.Support, agents.Support = *support, *support
	if !set["support"] {
		agents.Support = tracetest.DefaultAgentSupport
	}

	if *format != "trace" {
		f := tracetest.AgentFormat(*format)
		if !slices.Contains(tracetest.AgentFormats, f) {
			return usagef("-format must be trace, claude, codex or otel, got %q", *format)
		}
		if err := checkAgentFlags(flags, set, agents, *out, *manifest); err != nil {
			return err
		}
		return writeAgents(stdout, f, agents, *out, *manifest, *force)
	}
	for _, name := range []string{"sessions", "calls"} {
		if set[name] {
			return usagef("-%s applies to -format claude, codex or otel, not trace", name)
		}
	}
	if err := checkFlags(flags, cfg, *out, *manifest); err != nil {
		return err
	}

	if err := prepareDir(*out, *force, isTraceFile); err != nil {
		return err
	}
	if err := checkManifest(*manifest, *force); err != nil {
		return err
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
	if err := writeManifest(*manifest, c.Planted); err != nil {
		return err
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

// writeAgents writes agent sessions in format f.
func writeAgents(stdout io.Writer, f tracetest.AgentFormat, cfg tracetest.AgentConfig, out, manifest string, force bool) error {
	if err := prepareDir(out, force, isAgentFile); err != nil {
		return err
	}
	if err := checkManifest(manifest, force); err != nil {
		return err
	}
	c := tracetest.GenerateAgents(cfg)
	if err := c.Write(out, f); err != nil {
		return err
	}
	if err := writeManifest(manifest, c.Manifest); err != nil {
		return err
	}
	calls, plantings := 0, 0
	for _, s := range c.Manifest.Sessions {
		calls += s.ToolCalls
	}
	for _, p := range c.Manifest.Procedures {
		plantings += len(p.Plantings)
	}
	fmt.Fprintf(stdout, "wrote %d %s sessions, %d tool calls, %d procedures planted %d times (seed %d) to %s\n",
		len(c.Manifest.Sessions), f, calls, len(c.Manifest.Procedures), plantings, cfg.Seed, out)
	return nil
}

// checkManifest refuses to replace an existing manifest without force.
func checkManifest(manifest string, force bool) error {
	if manifest != "" && !force {
		if _, err := os.Lstat(manifest); err == nil {
			return fmt.Errorf("%s already exists (use -force to replace it)", manifest)
		}
	}
	return nil
}

// writeManifest writes v to manifest as indented JSON, when manifest is
// set.
func writeManifest(manifest string, v any) error {
	if manifest == "" {
		return nil
	}
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("writing manifest: %w", err)
	}
	if err := os.WriteFile(manifest, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("writing manifest: %w", err)
	}
	return nil
}

// checkAgentFlags reports the first bad flag of an agent format as a
// usage error. Flags of the trace format are refused rather than ignored.
func checkAgentFlags(flags *flag.FlagSet, set map[string]bool, cfg tracetest.AgentConfig, out, manifest string) error {
	for _, name := range []string{"traces", "procedures", "actions", "min-len", "max-len", "noise", "fuzzy-every", "jsonl"} {
		if set[name] {
			return usagef("-%s applies to -format trace only", name)
		}
	}
	switch {
	case flags.NArg() > 0:
		return usagef("unexpected argument %q", flags.Arg(0))
	case out == "":
		return usagef("-out is required")
	case cfg.Sessions <= 0:
		return usagef("-sessions must be at least 1, got %d", cfg.Sessions)
	case cfg.Calls < 1:
		return usagef("-calls must be at least 1, got %d", cfg.Calls)
	case !(cfg.Support > 0 && cfg.Support <= 1):
		return usagef("-support must be in (0, 1], got %v", cfg.Support)
	}
	return checkManifestPlace(out, manifest)
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
	return checkManifestPlace(out, manifest)
}

// checkManifestPlace refuses a manifest inside the output directory.
func checkManifestPlace(out, manifest string) error {
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
// (those ours accepts, by their path relative to dir) and the directories
// that removing them left empty, so a smaller corpus does not leave files of
// a larger one behind. Other files are left alone.
func prepareDir(dir string, force bool, ours func(rel string) bool) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return os.MkdirAll(dir, 0o755)
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
	var dirs []string            // in walk order: parents first
	emptied := map[string]bool{} // directories a removed file was under
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			if p != dir {
				dirs = append(dirs, p)
			}
		case d.Type().IsRegular() && ours(filepath.ToSlash(rel)):
			for q := filepath.Dir(p); q != dir && !emptied[q]; q = filepath.Dir(q) {
				emptied[q] = true
			}
			return os.Remove(p)
		}
		return nil
	})
	if err != nil {
		return err
	}
	// Deepest first, so a parent is empty once its children are gone.
	for i := len(dirs) - 1; i >= 0; i-- {
		if !emptied[dirs[i]] {
			continue
		}
		if entries, err := os.ReadDir(dirs[i]); err == nil && len(entries) == 0 {
			if err := os.Remove(dirs[i]); err != nil {
				return err
			}
		}
	}
	return nil
}

// isTraceFile reports whether rel is a file -format trace writes.
func isTraceFile(rel string) bool {
	return rel == jsonlName || !strings.Contains(rel, "/") && strings.HasPrefix(rel, "trace-") && strings.HasSuffix(rel, ".json")
}

var (
	uuidPattern = `[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`
	agentFileRE = regexp.MustCompile(`^(?:-[^/]*/` + uuidPattern + `\.jsonl|\d{4}/\d{2}/\d{2}/rollout-[0-9T-]+-` + uuidPattern + `\.jsonl|traces-\d{4}\.jsonl)$`)
)

// isAgentFile reports whether rel is a file an agent format writes: a
// Claude Code session, a Codex rollout or an OTLP/JSON file.
func isAgentFile(rel string) bool { return agentFileRE.MatchString(rel) }
