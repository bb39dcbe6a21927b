package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/crystallize-dev/crystallize/internal/derive"
	"github.com/crystallize-dev/crystallize/internal/pipeline"
	"github.com/crystallize-dev/crystallize/internal/runconfig"
	"github.com/crystallize-dev/crystallize/internal/synth"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

const synthDoc = `synth runs bounded-synthesis experiments: code (written by hand or by a
model) runs in a sandboxed Starlark capsule, metamorphic properties are
checked on transformed inputs, and verifiers decide the experiment's
hypotheses across replicates. Everything an experiment needs is in one
file, experiment.toml; see "crystallize synth run --help".`

// newSynthCmd is "crystallize synth".
func newSynthCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "synth",
		Short: "Run bounded-synthesis experiments: sandboxed capsules, metamorphic tests, verifiers",
		Long:  synthDoc,
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newSynthRunCmd(e), newSynthCheckCmd(e), newSynthDeriveCmd(e), newSynthStepCmd(e), newSynthCapsuleExecCmd())
	return cmd
}

const synthRunDoc = `run runs the experiment in EXPERIMENT (an experiment.toml):

  [claim]        id, text, acceptance (criteria read by meets_claim)
  [spec]         allowed_imports (math, json, time, stats, table),
                 resources = { time_s, mem_mb, output_kb },
                 [[spec.properties]] name, transform, metric, tolerance,
                 expect (equal, scaled, shifted), factor, offset;
                 or model and prompt to have a model propose all but
                 the resources
  [code]         file or source (Starlark) and entrypoint
                 (default fit_and_eval), or model (a [models.*] key of
                 --config) and prompt: the first fenced code block of the
                 model's answer is the code
  [[treatments]] name, file or source: other code for meets_claim
  [data]         file (JSON, JSONL or CSV) or value
  [transforms]   file or source: Starlark functions usable as transforms
  [experiment]   replicates, resample (none or bootstrap), seed
  [[hypotheses]] name, verifier and its parameters:
                 metamorphic: every property holds in every replicate;
                 meets_claim: metric, treatment, direction (lower or
                 higher), min_pct, alpha (defaults from the claim's
                 acceptance), method (welch or bootstrap);
                 within_tolerance: metric, expected, tolerance;
                 exact_match: metric and expected, or expected as a
                 table of metric = value

Built-in transforms: identity, permute_rows, permute_rows_aligned, scale,
shift, duplicate_rows, drop_nulls.

The files the experiment names (data.file, code.file, treatments' file,
transforms.file) are read from its directory: an absolute name, one that
climbs out with .., or a symbolic link that leads out is refused unless
--allow-outside is given, and only regular files are read. What is
printed (metrics, check values, verifier results, errors of capsules)
goes through the redactor, as the evidence bundle does.

Each capsule runs in a separate process with its limits enforced: a
Starlark step budget and RLIMIT_CPU for time_s, RLIMIT_AS for mem_mb, no
file writes, a new network namespace where the system allows one, and a
wall-clock kill. The evidence bundle (manifest.json with the code's
sha256, the spec, model calls and per-replicate metrics; redacted) is
written to --out, by default evidence/<claim id> beside the experiment.

--json prints
  {"metrics": {"baseline": {"<metric>": [one value per replicate],
                            "<property>_pass": [...]}, "<treatment>": {...}},
   "hypotheses": [{"name", "verifier", "pass", "result"}],
   "pass": bool, "stopped": {"capsule", "code", "limit", "message"} or absent,
   "evidence": DIR}

Exit status: 0 when every hypothesis holds, 1 when one fails or a capsule
is stopped, 2 when the experiment is malformed.`

