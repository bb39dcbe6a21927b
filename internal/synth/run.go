package synth

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"

	"github.com/crystallize-dev/crystallize/internal/capped"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// Options control Run.
type Options struct {
	// Sandbox runs capsules. Nil runs them in this process, bounded by
	// the step budget and output cap only, which is for code that is
	// trusted (tests, benchmarks), never for synthesized code.
	Sandbox *Sandbox
	// Model answers code.model requests; nil refuses them.
	Model Model
}

// Report is the outcome of an experiment: the steps of bounded synthesis
// (specify_claim → generate_spec → bounded_synthesis → execute_capsule →
// run_metamorphic_tests) and the hypotheses decided on their metrics.
type Report struct {
	Claim Claim `json:"claim"`
	Spec  Spec  `json:"spec"`
	// Conditions are "baseline" then the treatments, in order, each with
	// its code and its metrics: one value per replicate.
	Conditions []*Condition `json:"conditions"`
	// Checks are the property checks, one per replicate, property and
	// condition.
	Checks     []Check     `json:"checks"`
	Hypotheses []Verdict   `json:"hypotheses"`
	ModelCalls []ModelCall `json:"model_calls"`
	Replicates int         `json:"replicates"`
	// Stopped is the error that stopped a capsule, if one did; then the
	// metrics are those gathered before it.
	Stopped   *CapsuleError `json:"stopped,omitempty"`
	Isolation string        `json:"isolation"`
}

// Condition is one code under test and its metrics.
type Condition struct {
	Name       string `json:"name"`
	File       string `json:"file,omitempty"`
	Entrypoint string `json:"entrypoint"`
	Source     string `json:"-"`
	SHA256     string `json:"code_sha256"`
	// Keys are the metric names in report order: the code's own metrics
	// sorted, then "<property>_pass" in spec order.
	Keys    []string `json:"keys"`
	Metrics Samples  `json:"metrics"`
}

// Check is one property checked on one replicate.
type Check struct {
	Condition string `json:"condition"`
	Replicate int    `json:"replicate"`
	Property  string `json:"property"`
	Transform string `json:"transform"`
	Metric    string `json:"metric,omitempty"`
	Original  any    `json:"original,omitempty"`
	Observed  any    `json:"transformed,omitempty"`
	Pass      bool   `json:"pass"`
	Reason    string `json:"reason,omitempty"`
}

// ErrHypothesis is the outcome of a run whose capsules all finished but
// one of whose hypotheses does not hold.
var ErrHypothesis = errors.New("a hypothesis does not hold")

// Err is nil when the run passed (Pass), else why not: the
// *CapsuleError that stopped a capsule, or ErrHypothesis.
func (r *Report) Err() error {
	switch {
	case r.Stopped != nil:
		return r.Stopped
	case !r.Pass():
		return ErrHypothesis
	}
	return nil
}

// Pass reports whether no capsule was stopped and every hypothesis holds.
func (r *Report) Pass() bool {
	if r.Stopped != nil {
		return false
	}
	for _, h := range r.Hypotheses {
		if !h.Pass {
			return false
		}
	}
	return true
}

// Summary is a run in brief, the object "crystallize synth run --json"
// prints: a stable contract.
type Summary struct {
	Metrics    map[string]Samples `json:"metrics"`
	Hypotheses []Verdict          `json:"hypotheses"`
	Pass       bool               `json:"pass"`
	Stopped    *CapsuleError      `json:"stopped,omitempty"`
	// Evidence is the directory the evidence bundle was written into.
	Evidence string `json:"evidence"`
}

// Summary is r's Summary, its evidence written into the directory
// evidence (WriteEvidence). Hypotheses is [] for none, never null.
func (r *Report) Summary(evidence string) *Summary {
	hs := r.Hypotheses
	if hs == nil {
		hs = []Verdict{}
	}
	return &Summary{Metrics: r.Samples(), Hypotheses: hs, Pass: r.Pass(), Stopped: r.Stopped, Evidence: evidence}
}

// Samples returns the metrics of every condition by name.
func (r *Report) Samples() map[string]Samples {
	out := map[string]Samples{}
	for _, c := range r.Conditions {
		out[c.Name] = c.Metrics
	}
	return out
}

