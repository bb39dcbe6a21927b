package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/crystallize-dev/crystallize/internal/atomicfile"
	"github.com/crystallize-dev/crystallize/internal/bundle"
	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/codegen"
	"github.com/crystallize-dev/crystallize/internal/mine"
	"github.com/crystallize-dev/crystallize/internal/replay"
	"github.com/crystallize-dev/crystallize/internal/source"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// Outputs is what Publish writes: the selected workflow, every safe
// candidate's workflow, the report, the review bundle and its eval pack.
// Empty paths are not written.
type Outputs struct {
	// Out is the selected workflow (or the one saying none was found).
	Out string
	// OutDir receives every safe candidate as <name>.star.
	OutDir string
	// Report is the JSON report.
	Report string
	// Bundle is the review bundle's directory.
	Bundle string
	// Bundles receives a review bundle of every safe candidate, each in
	// the directory BundleDir names (the names OutDir gives workflows,
	// without .star). It excludes Bundle.
	Bundles string
	// EvalPack is the eval pack of the selected candidate (or the one
	// receipt drift rejected): a copy of the bundle's (with Bundles, every
	// bundle holds its own and this is the selected candidate's), or
	// without a bundle one rendered alone, whose fixture paths are those a
	// bundle would hold. With no such candidate there is nothing to
	// evaluate and it is not written (Published.EvalPack says so); the
	// report and the rest are.
	EvalPack      string
	Codegen       codegen.Options
	BundleOptions bundle.Options
	// Rewrite, when set, replaces the selected candidate's generated
	// workflow before anything is rendered from it (a model's refinement
	// of a codified session); it may record what it did in the report.
	// An error writes nothing.
	Rewrite func(ctx context.Context, r *candidate.Report, sel *candidate.Candidate, draft []byte) ([]byte, error)
	// AllSources, when set, says that the sources given to Publish are
	// only the examples of the report's candidates, and loads every
	// source trace for a bundle that has no candidate (it then holds
	// every trace as a fixture).
	AllSources func(ctx context.Context) ([]*trace.Trace, error)
	// Examples, when set, reads back the example traces of one
	// candidate: shadow replay and the bundle then read each candidate's
	// examples when they get to it, instead of taking them from sources.
	Examples func(ctx context.Context, c *candidate.Candidate) ([]*trace.Trace, error)
	// ExampleBatches, when set, hands the example traces of one
	// candidate to yield in batches of bounded size: shadow replay then
	// compares each batch and lets it go before the next is read, so it
	// never holds every example of a candidate with tens of thousands of
	// them. It takes precedence over Examples for shadow replay; the
	// bundle, which holds its candidate's examples as fixtures, still
	// reads them through Examples.
	ExampleBatches func(ctx context.Context, c *candidate.Candidate, yield func(batch []*trace.Trace) error) error
	// Heldout, when set, streams the held-out traces to shadow replay
	// instead of the heldout slice; there is then no bundle, which needs
	// them all.
	Heldout replay.HeldoutFunc
	// Shadow tunes shadow replay: how many passing source examples of a
	// candidate the report lists (replay.Options.ListPassing).
	Shadow replay.Options
}

// WorkflowFile returns the path under dir of the workflow of a candidate
// named name: <name>.star when the name is a plain file name
// (codegen.FileName shortens and hashes any other, such as a long
// --workflow-name or a redacted one), with -2, -3, … before the
// extension when used already holds the path, compared case-blind since
// on a case-insensitive file system two names that differ only in case
// are one file. It records the result in used. Candidates are taken in
// report order, so the same report always gives the same files.
func WorkflowFile(dir, name string, used map[string]bool) string {
	return uniquePath(dir, name, ".star", used)
}

// BundleDir returns the directory under dir of the review bundle of a
// candidate named name, named as WorkflowFile names its workflow without
// the extension, so that bundles/<name>/ and workflows/<name>.star of
// one run are the same candidate's.
func BundleDir(dir, name string, used map[string]bool) string {
	return uniquePath(dir, name, "", used)
}

