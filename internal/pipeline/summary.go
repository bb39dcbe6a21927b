package pipeline

import (
	"path/filepath"
	"sort"

	"github.com/crystallize-dev/crystallize/internal/bundle"
	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/redact"
	"github.com/crystallize-dev/crystallize/internal/source"
	"github.com/crystallize-dev/crystallize/internal/tracestore"
)

// Summary is the short account of a mining run and what Publish wrote,
// the object "crystallize mine --json" and "session codify --json" print:
// a stable contract for CI, which reads it instead of report.json. Lists
// are [] when empty, never null.
type Summary struct {
	SelectedCandidateID *string            `json:"selected_candidate_id"`
	SourceTraceCount    int                `json:"source_trace_count"`
	ExcludedTraceCount  int                `json:"excluded_trace_count"`
	SkippedFileCount    int                `json:"skipped_file_count"`
	Candidates          []SummaryCandidate `json:"candidates"`
	RejectedCandidates  []SummaryRejected  `json:"rejected_candidates"`
	ExcludedTraces      []SummaryExcluded  `json:"excluded_traces"`
	Warnings            []SummaryWarning   `json:"warnings"`
	// Holdout is the report's: the traces of the corpus held out of
	// mining and why, or nil when none were.
	Holdout *candidate.Holdout `json:"holdout,omitempty"`
	Outputs SummaryOutputs     `json:"outputs"`
	// Bundle is the written bundle, or nil without one.
	Bundle *SummaryBundle `json:"bundle,omitempty"`
	// Bundles are the bundles of every safe candidate (Outputs.Bundles),
	// in candidate order, each with its candidate's id; absent without
	// them.
	Bundles []SummaryBundle `json:"bundles,omitempty"`
}

// SummaryCandidate is a safe candidate of a Summary.
type SummaryCandidate struct {
	ID         string   `json:"id"`
	Name       string   `json:"name"`
	Steps      int      `json:"steps"`
	Support    int      `json:"support"`
	Confidence float64  `json:"confidence"`
	Parameters []string `json:"parameters"`
	// DerivedParameters maps each derived parameter to its expression.
	DerivedParameters map[string]string `json:"derived_parameters,omitempty"`
	FuzzySteps        int               `json:"fuzzy_steps"`
	Shadow            *SummaryShadow    `json:"shadow,omitempty"`
}

// SummaryShadow is a candidate's shadow report in counts
// (candidate.ShadowReport.Tally).
type SummaryShadow struct {
	Pass             bool `json:"pass"`
	Compared         int  `json:"compared"`
	SourcePassed     int  `json:"source_passed"`
	HeldoutPassed    int  `json:"heldout_passed"`
	HeldoutFailed    int  `json:"heldout_failed"`
	HeldoutUnmatched int  `json:"heldout_unmatched"`
	// SourcePassedNotListed counts, of SourcePassed, the source examples
	// the report counts without listing them.
	SourcePassedNotListed int `json:"source_passed_not_listed,omitempty"`
}

// SummaryRejected is a rejected candidate and the distinct codes of its
// rejection reasons, sorted.
type SummaryRejected struct {
	ID    string   `json:"id"`
	Name  string   `json:"name"`
	Codes []string `json:"codes"`
}

// SummaryExcluded is a trace left out of mining and the code of why.
type SummaryExcluded struct {
	TraceID string `json:"trace_id"`
	Code    string `json:"code"`
}

// SummaryWarning is a warning of a report, or of an ingest.
type SummaryWarning struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// SummaryOutputs are the files written besides the bundle, in slash form;
// empty ones are left out.
type SummaryOutputs struct {
	Workflow  string   `json:"workflow,omitempty"`
	Report    string   `json:"report,omitempty"`
	Workflows []string `json:"workflows,omitempty"`
	// EvalPack is the eval pack written, "" when none was.
	EvalPack string `json:"eval_pack,omitempty"`
}

// SummaryBundle is the bundle of a Summary: bundle.Summary, its fixtures
// and whether its SKILL.md was accepted.
type SummaryBundle struct {
	bundle.Summary
	// CandidateID is the bundle's candidate, in a list of Bundles.
	CandidateID   string `json:"candidate_id,omitempty"`
	Fixtures      int    `json:"fixtures"`
	SkillAccepted bool   `json:"skill_accepted"`
}

