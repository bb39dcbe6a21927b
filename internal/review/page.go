package review

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/crystallize-dev/crystallize/internal/bundle"
	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// Page is everything the review page shows of one bundle. Load fills it
// from a bundle directory; Build from values already in memory.
type Page struct {
	// Dir is the bundle directory as given; Name its base name.
	Dir, Name string
	// Err is why the bundle could not be read at all; the page then
	// shows only that.
	Err string

	Manifest  *bundle.Manifest
	Candidate *candidate.Candidate
	// Excluded are the traces mining left out, with their reasons
	// (report.json).
	Excluded []candidate.Exclusion

	// Status is the promotion status recomputed from the evidence
	// (bundle.Ready), never the one candidate.json claims.
	Status     string
	Readiness  *bundle.Readiness
	Validation *bundle.Validation
	// Eval is the eval pack's run; EvalErr why it could not run ("" with
	// a nil Eval: the bundle has no eval pack).
	Eval    *bundle.EvalResult
	EvalErr string

	Graph  Graph
	Matrix Matrix
	// Source is the workflow file, line by line, with the evidence each
	// line came from where the header and step comments record it.
	Source []SourceLine
	// SourceSHA256 is the hex sha256 of the workflow bytes shown, which
	// can differ from the one the manifest records (validation says so).
	SourceSHA256 string
	// Previous is the last approved version of the same workflow, when
	// one is known and differs; Diff is the diff from it to Source.
	Previous *Previous
	DryRun   []DryStep

	// Refusal, when not empty, is why a decision on the bundle would be
	// refused now (blocked, stale, invalid); the form says it instead of
	// offering the decision.
	Refusal string
}

// Previous is an earlier approved version of the workflow.
type Previous struct {
	// Label says where it came from (a bundle directory or the state
	// directory's archive) and SHA256 which bytes.
	Label, SHA256 string
	// Err, when not empty, is why the approved bytes cannot be shown (an
	// archived copy is missing or was changed after the approval); Diff
	// and Effects are then empty.
	Err  string
	Diff []DiffLine
	// Effects is the diff of the side effects, one per line, from the
	// approved version to this one; nil when they are the same.
	Effects []DiffLine
}

// DiffLine is one line of a unified diff, with its class: "add", "del",
// "hunk" or "" for context.
type DiffLine struct {
	Class, Text string
}

// SourceLine is one line of the workflow source. Step is the candidate
// step the line belongs to (from its "# step N ·" comment on), Fixture the
// bundle fixture a "# source:" line names; 0 and "" when the bundle does
// not record where the line came from.
type SourceLine struct {
	N       int
	Text    string
	Step    int
	Fixture string
}

// DryStep is what one step would receive and run, with the values of the
// first source example: a parameter's value, a constant, a binding to an
// earlier step's result, or a secret by its id.
type DryStep struct {
	Step int
	Call string
	Args []DryArg
}

// DryArg is one argument of a DryStep.
type DryArg struct {
	Key, From, Value string
}

// Load reads the bundle in dir into a Page. A bundle that cannot be read
// gives a Page with Err set, so a directory of bundles still lists the
// others. The bundle's files are the only input; nothing is run but the
// eval pack's assertions, which call nothing (they replay fixtures).
func Load(dir string) *Page {
	p := &Page{Dir: dir, Name: filepath.Base(filepath.Clean(dir))}
	b, err := bundle.Read(dir)
	if err != nil {
		p.Err = err.Error()
		return p
	}
	p.Manifest = b.Manifest
	var fixtures map[string]*trace.Trace
	if r, err := bundle.ReadReport(dir); err != nil {
		p.Err = err.Error()
	} else {
		p.Excluded = r.ExcludedTraces
		if p.Manifest.CandidateID != "" {
			p.Candidate = r.Find(p.Manifest.CandidateID)
		}
	}
	fixtures = readFixtures(dir, p.Manifest)
	p.Validation = bundle.Validate(dir)
	p.Readiness = bundle.Ready(dir)
	p.Status = p.Readiness.Status
	if p.Manifest.EvalPack.Path != nil {
		if res, err := bundle.Eval(dir); err != nil {
			p.EvalErr = err.Error()
		} else {
			p.Eval = res
		}
	}
	var src []byte
	if wf, err := readInside(dir, p.Manifest.Workflow.Path); err == nil {
		src = wf
	}
	p.build(src, fixtures)
	return p
}

// Build fills a Page from a manifest, its candidate, the workflow source
// and the fixtures by trace id, without reading files: what Load does
// after reading, and what a benchmark measures.
func Build(m *bundle.Manifest, c *candidate.Candidate, src []byte, fixtures map[string]*trace.Trace) *Page {
	p := &Page{Manifest: m, Candidate: c, Status: m.Promotion.Criteria.Status}
	p.build(src, fixtures)
	return p
}

func (p *Page) build(src []byte, fixtures map[string]*trace.Trace) {
	p.Graph = buildGraph(p.Manifest, p.Candidate)
	p.Matrix = buildMatrix(p.Manifest, p.Candidate, fixtures)
	p.Source = sourceLines(src, p.Manifest)
	if src != nil {
		sum := sha256.Sum256(src)
		p.SourceSHA256 = hex.EncodeToString(sum[:])
	}
	p.DryRun = dryRun(p.Candidate)
	p.Refusal = refusal(p)
}