func uniquePath(dir, name, ext string, used map[string]bool) string {
	base := codegen.FileName(name, "workflow")
	path := filepath.Join(dir, base+ext)
	for n := 2; used[strings.ToLower(path)]; n++ {
		path = filepath.Join(dir, base+"-"+strconv.Itoa(n)+ext)
	}
	used[strings.ToLower(path)] = true
	return path
}

// bundled says whether o writes a bundle, which holds every held-out
// trace as a fixture: they are then read into memory, not streamed.
func (o Outputs) bundled() bool { return o.Bundle != "" || o.Bundles != "" }

// Published is what Publish wrote.
type Published struct {
	// Workflow is the selected candidate's source, or the workflow that
	// says no safe candidate was found.
	Workflow []byte
	// Workflows are the OutDir files, slash paths in candidate order.
	Workflows []string
	// Manifest is the bundle's, or nil without a bundle.
	Manifest *bundle.Manifest
	// EvalPack is the path the eval pack was written to, or "" when none
	// was (no --eval-pack, or no candidate to evaluate).
	EvalPack string
	// Bundles are the Bundles directories written, in candidate order.
	Bundles []PublishedBundle
}

// PublishedBundle is one bundle of Outputs.Bundles.
type PublishedBundle struct {
	// Dir is the bundle's directory.
	Dir      string
	Manifest *bundle.Manifest
}

