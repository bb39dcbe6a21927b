package runner

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/crystallize-dev/crystallize/internal/bundle"
	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/runconfig"
	"github.com/crystallize-dev/crystallize/internal/starfile"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// Workflow is a loaded workflow: its source, what it declares, and, for a
// bundle, the manifest and the fixtures dry runs answer from.
type Workflow struct {
	// Target is the path Load was given: the bundle directory or the
	// .star file.
	Target string
	// File is the path of the .star file.
	File string
	// Src is its content and SHA256 the lowercase hex digest of Src.
	Src    []byte
	SHA256 string
	// Name is the workflow function's name and Params its parameters
	// after ctx, in order; Required says which have no default.
	Name     string
	Params   []string
	Required []bool
	// Capabilities and Secrets are what the workflow declares: the
	// bundle manifest's, or the "# capabilities: … · secrets: …" header
	// line of a bare file. Nil means none.
	Capabilities []string
	Secrets      []string
	// Tools and Models are the tool names and model step names the
	// source calls with a literal name, in order of first appearance.
	Tools  []string
	Models []string
	// Workers are the worker presets ctx.agent names with a literal
	// worker="…"; such a step's model is the preset's, not in Models.
	Workers []string
	// ResultKeys are, per tool name, the members the source reads from
	// the tool's result (step1["branch"] gives ["branch"]): the shape a
	// dry run answers with when nothing recorded one.
	ResultKeys map[string][][]string
	// Bundle is set when the workflow was loaded from a bundle, and
	// Readiness then holds bundle.Ready's decision about it: whether it
	// may run for real is never read from the manifest's stored status.
	Bundle    *bundle.Bundle
	Readiness *bundle.Readiness
	// Fixtures are the bundle's fixture traces, in manifest order.
	Fixtures []*trace.Trace
	// Candidate is the bundle's candidate (report.json), nil for a bare
	// file: it says each step's kind, capabilities, side effects and
	// expected output, which a run records and a dry run answers with.
	Candidate *candidate.Candidate
}

// ErrBundleMember is returned by Load for a .star file inside a bundle
// directory: run as a bare file, it would skip the bundle's approval.
var ErrBundleMember = errors.New("workflow belongs to a bundle")

// Origins of a workflow, as Origin reports them and run records keep.
const (
	OriginBundle = "bundle"
	// OriginBareFile is a .star file outside any bundle: the runner's
	// own code, run without approval.
	OriginBareFile = "bare_file"
)

// Origin says where w was loaded from: OriginBundle or OriginBareFile.
func (w *Workflow) Origin() string {
	if w.Bundle != nil {
		return OriginBundle
	}
	return OriginBareFile
}

// Status is the bundle's promotion status as bundle.Ready recomputes it
// (not the status candidate.json claims), or "" for a bare file.
func (w *Workflow) Status() string {
	if w.Bundle == nil {
		return ""
	}
	if w.Readiness == nil {
		return bundle.StatusBlocked
	}
	return w.Readiness.Status
}

// Ready reports whether w is a bundle that may run for real: approved for
// its current bytes and valid (bundle.Readiness.OK).
func (w *Workflow) Ready() bool {
	return w.Bundle != nil && w.Readiness != nil && w.Readiness.OK()
}

// structural are the validation codes Load refuses for every run, dry or
// not: a path out of the bundle or a symlink in it would make a dry run
// read files the bundle does not hold.
var structural = map[string]bool{bundle.CodeSymlink: true, bundle.CodePathEscape: true}

// admit refuses to run w for real (not DryRun) unless bundle.Ready
// accepts it or the caller passed AllowUnapproved, which the run records;
// the refusal wraps ErrNotReady and names the recomputed status and every
// validation problem with its code. A bare file is the caller's own code
// and is admitted.
func admit(w *Workflow, opts Options) error {
	if w.Bundle == nil || opts.DryRun {
		return nil
	}
	if w.Ready() {
		return checkApprovalLedger(w, opts)
	}
	r := w.Readiness
	if r == nil {
		return fmt.Errorf("%w: %s was not checked", ErrNotReady, w.Target)
	}
	if opts.AllowUnapproved {
		if opts.Log != nil {
			fmt.Fprintf(opts.Log, "running %s without approval (--allow-unapproved): status %s", w.Target, r.Status)
			if codes := r.Codes(); len(codes) > 0 {
				fmt.Fprintf(opts.Log, ", validation problems %s", strings.Join(codes, ", "))
			}
			fmt.Fprintln(opts.Log)
		}
		return nil
	}
	return &RemedyError{Err: r.Err(), Remedy: RemedyAdmit}
}

