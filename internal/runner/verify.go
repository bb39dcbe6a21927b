package runner

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/crystallize-dev/crystallize/internal/bundle"
	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/replay"
	"github.com/crystallize-dev/crystallize/internal/runconfig"
	"github.com/crystallize-dev/crystallize/internal/runrecord"
	"github.com/crystallize-dev/crystallize/internal/session"
	"github.com/crystallize-dev/crystallize/internal/stepvalue"
	"github.com/crystallize-dev/crystallize/internal/toolexec"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// Verifying a run (Options.Verify).
//
// A bundle's candidate carries expected receipts: the consensus of the
// effect receipts its examples recorded, with "<allowlisted>" where they
// differed in a field their replay_allowlist explains. A verified run is
// compared with them by the replay oracle, as shadow replay compares a
// recorded trace: the expected receipts are the first run, the run's own
// replay_run the second, masked by the allowlist rules of the candidate's
// examples (the reasons the examples themselves gave for what changes
// between executions; the run's own rules are not added, since a run
// cannot vouch for itself). Any other difference, a digest, a status, a
// side effect, a receipt too many or too few, is drift: ErrDrift, with the
// JSON pointer of the first divergence, recorded in the run.
//
// Only a bundle whose candidate expects receipts can be verified, and only
// by a run that executes: a dry run's receipts say "dry_run" and its
// outputs are the fixtures', so comparing them would prove nothing. Both
// are refused before the first step, not discovered after the side
// effects. A run that stops pending an approval is verified when resumed
// to the end.

// Errors of verification.
var (
	// ErrDrift: the run's receipts differ from the candidate's expected
	// receipts (see *DriftError).
	ErrDrift = errors.New("receipts drift from the candidate's expected receipts")
	// ErrUnverifiable: Options.Verify for a run that cannot be verified.
	ErrUnverifiable = errors.New("cannot verify")
)

// DriftError is the drift of a verified run.
type DriftError struct {
	Divergence candidate.Divergence
	// Step and Tool name the run's receipt the divergence is in, when it
	// is in one (Step 0 otherwise).
	Step int
	Tool string
}

func (e *DriftError) Error() string {
	p := e.Divergence.Path
	if p == "" {
		p = "the run root"
	}
	if e.Step > 0 {
		p += fmt.Sprintf(" (step %d, %s)", e.Step, e.Tool)
	}
	return fmt.Sprintf("%v at %s: %s", ErrDrift, p, e.Divergence.Message)
}

func (e *DriftError) Unwrap() error { return ErrDrift }

// Verification is the outcome of verifying a run.
type Verification struct {
	CandidateID string `json:"candidate_id"`
	Passed      bool   `json:"passed"`
	// Expected and Actual count the expected receipts and the run's.
	Expected int `json:"expected_receipts"`
	Actual   int `json:"receipts"`
	// Divergence is the first difference, nil when Passed.
	Divergence *candidate.Divergence `json:"divergence"`
	// Warnings are the oracle's allowlist warnings.
	Warnings []candidate.Problem `json:"warnings"`
}

// expectation is what a verified run is compared with.
type expectation struct {
	candidateID string
	receipts    []any
	allowlist   []trace.AllowlistRule
}

// prepare does what Run and Resume share before the first step: it
// resolves the secrets source (environment, then secrets file), checks
// that every model step has a provider and every secret a binding names
// is set, and loads what a verified run is compared with.
func prepare(w *Workflow, cfg *runconfig.Config, opts Options) (Options, *expectation, error) {
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

// loadExpectation reads the bundle candidate's expected receipts from
// report.json and the allowlist rules of its examples from the fixtures.
func loadExpectation(w *Workflow, opts Options) (*expectation, error) {
	if opts.DryRun {
		return nil, fmt.Errorf("%w: a dry run executes nothing, so it has no receipts to compare; verify a real run", ErrUnverifiable)
	}
	if w.Bundle == nil {
		return nil, fmt.Errorf("%w: %s is not a bundle; only a bundle's candidate has expected receipts", ErrUnverifiable, w.Target)
	}
	m := w.Bundle.Manifest
	if m.CandidateID == "" {
		return nil, fmt.Errorf("%w: the bundle holds no candidate", ErrUnverifiable)
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
	if len(c.ExpectedReceipts) == 0 {
		return nil, fmt.Errorf("%w: candidate %s expects no receipts (its examples recorded none, or did not agree on them)", ErrUnverifiable, c.ID)
	}
	examples := map[string]bool{}
	for _, e := range c.Examples {
		examples[e.TraceID] = true
	}
	exp := &expectation{candidateID: c.ID, receipts: c.ExpectedReceipts}
	// One rule per path: the examples of a candidate mined from runs
	// all carry the same rules.
	seen := map[string]bool{}
	for _, t := range w.Fixtures {
		if !examples[t.ID] {
			continue
		}
		for _, r := range t.ReplayAllowlist {
			if !seen[r.Path] {
				seen[r.Path] = true
				exp.allowlist = append(exp.allowlist, r)
			}
		}
	}
	return exp, nil
}

// verify compares the run's receipts with the expectation, records the
// outcome and returns a *DriftError on drift.
func (h *host) verify() error {
	first := map[string]any{"run_id": "expected_" + h.expect.candidateID, "effect_receipts": h.expect.receipts}
	second := runrecord.ReplayRun(h.res.RunID, h.res.Receipts)
	rep := replay.Oracle(first, second, h.expect.allowlist)
	v := &Verification{
		CandidateID: h.expect.candidateID, Passed: rep.Passed,
		Expected: len(h.expect.receipts), Actual: len(h.res.Receipts),
		Divergence: rep.Divergence, Warnings: rep.Warnings,
	}
	h.res.Verification = v
	p := h.newPhase("Verify")
	if v.Passed {
		p.Paragraph(fmt.Sprintf("The %d receipts match the %d expected by candidate %s.", v.Actual, v.Expected, codeSpan(v.CandidateID)))
		return nil
	}
	err := &DriftError{Divergence: *rep.Divergence}
	if rest, ok := strings.CutPrefix(err.Divergence.Path, "/effect_receipts/"); ok {
		i, aerr := strconv.Atoi(strings.SplitN(rest, "/", 2)[0])
		if aerr == nil && i >= 0 && i < len(h.res.Receipts) {
			err.Step, err.Tool = h.res.Receipts[i].Step, h.res.Receipts[i].Tool
		}
	}
	p.Callout(session.CalloutError, "", stepvalue.OneLine(h.secrets.Scrub(err.Error())))
	return err
}