// refusal says why a decision would be refused now, as Decide would
// refuse it: no candidate, validation problems, or a blocked status (an
// approval of a blocked bundle is refused; a rejection is not, but a
// blocked bundle needs no rejection to stay out of use).
func refusal(p *Page) string {
	if p.Manifest.CandidateID == "" {
		return "the bundle holds no candidate (kind " + p.Manifest.Kind + ")"
	}
	if p.Validation != nil && !p.Validation.OK {
		return "validation failed: " + problemCodes(p.Validation.Problems)
	}
	if p.Status == bundle.StatusBlocked {
		var codes []string
		for _, r := range p.Manifest.Promotion.Criteria.Reasons {
			codes = append(codes, r.Code)
		}
		return "promotion is blocked: " + strings.Join(codes, ", ")
	}
	return ""
}

func problemCodes(ps []candidate.Problem) string {
	var codes []string
	for _, pr := range ps {
		if !slices.Contains(codes, pr.Code) {
			codes = append(codes, pr.Code)
		}
	}
	return strings.Join(codes, ", ")
}

// readInside reads the bundle file p, refusing a path that leaves the
// bundle or passes through a symlink anywhere on its way: validation
// reports such a path, the page only declines to show it. Without the
// symlink check a hostile bundle whose workflow path runs through a link
// to the reviewer's home would put a private file on the page, and into
// a static export attached to a ticket.
func readInside(dir, p string) ([]byte, error) {
	if p == "" || filepath.IsAbs(p) || strings.Contains(p, "\\") || strings.Contains(p, ":") || slices.Contains(strings.Split(p, "/"), "..") {
		return nil, fmt.Errorf("%s: not a path inside the bundle", p)
	}
	cur := dir
	parts := strings.Split(p, "/")
	for i, part := range parts {
		cur = filepath.Join(cur, part)
		st, err := os.Lstat(cur)
		if err != nil {
			return nil, err
		}
		if st.Mode()&os.ModeSymlink != 0 {
			return nil, fmt.Errorf("%s: passes through a symlink", p)
		}
		if i == len(parts)-1 && !st.Mode().IsRegular() {
			return nil, fmt.Errorf("%s: not a regular file", p)
		}
	}
	return os.ReadFile(cur)
}

// readFixtures decodes the bundle's fixtures by trace id, so a matrix
// cell can show the redacted action it aligned. A fixture that cannot be
// read is left out (validation reports it); its cells show no action.
func readFixtures(dir string, m *bundle.Manifest) map[string]*trace.Trace {
	out := map[string]*trace.Trace{}
	for _, f := range m.Fixtures {
		data, err := readInside(dir, f.Path)
		if err != nil {
			continue
		}
		t, err := trace.Decode(data, f.Path, 0)
		if err != nil {
			continue
		}
		out[f.TraceID] = t
	}
	return out
}

// sourceLines splits src into lines and links each to its evidence: a
// "# source: sha256:… (file)" header line to the fixture with that source
// hash, and every line from a "# step N ·" comment to the next one to
// step N.
func sourceLines(src []byte, m *bundle.Manifest) []SourceLine {
	if len(src) == 0 {
		return nil
	}
	byHash := map[string]string{}
	for _, f := range m.Fixtures {
		byHash[f.SourceHash] = f.TraceID
	}
	text := strings.TrimSuffix(string(src), "\n")
	var out []SourceLine
	step := 0
	for i, line := range strings.Split(text, "\n") {
		l := SourceLine{N: i + 1, Text: line}
		trim := strings.TrimSpace(line)
		if rest, ok := strings.CutPrefix(trim, "# step "); ok {
			if n, _, ok := strings.Cut(rest, " "); ok {
				if k, err := strconv.Atoi(n); err == nil {
					step = k
				}
			}
		} else if strings.HasPrefix(trim, "def ") || strings.HasPrefix(trim, "return ") {
			step = 0
		}
		if rest, ok := strings.CutPrefix(trim, "# source: "); ok {
			h, _, _ := strings.Cut(rest, " ")
			l.Fixture = byHash[h]
		}
		l.Step = step
		out = append(out, l)
	}
	return out
}

// dryRun lists what each step would be called with, taking parameter
// values from the first example a parameter records.
func dryRun(c *candidate.Candidate) []DryStep {
	if c == nil {
		return nil
	}
	params := map[string]any{}
	for _, p := range c.Parameters {
		if len(p.Examples) > 0 {
			params[p.Name] = p.Examples[0]
		}
	}
	for _, p := range c.DerivedParameters {
		if len(p.Examples) > 0 {
			params[p.Name] = p.Examples[0]
		}
	}
	var out []DryStep
	for _, s := range c.Steps {
		d := DryStep{Step: s.Index, Call: callOf(s)}
		for _, a := range s.Arguments {
			arg := DryArg{Key: a.Key, From: string(a.Kind)}
			switch a.Kind {
			case candidate.ArgConstant:
				arg.Value = compact(a.Value)
			case candidate.ArgParameter:
				arg.From = "parameter " + a.Parameter
				if v, ok := params[a.Parameter]; ok {
					arg.Value = compact(v)
				}
			case candidate.ArgBinding:
				if a.Binding != nil {
					arg.Value = fmt.Sprintf("result of step %d, %s %s", a.Binding.FromStep, a.Binding.FromField, a.Binding.FromPath)
				}
			case candidate.ArgSecret:
				arg.Value = "ctx.secret(" + strconv.Quote(a.Secret) + ")"
			}
			d.Args = append(d.Args, arg)
		}
		out = append(out, d)
	}
	return out
}

// callOf is how the workflow calls step s: ctx.tool, ctx.model or
// ctx.approve.
func callOf(s candidate.Step) string {
	switch {
	case s.Kind == trace.KindHumanApproval:
		return "ctx.approve " + s.Name
	case s.Segment == candidate.Fuzzy:
		return "ctx.model " + s.Name
	}
	return "ctx.tool " + s.Name
}

// compact renders v as one line of JSON.
func compact(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// indent renders v as indented JSON, for a cell's detail.
func indent(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSuffix(b.String(), "\n")
}