func newSynthRunCmd(e *env) *cobra.Command {
	var asJSON, allowOutside bool
	var out, config string
	cmd := &cobra.Command{
		Use:   "run EXPERIMENT",
		Short: "Run an experiment.toml and decide its hypotheses",
		Long:  synthRunDoc,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			x, err := synth.LoadExperiment(args[0])
			if err != nil {
				return experimentError(err)
			}
			x.AllowOutside = allowOutside
			sb, err := capsuleSandbox()
			if err != nil {
				return err
			}
			cfg, err := loadSynthConfig(config)
			if err != nil {
				return err
			}
			model := &pipeline.ConfigModel{Config: cfg, Getenv: e.getenv}
			rep, err := synth.Run(cmd.Context(), x, synth.Options{Sandbox: sb, Model: model})
			if err != nil {
				return experimentError(err)
			}
			if out == "" {
				out = x.EvidenceDir()
			}
			if err := synth.WriteEvidence(out, rep); err != nil {
				return err
			}
			red := rep.Redacted()
			if err := printSynthRun(e, red, out, asJSON); err != nil {
				return err
			}
			if err := red.Err(); err != nil {
				return failure(err)
			}
			return nil
		},
	}
	resultJSONFlag(cmd.Flags(), &asJSON)
	cmd.Flags().StringVar(&out, "out", "", "evidence bundle directory (default evidence/<claim id> beside the experiment)")
	allowOutsideFlag(cmd, &allowOutside)
	cmd.Flags().StringVar(&config, "config", "", "configuration with the [models.*] that code.model names (default ./"+runconfig.ConfigFile+" when present)")
	return cmd
}

func printSynthRun(e *env, rep *synth.Report, out string, asJSON bool) error {
	if asJSON {
		return writeIndentedJSON(e.stdout, rep.Summary(out))
	}
	w := e.stdout
	fmt.Fprintf(w, "claim %s: %s\n", rep.Claim.ID, rep.Claim.Text)
	for _, c := range rep.Conditions {
		if c.Metrics != nil {
			fmt.Fprintf(w, "%s: %s\n", c.Name, synth.FormatMetrics(c))
		}
	}
	for _, ch := range rep.Checks {
		if !ch.Pass {
			fmt.Fprintf(w, "property %s failed on %s, replicate %d, metric %s: %s\n", ch.Property, ch.Condition, ch.Replicate, ch.Metric, ch.Reason)
		}
	}
	for _, h := range rep.Hypotheses {
		verdict := "holds"
		if !h.Pass {
			verdict = "fails"
		}
		fmt.Fprintf(w, "hypothesis %s (%s): %s", h.Name, h.Verifier, verdict)
		if m, ok := h.Result["method"]; ok {
			fmt.Fprintf(w, " [%v, p = %v]", m, h.Result["p_value"])
		}
		if r, ok := h.Result["reason"]; ok {
			fmt.Fprintf(w, ": %v", r)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "evidence: %s\n", out)
	return nil
}

// experimentError makes problems with the experiment's files usage
// errors (exit 2); anything else, such as a failed model call, exits 1.
func experimentError(err error) error {
	var list trace.ErrorList
	if errors.As(err, &list) || errors.Is(err, fs.ErrNotExist) {
		return usageError{err}
	}
	return err
}

// capsuleSandbox runs capsules in this executable, started again as
// "crystallize synth capsule-exec". argv[0] is "crystallize" whatever the
// file is called, which is also how test binaries recognize the command.
func capsuleSandbox() (*synth.Sandbox, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("finding the capsule executable: %w", err)
	}
	return &synth.Sandbox{Path: exe, Args: []string{"crystallize", "synth", "capsule-exec"}}, nil
}

const synthCapsuleExecDoc = `capsule-exec is the sandboxed process a capsule runs in: synth run and
synth step start the crystallize executable again with these words, write
one capsule request (a batch of Starlark calls and the resource limits
they run under) to its standard input and read the answer from its standard
output. It is not meant to be called by hand.`

func newSynthCapsuleExecCmd() *cobra.Command {
	return &cobra.Command{
		Use:    "capsule-exec",
		Short:  "Serve one capsule request on standard input (internal)",
		Long:   synthCapsuleExecDoc,
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return synth.Serve(os.Stdin, os.Stdout)
		},
	}
}

const synthCheckDoc = `check reads EXPERIMENT strictly (unknown keys and wrong types are errors
naming the file, line and key path), and parses its code and transforms,
checking every load() against spec.allowed_imports. It runs nothing.
Exit status 2 when the experiment is malformed, 1 when its code is refused.`

