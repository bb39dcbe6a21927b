package synth

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/crystallize-dev/crystallize/internal/trace"
)

// Claim says what must hold or improve: the hypothesis an experiment
// tests, in words (Text) and in criteria (Acceptance, read by the
// meets_claim verifier: min_pct, alpha).
type Claim struct {
	ID         string         `key:"id" json:"id"`
	Text       string         `key:"text" json:"text"`
	Acceptance map[string]any `key:"acceptance" json:"acceptance"`
}

// Spec bounds synthesized code: the host modules it may load, the
// metamorphic properties it must satisfy, and its resources.
type Spec struct {
	AllowedImports []string   `key:"allowed_imports" json:"allowed_imports"`
	Properties     []Property `key:"properties" json:"properties"`
	// Contracts are recorded in the evidence and not interpreted.
	Contracts []string  `key:"contracts" json:"contracts"`
	Resources Resources `key:"resources" json:"resources"`

	// Model and Prompt, in an experiment, have a model propose the
	// allowed imports, properties and contracts (generate_spec). The
	// resources stay the author's: a model does not choose its own
	// bounds.
	Model  string `key:"model" json:"-"`
	Prompt string `key:"prompt" json:"-"`
}

// Property is one metamorphic property: run the code on Transform(data)
// and compare Metric with the result on data.
type Property struct {
	Name string `key:"name" json:"name"`
	// Transform names a built-in transform (see Transforms) or a
	// function of the experiment's transforms file. Metamorphic is its
	// other spelling, kept from the original format; set one.
	Transform   string `key:"transform" json:"transform,omitempty"`
	Metamorphic string `key:"metamorphic" json:"metamorphic,omitempty"`
	// Metric names the result key compared; empty compares every key.
	Metric string `key:"metric" json:"metric,omitempty"`
	// Tolerance is the largest absolute difference of two numbers that
	// still counts as equal; nil means DefaultTolerance.
	Tolerance *float64 `key:"tolerance" json:"tolerance,omitempty"`
	// Expect is the relation between the two results: "equal" (the
	// default), "scaled" (transformed = factor × original) or "shifted"
	// (transformed = original + offset).
	Expect string `key:"expect" json:"expect,omitempty"`
	// Factor and Offset parameterize scale and shift (and the scaled and
	// shifted relations); nil means 2 and 1.
	Factor *float64 `key:"factor" json:"factor,omitempty"`
	Offset *float64 `key:"offset" json:"offset,omitempty"`
}

// TransformName is the property's transform, whichever key named it.
func (p Property) TransformName() string {
	if p.Transform != "" {
		return p.Transform
	}
	return p.Metamorphic
}

func (p Property) tolerance() float64 {
	if p.Tolerance != nil {
		return *p.Tolerance
	}
	return DefaultTolerance
}

func (p Property) factor() float64 {
	if p.Factor != nil {
		return *p.Factor
	}
	return 2
}

func (p Property) offset() float64 {
	if p.Offset != nil {
		return *p.Offset
	}
	return 1
}

// Resources bound one capsule execution. The zero value of a field means
// its default.
type Resources struct {
	// TimeS is CPU seconds: it sets the Starlark step budget
	// (TimeS × StepsPerSecond) and the process's RLIMIT_CPU.
	TimeS int `key:"time_s" json:"time_s"`
	// MemMB bounds the memory the capsule process may add to what it
	// holds when it starts (RLIMIT_AS).
	MemMB int `key:"mem_mb" json:"mem_mb"`
	// OutputKB bounds what print() may write, per execution.
	OutputKB int `key:"output_kb" json:"output_kb"`
}

// Defaults of the original format, kept, plus the output cap.
const (
	DefaultTimeS     = 10
	DefaultMemMB     = 1024
	DefaultOutputKB  = 64
	DefaultTolerance = 1e-6
	// DefaultEntrypoint is the function a capsule calls.
	DefaultEntrypoint = "fit_and_eval"
)

// WithDefaults returns r with every zero field set to its default.
func (r Resources) WithDefaults() Resources {
	if r.TimeS == 0 {
		r.TimeS = DefaultTimeS
	}
	if r.MemMB == 0 {
		r.MemMB = DefaultMemMB
	}
	if r.OutputKB == 0 {
		r.OutputKB = DefaultOutputKB
	}
	return r
}