// Summarize is the Summary of report r, published to o as pub (whose
// Workflows and Manifest it lists).
func Summarize(r *candidate.Report, o Outputs, pub *Published) *Summary {
	s := &Summary{
		SelectedCandidateID: r.SelectedCandidateID,
		SourceTraceCount:    r.SourceTraceCount,
		ExcludedTraceCount:  r.ExcludedTraceCount,
		SkippedFileCount:    len(r.SkippedFiles),
		Candidates:          []SummaryCandidate{},
		RejectedCandidates:  []SummaryRejected{},
		ExcludedTraces:      []SummaryExcluded{},
		Warnings:            summaryWarnings(r.Warnings),
		Holdout:             r.Holdout,
		Outputs:             SummaryOutputs{Workflow: filepath.ToSlash(o.Out), Report: filepath.ToSlash(o.Report), Workflows: pub.Workflows, EvalPack: pub.EvalPack},
	}
	for i := range r.Candidates {
		c := &r.Candidates[i]
		var derived map[string]string
		for _, d := range c.DerivedParameters {
			if derived == nil {
				derived = map[string]string{}
			}
			derived[d.Name] = d.Expression
		}
		s.Candidates = append(s.Candidates, SummaryCandidate{
			ID: c.ID, Name: c.Name, Steps: len(c.Steps), Support: c.Support,
			Confidence: c.Confidence, Parameters: c.ParameterNames(), DerivedParameters: derived,
			FuzzySteps: c.FuzzySteps(), Shadow: summaryShadow(c.Shadow),
		})
	}
	for i := range r.RejectedCandidates {
		c := &r.RejectedCandidates[i]
		codes := map[string]bool{}
		for _, p := range c.RejectionReasons {
			codes[p.Code] = true
		}
		list := make([]string, 0, len(codes))
		for k := range codes {
			list = append(list, k)
		}
		sort.Strings(list)
		s.RejectedCandidates = append(s.RejectedCandidates, SummaryRejected{ID: c.ID, Name: c.Name, Codes: list})
	}
	for _, ex := range r.ExcludedTraces {
		s.ExcludedTraces = append(s.ExcludedTraces, SummaryExcluded{TraceID: ex.TraceID, Code: ex.Code})
	}
	if m := pub.Manifest; m != nil {
		s.Bundle = &SummaryBundle{Summary: m.Summary(o.Bundle), Fixtures: len(m.Fixtures), SkillAccepted: m.Skill != nil}
	}
	for _, b := range pub.Bundles {
		s.Bundles = append(s.Bundles, SummaryBundle{
			Summary: b.Manifest.Summary(b.Dir), CandidateID: b.Manifest.CandidateID,
			Fixtures: len(b.Manifest.Fixtures), SkillAccepted: b.Manifest.Skill != nil,
		})
	}
	return s
}

func summaryShadow(sh *candidate.ShadowReport) *SummaryShadow {
	if sh == nil {
		return nil
	}
	t := sh.Tally()
	return &SummaryShadow{Pass: sh.Pass, Compared: sh.ComparedTraces, SourcePassed: t.SourcePassed,
		HeldoutPassed: t.HeldoutPassed, HeldoutFailed: t.HeldoutFailed, HeldoutUnmatched: t.HeldoutUnmatched,
		SourcePassedNotListed: t.SourceNotListed}
}

// summaryWarnings is ps as SummaryWarnings; never nil.
func summaryWarnings(ps []candidate.Problem) []SummaryWarning {
	ws := []SummaryWarning{}
	for _, p := range ps {
		ws = append(ws, SummaryWarning{Code: p.Code, Message: p.Message})
	}
	return ws
}

