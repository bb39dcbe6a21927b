package bundle

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"

	"github.com/crystallize-dev/crystallize/internal/atomicfile"
	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/codegen"
	"github.com/crystallize-dev/crystallize/internal/redact"
	"github.com/crystallize-dev/crystallize/internal/skill"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// Defaults of Options.
const (
	DefaultPackageVersion = "0.1.0"
	DefaultMinConfidence  = 0.8
	// DefaultMinExamples applies when neither Options nor the report's
	// mining summary give one.
	DefaultMinExamples = 2
)

// Options controls Write. The zero value is the documented default.
type Options struct {
	// PackageName is the workflow package (--package-name).
	PackageName string
	// PackageVersion is the proposed version; "" means "0.1.0".
	PackageVersion string
	// Author is who generated the bundle.
	Author string
	// Approver is the person expected to approve. It is recorded as
	// promotion.approver and is never an approval: only Approve records
	// one.
	Approver string
	// Team and Repo are recorded as given; "" is null.
	Team, Repo string
	// GeneratedAt is generated_at and promotion.created_at; "" means the
	// report's generated_at, so the output stays deterministic.
	GeneratedAt string
	// GeneratorVersion is generator.version; "" means "devel".
	GeneratorVersion string
	// MinConfidence is the confidence promotion requires. Unless
	// MinConfidenceSet is true, 0 means DefaultMinConfidence (0.8), so
	// that the zero Options keep the documented default.
	MinConfidence float64
	// MinConfidenceSet says that MinConfidence is what the caller asked
	// for even when it is 0: no confidence required.
	MinConfidenceSet bool
	// MinExamples is the sample count promotion requires; 0 means the
	// report's mining min_examples, or 2.
	MinExamples int
	// EvalPack writes harn.eval.toml (--eval-pack).
	EvalPack bool
	// EvalPackLink is where the eval pack is published
	// (--eval-pack-link), recorded as eval_pack.link; "" is null.
	EvalPackLink string

	// hook, when set, is called before each file is written and before
	// the final rename, with the file's bundle path or "rename"; an error
	// aborts Write there. Tests use it to interrupt a write.
	hook func(step string) error
}

// Input is what a bundle is made of.
type Input struct {
	// Report is the mining report after shadow replay (replay.Apply).
	Report *candidate.Report
	// Candidate is the selected candidate, one of Report's; nil makes a
	// bundle of kind "rejected".
	Candidate *candidate.Candidate
	// Workflow is the workflow.star source (codegen.Workflow, or
	// codegen.NoCandidate for a rejected bundle).
	Workflow []byte
	// Sources are the traces mined (the candidate's examples are looked up
	// among them by id and source hash); Heldout the --shadow-from traces.
	Sources, Heldout []*trace.Trace
}

// ErrNotBundle is returned by Write when dir exists and is not a bundle
// directory (nor empty): Write never replaces what it did not write.
var ErrNotBundle = errors.New("not a bundle directory")

// file is one file of a bundle being written.
type file struct {
	name string // bundle path, slash-separated
	data []byte
	// write, when set, renders the file straight into it instead of
	// data: report.json, which holds every example of every candidate,
	// is never held encoded.
	write func(w io.Writer) error
}

// Write writes the bundle of in into dir and returns its manifest. See
// the package comment for what a bundle holds and its invariants. Write
// fails before touching dir when the input is inconsistent (no report or
// workflow, a candidate that is not in the report, an example whose trace
// is not among in.Sources) or when dir exists and is neither empty nor a
// bundle.
func Write(ctx context.Context, dir string, in Input, opts Options) (*Manifest, error) {
	if err := checkTarget(dir, true); err != nil {
		return nil, err
	}
	b, err := build(in, opts)
	if err != nil {
		return nil, fmt.Errorf("building bundle %s: %w", dir, err)
	}
	if err := writeDir(ctx, dir, b.files, opts.hook); err != nil {
		return nil, fmt.Errorf("writing bundle %s: %w", dir, err)
	}
	return b.manifest, nil
}