// Code is where the code under test comes from: a Starlark file, inline
// source, or a model asked with Prompt.
type Code struct {
	File       string `key:"file" json:"file,omitempty"`
	Source     string `key:"source" json:"source,omitempty"`
	Model      string `key:"model" json:"model,omitempty"`
	Prompt     string `key:"prompt" json:"prompt,omitempty"`
	Entrypoint string `key:"entrypoint" json:"entrypoint,omitempty"`
}

// Treatment is other code run on the same inputs, under the same spec,
// for verifiers that compare two conditions (meets_claim).
type Treatment struct {
	Name       string `key:"name" json:"name"`
	File       string `key:"file" json:"file,omitempty"`
	Source     string `key:"source" json:"source,omitempty"`
	Entrypoint string `key:"entrypoint" json:"entrypoint,omitempty"`
}

// Code returns where the treatment's code comes from.
func (t Treatment) Code() Code {
	return Code{File: t.File, Source: t.Source, Entrypoint: t.Entrypoint}
}

// DataSource names the experiment's input: a JSON, JSONL or CSV file, or
// an inline value.
type DataSource struct {
	File   string `key:"file" json:"file,omitempty"`
	Format string `key:"format" json:"format,omitempty"`
	Value  any    `key:"value" json:"value,omitempty"`
}

// TransformsSource is a Starlark file (or inline source) whose top-level
// functions are custom transforms, usable by name in spec.properties.
type TransformsSource struct {
	File   string `key:"file" json:"file,omitempty"`
	Source string `key:"source" json:"source,omitempty"`
}

// Settings is the [experiment] table.
type Settings struct {
	// Replicates is how many times the experiment runs; 0 means 1.
	Replicates int `key:"replicates" json:"replicates"`
	// Resample is "none" (every replicate sees the data as it is) or
	// "bootstrap" (replicate i > 0 sees rows drawn with replacement,
	// seeded by Seed and i), which gives verifiers real variation.
	Resample string `key:"resample" json:"resample,omitempty"`
	Seed     int    `key:"seed" json:"seed"`
}

// Hypothesis is one [[hypotheses]] entry: a verifier and its parameters.
type Hypothesis struct {
	Name     string `key:"name" json:"name"`
	Verifier string `key:"verifier" json:"verifier"`
	// Metric is what within_tolerance, exact_match and meets_claim read.
	Metric string `key:"metric" json:"metric,omitempty"`
	// Expected is the value within_tolerance and exact_match compare
	// with; for exact_match it may be a table of metric → value.
	Expected  any      `key:"expected" json:"expected,omitempty"`
	Tolerance *float64 `key:"tolerance" json:"tolerance,omitempty"`
	// Treatment names the treatment meets_claim compares with the
	// baseline (empty: the only one); for the other verifiers, the
	// condition whose metrics they read (empty: the baseline).
	Treatment string `key:"treatment" json:"treatment,omitempty"`
	// Direction is "lower" (the default: the metric is an error) or
	// "higher".
	Direction string   `key:"direction" json:"direction,omitempty"`
	MinPct    *float64 `key:"min_pct" json:"min_pct,omitempty"`
	Alpha     *float64 `key:"alpha" json:"alpha,omitempty"`
	// Method is "welch" (the default) or "bootstrap".
	Method string `key:"method" json:"method,omitempty"`
	// Exact says meets_claim's metric is deterministic: replicates with no
	// variance in either condition are then compared as they are. Without
	// it such replicates fail the hypothesis, since a significance test of
	// two constant samples is undefined, not a p of 0.
	Exact bool `key:"exact" json:"exact,omitempty"`
}

// Experiment is an experiment.toml: everything a run needs.
type Experiment struct {
	Claim      Claim            `key:"claim" json:"claim"`
	Spec       Spec             `key:"spec" json:"spec"`
	Code       Code             `key:"code" json:"code"`
	Treatments []Treatment      `key:"treatments" json:"treatments,omitempty"`
	Data       DataSource       `key:"data" json:"data"`
	Transforms TransformsSource `key:"transforms" json:"transforms,omitempty"`
	Settings   Settings         `key:"experiment" json:"experiment"`
	Hypotheses []Hypothesis     `key:"hypotheses" json:"hypotheses"`

	// File is the experiment file as named by the caller; Dir is the
	// directory relative paths in it resolve against.
	File string `json:"-"`
	Dir  string `json:"-"`
	// AllowOutside lets the files the experiment names (data, code,
	// transforms) lie outside Dir. It is the caller's to set, never the
	// file's: by default an experiment reads only its own directory, so
	// one handed over cannot make a run read ~/.aws/credentials as CSV.
	AllowOutside bool `json:"-"`

	lines func(string) int
}