// allowOutsideFlag registers --allow-outside, which lets an experiment
// read files outside its directory.
func allowOutsideFlag(cmd *cobra.Command, p *bool) {
	cmd.Flags().BoolVar(p, "allow-outside", false, "read data, code and transforms files outside the experiment's directory")
}

func newSynthCheckCmd(e *env) *cobra.Command {
	var allowOutside bool
	cmd := &cobra.Command{
		Use:   "check EXPERIMENT",
		Short: "Check an experiment.toml and its code without running anything",
		Long:  synthCheckDoc,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			x, err := synth.LoadExperiment(args[0])
			if err != nil {
				return experimentError(err)
			}
			x.AllowOutside = allowOutside
			if err := synth.CheckCode(x); err != nil {
				return experimentError(err)
			}
			fmt.Fprintf(e.stdout, "%s: ok\n", args[0])
			return nil
		},
	}
	allowOutsideFlag(cmd, &allowOutside)
	return cmd
}

const synthDeriveDoc = `derive reads examples, a JSON list of objects of string values (FILE, or
standard input), and searches for the smallest expression over the other
keys that gives the value of --target in every example: concatenations of
literals and values, x.split(sep)[i], x.replace(a, b), x.lower(),
x.upper(). It prints the expression as Starlark, or exits 1 when there is
none. --json prints {"target", "expression", "found"}.

It needs at least 3 examples: an expression that fits one or two is as
likely a coincidence as a rule, so fewer are refused (exit 1) rather than
searched.

--all decides for every key at once which ones a caller need not pass:
it prints "name = expression" for each derived key, every expression over
the keys that are kept (--json: {"derived": {name: expression}, "kept":
[names]}).`

func newSynthDeriveCmd(e *env) *cobra.Command {
	var target string
	var asJSON, all bool
	cmd := &cobra.Command{
		Use:   "derive (--target NAME | --all) [FILE]",
		Short: "Find an expression that derives one parameter from the others",
		Long:  synthDeriveDoc,
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if (target == "") == !all {
				return usagef("give one of --target and --all")
			}
			name, data, err := readInput(cmd.InOrStdin(), args)
			if err != nil {
				return err
			}
			examples, err := derive.DecodeExamples(data)
			if err != nil {
				return usageError{&trace.Error{File: name, Path: "$", Msg: err.Error()}}
			}
			if len(examples) < derive.MinValues {
				return failuref("%s: %d examples; derive needs at least %d, as an expression that fits fewer is as likely a coincidence as a rule", name, len(examples), derive.MinValues)
			}
			if all {
				return printDerived(e, examples, asJSON)
			}
			d := derive.Derive(examples, target)
			if asJSON {
				if err := writeIndentedJSON(e.stdout, d); err != nil {
					return err
				}
			} else if d.Found {
				fmt.Fprintf(e.stdout, "%s = %s\n", target, *d.Expression)
			}
			if !d.Found {
				return failuref("no expression derives %q from the other values in every example", target)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&target, "target", "", "the key to derive")
	cmd.Flags().BoolVar(&all, "all", false, "derive every key that can be derived from the others")
	resultJSONFlag(cmd.Flags(), &asJSON)
	return cmd
}

func printDerived(e *env, examples []map[string]string, asJSON bool) error {
	d := derive.DeriveAll(examples)
	if asJSON {
		return writeIndentedJSON(e.stdout, d)
	}
	for _, k := range d.Names() {
		fmt.Fprintf(e.stdout, "%s = %s\n", k, d.Derived[k])
	}
	fmt.Fprintf(e.stdout, "kept: %s\n", strings.Join(d.Kept, ", "))
	return nil
}

// loadSynthConfig reads --config, or crystallize.toml in the current
// directory when it exists; no file is no configuration. A configuration
// that does not load is a usage error.
func loadSynthConfig(file string) (*runconfig.Config, error) {
	cfg, err := projectConfig(file)
	if err != nil {
		return nil, usageError{err}
	}
	return cfg, nil
}
