package runner

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/crystallize-dev/crystallize/internal/bundle"
	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/runconfig"
	"github.com/crystallize-dev/crystallize/internal/session"
	"github.com/crystallize-dev/crystallize/internal/stepvalue"
	"github.com/crystallize-dev/crystallize/internal/toolexec"
	"github.com/crystallize-dev/crystallize/internal/verify"
)

// Verifying a run (Options.Verify): package verify compares the run's
// receipts with the expected receipts of the bundle's candidate, and the
// outcome is recorded in the run.
//
// Only a bundle whose candidate expects receipts can be verified, and only
// by a run that executes: a dry run's receipts say "dry_run" and its
// outputs are the fixtures', so comparing them would prove nothing. Both
// are refused before the first step, not discovered after the side
// effects. A run that stops pending an approval is verified when resumed
// to the end.

// prepare does what Run and Resume share before the first step: it
// resolves the secrets source (environment, then secrets file), checks
// that every model step has a provider and every secret a binding names
// is set, and loads what a verified run is compared with.
func prepare(w *Workflow, cfg *runconfig.Config, opts Options) (Options, *verify.Expectation, error) {
	getenv, err := runconfig.SecretSource(cfg, opts.Getenv)
	if err != nil {
		return opts, nil, err
	}
	opts.Getenv = getenv
	if err := errors.Join(checkModels(w, cfg, opts), checkFallback(cfg, opts), checkBindingSecrets(w, cfg, opts), CheckExec(w, cfg, opts.Tools, opts.DryRun)); err != nil {
		return opts, nil, err
	}
	if !opts.Verify {
		return opts, nil, nil
	}
	exp, err := loadExpectation(w, opts)
	return opts, exp, err
}

// checkBindingSecrets reports every {secret:ID} in the bindings of the
// tools w names that is not set.
func checkBindingSecrets(w *Workflow, cfg *runconfig.Config, opts Options) error {
	if opts.DryRun {
		return nil
	}
	var errs []error
	seen := map[string]bool{}
	for _, name := range w.Tools {
		b, ok := toolexec.Resolve(cfg, opts.Tools, name)
		if !ok || b.Tool == nil {
			continue
		}
		t := b.Tool
		tmpls := append(slices.Clone(t.Command), t.Cwd)
		for _, k := range sortedKeys(t.Env) {
			tmpls = append(tmpls, t.Env[k])
		}
		if t.HTTP != nil {
			for _, k := range sortedKeys(t.HTTP.Headers) {
				tmpls = append(tmpls, t.HTTP.Headers[k])
			}
		}
		for _, tmpl := range tmpls {
			for _, id := range runconfig.TemplateSecrets(tmpl) {
				if seen[id] {
					continue
				}
				seen[id] = true
				if opts.Getenv == nil || opts.Getenv(id) == "" {
					errs = append(errs, fmt.Errorf("%w: tools.%q names secret %s, which is not set; %s", runconfig.ErrSecret, b.Pattern, id, cfg.SecretHint(id)))
				}
			}
		}
	}
	return errors.Join(errs...)
}

// loadExpectation reads the bundle's candidate from report.json: what
// the run is compared with, with the allowlist rules of its examples'
// fixtures.
func loadExpectation(w *Workflow, opts Options) (*verify.Expectation, error) {
	if opts.DryRun {
		return nil, fmt.Errorf("%w: a dry run executes nothing, so it has no receipts to compare; verify a real run", verify.ErrUnverifiable)
	}
	if w.Bundle == nil {
		return nil, fmt.Errorf("%w: %s is not a bundle; only a bundle's candidate has expected receipts", verify.ErrUnverifiable, w.Target)
	}
	m := w.Bundle.Manifest
	if m.CandidateID == "" {
		return nil, fmt.Errorf("%w: the bundle holds no candidate", verify.ErrUnverifiable)
	}
	file := filepath.Join(w.Bundle.Dir, bundle.ReportFile)
	// ReadReport keeps numbers as json.Number: they compare by value,
	// whatever their text.
	rep, err := bundle.ReadReport(w.Bundle.Dir)
	if err != nil {
		return nil, fmt.Errorf("reading expected receipts: %w", err)
	}
	var c *candidate.Candidate
	for _, list := range [][]candidate.Candidate{rep.Candidates, rep.RejectedCandidates} {
		for i := range list {
			if list[i].ID == m.CandidateID {
				c = &list[i]
			}
		}
	}
	if c == nil {
		return nil, fmt.Errorf("%s: no candidate %s", file, m.CandidateID)
	}
	return verify.Expect(c, w.Fixtures)
}

// verify compares the run's receipts with the expectation, records the
// outcome and returns a *verify.DriftError on drift.
func (h *host) verify() error {
	v, err := verify.Receipts(h.expect, h.res.RunID, h.res.Receipts)
	h.res.Verification = v
	p := h.newPhase("Verify")
	if err == nil {
		p.Paragraph(fmt.Sprintf("The %d receipts match the %d expected by candidate %s.", v.Actual, v.Expected, codeSpan(v.CandidateID)))
		return nil
	}
	p.Callout(session.CalloutError, "", stepvalue.OneLine(h.secrets.Scrub(err.Error())))
	return err
}