// Staged is a bundle that Stage added to a batch.
type Staged struct {
	Manifest *Manifest
	// EvalPack is the bundle's eval pack, or nil when it has none.
	EvalPack []byte
}

// Stage renders the bundle of in, as Write does, and adds its files
// under dir to batch, so that several bundles and other outputs are put
// in place all or none by one Commit. dir must not exist or be empty: a
// batch only adds files, so writing over an older bundle would leave its
// fixtures beside the new one's. Nothing is added when the input is
// inconsistent; on any error the caller discards the batch, which
// removes every file and directory it staged.
func Stage(batch *atomicfile.Batch, dir string, in Input, opts Options) (*Staged, error) {
	if err := checkTarget(dir, false); err != nil {
		return nil, err
	}
	b, err := build(in, opts)
	if err != nil {
		return nil, fmt.Errorf("building bundle %s: %w", dir, err)
	}
	st := &Staged{Manifest: b.manifest}
	for _, f := range b.files {
		if opts.hook != nil {
			if err := opts.hook(f.name); err != nil {
				return nil, fmt.Errorf("writing bundle %s: %w", dir, err)
			}
		}
		p := filepath.Join(dir, filepath.FromSlash(f.name))
		if f.write != nil {
			err = batch.Add(p, f.write)
		} else {
			err = batch.AddBytes(p, f.data)
		}
		if err != nil {
			return nil, fmt.Errorf("writing bundle %s: %w", dir, err)
		}
		if f.name == EvalPackFile {
			st.EvalPack = f.data
		}
	}
	return st, nil
}

// ErrBundleExists is returned by Stage when its directory already holds
// files.
var ErrBundleExists = errors.New("directory exists and is not empty")

// built is a bundle rendered in memory.
type built struct {
	manifest *Manifest
	files    []file // candidate.json last
}