// EvidenceDir is where the evidence of the experiment goes unless its
// caller says otherwise: evidence/<claim id> beside the experiment file.
func (x *Experiment) EvidenceDir() string {
	return filepath.Join(x.Dir, "evidence", x.Claim.ID)
}

// line is the line of a key path in the experiment file, 0 when unknown.
func (x *Experiment) line(path string) int {
	if x.lines == nil {
		return 0
	}
	return x.lines(path)
}

// LoadExperiment reads and checks an experiment file. Problems are a
// trace.ErrorList, each "file:line: key.path: message".
func LoadExperiment(file string) (*Experiment, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("reading experiment: %w", err)
	}
	return ParseExperiment(data, file)
}

// ParseExperiment decodes and checks an experiment.toml document. Paths in
// it are relative to the directory of file.
func ParseExperiment(data []byte, file string) (*Experiment, error) {
	var doc map[string]any
	if _, err := toml.NewDecoder(bytes.NewReader(data)).Decode(&doc); err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return nil, trace.ErrorList{{File: file, Line: pe.Position.Line, Msg: pe.Message}}
		}
		return nil, trace.ErrorList{{File: file, Msg: err.Error()}}
	}
	x := &Experiment{File: file, Dir: filepath.Dir(file), lines: tomlLines(data)}
	d := &decoder{file: file, line: x.lines}
	d.object("", doc, reflect.ValueOf(x).Elem())
	x.check(d)
	if len(d.errs) > 0 {
		d.errs.Sort()
		return nil, d.errs
	}
	return x, nil
}

// DecodeClaim decodes a claim written as JSON, strictly.
func DecodeClaim(data []byte, file string) (*Claim, error) {
	c := new(Claim)
	d := &decoder{file: file, root: "$"}
	if err := decodeJSON(d, data, c); err != nil {
		return nil, err
	}
	if c.ID == "" {
		d.errorf("$.id", "missing claim id")
	}
	return c, d.errs.Err()
}

// DecodeSpec decodes a spec written as JSON (what a model proposes, or
// the spec.json of an evidence bundle), strictly, and checks it.
func DecodeSpec(data []byte, file string) (*Spec, error) {
	s := new(Spec)
	d := &decoder{file: file, root: "$"}
	if err := decodeJSON(d, data, s); err != nil {
		return nil, err
	}
	s.check(d, "$")
	return s, d.errs.Err()
}

// decodeJSON parses with trace.ParseJSON rather than a json.Decoder: a
// Decoder stops after the first value, so a claim or spec followed by
// anything else was accepted, and its syntax errors had no line.
func decodeJSON(d *decoder, data []byte, dst any) error {
	doc, err := trace.ParseJSON(data, d.file, 1)
	if err != nil {
		return err
	}
	m, ok := doc.(map[string]any)
	if !ok {
		return trace.ErrorList{{File: d.file, Path: "$", Msg: "expected object, got " + typeName(doc)}}
	}
	d.object(d.root, m, reflect.ValueOf(dst).Elem())
	return nil
}

var idPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

func (x *Experiment) check(d *decoder) {
	switch {
	case x.Claim.ID == "":
		d.errorf("claim.id", "missing claim id")
	case !idPattern.MatchString(x.Claim.ID):
		d.errorf("claim.id", "claim id %q must be letters, digits, '.', '_' or '-'", x.Claim.ID)
	}
	x.Spec.check(d, "spec")
	checkCode(d, "code", x.Code)
	names := map[string]bool{"baseline": true}
	for i, t := range x.Treatments {
		p := fmt.Sprintf("treatments[%d]", i)
		switch {
		case t.Name == "":
			d.errorf(p+".name", "missing treatment name")
		case names[t.Name]:
			d.errorf(p+".name", "duplicate condition name %q", t.Name)
		}
		names[t.Name] = true
		checkCode(d, p, t.Code())
	}
	n := 0
	for _, set := range []bool{x.Data.File != "", x.Data.Value != nil} {
		if set {
			n++
		}
	}
	if n != 1 {
		d.errorf("data", "set exactly one of file and value")
	}
	if x.Data.Format != "" && !slices.Contains([]string{"json", "jsonl", "csv"}, x.Data.Format) {
		d.errorf("data.format", "unknown format %q; want json, jsonl or csv", x.Data.Format)
	}
	if x.Transforms.File != "" && x.Transforms.Source != "" {
		d.errorf("transforms", "set file or source, not both")
	}
	if x.Settings.Replicates < 0 || x.Settings.Replicates > MaxReplicates {
		d.errorf("experiment.replicates", "replicates must be between 1 and %d, got %d", MaxReplicates, x.Settings.Replicates)
	}
	if r := x.Settings.Resample; r != "" && r != "none" && r != "bootstrap" {
		d.errorf("experiment.resample", "unknown resample %q; want none or bootstrap", r)
	}
	hyp := map[string]bool{}
	for i, h := range x.Hypotheses {
		p := fmt.Sprintf("hypotheses[%d]", i)
		if h.Name == "" {
			d.errorf(p+".name", "missing hypothesis name")
		} else if hyp[h.Name] {
			d.errorf(p+".name", "duplicate hypothesis %q", h.Name)
		}
		hyp[h.Name] = true
		checkHypothesis(d, p, h, names)
	}
}