// Load loads the workflow at target: a bundle directory (its
// candidate.json names the workflow file) or a .star file. It checks the
// source with codegen.Check, so a workflow it returns defines exactly one
// top-level function whose first parameter is ctx and uses no name but
// json, struct and the Starlark universe. For a bundle it also checks that
// the workflow file is the one the manifest hashes, since an approval
// holds only for those bytes, and decides its readiness with bundle.Ready
// (the decision validate makes); a bundle with a symlink or a path out of
// it is refused outright.
func Load(target string) (*Workflow, error) {
	st, err := os.Stat(target)
	if err != nil {
		return nil, fmt.Errorf("loading workflow: %w", err)
	}
	if !st.IsDir() {
		if dir, ok := runconfig.BundleOf(target); ok {
			return nil, fmt.Errorf("%w: %s is a file of the bundle %s; run the bundle (crystallize run %s), whose approval is checked", ErrBundleMember, target, dir, dir)
		}
		src, err := readRegular(target)
		if err != nil {
			return nil, fmt.Errorf("loading workflow: %w", err)
		}
		w, err := parse(target, src)
		if err != nil {
			return nil, err
		}
		w.Capabilities, w.Secrets = starfile.Header(src)
		w.Target = target
		return w, nil
	}

	b, err := bundle.Read(target)
	if err != nil {
		return nil, err
	}
	m := b.Manifest
	// Validation comes first: it reads nothing through a symlink and
	// nothing but regular files, so a link out of the bundle or to a
	// FIFO is refused before this function reads what it names.
	r := bundle.Ready(target)
	var bad []string
	for _, p := range r.Problems {
		if structural[p.Code] {
			bad = append(bad, fmt.Sprintf("%s %s: %s", p.Code, p.Path, p.Message))
		}
	}
	if len(bad) > 0 {
		return nil, fmt.Errorf("loading bundle %s: %s", target, strings.Join(bad, "; "))
	}
	if !filepath.IsLocal(filepath.FromSlash(m.Workflow.Path)) {
		return nil, fmt.Errorf("%s: $.workflow.path: %q is not a path inside the bundle", filepath.Join(target, bundle.ManifestFile), m.Workflow.Path)
	}
	file := filepath.Join(target, filepath.FromSlash(m.Workflow.Path))
	src, err := readRegular(file)
	if err != nil {
		return nil, fmt.Errorf("loading workflow: %w", err)
	}
	w, err := parse(file, src)
	if err != nil {
		return nil, err
	}
	if m.Workflow.SHA256 != "" && m.Workflow.SHA256 != w.SHA256 {
		return nil, fmt.Errorf("%s: sha256 %s, but the manifest records %s; the workflow changed after it was reviewed", file, w.SHA256, m.Workflow.SHA256)
	}
	if r.WorkflowSHA256 != w.SHA256 {
		// The file changed between reading it and validating it: the
		// decision would be about other bytes than the ones that run.
		return nil, fmt.Errorf("%s: sha256 %s, but validation saw %s; the workflow changed while it was loaded", file, w.SHA256, r.WorkflowSHA256)
	}
	w.Bundle = b
	w.Readiness = r
	w.Target = target
	w.Capabilities = slices.Clone(m.Capabilities)
	w.Secrets = slices.Clone(m.RequiredSecrets)
	var errs []error
	for i, f := range m.Fixtures {
		if !filepath.IsLocal(filepath.FromSlash(f.Path)) {
			errs = append(errs, fmt.Errorf("%s: $.fixtures[%d].path: %q is not a path inside the bundle", filepath.Join(target, bundle.ManifestFile), i, f.Path))
			continue
		}
		p := filepath.Join(target, filepath.FromSlash(f.Path))
		data, err := readRegular(p)
		if err != nil {
			errs = append(errs, fmt.Errorf("loading fixture: %w", err))
			continue
		}
		t, err := trace.Decode(data, p, 0)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		w.Fixtures = append(w.Fixtures, t)
	}
	if c, err := b.Candidate(); err != nil {
		errs = append(errs, fmt.Errorf("loading candidate: %w", err))
	} else {
		w.Candidate = c
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return w, nil
}

// readRegular reads the file p only when it is a regular file: a FIFO
// would block the load and a device never end. It is checked before
// opening (opening a FIFO blocks) and again on the opened file, in case
// it was replaced between.
func readRegular(p string) ([]byte, error) {
	st, err := os.Stat(p)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", p)
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", p)
	}
	return io.ReadAll(f)
}

// parse checks src and reads what it says (starfile.Parse).
func parse(file string, src []byte) (*Workflow, error) {
	f, err := starfile.Parse(file, src)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(src)
	return &Workflow{
		File: file, Src: src, SHA256: hex.EncodeToString(sum[:]),
		Name: f.Name, Params: f.Params, Required: f.Required,
		Tools: f.Tools, Models: f.Models, Workers: f.Workers, ResultKeys: f.ResultKeys,
	}, nil
}

// quoteList renders names for an error message: "a", "b".
func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return strings.Join(q, ", ")
}