// IngestSummary is the short account of an ingest, the object
// "crystallize ingest --json" prints: a stable contract.
type IngestSummary struct {
	From                string         `json:"from"`
	RunID               string         `json:"run_id"`
	Schema              string         `json:"schema"`
	CurrentVersion      string         `json:"current_version"`
	NextVersion         string         `json:"next_version"`
	SelectedCandidateID *string        `json:"selected_candidate_id"`
	Bundle              IngestBundle   `json:"bundle"`
	Segments            IngestSegments `json:"segments"`
	Recovery            IngestRecovery `json:"recovery"`
	Shadow              *IngestShadow  `json:"shadow,omitempty"`
	Outputs             SummaryOutputs `json:"outputs"`
	// Warnings are the optional files the manifest lists but the
	// directory lacks, by name.
	Warnings []SummaryWarning `json:"warnings"`
}

// IngestBundle is the bundle of an IngestSummary.
type IngestBundle struct {
	bundle.Summary
	SchemaVersion int `json:"schema_version"`
	Fixtures      int `json:"fixtures"`
}

// IngestSegments counts the run's steps that are safe to automate and
// those that need review (candidate.SegmentSummary).
type IngestSegments struct {
	Deterministic  int `json:"deterministic"`
	Agentic        int `json:"agentic"`
	ReviewRequired int `json:"review_required"`
}

// IngestRecovery is the run's candidate.RecoverySummary.
type IngestRecovery struct {
	ShellFailures int      `json:"shell_failures"`
	RecoveryRuns  int      `json:"recovery_runs"`
	FedIntoAgent  bool     `json:"fed_into_agent"`
	FailedSteps   []string `json:"failed_steps"`
}

// IngestShadow is the bundle's own shadow replay.
type IngestShadow struct {
	CandidateID string `json:"candidate_id"`
	Compared    int    `json:"compared"`
	Pass        bool   `json:"pass"`
	Matches     bool   `json:"matches"`
}

// Summary is the IngestSummary of in, which Ingest(o) returned.
func (in *Ingested) Summary(o IngestOptions) *IngestSummary {
	rh, r, m := in.Harness, in.Report, in.Published.Manifest
	s := &IngestSummary{
		From: filepath.ToSlash(o.From), RunID: rh.RunID, Schema: rh.Schema,
		CurrentVersion: rh.CurrentVersion, NextVersion: rh.NextVersion,
		SelectedCandidateID: r.SelectedCandidateID,
		Bundle:              IngestBundle{Summary: m.Summary(o.Outputs.Bundle), SchemaVersion: m.SchemaVersion, Fixtures: len(m.Fixtures)},
		Segments: IngestSegments{
			Deterministic: r.SegmentSummary.DeterministicCount, Agentic: r.SegmentSummary.AgenticCount,
			ReviewRequired: len(r.SegmentSummary.RequiresHumanReview),
		},
		Recovery: IngestRecovery{
			ShellFailures: r.RecoverySummary.ShellFailuresSeen, RecoveryRuns: r.RecoverySummary.RecoveryAdviceRuns,
			FedIntoAgent: r.RecoverySummary.FailuresFedIntoAgent, FailedSteps: r.RecoverySummary.FailedSteps,
		},
		Outputs:  SummaryOutputs{Workflow: filepath.ToSlash(o.Outputs.Out), Report: filepath.ToSlash(o.Outputs.Report)},
		Warnings: []SummaryWarning{},
	}
	for _, mf := range rh.Missing {
		s.Warnings = append(s.Warnings, SummaryWarning{Code: source.CodeMissingOptionalFile, Message: mf.String()})
	}
	if sc := in.Shadow; sc != nil {
		s.Shadow = &IngestShadow{CandidateID: sc.CandidateID, Compared: sc.Compared, Pass: sc.Pass, Matches: sc.Matches}
	}
	return s
}

// ImportSummary is the short account of an Import, the object
// "crystallize import --json" prints: a stable contract.
type ImportSummary struct {
	From           string               `json:"from"`
	Out            string               `json:"out"`
	Traces         int                  `json:"traces"`
	Formats        []ImportedFormat     `json:"formats"`
	Files          []ImportedTrace      `json:"files"`
	SkippedSession []SummarySkipped     `json:"skipped_sessions"`
	SkippedInvalid []SummaryInvalidFile `json:"skipped_invalid"`
	PassedOver     []NoteGroup          `json:"passed_over"`
}

