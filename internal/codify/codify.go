package codify

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/mine"
	"github.com/crystallize-dev/crystallize/internal/normalize"
	"github.com/crystallize-dev/crystallize/internal/pipeline"
	"github.com/crystallize-dev/crystallize/internal/runconfig"
	"github.com/crystallize-dev/crystallize/internal/session"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// Source is one parsed session log and the file it was read from.
type Source struct {
	File    string // as given; recorded with forward slashes
	Session *session.Session
}

// Options configures Run. The zero value mines with an inferred workflow
// name and no generated_at.
type Options struct {
	// WorkflowName names the workflow function (default: inferred).
	WorkflowName string
	// GeneratedAt is copied into the report.
	GeneratedAt string
	// Config, when not nil, names the positional arguments of the tools
	// it binds to commands (see NameArgs).
	Config *runconfig.Config
	// Rules read the sessions' shell commands as agent sessions' are
	// read (see normalizeCommands); nil means normalize.Default().
	Rules *normalize.Rules
}

// Draft is a mined candidate and the traces it was mined from.
type Draft struct {
	Report *candidate.Report
	Traces []*trace.Trace
	// Mine is how the traces were mined; Apply mines edited traces the
	// same way. Its MinExamples is the number of sessions when there are
	// several: the workflow is what they all repeat.
	Mine mine.Options
}

// Run converts each session to a trace, its shell commands read as an
// agent's (normalizeCommands), and mines them: one session is the
// workflow, every tool call a step and every argument a literal (as
// mine.Single); several are mined with MinExamples set to their number,
// so what varies between them becomes parameters.
func Run(ctx context.Context, sources []Source, opts Options) (*Draft, error) {
	rules := opts.Rules
	if rules == nil {
		rules = normalize.Default()
	}
	var traces []*trace.Trace
	for _, src := range sources {
		name := filepath.ToSlash(src.File)
		t, err := session.ToTrace(src.Session, name)
		if err != nil {
			return nil, err
		}
		normalizeCommands(t, rules, opts.Config)
		if opts.Config != nil {
			NameArgs(t, opts.Config)
		}
		t.Origin = trace.Origin{Path: name}
		traces = append(traces, t)
	}
	if len(traces) == 1 {
		dropObservations(traces[0])
	}
	d := &Draft{Traces: traces, Mine: mine.Options{WorkflowName: opts.WorkflowName, GeneratedAt: opts.GeneratedAt}}
	if len(traces) > 1 {
		d.Mine.MinExamples = len(traces)
	}
	r, err := d.mine(ctx, traces)
	if err != nil {
		return nil, err
	}
	d.Report = r
	return d, nil
}

// mine mines traces with d.Mine, on the pipeline's road: one trace is
// the workflow (mine.Single), several are mined for what they repeat.
func (d *Draft) mine(ctx context.Context, traces []*trace.Trace) (*candidate.Report, error) {
	return pipeline.MineTraces(ctx, traces, d.Mine)
}

// NameArgs renames the positional parameters arg1, arg2, … of every
// action whose tool cfg binds to a command, after the "{name}" words of
// the command template that follow the program: a session written by
// crystallize run records the command line, not the call's keywords.
// A literal template word recorded as it is (the "--" before a binding's
// operands) is the command's own and is dropped; any other word that is
// not one bare placeholder leaves its argument positional.
func NameArgs(t *trace.Trace, cfg *runconfig.Config) {
	for i := range t.Actions {
		a := &t.Actions[i]
		b, ok := cfg.Tools[a.Name]
		if !ok || len(b.Command) < 2 {
			continue
		}
		for j, w := range b.Command[1:] {
			key := "arg" + strconv.Itoa(j+1)
			v, ok := a.Parameters[key]
			if ok && !strings.ContainsAny(w, "{}") && v == w {
				// A literal word of the template ("--", a subcommand)
				// is the command's own, not an argument of the call.
				delete(a.Parameters, key)
				continue
			}
			name, bare := strings.CutPrefix(w, "{")
			name, closed := strings.CutSuffix(name, "}")
			if !ok || !bare || !closed || name == "" || strings.ContainsAny(name, "{}") {
				continue
			}
			if _, dup := a.Parameters[name]; dup {
				continue
			}
			delete(a.Parameters, key)
			a.Parameters[name] = v
		}
	}
}

// ReadSources reads and parses the session logs in files (session.Open),
// in order. The first that cannot be read or has problems is the error.
func ReadSources(files []string) ([]Source, error) {
	sources := make([]Source, 0, len(files))
	for _, name := range files {
		s, err := session.Open(name)
		if err != nil {
			return nil, err
		}
		sources = append(sources, Source{File: name, Session: s})
	}
	return sources, nil
}

// Publish writes the draft on the pipeline's road (pipeline.Publish):
// its report shadow-replayed against the sessions' traces, then the
// files o names. The bundle's promotion asks for as many examples as the
// draft was mined from (one for a single session). With ref set, the
// model's refinement replaces the generated workflow, accepted only as
// Refiner.Rewrite accepts it.
func (d *Draft) Publish(ctx context.Context, o pipeline.Outputs, ref *Refiner) (*pipeline.Published, error) {
	o.BundleOptions.MinExamples = max(d.Mine.MinExamples, 1)
	if ref != nil {
		o.Rewrite = ref.Rewrite(o.Out, o.Codegen)
	}
	return pipeline.Publish(ctx, d.Report, d.Traces, nil, o)
}