// Run runs an experiment. A capsule that is refused or stopped is not an
// error: it is Report.Stopped, so the evidence of what happened can still
// be written. Errors are about the experiment's inputs (a missing file,
// malformed data, a transform that does not apply) or a model call.
func Run(ctx context.Context, x *Experiment, opts Options) (*Report, error) {
	rep := &Report{Claim: x.Claim, Spec: x.Spec, Replicates: max(x.Settings.Replicates, 1), Isolation: "in-process (step budget and output cap only)"}
	if rep.Claim.Acceptance == nil {
		rep.Claim.Acceptance = map[string]any{}
	}
	data, err := x.loadData()
	if err != nil {
		return nil, err
	}
	// generate_spec: a model proposes the spec when the author asks.
	if x.Spec.Model != "" {
		spec, call, err := generateSpec(ctx, opts.Model, rep.Claim, x.Spec)
		rep.ModelCalls = append(rep.ModelCalls, call)
		if err != nil {
			return nil, err
		}
		y := *x
		y.Spec = spec
		x, rep.Spec = &y, spec
	}
	// bounded_synthesis: every condition's code, from a file, inline or
	// from the model.
	base, err := x.source(ctx, "baseline", "code.file", x.Code, opts, rep)
	if err != nil {
		return nil, err
	}
	rep.Conditions = append(rep.Conditions, base)
	for i, t := range x.Treatments {
		c, err := x.source(ctx, t.Name, fmt.Sprintf("treatments[%d].file", i), t.Code(), opts, rep)
		if err != nil {
			return nil, err
		}
		rep.Conditions = append(rep.Conditions, c)
	}
	tr, err := x.transformer(ctx)
	if err != nil {
		return nil, err
	}
	// The inputs of one replicate are its data and the data under each
	// property's transform; every condition runs on the same inputs.
	var inputs []any
	for r := 0; r < rep.Replicates; r++ {
		in := data
		if r > 0 && x.Settings.Resample == "bootstrap" {
			if in, err = resampleRows(data, transformSeed(x.Settings.Seed, r, "")); err != nil {
				return nil, trace.ErrorList{{File: x.File, Line: x.line("experiment.resample"), Path: "experiment.resample", Msg: err.Error()}}
			}
		}
		inputs = append(inputs, in)
		for i, p := range x.Spec.Properties {
			out, err := x.transform(ctx, tr, p, in, r)
			if err != nil {
				var ce *CapsuleError
				if errors.As(err, &ce) {
					return nil, fmt.Errorf("transform %s: %w", p.TransformName(), err)
				}
				path := fmt.Sprintf("spec.properties[%d].transform", i)
				return nil, trace.ErrorList{{File: x.File, Line: x.line(path), Path: path, Msg: err.Error()}}
			}
			inputs = append(inputs, out)
		}
	}
	if opts.Sandbox != nil {
		// Isolation is known once the first process has started.
		defer func() { rep.Isolation = opts.Sandbox.Isolation() }()
	}
	// execute_capsule and run_metamorphic_tests.
	for _, cond := range rep.Conditions {
		capsule := &Capsule{Name: cond.name(), Source: cond.Source, Entrypoint: cond.Entrypoint, AllowedImports: x.Spec.AllowedImports, Resources: x.Spec.Resources}
		results, err := execute(ctx, opts.Sandbox, capsule, inputs)
		if err != nil {
			var ce *CapsuleError
			if !errors.As(err, &ce) {
				return nil, err
			}
			rep.Stopped = ce
			return rep, nil
		}
		if err := x.record(rep, cond, results); err != nil {
			err.Capsule = capsule.Name
			rep.Stopped = err
			return rep, nil
		}
	}
	samples := rep.Samples()
	for _, h := range x.Hypotheses {
		rep.Hypotheses = append(rep.Hypotheses, Verify(h, samples, x.Spec.Properties, rep.Claim, x.Settings.Seed))
	}
	return rep, nil
}

func (c *Condition) name() string {
	if c.File != "" {
		return c.File
	}
	return c.Name
}