// StoreImportSummary is the short account of an import into the trace
// store (tracestore.Import), the object "crystallize import --store
// --json" prints: a stable contract.
type StoreImportSummary struct {
	From           string                   `json:"from"`
	Store          string                   `json:"store"`
	Added          int                      `json:"added"`
	Replaced       int                      `json:"replaced"`
	AlreadyStored  int                      `json:"already_stored"`
	Duplicates     int                      `json:"duplicates"`
	UnchangedFiles int                      `json:"unchanged_files"`
	Formats        []tracestore.FormatCount `json:"formats"`
	SkippedSession []SummarySkipped         `json:"skipped_sessions"`
	SkippedInvalid []SummaryInvalidFile     `json:"skipped_invalid"`
}

// SummarySkipped is a session an import read that did not become a
// trace (source.SkippedSession).
type SummarySkipped struct {
	Path    string `json:"path"`
	Line    int    `json:"line"`
	Format  string `json:"format"`
	ID      string `json:"id"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

// SummaryInvalidFile is a file an import skipped as invalid, with every
// problem found in it (source.Skipped).
type SummaryInvalidFile struct {
	Path   string   `json:"path"`
	Line   int      `json:"line"`
	Errors []string `json:"errors"`
}

// Summary is the ImportSummary of im, which Import read from "from" and
// wrote into out.
// Like every output, it names no secret and no user's home directory
// (redact.Text): "/home/alice/.claude/projects" is "~/.claude/projects".
func (im *Imported) Summary(from, out string) *ImportSummary {
	s := &ImportSummary{From: redactedText(from), Out: redactedText(out), Traces: len(im.Traces), Formats: im.Formats, Files: make([]ImportedTrace, len(im.Files)), PassedOver: make([]NoteGroup, len(im.PassedOver))}
	for i, g := range im.PassedOver {
		g.Message, g.Detail = redactedText(g.Message), redactedText(g.Detail)
		g.First = append([]string(nil), g.First...)
		for j := range g.First {
			g.First[j] = redactedText(g.First[j])
		}
		s.PassedOver[i] = g
	}
	for i, f := range im.Files {
		f.Path, f.Source, f.TraceID = redactedText(f.Path), redactedText(f.Source), redactedText(f.TraceID)
		s.Files[i] = f
	}
	s.SkippedSession, s.SkippedInvalid = summarySkipped(im.SkippedSessions, im.Skipped)
	return s
}

// redactedText is s as a summary may print it (redact.Text).
func redactedText(s string) string {
	out, _ := redact.Text(s)
	return out
}

// SummarizeStoreImport is the StoreImportSummary of res, an import from
// the directory "from" into the store at path storePath.
func SummarizeStoreImport(res *tracestore.ImportResult, from, storePath string) *StoreImportSummary {
	s := &StoreImportSummary{From: redactedText(from), Store: redactedText(storePath), Added: res.Added, Replaced: res.Replaced, AlreadyStored: res.Known,
		Duplicates: res.Duplicates, UnchangedFiles: res.Unchanged, Formats: res.Formats}
	if s.Formats == nil {
		s.Formats = []tracestore.FormatCount{}
	}
	s.SkippedSession, s.SkippedInvalid = summarySkipped(res.SkippedSessions, res.Skipped)
	return s
}

// summarySkipped converts what an import left out; never nil.
func summarySkipped(sessions []source.SkippedSession, files []source.Skipped) ([]SummarySkipped, []SummaryInvalidFile) {
	ss, fs := []SummarySkipped{}, []SummaryInvalidFile{}
	for _, s := range sessions {
		ss = append(ss, SummarySkipped{Path: redactedText(s.Path), Line: s.Line, Format: s.Format, ID: redactedText(s.ID), Reason: s.Reason, Message: redactedText(s.Message)})
	}
	for _, f := range files {
		errs := make([]string, len(f.Errors))
		for i, e := range f.Errors {
			errs[i] = redactedText(e)
		}
		fs = append(fs, SummaryInvalidFile{Path: redactedText(f.Path), Line: f.Line, Errors: errs})
	}
	return ss, fs
}