// MaxReplicates bounds [experiment] replicates.
const MaxReplicates = 1000

func checkCode(d *decoder, p string, c Code) {
	n := 0
	for _, set := range []bool{c.File != "", c.Source != "", c.Model != ""} {
		if set {
			n++
		}
	}
	if n != 1 {
		d.errorf(p, "set exactly one of file, source and model")
	}
	if c.Model != "" && c.Prompt == "" {
		d.errorf(p+".prompt", "a model needs a prompt")
	}
	if c.Model == "" && c.Prompt != "" {
		d.errorf(p+".prompt", "prompt is only read with model")
	}
	if c.Entrypoint != "" && !identPattern.MatchString(c.Entrypoint) {
		d.errorf(p+".entrypoint", "entrypoint %q is not an identifier", c.Entrypoint)
	}
}

var identPattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func checkHypothesis(d *decoder, p string, h Hypothesis, conditions map[string]bool) {
	if h.Treatment != "" && !conditions[h.Treatment] {
		d.errorf(p+".treatment", "no condition named %q", h.Treatment)
	}
	// A negative tolerance would make within_tolerance fail whatever the
	// code computes, as a property's would.
	if h.Tolerance != nil && *h.Tolerance < 0 {
		d.errorf(p+".tolerance", "tolerance must not be negative")
	}
	switch h.Verifier {
	case VerifierMetamorphic:
	case VerifierWithinTolerance:
		if h.Metric == "" {
			d.errorf(p+".metric", "within_tolerance needs a metric")
		}
		if _, ok := asFloat(h.Expected); !ok {
			d.errorf(p+".expected", "within_tolerance needs a numeric expected value")
		}
	case VerifierExactMatch:
		if h.Expected == nil {
			d.errorf(p+".expected", "exact_match needs an expected value")
		}
		if _, isMap := h.Expected.(map[string]any); h.Metric == "" && !isMap && h.Expected != nil {
			d.errorf(p+".expected", "exact_match without a metric needs a table of metric = value")
		}
	case VerifierMeetsClaim:
		if h.Metric == "" {
			d.errorf(p+".metric", "meets_claim needs a metric")
		}
		if h.Direction != "" && h.Direction != "lower" && h.Direction != "higher" {
			d.errorf(p+".direction", "unknown direction %q; want lower or higher", h.Direction)
		}
		if h.Method != "" && h.Method != MethodWelch && h.Method != MethodBootstrap {
			d.errorf(p+".method", "unknown method %q; want %s or %s", h.Method, MethodWelch, MethodBootstrap)
		}
		if h.Alpha != nil && (*h.Alpha <= 0 || *h.Alpha >= 1) {
			d.errorf(p+".alpha", "alpha must be between 0 and 1, got %g", *h.Alpha)
		}
	case "":
		d.errorf(p+".verifier", "missing verifier")
	default:
		d.errorf(p+".verifier", "unknown verifier %q; want one of %s", h.Verifier, strings.Join(Verifiers, ", "))
	}
}