// record files one condition's results: per replicate, the baseline
// metrics and a <property>_pass for each property. Every replicate must
// return the same metric names, none of them a property's _pass name, so
// that the i-th value of every metric is replicate i.
func (x *Experiment) record(rep *Report, cond *Condition, results []*Result) *CapsuleError {
	stride := 1 + len(x.Spec.Properties)
	cond.Metrics = Samples{}
	reserved := map[string]string{}
	for _, p := range x.Spec.Properties {
		reserved[p.Name+"_pass"] = p.Name
	}
	for r := 0; r < rep.Replicates; r++ {
		orig := results[r*stride].Metrics
		keys := sortedKeys(orig)
		for _, k := range keys {
			if p, ok := reserved[k]; ok {
				return &CapsuleError{Code: CodeResult, Msg: fmt.Sprintf("metric %q is the result of property %s; rename it", k, p)}
			}
		}
		if r == 0 {
			cond.Keys = keys
		} else if !slices.Equal(keys, cond.Keys) {
			return &CapsuleError{Code: CodeResult, Msg: fmt.Sprintf("replicate %d returned metrics %v, replicate 0 returned %v", r, keys, cond.Keys)}
		}
		for _, k := range keys {
			cond.Metrics[k] = append(cond.Metrics[k], orig[k])
		}
		for i, p := range x.Spec.Properties {
			got := results[r*stride+1+i].Metrics
			pass := true
			for _, k := range metricKeys(p, orig) {
				ch := Check{Condition: cond.Name, Replicate: r, Property: p.Name, Transform: p.TransformName(), Metric: k, Original: orig[k], Observed: got[k]}
				switch a, okA := orig[k]; {
				case !okA:
					ch.Reason = fmt.Sprintf("the code returned no metric %q", k)
				default:
					b, okB := got[k]
					if !okB {
						ch.Reason = fmt.Sprintf("no metric %q on the transformed input", k)
						break
					}
					ch.Pass, ch.Reason = compareMetric(p, a, b)
				}
				pass = pass && ch.Pass
				rep.Checks = append(rep.Checks, ch)
			}
			key := p.Name + "_pass"
			cond.Metrics[key] = append(cond.Metrics[key], pass)
		}
	}
	for _, p := range x.Spec.Properties {
		cond.Keys = append(cond.Keys, p.Name+"_pass")
	}
	return nil
}

// execute runs a batch in the sandbox, or in this process without one.
func execute(ctx context.Context, sb *Sandbox, c *Capsule, inputs []any) ([]*Result, error) {
	if sb != nil {
		return sb.Run(ctx, c, inputs)
	}
	prog, err := c.Compile(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]*Result, 0, len(inputs))
	for _, in := range inputs {
		res, err := prog.Exec(ctx, in)
		if err != nil {
			return nil, err
		}
		out = append(out, res)
	}
	return out, nil
}

// maxCodeBytes bounds a code or transforms file.
const maxCodeBytes = 1 << 20

// readFile reads the file name that the experiment names at key (such
// as "data.file"), at most max bytes of a regular file. Unless
// AllowOutside, name must be relative and stay in Dir, symbolic links
// included. A refusal is a problem of the experiment file at key.
func (x *Experiment) readFile(key, name string, max int64) ([]byte, error) {
	problem := func(msg string) error {
		return trace.ErrorList{{File: x.File, Line: x.line(key), Path: key, Msg: msg}}
	}
	var data []byte
	var err error
	switch {
	case x.AllowOutside:
		p := name
		if !filepath.IsAbs(p) {
			p = filepath.Join(x.Dir, p)
		}
		data, err = capped.ReadFile(p, max)
	case !filepath.IsLocal(name):
		return nil, problem(fmt.Sprintf("%s is outside the experiment's directory; --allow-outside reads it", name))
	default:
		data, err = capped.ReadFileInRoot(x.Dir, name, max)
		if err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, capped.ErrNotRegular) && !errors.Is(err, capped.ErrTooLarge) {
			// os.Root refused a symbolic link out of the directory.
			return nil, problem(fmt.Sprintf("%s leads outside the experiment's directory (%v); --allow-outside reads it", name, err))
		}
	}
	if errors.Is(err, capped.ErrNotRegular) || errors.Is(err, capped.ErrTooLarge) {
		return nil, problem(err.Error())
	}
	return data, err
}

func (x *Experiment) loadData() (any, error) {
	if x.Data.File == "" {
		return x.Data.Value, nil
	}
	data, err := x.readFile("data.file", x.Data.File, MaxDataBytes)
	if err != nil {
		return nil, fmt.Errorf("reading data: %w", err)
	}
	return decodeData(data, filepath.Join(x.Dir, x.Data.File), x.Data.Format)
}