func build(in Input, opts Options) (*built, error) {
	if in.Report == nil {
		return nil, errors.New("no report")
	}
	if len(in.Workflow) == 0 {
		return nil, errors.New("no workflow source")
	}
	// The workflow is the one file the caller renders; the others are
	// built here from the redacted report. A workflow rendered from an
	// unredacted candidate would carry its secrets into the bundle, so it
	// is refused rather than written (naming where, never the secret).
	if fs := redact.Scan(in.Workflow); len(fs) > 0 {
		return nil, fmt.Errorf("%w: %s:%d holds a %s secret %s; render the workflow from the redacted report (bundle.RedactReport)", ErrSecretInWorkflow, WorkflowFile, fs[0].Line, fs[0].Kind, fs[0].Excerpt)
	}
	if opts.PackageVersion == "" {
		opts.PackageVersion = DefaultPackageVersion
	}
	if err := CheckMinConfidence(opts.MinConfidence); err != nil {
		return nil, err
	}
	opts.MinConfidence = opts.minConfidence()
	if opts.MinExamples == 0 {
		opts.MinExamples = in.Report.Mining.MinExamples
	}
	if opts.MinExamples == 0 {
		opts.MinExamples = DefaultMinExamples
	}
	if opts.GeneratedAt == "" {
		opts.GeneratedAt = in.Report.GeneratedAt
	}
	if opts.GeneratorVersion == "" {
		opts.GeneratorVersion = "devel"
	}

	// Every candidate of report.json says whether it may be promoted, as
	// the manifest says of the bundle's.
	Promote(in.Report, opts)

	// Everything below is built from the redacted report, so no private
	// payload of the caller's report reaches any file.
	rep, replaced, err := bundleReport(in.Report)
	if err != nil {
		return nil, err
	}
	var c *candidate.Candidate
	if in.Candidate != nil {
		c = findCandidate(rep, in.Candidate.ID)
		if c == nil {
			return nil, fmt.Errorf("candidate %s is not in the report", in.Candidate.ID)
		}
		// The bundle's report selects the candidate the bundle holds:
		// with one bundle per candidate (mine --bundles), the run's
		// selection names another bundle's workflow.
		id := c.ID
		rep.SelectedCandidateID = &id
	}
	cg := codegen.Options{PackageName: opts.PackageName}
	name := codegen.FuncName(c, cg)

	fixtures, fixtureFiles, n, err := buildFixtures(in, c)
	if err != nil {
		return nil, err
	}
	replaced += n

	var files []file
	files = append(files, file{name: WorkflowFile, data: in.Workflow})
	for i, f := range fixtures {
		files = append(files, file{name: f.Path, data: fixtureFiles[i]})
	}

	// The skill: its gate is decided from the candidate's shadow report;
	// a rejected skill is recorded in the report, never written.
	var skillRef *SkillRef
	accepted, rejectedSkills := []any{}, []any{}
	if c != nil {
		sw := skill.Workflow{Func: name, Package: cg.PackageName}
		g := skill.ShadowGate(c, sw)
		if g.Accepted() {
			md, err := skill.Render(c, g, sw)
			if err != nil {
				return nil, err
			}
			gate, err := skill.GateJSON(g)
			if err != nil {
				return nil, err
			}
			skillRef = &SkillRef{
				Path:                SkillDir + "/" + g.SkillName + "/" + SkillFile,
				GateReceiptPath:     SkillDir + "/" + g.SkillName + "/" + GateFile,
				Name:                g.SkillName,
				SkillCandidateID:    g.SkillID,
				WorkflowCandidateID: c.ID,
			}
			files = append(files, file{name: skillRef.Path, data: md}, file{name: skillRef.GateReceiptPath, data: gate})
			accepted = append(accepted, map[string]any{
				"skill_id": g.SkillID, "name": g.SkillName, "workflow_candidate_id": c.ID,
				"path": skillRef.Path, "gate": g,
			})
		} else {
			rejectedSkills = append(rejectedSkills, map[string]any{
				"skill_id": g.SkillID, "name": g.SkillName, "workflow_candidate_id": c.ID,
				"rejection_reasons": g.RejectionReasons, "gate": g,
			})
		}
	}
	report := reportFile{Report: rep, SkillCandidates: accepted, RejectedSkillCandidates: rejectedSkills}
	files = append(files, file{name: ReportFile, write: func(w io.Writer) error {
		if err := candidate.WriteJSON(w, report); err != nil {
			return fmt.Errorf("encoding %s: %w", ReportFile, err)
		}
		return nil
	}})

	var evalPath *string
	if opts.EvalPack && c != nil {
		var efs []codegen.EvalFixture
		seen := map[string]bool{}
		for _, f := range fixtures {
			if !seen[f.TraceID] {
				seen[f.TraceID] = true
				efs = append(efs, codegen.EvalFixture{Path: f.Path, TraceID: f.TraceID, SourceHash: f.SourceHash, Role: f.Role})
			}
		}
		pack, err := codegen.EvalPack(c, codegen.EvalPackInput{Options: cg, PackageVersion: opts.PackageVersion, WorkflowPath: WorkflowFile, Fixtures: efs})
		if err != nil {
			return nil, err
		}
		files = append(files, file{name: EvalPackFile, data: pack})
		evalPath = strPtr(EvalPackFile)
	}

	m := newManifest(rep, c, name, in.Workflow, fixtures, opts)
	m.EvalPack.Path = evalPath
	m.EvalPack.Link = strPtr(redactID(opts.EvalPackLink))
	setSourceReceipts(m, in)
	m.Skill = skillRef
	m.Redaction.Replacements = replaced
	mb, err := encodeManifest(m)
	if err != nil {
		return nil, err
	}
	files = append(files, file{name: ManifestFile, data: mb})
	return &built{manifest: m, files: files}, nil
}

