package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/crystallize-dev/crystallize/internal/bundle"
	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/codegen"
	"github.com/crystallize-dev/crystallize/internal/replay"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// outputs is what a command that produced a mining report writes: the
// selected workflow, every safe candidate's workflow, the report, the
// review bundle and its eval pack. Empty paths are not written.
type outputs struct {
	out, outDir, report, bundle, evalPack string
	codegen                               codegen.Options
	bundleOptions                         bundle.Options
	// rewrite, when set, replaces the selected candidate's generated
	// workflow before anything is rendered from it (session codify
	// --refine); it may record what it did in the report. An error
	// writes nothing.
	rewrite func(ctx context.Context, r *candidate.Report, sel *candidate.Candidate, draft []byte) ([]byte, error)
	// allSources, when set, says that the sources given to publish are
	// only the examples of the report's candidates, and loads every
	// source trace for a bundle that has no candidate (it then holds
	// every trace as a fixture).
	allSources func(ctx context.Context) ([]*trace.Trace, error)
	// examples, when set, reads back the example traces of one candidate:
	// shadow replay and the bundle then read each candidate's examples
	// when they get to it, instead of taking them from sources.
	examples func(ctx context.Context, c *candidate.Candidate) ([]*trace.Trace, error)
	// heldout, when set, streams the held-out traces to shadow replay
	// instead of the heldout slice; there is then no bundle, which needs
	// them all.
	heldout replay.HeldoutFunc
}

// published is what publish wrote.
type published struct {
	// workflow is the selected candidate's source, or the workflow that
	// says no safe candidate was found.
	workflow []byte
	// workflows are the --out-dir files, slash paths in candidate order.
	workflows []string
	// manifest is the bundle's, or nil without a bundle.
	manifest *bundle.Manifest
}

// publish is the one road from a mining report to files, shared by mine,
// ingest and session codify: it shadow-replays every candidate against
// sources and heldout, renders every output in memory, writes the bundle
// (atomically, in bundle.Write), and then the other files (all or none,
// in writeFiles). A rendering failure writes nothing. It redacts r in
// place first, so nothing it writes holds a secret of the traces.
func publish(ctx context.Context, r *candidate.Report, sources, heldout []*trace.Trace, o outputs) (*published, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var index replay.Sources
	examples := func(c *candidate.Candidate) (replay.Sources, error) {
		if o.examples != nil {
			ts, err := o.examples(ctx, c)
			return replay.IndexSources(ts), err
		}
		if index == nil {
			index = replay.IndexSources(sources)
		}
		return index, nil
	}
	stream := o.heldout
	if stream == nil {
		stream = func(yield func([]*trace.Trace) error) error {
			if len(heldout) == 0 {
				return nil
			}
			return yield(heldout)
		}
	}
	if err := replay.ApplyStream(r, examples, stream); err != nil {
		return nil, err
	}
	bundle.Promote(r, o.bundleOptions)
	r.WorkflowPath = filepath.ToSlash(o.out)
	// Names carry secrets as well as values (a tool called curl_xoxb-…,
	// a trace id, a goal turned into the function name): every output,
	// with or without a bundle, renders the redacted report, and so does
	// the caller's summary, which reads r.
	red, _, err := bundle.RedactReport(r)
	if err != nil {
		return nil, err
	}
	*r = *red

	p := &published{}
	files := map[string][]byte{}
	sel := r.Selected()
	if sel != nil {
		src, err := codegen.Workflow(sel, o.codegen)
		if err != nil {
			return nil, fmt.Errorf("generating workflow %s: %w", sel.Name, err)
		}
		if o.rewrite != nil {
			if src, err = o.rewrite(ctx, r, sel, src); err != nil {
				return nil, err
			}
		}
		p.workflow = src
	} else {
		p.workflow = codegen.NoCandidate(r, o.codegen)
	}
	if o.out != "" {
		files[o.out] = p.workflow
	}
	if o.outDir != "" {
		for i := range r.Candidates {
			c := &r.Candidates[i]
			src, err := codegen.Workflow(c, o.codegen)
			if err != nil {
				return nil, fmt.Errorf("generating workflow %s: %w", c.Name, err)
			}
			path := filepath.Join(o.outDir, c.Name+".star")
			if _, dup := files[path]; dup {
				return nil, fmt.Errorf("generating workflows: %s would be written twice", path)
			}
			files[path] = src
			p.workflows = append(p.workflows, filepath.ToSlash(path))
		}
	}
	if o.report != "" {
		b, err := r.Encode()
		if err != nil {
			return nil, fmt.Errorf("encoding report: %w", err)
		}
		files[o.report] = b
	}
	if o.bundle != "" {
		bo := o.bundleOptions
		bo.EvalPack = bo.EvalPack || o.evalPack != ""
		// With nothing selected, the bundle still holds the candidate
		// that receipt drift rejected, as kind rejected, so its review
		// shows what was attempted and where the receipts diverged.
		bc, wf := sel, p.workflow
		if bc == nil {
			if bc = bundle.Attempted(r); bc != nil {
				src, err := codegen.Workflow(bc, o.codegen)
				if err != nil {
					return nil, fmt.Errorf("generating workflow %s: %w", bc.Name, err)
				}
				wf = src
			}
		}
		bsrc := sources
		switch {
		case bc == nil && o.allSources != nil:
			bsrc, err = o.allSources(ctx)
		case bc != nil && o.examples != nil:
			bsrc, err = o.examples(ctx, bc)
		}
		if err != nil {
			return nil, err
		}
		m, err := bundle.Write(ctx, o.bundle, bundle.Input{
			Report: r, Candidate: bc, Workflow: wf, Sources: bsrc, Heldout: heldout,
		}, bo)
		if err != nil {
			return nil, fmt.Errorf("writing bundle %s: %w", o.bundle, err)
		}
		p.manifest = m
		if o.evalPack != "" {
			pack, err := os.ReadFile(filepath.Join(o.bundle, bundle.EvalPackFile))
			if err != nil {
				return nil, fmt.Errorf("reading the bundle's eval pack: %w", err)
			}
			files[o.evalPack] = pack
		}
	}
	// An interrupt while rendering leaves nothing behind: files are
	// written all or none, and only when the run was not cancelled.
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := writeFiles(files); err != nil {
		return nil, err
	}
	return p, nil
}