// source produces a condition's code: read, inline, or synthesized.
// key is where the code is named in the experiment file.
func (x *Experiment) source(ctx context.Context, name, key string, code Code, opts Options, rep *Report) (*Condition, error) {
	c := &Condition{Name: name, File: code.File, Entrypoint: code.Entrypoint}
	if c.Entrypoint == "" {
		c.Entrypoint = DefaultEntrypoint
	}
	switch {
	case code.File != "":
		b, err := x.readFile(key, code.File, maxCodeBytes)
		if err != nil {
			return nil, fmt.Errorf("reading code: %w", err)
		}
		c.Source = string(b)
	case code.Model != "":
		src, call, err := synthesize(ctx, opts.Model, x.Claim, x.Spec, code)
		rep.ModelCalls = append(rep.ModelCalls, call)
		if err != nil {
			return nil, err
		}
		c.Source = src
	default:
		c.Source = code.Source
	}
	c.SHA256 = sha(c.Source)
	return c, nil
}

// transformer compiles the experiment's custom transforms, if any.
func (x *Experiment) transformer(ctx context.Context) (*transformer, error) {
	src, name := x.Transforms.Source, "transforms"
	if x.Transforms.File != "" {
		b, err := x.readFile("transforms.file", x.Transforms.File, maxCodeBytes)
		if err != nil {
			return nil, fmt.Errorf("reading transforms: %w", err)
		}
		src, name = string(b), x.Transforms.File
	}
	c := &Capsule{Name: name, Source: src, AllowedImports: x.Spec.AllowedImports, Resources: x.Spec.Resources}
	if src == "" {
		return &transformer{c: c}, nil
	}
	globals, err := c.module(ctx)
	if err != nil {
		return nil, fmt.Errorf("transforms: %w", err)
	}
	return &transformer{c: c, globals: globals}, nil
}

// transform applies a property's transform: a custom one of the same
// name first, so an experiment can redefine a built-in.
func (x *Experiment) transform(ctx context.Context, tr *transformer, p Property, data any, replicate int) (any, error) {
	name := p.TransformName()
	if tr.has(name) {
		return tr.apply(ctx, name, data)
	}
	for _, b := range Transforms {
		if b == name {
			return applyBuiltin(name, p, data, transformSeed(x.Settings.Seed, replicate, p.Name))
		}
	}
	return nil, fmt.Errorf("unknown transform %q: not built in (%v) and not a function of the transforms file", name, Transforms)
}

// CheckCode checks, without running anything, the code of every
// condition that does not come from a model, and the transforms: each
// must parse, resolve and load only allowed modules. The error joins a
// *CapsuleError per refused file.
func CheckCode(x *Experiment) error {
	var errs []error
	codes := []Code{x.Code}
	names := []string{"baseline"}
	keys := []string{"code.file"}
	for i, t := range x.Treatments {
		codes, names = append(codes, t.Code()), append(names, t.Name)
		keys = append(keys, fmt.Sprintf("treatments[%d].file", i))
	}
	for i, code := range codes {
		if code.Model != "" {
			continue
		}
		c, err := x.source(context.Background(), names[i], keys[i], code, Options{}, &Report{})
		if err != nil {
			errs = append(errs, err)
			continue
		}
		capsule := &Capsule{Name: c.name(), Source: c.Source, Entrypoint: c.Entrypoint, AllowedImports: x.Spec.AllowedImports, Resources: x.Spec.Resources}
		if _, err := capsule.Check(); err != nil {
			errs = append(errs, err)
		}
	}
	if x.Transforms.File != "" || x.Transforms.Source != "" {
		src, name := x.Transforms.Source, "transforms"
		if x.Transforms.File != "" {
			b, err := x.readFile("transforms.file", x.Transforms.File, maxCodeBytes)
			if err != nil {
				return errors.Join(append(errs, fmt.Errorf("reading transforms: %w", err))...)
			}
			src, name = string(b), x.Transforms.File
		}
		c := &Capsule{Name: name, Source: src, AllowedImports: x.Spec.AllowedImports}
		if _, err := c.Check(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