func (s *Spec) check(d *decoder, root string) {
	switch {
	case s.Model != "" && s.Prompt == "":
		d.errorf(root+".prompt", "a model needs a prompt")
	case s.Model == "" && s.Prompt != "":
		d.errorf(root+".prompt", "prompt is only read with model")
	case s.Model != "" && (len(s.AllowedImports) > 0 || len(s.Properties) > 0 || len(s.Contracts) > 0):
		d.errorf(root+".model", "with a model, allowed_imports, properties and contracts come from the model; set only resources")
	}
	for i, m := range s.AllowedImports {
		if _, ok := hostModules[m]; !ok {
			d.errorf(fmt.Sprintf("%s.allowed_imports[%d]", root, i), "unknown module %q; capsules can load %s", m, strings.Join(ModuleNames(), ", "))
		}
	}
	seen := map[string]bool{}
	for i, p := range s.Properties {
		path := fmt.Sprintf("%s.properties[%d]", root, i)
		switch {
		case p.Name == "":
			d.errorf(path+".name", "missing property name")
		case !identPattern.MatchString(p.Name):
			d.errorf(path+".name", "property name %q is not an identifier", p.Name)
		case seen[p.Name]:
			d.errorf(path+".name", "duplicate property %q", p.Name)
		}
		seen[p.Name] = true
		if p.Transform != "" && p.Metamorphic != "" {
			d.errorf(path, "set transform or metamorphic, not both")
		}
		if p.TransformName() == "" {
			d.errorf(path+".transform", "missing transform")
		}
		if p.Tolerance != nil && *p.Tolerance < 0 {
			d.errorf(path+".tolerance", "tolerance must not be negative")
		}
		switch p.Expect {
		case "", "equal", "scaled", "shifted":
		default:
			d.errorf(path+".expect", "unknown relation %q; want equal, scaled or shifted", p.Expect)
		}
	}
	r := s.Resources
	for _, f := range []struct {
		key      string
		v, limit int
	}{{"time_s", r.TimeS, 3600}, {"mem_mb", r.MemMB, 65536}, {"output_kb", r.OutputKB, 1 << 20}} {
		if f.v < 0 || f.v > f.limit {
			d.errorf(root+".resources."+f.key, "%s must be between 1 and %d, got %d", f.key, f.limit, f.v)
		}
	}
}

// tomlLines returns a function that finds the line of a key path in a
// TOML document, for error messages. BurntSushi/toml keeps key positions
// private, so this reads the table headers and key = value lines itself:
// a path is looked up, then its parents, so a key inside an inline table
// points at the line of the table.
func tomlLines(data []byte) func(string) int {
	lines := map[string]int{}
	arrays := map[string]int{} // array-of-tables path → elements seen
	table := ""
	// resolve turns a header's dotted key into the path of the element
	// it names, indexing every array of tables along the way.
	resolve := func(key string) string {
		path := ""
		for _, seg := range strings.Split(key, ".") {
			seg = strings.Trim(strings.TrimSpace(seg), `"'`)
			if path == "" {
				path = seg
			} else {
				path += "." + seg
			}
			if n, ok := arrays[stripIndexes(path)]; ok {
				path = fmt.Sprintf("%s[%d]", path, n-1)
			}
		}
		return path
	}
	keyLine := regexp.MustCompile(`^\s*([A-Za-z0-9_\-."' ]+?)\s*=`)
	inString := ""
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if inString != "" {
			if strings.Count(line, inString)%2 == 1 {
				inString = ""
			}
			continue
		}
		trim := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(trim, "[["):
			key := strings.TrimSpace(strings.TrimSuffix(strings.SplitN(trim[2:], "]]", 2)[0], "]]"))
			base := stripIndexes(resolve(key))
			arrays[base]++
			table = resolve(key)
			setLine(lines, table, n)
		case strings.HasPrefix(trim, "["):
			table = resolve(strings.SplitN(trim[1:], "]", 2)[0])
			setLine(lines, table, n)
		default:
			m := keyLine.FindStringSubmatch(line)
			if m == nil {
				continue
			}
			path := m[1]
			if table != "" {
				path = table + "." + path
			}
			setLine(lines, path, n)
			for _, q := range []string{`"""`, `'''`} {
				if strings.Count(line, q)%2 == 1 {
					inString = q
				}
			}
		}
	}
	return func(path string) int {
		for path != "" {
			if n, ok := lines[path]; ok {
				return n
			}
			i := strings.LastIndexAny(path, ".[")
			if i < 0 {
				break
			}
			path = path[:i]
		}
		return 0
	}
}

func setLine(lines map[string]int, path string, n int) {
	if _, ok := lines[path]; !ok {
		lines[path] = n
	}
}

var indexPattern = regexp.MustCompile(`\[\d+\]`)

func stripIndexes(path string) string { return indexPattern.ReplaceAllString(path, "") }