// newManifest fills in the manifest of a bundle from the redacted report.
func newManifest(rep *candidate.Report, c *candidate.Candidate, name string, workflow []byte, fixtures []Fixture, opts Options) *Manifest {
	kind := kindOf(c)
	m := &Manifest{
		Schema:             Schema,
		SchemaVersion:      SchemaVersion,
		GeneratedAt:        opts.GeneratedAt,
		Generator:          Generator{Tool: "crystallize", Version: opts.GeneratorVersion},
		Kind:               kind,
		ExternalKey:        strings.Trim(strings.ReplaceAll(name, "_", "-"), "-"),
		Team:               strPtr(opts.Team),
		Repo:               strPtr(opts.Repo),
		RiskLevel:          riskOf(c, kind),
		Workflow:           WorkflowRef{Path: WorkflowFile, Name: name, PackageName: opts.PackageName, PackageVersion: opts.PackageVersion, SHA256: hexSHA(workflow)},
		SourceTraceHashes:  []string{},
		SourceTraces:       []SourceTrace{},
		DeterministicSteps: []StepRef{},
		FuzzySteps:         []StepRef{},
		SideEffects:        []trace.SideEffect{},
		Capabilities:       []string{},
		RequiredSecrets:    []string{},
		Fixtures:           fixtures,
		RejectionReasons:   []candidate.Problem{},
		Warnings:           []candidate.Problem{},
		Redaction: Redaction{
			Applied:      true,
			Rules:        []string{"sensitive_keys", "secret_value_heuristic", "token_families", "local_paths"},
			Summary:      "fixtures and report.json scrubbed of secret-like values and sensitive keys, and provenance paths made relative, before write",
			FixtureCount: len(fixtures),
		},
		Promotion: Promotion{
			// Names and the link are given on the command line, where a
			// token pasted into a URL is as much a secret as one in a
			// trace: they are written as report.json holds them.
			Owner:             strPtr(redactID(opts.Author)),
			Approver:          strPtr(redactID(opts.Approver)),
			Author:            strPtr(redactID(opts.Author)),
			RolloutPolicy:     RolloutPolicy,
			RollbackTarget:    RollbackTarget,
			CreatedAt:         opts.GeneratedAt,
			WorkflowVersion:   opts.PackageVersion,
			PackageName:       opts.PackageName,
			DivergenceHistory: []DivergenceRecord{},
			ApprovalHistory:   []ApprovalRecord{},
			Criteria: Criteria{
				MinExamples:           opts.MinExamples,
				MinConfidence:         opts.MinConfidence,
				RequiresShadowPass:    true,
				RequiresHeldoutPass:   true,
				RequiresHumanApproval: true,
			},
		},
	}
	for _, f := range fixtures {
		m.SourceTraces = append(m.SourceTraces, SourceTrace{TraceID: f.TraceID, SourceHash: f.SourceHash, FixturePath: f.Path, Role: f.Role})
	}
	if c == nil {
		m.Title = name
		m.RejectionReasons = append(m.RejectionReasons, candidate.Problem{Code: candidate.CodeNoCandidate, Message: "no safe crystallization candidate was selected"})
		for _, r := range rep.RejectedCandidates {
			for _, p := range r.RejectionReasons {
				p.Message = r.ID + ": " + p.Message
				m.RejectionReasons = append(m.RejectionReasons, p)
			}
		}
		m.Warnings = append(m.Warnings, rep.Warnings...)
		// What rejected the candidates: their replay divergences.
		for i := range rep.RejectedCandidates {
			m.Promotion.DivergenceHistory = append(m.Promotion.DivergenceHistory, divergencesOf(rep.RejectedCandidates[i].Shadow)...)
		}
		m.Promotion.Criteria.Reasons = blockers(nil, 0, m.Promotion.DivergenceHistory, opts.MinExamples, opts.MinConfidence)
		settle(m)
		return m
	}
	m.CandidateID = c.ID
	m.Title = fmt.Sprintf("%s (%d steps)", name, len(c.Steps))
	// Each source trace's URL is its last example's with a source; both
	// lookups are indexed, since a candidate may have thousands of
	// examples and as many fixtures.
	type traceKey struct{ id, hash string }
	sourceTraces := map[traceKey][]int{}
	for i, st := range m.SourceTraces {
		if st.Role == candidate.RoleSource {
			k := traceKey{st.TraceID, st.SourceHash}
			sourceTraces[k] = append(sourceTraces[k], i)
		}
	}
	hashes := map[string]bool{}
	for _, e := range c.Examples {
		if !hashes[e.SourceHash] {
			hashes[e.SourceHash] = true
			m.SourceTraceHashes = append(m.SourceTraceHashes, e.SourceHash)
		}
		if e.Source == "" {
			continue
		}
		for _, i := range sourceTraces[traceKey{e.TraceID, e.SourceHash}] {
			m.SourceTraces[i].SourceURL = strPtr(e.Source)
		}
	}
	for _, s := range c.Steps {
		ref := StepRef{Index: s.Index, Kind: s.Kind, Name: s.Name, Capabilities: orEmpty(s.Capabilities)}
		if s.Segment == candidate.Fuzzy {
			ref.ReviewNotes = orEmpty(s.ReviewNotes)
			m.FuzzySteps = append(m.FuzzySteps, ref)
		} else {
			m.DeterministicSteps = append(m.DeterministicSteps, ref)
		}
	}
	m.SideEffects = append(m.SideEffects, c.SideEffects...)
	m.Capabilities = append(m.Capabilities, c.Capabilities...)
	m.RequiredSecrets = append(m.RequiredSecrets, c.RequiredSecrets...)
	savings := c.Savings
	m.Savings = &savings
	m.Shadow = c.Shadow
	m.Confidence = c.Confidence
	m.RejectionReasons = append(m.RejectionReasons, c.RejectionReasons...)
	m.Warnings = append(m.Warnings, c.Warnings...)

	p := &m.Promotion
	p.SampleCount = len(c.Examples)
	p.Confidence = c.Confidence
	if sh := c.Shadow; sh != nil {
		p.ShadowSuccessCount = countStatus(sh, "", candidate.StatusPass)
		p.ShadowFailureCount = countStatus(sh, "", candidate.StatusFail)
	}
	p.DivergenceHistory = divergencesOf(c.Shadow)
	p.EstimatedTimeTokenSavings = Estimate{
		WallMSPerRun:       c.Savings.PerRun.WallMSAvoided,
		InputTokensPerRun:  c.Savings.PerRun.InputTokensAvoided,
		OutputTokensPerRun: c.Savings.PerRun.OutputTokensAvoided,
		ModelCallsPerRun:   c.Savings.PerRun.ModelCallsAvoided,
		CostUSDPerRun:      c.Savings.PerRun.EstimatedCostUSDAvoided,
	}
	p.Criteria.Reasons = blockers(c, len(c.Examples), p.DivergenceHistory, opts.MinExamples, opts.MinConfidence)
	settle(m)
	return m
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// findCandidate returns the candidate with the given id among the report's
// candidates and rejected candidates.
func findCandidate(r *candidate.Report, id string) *candidate.Candidate {
	return r.Find(id)
}

// buildFixtures renders one redacted fixture per source example (every
// source trace when there is no candidate) and per held-out trace, in that
// order, each trace once. It returns the fixtures, their bytes and the
// number of redactions.
func buildFixtures(in Input, c *candidate.Candidate) ([]Fixture, [][]byte, int, error) {
	type entry struct {
		t    *trace.Trace
		role string
	}
	var entries []entry
	if c != nil {
		// The candidate comes from the redacted report, where a trace id
		// holding a secret is redacted; the traces are not yet, so they
		// are indexed by their redacted ids. The first of two traces
		// with one key wins, as a scan in order would find it.
		type key struct{ id, hash string }
		index := make(map[key]*trace.Trace, len(in.Sources))
		for _, t := range in.Sources {
			if t == nil {
				continue
			}
			k := key{redactID(t.ID), t.SourceHash}
			if _, ok := index[k]; !ok {
				index[k] = t
			}
		}
		for _, ex := range c.Examples {
			t := index[key{redactID(ex.TraceID), ex.SourceHash}]
			if t == nil {
				return nil, nil, 0, fmt.Errorf("candidate %s: example trace %s (%s) is not among the source traces", c.ID, ex.TraceID, ex.SourceHash)
			}
			entries = append(entries, entry{t, candidate.RoleSource})
		}
	} else {
		for _, t := range in.Sources {
			if t != nil {
				entries = append(entries, entry{t, candidate.RoleSource})
			}
		}
	}
	for _, t := range in.Heldout {
		if t != nil {
			entries = append(entries, entry{t, candidate.RoleHeldout})
		}
	}
	var (
		fixtures []Fixture
		data     [][]byte
		total    int
	)
	seen := map[string]bool{}
	paths := map[string]bool{}
	for _, e := range entries {
		key := e.t.ID + "\x00" + e.t.SourceHash
		if seen[key] {
			continue
		}
		seen[key] = true
		b, n, err := redactTrace(e.t)
		if err != nil {
			return nil, nil, 0, fmt.Errorf("redacting trace %s: %w", e.t.ID, err)
		}
		total += n
		id := redactID(e.t.ID) // as the fixture holds it
		p := codegen.FixturePath(id)
		for i := 2; paths[p]; i++ {
			p = strings.TrimSuffix(codegen.FixturePath(id), ".json") + "-" + strconv.Itoa(i) + ".json"
		}
		paths[p] = true
		fixtures = append(fixtures, Fixture{Path: p, TraceID: id, SourceHash: e.t.SourceHash, SHA256: hexSHA(b), Redacted: true, Role: e.role})
		data = append(data, b)
	}
	if fixtures == nil {
		fixtures = []Fixture{}
	}
	return fixtures, data, total, nil
}

// SourceReceiptKey is the trace metadata key whose string value is the
// receipt the system that recorded the run gave it (a run log's or a
// ticket's id): source_traces[].source_receipt_id. A trace without one
// leaves it null; nothing else in a trace says it.
const SourceReceiptKey = "source_receipt_id"

// setSourceReceipts records in m.SourceTraces the source receipt id of
// each trace of in that has one, redacted as the trace's fixture holds
// it.
func setSourceReceipts(m *Manifest, in Input) {
	type key struct{ id, hash string }
	receipts := map[key]string{}
	for _, ts := range [][]*trace.Trace{in.Sources, in.Heldout} {
		for _, t := range ts {
			if t == nil {
				continue
			}
			if id, ok := t.Metadata[SourceReceiptKey].(string); ok && id != "" {
				k := key{redactID(t.ID), t.SourceHash}
				if _, dup := receipts[k]; !dup {
					receipts[k] = redactID(id)
				}
			}
		}
	}
	for i, st := range m.SourceTraces {
		if id, ok := receipts[key{st.TraceID, st.SourceHash}]; ok {
			m.SourceTraces[i].SourceReceiptID = strPtr(id)
		}
	}
}

// redactID returns a trace id as the fixture and the redacted report
// hold it: its secrets redacted and its home directories anonymized
// (redact.Text).
func redactID(id string) string {
	r, _ := redact.Text(id)
	return r
}

// ErrSecretInWorkflow is returned by Write for a workflow source that
// holds a secret.
var ErrSecretInWorkflow = errors.New("workflow source holds a secret")

// RedactReport returns a copy of r with every secret in it redacted, in
// names (step and tool names, candidate names, parameter names, trace ids)
// as in values, and the number of redactions. Everything that renders a
// report into files (a workflow, report.json, a bundle) renders the copy,
// so what it writes carries no secret of the traces. Every user home
// directory becomes redact.Home ("/home/alice/src/repo" is written
// "~/src/repo", which the runtime expands again), so what it writes names
// no local account either. Paths are otherwise left as they are: making
// them relative is for bundles, which Write does.
func RedactReport(r *candidate.Report) (*candidate.Report, int, error) {
	// The typed copy is what encoding the report, redacting the generic
	// JSON and decoding it again would give, without the maps and
	// interfaces that round trip builds for every example.
	red, n, err := redact.Copy(r)
	if err != nil {
		return nil, 0, fmt.Errorf("redacting report: %w", err)
	}
	// A secret argument names its logical id under the key "secret",
	// which redaction treats as sensitive; the id (CRATES_IO_TOKEN) is a
	// reference the workflow needs, not a value, so it is kept when it
	// has that shape and holds nothing the scanner flags.
	keepIDs := func(orig, red []candidate.Candidate) {
		for i := range min(len(orig), len(red)) {
			for j := range min(len(orig[i].Steps), len(red[i].Steps)) {
				oa, ra := orig[i].Steps[j].Arguments, red[i].Steps[j].Arguments
				for k := range min(len(oa), len(ra)) {
					_, secret := redact.Secret(oa[k].Secret)
					if oa[k].Kind == candidate.ArgSecret && isLogicalSecretID(oa[k].Secret) && !secret {
						n--
						ra[k].Secret = oa[k].Secret
					}
				}
			}
		}
	}
	keepIDs(r.Candidates, red.Candidates)
	keepIDs(r.RejectedCandidates, red.RejectedCandidates)
	h, err := anonymizeHomesTyped(reflect.ValueOf(red).Elem())
	if err != nil {
		return nil, 0, fmt.Errorf("anonymizing home directories in report: %w", err)
	}
	return red, n + h, nil
}

// redactTrace renders t as a fixture (RedactTrace for replay).
func redactTrace(t *trace.Trace) ([]byte, int, error) {
	raw, err := json.Marshal(t)
	if err != nil {
		return nil, 0, err
	}
	return RedactTrace(raw, ForReplay)
}

// A TraceRedaction says how much of a trace RedactTrace hides.
type TraceRedaction int

const (
	// ForReplay hides every private payload (redact.Value) and every user
	// home directory (redact.Homes): a bundle's fixtures, which shadow
	// replay compares with the report's steps and expected outputs, and
	// those are redacted the same way.
	ForReplay TraceRedaction = iota
	// ForSharing also writes the names of those users ~ wherever else
	// the agent saw them (redact.Users: ls -l output, a git author): the
	// trace files import and store export write, which nothing replays
	// against a report.
	ForSharing
)

// RedactTrace renders the trace document raw as it may leave the machine:
// its provenance paths made relative and what how says hidden, in
// canonical JSON; and the number of replacements. Every trace written for
// someone else to read goes through it, so they all hide the same things.
// The trace's id is redacted as redactID redacts it (redact.Text), for it
// is the key the report and file names give the trace.
func RedactTrace(raw []byte, how TraceRedaction) ([]byte, int, error) {
	v, err := decodeGeneric(raw)
	if err != nil {
		return nil, 0, err
	}
	if doc, ok := v.(map[string]any); ok {
		relativize(doc, "source")
		if flow, ok := doc["flow"].(map[string]any); ok {
			relativize(flow, "transcript_ref")
		}
	}
	out, n := redact.Value(v)
	var h int
	if how == ForSharing {
		var id any
		doc, _ := out.(map[string]any)
		if doc != nil {
			id = doc["id"]
		}
		out, h = redact.Users(out)
		if s, ok := id.(string); ok {
			doc["id"] = redactID(s)
		}
	} else {
		out, h = redact.Homes(out)
	}
	b, err := candidate.EncodeJSON(out)
	return b, n + h, err
}

// objects returns the objects in a JSON array value.
func objects(v any) []map[string]any {
	arr, _ := v.([]any)
	var out []map[string]any
	for _, e := range arr {
		if m, ok := e.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

// relativize replaces the string member key of obj by localPath of it.
func relativize(obj map[string]any, key string) {
	if s, ok := obj[key].(string); ok {
		obj[key] = localPath(s)
	}
}

// localPath returns p as a path that says nothing of the machine it was
// read on: a relative path stays (with slashes), an absolute path, a
// drive path, a UNC path, a home-relative path or a file: URL is cut to
// its base name. Provenance needs the file, not where it lived.
func localPath(p string) string {
	if !isLocalAbs(p) {
		return strings.ReplaceAll(p, `\`, "/")
	}
	s := strings.TrimPrefix(p, "file:")
	s = strings.ReplaceAll(s, `\`, "/")
	s = strings.TrimRight(s, "/")
	base := path.Base(s)
	if base == "/" || base == "." || base == "" || (len(base) == 2 && base[1] == ':') {
		return ""
	}
	return base
}

// isLocalAbs reports whether p is an absolute local path in any of the
// spellings localPath cuts.
func isLocalAbs(p string) bool {
	switch {
	case p == "":
		return false
	case strings.HasPrefix(p, "/"), strings.HasPrefix(p, `\`), strings.HasPrefix(p, "~/"), strings.HasPrefix(p, "~\\"):
		return true
	case strings.HasPrefix(p, "file:"):
		return true
	case len(p) >= 2 && p[1] == ':' && ('a' <= p[0] && p[0] <= 'z' || 'A' <= p[0] && p[0] <= 'Z'):
		return true
	}
	return false
}

// decodeGeneric decodes JSON with numbers kept as json.Number.
func decodeGeneric(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// remarshal converts a generic JSON value into a typed one.
func remarshal(v any, out any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	return dec.Decode(out)
}

// hexSHA is the lowercase hex SHA-256 of b.
func hexSHA(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// checkTarget refuses a dir that Write must not replace: anything but a
// missing path, an empty directory or, when replace is set, a bundle
// directory (one with a candidate.json carrying the schema marker). Stage
// adds files and never replaces, so it asks for no directory with files
// (ErrBundleExists).
func checkTarget(dir string, replace bool) error {
	if dir == "" {
		return errors.New("writing bundle: empty directory name")
	}
	st, err := os.Lstat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("writing bundle: %w", err)
	case !st.IsDir():
		return fmt.Errorf("writing bundle %s: %w: it is not a directory", dir, ErrNotBundle)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("writing bundle: %w", err)
	}
	if len(ents) == 0 {
		return nil
	}
	if !replace {
		return fmt.Errorf("writing bundle %s: %w: remove it or write elsewhere", dir, ErrBundleExists)
	}
	data, err := os.ReadFile(filepath.Join(dir, ManifestFile))
	if err != nil {
		return fmt.Errorf("writing bundle %s: %w: it has no %s, refusing to replace it", dir, ErrNotBundle, ManifestFile)
	}
	var head struct {
		Schema string `json:"schema"`
	}
	if json.Unmarshal(data, &head) != nil || len(trace.CheckNames(data, "", 0, &head)) > 0 || head.Schema != Schema {
		return fmt.Errorf("writing bundle %s: %w: its %s is not a %s manifest, refusing to replace it", dir, ErrNotBundle, ManifestFile, Schema)
	}
	return nil
}

// writeStream creates the file p and has write render it, buffered.
func writeStream(p string, write func(io.Writer) error) error {
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<16)
	err = write(w)
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// writeDir writes files into a new directory and swaps it in for dir
// (atomicfile.ReplaceDir): an existing bundle at dir is replaced whole,
// and on any failure dir is left as it was and nothing else remains.
func writeDir(ctx context.Context, dir string, files []file, hook func(string) error) error {
	return atomicfile.ReplaceDir(dir, func(tmp string) error {
		for _, f := range files {
			if err := ctx.Err(); err != nil {
				return err
			}
			if hook != nil {
				if err := hook(f.name); err != nil {
					return err
				}
			}
			p := filepath.Join(tmp, filepath.FromSlash(f.name))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return err
			}
			var err error
			if f.write != nil {
				err = writeStream(p, f.write)
			} else {
				err = os.WriteFile(p, f.data, 0o644)
			}
			if err != nil {
				return err
			}
		}
		if hook != nil {
			if err := hook("rename"); err != nil {
				return err
			}
		}
		// dir is checked again last: it may have become something that
		// is not a bundle while this one was written.
		return checkTarget(dir, true)
	})
}