// Publish is the one road from a mining report to files: it shadow-replays
// every candidate against sources and heldout, decides promotion, renders
// the workflows in memory and the report, which may be gigabytes, as a
// stream into its temporary file, writes the bundle (atomically, in
// bundle.Write), and then puts the other files in place (all or none,
// through an atomicfile.Batch). A rendering failure writes nothing. It
// redacts r in place first, so nothing it writes holds a secret of the
// traces, and neither does a summary the caller prints from r.
func Publish(ctx context.Context, r *candidate.Report, sources, heldout []*trace.Trace, o Outputs) (*Published, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := Shadow(ctx, r, sources, heldout, o); err != nil {
		return nil, err
	}
	bundle.Promote(r, o.BundleOptions)
	r.WorkflowPath = filepath.ToSlash(o.Out)
	// Names carry secrets as well as values (a tool called curl_xoxb-…,
	// a trace id, a goal turned into the function name): every output,
	// with or without a bundle, renders the redacted report, and so does
	// the caller's summary, which reads r.
	red, _, err := bundle.RedactReport(r)
	if err != nil {
		return nil, err
	}
	*r = *red
	if err := recordSkills(r, o.Codegen.PackageName); err != nil {
		return nil, err
	}

	p := &Published{}
	// The workflows are rendered before anything is written; the report
	// is written straight into its temporary file. Nothing is put in
	// place before the bundle is written and the run is known not to be
	// cancelled.
	files := map[string][]byte{}
	sel := r.Selected()
	if sel != nil {
		src, err := codegen.Workflow(sel, o.Codegen)
		if err != nil {
			return nil, fmt.Errorf("generating workflow %s: %w", sel.Name, err)
		}
		if o.Rewrite != nil {
			if src, err = o.Rewrite(ctx, r, sel, src); err != nil {
				return nil, err
			}
		}
		p.Workflow = src
	} else {
		p.Workflow = codegen.NoCandidate(r, o.Codegen)
	}
	if o.Out != "" {
		files[o.Out] = p.Workflow
	}
	if o.OutDir != "" {
		used := map[string]bool{}
		for i := range r.Candidates {
			c := &r.Candidates[i]
			src, err := codegen.Workflow(c, o.Codegen)
			if err != nil {
				return nil, fmt.Errorf("generating workflow %s: %w", c.Name, err)
			}
			path := WorkflowFile(o.OutDir, c.Name, used)
			if _, dup := files[path]; dup {
				return nil, &WorkflowClashError{Path: path}
			}
			files[path] = src
			p.Workflows = append(p.Workflows, filepath.ToSlash(path))
		}
	}
	// The eval pack is copied in only once the bundle is written: a path
	// it shares with another output is refused before anything is.
	if o.EvalPack != "" {
		if _, dup := files[o.EvalPack]; dup || o.EvalPack == o.Report {
			return nil, fmt.Errorf("writing outputs: %s would be written twice (the eval pack and another output)", o.EvalPack)
		}
		// Without a bundle the pack is rendered here, of the candidate a
		// bundle would hold.
		if c := bundle.Attempted(r); c != nil && !o.bundled() {
			pack, err := codegen.EvalPack(c, codegen.EvalPackInput{Options: o.Codegen, PackageVersion: o.BundleOptions.PackageVersion})
			if err != nil {
				return nil, fmt.Errorf("generating eval pack %s: %w", o.EvalPack, err)
			}
			files[o.EvalPack] = pack
		}
	}
	batch := atomicfile.NewBatch(0o644)
	defer batch.Discard()
	if o.Report != "" {
		err := batch.Add(o.Report, func(w io.Writer) error {
			if err := candidate.WriteJSON(w, r); err != nil {
				return fmt.Errorf("encoding report: %w", err)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	if o.Bundle != "" && o.Bundles != "" {
		return nil, errors.New("writing bundles: a bundle directory and a directory of bundles: pass one")
	}
	if o.Bundles != "" {
		pack, err := stageBundles(ctx, batch, r, sources, heldout, o, p)
		if err != nil {
			return nil, err
		}
		if o.EvalPack != "" && pack != nil {
			files[o.EvalPack] = pack
		}
	}
	if o.Bundle != "" {
		bo := o.BundleOptions
		bo.EvalPack = bo.EvalPack || o.EvalPack != ""
		// With nothing selected, the bundle still holds the candidate
		// that receipt drift rejected, as kind rejected, so its review
		// shows what was attempted and where the receipts diverged.
		bc, wf := sel, p.Workflow
		if bc == nil {
			if bc = bundle.Attempted(r); bc != nil {
				src, err := codegen.Workflow(bc, o.Codegen)
				if err != nil {
					return nil, fmt.Errorf("generating workflow %s: %w", bc.Name, err)
				}
				wf = src
			}
		}
		bsrc := sources
		switch {
		case bc == nil && o.AllSources != nil:
			bsrc, err = o.AllSources(ctx)
		case bc != nil && o.Examples != nil:
			bsrc, err = o.Examples(ctx, bc)
		}
		if err != nil {
			return nil, err
		}
		m, err := WriteBundle(ctx, o.Bundle, bundle.Input{
			Report: r, Candidate: bc, Workflow: wf, Sources: bsrc, Heldout: heldout,
		}, bo)
		if err != nil {
			return nil, err
		}
		p.Manifest = m
		// A bundle without a candidate (every one rejected, none by
		// receipt drift) has no eval pack to copy.
		if o.EvalPack != "" && m.EvalPack.Path != nil {
			pack, err := os.ReadFile(filepath.Join(o.Bundle, bundle.EvalPackFile))
			if err != nil {
				return nil, fmt.Errorf("reading the bundle's eval pack: %w", err)
			}
			files[o.EvalPack] = pack
		}
	}
	// An interrupt while rendering leaves nothing behind: files are
	// written all or none, and only when the run was not cancelled.
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	paths := make([]string, 0, len(files))
	for path := range files {
		paths = append(paths, path)
	}
	slices.Sort(paths)
	for _, path := range paths {
		if err := batch.AddBytes(path, files[path]); err != nil {
			return nil, err
		}
	}
	if err := batch.Commit(); err != nil {
		return nil, err
	}
	if _, ok := files[o.EvalPack]; ok && o.EvalPack != "" {
		p.EvalPack = filepath.ToSlash(o.EvalPack)
	}
	return p, nil
}

// stageBundles adds to batch the review bundle of every safe candidate of
// r, each under o.Bundles in its BundleDir, with its own examples and
// shadow report, and lists them in p. It returns the eval pack of the
// selected candidate's bundle when o.EvalPack asks for one. Each target
// is checked when its bundle is staged (bundle.Stage); on any error the
// caller discards the batch, which removes what was staged, so a failure
// writes no bundle at all.
func stageBundles(ctx context.Context, batch *atomicfile.Batch, r *candidate.Report, sources, heldout []*trace.Trace, o Outputs, p *Published) ([]byte, error) {
	bo := o.BundleOptions
	bo.EvalPack = bo.EvalPack || o.EvalPack != ""
	used := map[string]bool{}
	dirs := make([]string, len(r.Candidates))
	for i := range r.Candidates {
		dirs[i] = BundleDir(o.Bundles, r.Candidates[i].Name, used)
	}
	var pack []byte
	sel := r.Selected()
	for i := range r.Candidates {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		c := &r.Candidates[i]
		src, err := codegen.Workflow(c, o.Codegen)
		if err != nil {
			return nil, fmt.Errorf("generating workflow %s: %w", c.Name, err)
		}
		if c == sel && o.Rewrite != nil {
			// The selected workflow is the one Publish rewrote.
			src = p.Workflow
		}
		bsrc := sources
		if o.Examples != nil {
			if bsrc, err = o.Examples(ctx, c); err != nil {
				return nil, err
			}
		}
		st, err := bundle.Stage(batch, dirs[i], bundle.Input{
			Report: r, Candidate: c, Workflow: src, Sources: bsrc, Heldout: heldout,
		}, bo)
		if err != nil {
			return nil, err
		}
		if c == sel {
			pack = st.EvalPack
		}
		p.Bundles = append(p.Bundles, PublishedBundle{Dir: dirs[i], Manifest: st.Manifest})
	}
	return pack, nil
}

// Shadow is the shadow-replay step of Publish, for a caller that decides
// on the compared report before anything is written (a persona's repair
// is rejected when its candidate fails the comparison): every candidate
// of r is compared with its examples in sources (or those o.Examples
// reads back, or the batches o.ExampleBatches reads, one batch held at a
// time) and with heldout (or what o.Heldout streams), and r gets the
// results.
func Shadow(ctx context.Context, r *candidate.Report, sources, heldout []*trace.Trace, o Outputs) error {
	examples := func(c *candidate.Candidate, yield func([]*trace.Trace) error) error {
		switch {
		case o.ExampleBatches != nil:
			return o.ExampleBatches(ctx, c, yield)
		case o.Examples != nil:
			ts, err := o.Examples(ctx, c)
			if err != nil {
				return err
			}
			return yield(ts)
		}
		return nil
	}
	stream := o.Heldout
	if stream == nil {
		stream = func(yield func([]*trace.Trace) error) error {
			if len(heldout) == 0 {
				return nil
			}
			return yield(heldout)
		}
	}
	if o.ExampleBatches != nil || o.Examples != nil {
		return replay.ApplyBatches(r, o.Shadow, examples, stream)
	}
	// Every candidate looks its examples up in one index of the sources.
	index := replay.IndexSources(sources)
	return replay.ApplyStream(r, o.Shadow, func(*candidate.Candidate) (replay.Sources, error) { return index, nil }, stream)
}

// A Verifier is how mining judges examples for shadow replay.
var _ mine.ExampleVerifier = replay.Verifier{}

// WriteBundle writes the review bundle of in into dir (bundle.Write),
// naming dir in its error. Publish writes its bundle through it, and so
// does a stage that decided its candidate itself (a persona's repair).
func WriteBundle(ctx context.Context, dir string, in bundle.Input, o bundle.Options) (*bundle.Manifest, error) {
	m, err := bundle.Write(ctx, dir, in, o)
	if err != nil {
		return nil, fmt.Errorf("writing bundle %s: %w", dir, err)
	}
	return m, nil
}

// MineDirOptions configures MineDir.
type MineDirOptions struct {
	Corpus  CorpusOptions
	Heldout HeldoutOptions
	Outputs Outputs
}

// MineDir is the whole road for a directory of traces: it reads and mines
// the corpus (ReadCorpus), lists the files and sessions the load left
// out in the report, reads the held-out directories (streamed unless a
// bundle, which holds every held-out trace as a fixture, is written) and
// publishes the result (Publish). With o.Corpus.MemoryLimit it sets a soft
// memory limit sized to the corpus for the run, and restores the old one
// when it returns.
func MineDir(ctx context.Context, o MineDirOptions) (*candidate.Report, *Published, error) {
	if o.Corpus.MemoryLimit {
		defer LimitMemory()()
	}
	// Mining's sample check reads every example of a sampled candidate
	// but its sample; it judges them for shadow replay in that read, so
	// that shadow replay need not read them again (Corpus.Verified), and,
	// on the trace store's road, so that the store can remember them.
	if o.Corpus.Mine.Verify == nil {
		o.Corpus.Mine.Verify = replay.NewVerifier(o.Outputs.Shadow)
	}
	c, err := ReadCorpus(ctx, o.Corpus)
	if o.Corpus.Progress.Done != nil {
		o.Corpus.Progress.Done()
	}
	if err != nil {
		return nil, nil, err
	}
	report := c.Report
	addSkipped(report, c.Skipped)
	// A session without a tool call is not an error: it is listed with
	// the traces left out, with its reason code.
	for _, s := range c.SkippedSessions {
		report.ExcludedTraces = append(report.ExcludedTraces, candidate.Exclusion{
			TraceID: s.ID, Source: trace.Origin{Path: s.Path, Line: s.Line}.String(), Code: s.Reason, Message: s.Message,
		})
	}
	// A session that only repeats another (a compaction, a side
	// question, an older copy) is left out as a copy: counted, it would
	// be support the procedure does not have.
	for _, n := range c.Notes {
		if n.Code == source.NoteCopy {
			report.ExcludedTraces = append(report.ExcludedTraces, candidate.Exclusion{
				TraceID: n.ID, Source: trace.Origin{Path: n.Path, Line: n.Line}.String(), Code: n.Code, Message: n.Message,
			})
		}
	}
	report.ExcludedTraceCount = len(report.ExcludedTraces)
	// Held-out traces are read as a stream while shadow replay compares
	// them, unless a bundle is written: it holds every one as a fixture.
	var heldout []*trace.Trace
	out := o.Outputs
	switch {
	case len(c.Heldout) > 0 || c.HeldoutBatches != nil:
		// The corpus's own most recent traces, held out of mining, are
		// compared as --shadow-from traces are: in memory, or read
		// back as a stream.
		if len(o.Heldout.Dirs) > 0 {
			return nil, nil, errors.New("holding out traces of the corpus and reading held-out directories: pass one")
		}
		heldout = c.Heldout
		switch {
		case c.HeldoutBatches == nil:
		case !out.bundled():
			out.Heldout = c.HeldoutBatches
		default:
			err := c.HeldoutBatches(func(ts []*trace.Trace) error { heldout = append(heldout, ts...); return nil })
			if err != nil {
				return nil, nil, err
			}
		}
	case !out.bundled():
		out.Heldout = StreamHeldout(ctx, report, o.Heldout)
	default:
		if heldout, err = LoadHeldout(ctx, report, o.Heldout); err != nil {
			return nil, nil, err
		}
	}
	report.ShadowSources = append(report.ShadowSources, o.Heldout.Dirs...)
	out.AllSources, out.Examples, out.ExampleBatches = c.All, c.Examples, c.ExampleBatches
	out.Shadow.Verified = c.Verified
	pub, err := Publish(ctx, report, c.Sources, heldout, out)
	if err != nil {
		return nil, nil, err
	}
	return report, pub, nil
}

// WorkflowClashError is a workflow file that both the selected
// candidate's workflow (Options.Out) and one of the per-candidate
// workflows (Options.OutDir) would be written to.
type WorkflowClashError struct {
	Path string
}

func (e *WorkflowClashError) Error() string {
	return fmt.Sprintf("generating workflows: %s would be written twice", e.Path)
}
