package bundle

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/codegen"
	"github.com/crystallize-dev/crystallize/internal/replay"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// fakeToken is a GitHub-token-shaped value assembled at run time, so no
// file of the repository holds one.
var fakeToken = "ghp_" + strings.Repeat("aB3dE5gH7j", 4)[:36]

// decodeTrace decodes a trace as the source package would: source hash of
// the bytes, source as the path it was read from, normalized.
func decodeTrace(t *testing.T, data []byte, source string) *trace.Trace {
	t.Helper()
	tr, err := trace.Decode(data, source, 0)
	if err != nil {
		t.Fatalf("decoding %s: %v", source, err)
	}
	tr.SourceHash = trace.HashBytes(data)
	tr.Source = source
	trace.Normalize(tr)
	return tr
}

// readTrace reads a trace file from testdata or the shared fixtures; edit,
// when not nil, changes the bytes first.
func readTrace(t *testing.T, path, source string, edit func(string) string) *trace.Trace {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		data = []byte(edit(string(data)))
	}
	return decodeTrace(t, data, source)
}

// candidateID is the candidate id DESIGN.md defines.
func candidateID(sigs []string, hashes []string) string {
	h := sha256.New()
	for _, s := range sigs {
		h.Write([]byte(s + "\x00"))
	}
	for _, s := range hashes {
		h.Write([]byte(s + "\x00"))
	}
	return "candidate_" + hex.EncodeToString(h.Sum(nil))[:16]
}

// releaseCandidate builds, by hand, the candidate mining derives from
// release traces (testdata/release and the shared crystallize_v2_release
// fixtures have the same shape): three steps, parameters for what varies,
// constants for what does not, and the first example's receipt with its
// per-execution id masked. The id follows DESIGN.md.
func releaseCandidate(examples []*trace.Trace) candidate.Candidate {
	receipt := map[string]any{}
	for k, v := range examples[0].ReplayRun["effect_receipts"].([]any)[0].(map[string]any) {
		receipt[k] = v
	}
	receipt["receipt_id"] = "<allowlisted>"
	param := func(name string, paths ...string) candidate.Parameter {
		return candidate.Parameter{Name: name, Key: name, SourcePaths: paths, Examples: []any{}, Type: "string", Required: true}
	}
	pa := func(key string) candidate.Argument {
		return candidate.Argument{Key: key, Kind: candidate.ArgParameter, Parameter: key}
	}
	ca := func(key, v string) candidate.Argument {
		return candidate.Argument{Key: key, Kind: candidate.ArgConstant, Value: v}
	}
	c := candidate.Candidate{
		Name:       "release_package_maintenance",
		Confidence: 0.95,
		Support:    len(examples),
		SequenceSignature: []string{
			"tool_call:git.checkout_branch:branch_name,repo_path",
			"file_mutation:update_manifest_version:path,version",
			"tool_call:cargo.package_dry_run:release_target,version",
		},
		Parameters: []candidate.Parameter{
			param("branch_name", "steps[1].parameters.branch_name"),
			param("repo_path", "steps[1].parameters.repo_path"),
			param("version", "steps[2].parameters.version", "steps[3].parameters.version"),
		},
		Constants: []candidate.Constant{
			{Step: 2, Path: "parameters.path", Value: "harn.toml"},
			{Step: 3, Path: "parameters.release_target", Value: "crates.io"},
		},
		Steps: []candidate.Step{
			{Index: 1, Kind: trace.KindToolCall, Name: "git.checkout_branch", Segment: candidate.Deterministic,
				Arguments:    []candidate.Argument{pa("branch_name"), pa("repo_path")},
				Capabilities: []string{"git.write"},
				SideEffects:  []trace.SideEffect{{Kind: "git_ref", Target: "release-branch", Capability: "git.write"}}},
			{Index: 2, Kind: trace.KindFileMutation, Name: "update_manifest_version", Segment: candidate.Deterministic,
				Arguments:    []candidate.Argument{ca("path", "harn.toml"), pa("version")},
				Capabilities: []string{"fs.write"},
				SideEffects:  []trace.SideEffect{{Kind: "file_write", Target: "harn.toml", Capability: "fs.write"}}},
			{Index: 3, Kind: trace.KindToolCall, Name: "cargo.package_dry_run", Segment: candidate.Deterministic,
				Arguments:    []candidate.Argument{ca("release_target", "crates.io"), pa("version")},
				Capabilities: []string{"cargo.package"}},
		},
		Capabilities:     []string{"cargo.package", "fs.write", "git.write"},
		RequiredSecrets:  []string{},
		SideEffects:      []trace.SideEffect{{Kind: "file_write", Target: "harn.toml", Capability: "fs.write"}, {Kind: "git_ref", Target: "release-branch", Capability: "git.write"}},
		ExpectedReceipts: []any{receipt},
		Warnings:         []candidate.Problem{},
		RejectionReasons: []candidate.Problem{},
	}
	var hashes []string
	for _, e := range examples {
		c.Examples = append(c.Examples, candidate.Example{TraceID: e.ID, Source: e.Source, SourceHash: e.SourceHash, ActionIDs: []string{}})
		hashes = append(hashes, e.SourceHash)
	}
	c.ID = candidateID(c.SequenceSignature, hashes)
	return c
}

// planCandidate is the candidate of the cli_plan_only scenario: classify
// an issue, then write a plan receipt to the tenant event log.
func planCandidate(examples []*trace.Trace) candidate.Candidate {
	c := candidate.Candidate{
		Name:       "plan_only_triage",
		Confidence: 0.9,
		Support:    len(examples),
		SequenceSignature: []string{
			"tool_call:classify_issue:issue_id,team_key",
			"receipt_write:emit_receipt:kind,summary",
		},
		Parameters: []candidate.Parameter{
			{Name: "issue_id", Key: "issue_id", SourcePaths: []string{"steps[1].parameters.issue_id"}, Examples: []any{}, Type: "string", Required: true},
			{Name: "summary", Key: "summary", SourcePaths: []string{"steps[2].parameters.summary"}, Examples: []any{}, Type: "string", Required: true},
		},
		Steps: []candidate.Step{
			{Index: 1, Kind: trace.KindToolCall, Name: "classify_issue", Segment: candidate.Deterministic,
				Arguments: []candidate.Argument{
					{Key: "issue_id", Kind: candidate.ArgParameter, Parameter: "issue_id"},
					{Key: "team_key", Kind: candidate.ArgConstant, Value: "HAR"},
				},
				Capabilities: []string{"linear.read"}},
			{Index: 2, Kind: trace.KindReceiptWrite, Name: "emit_receipt", Segment: candidate.Deterministic,
				Arguments: []candidate.Argument{
					{Key: "kind", Kind: candidate.ArgConstant, Value: "plan"},
					{Key: "summary", Kind: candidate.ArgParameter, Parameter: "summary"},
				},
				Capabilities: []string{"receipt.write"},
				SideEffects:  []trace.SideEffect{{Kind: "receipt_write", Target: "tenant_event_log", Capability: "receipt.write"}}},
		},
		Capabilities:     []string{"linear.read", "receipt.write"},
		RequiredSecrets:  []string{},
		SideEffects:      []trace.SideEffect{{Kind: "receipt_write", Target: "tenant_event_log", Capability: "receipt.write"}},
		Warnings:         []candidate.Problem{},
		RejectionReasons: []candidate.Problem{},
	}
	var hashes []string
	for _, e := range examples {
		c.Examples = append(c.Examples, candidate.Example{TraceID: e.ID, Source: e.Source, SourceHash: e.SourceHash, ActionIDs: []string{}})
		hashes = append(hashes, e.SourceHash)
	}
	c.ID = candidateID(c.SequenceSignature, hashes)
	return c
}

// scenario is a bundle to write: the traces, the candidate built from the
// sources, and whether there is one.
type scenario struct {
	sources, heldout []*trace.Trace
	build            func([]*trace.Trace) candidate.Candidate
	noCandidate      bool
	opts             Options
	// shadow bounds the passing source examples the shadow report lists
	// (replay.Options); zero is replay.Apply's default.
	shadow replay.Options
}

// input shadow-replays the scenario's candidate as mining does
// (replay.Apply) and returns the bundle input.
func (s scenario) input(t *testing.T) Input {
	t.Helper()
	rep := &candidate.Report{
		Version:            candidate.ReportVersion,
		GeneratedAt:        "2026-04-26T12:34:56Z",
		SourceTraceCount:   len(s.sources),
		ExcludedTraces:     []candidate.Exclusion{},
		SkippedFiles:       []candidate.SkippedFile{{Path: "/home/alice/runs/broken.json", Errors: []string{"/home/alice/runs/broken.json: $.actions: missing"}}},
		Candidates:         []candidate.Candidate{},
		RejectedCandidates: []candidate.Candidate{},
		Warnings:           []candidate.Problem{},
		Mining:             candidate.MiningSummary{MinExamples: len(s.sources)},
		WorkflowPath:       "/home/alice/out/workflow.star",
		ShadowSources:      []string{"/home/alice/holdout"},
	}
	if !s.noCandidate {
		rep.Candidates = append(rep.Candidates, s.build(s.sources))
	}
	index := replay.IndexSources(s.sources)
	err := replay.ApplyStream(rep, s.shadow, func(*candidate.Candidate) (replay.Sources, error) { return index, nil },
		func(yield func([]*trace.Trace) error) error { return yield(s.heldout) })
	if err != nil {
		t.Fatal(err)
	}
	in := Input{Report: rep, Sources: s.sources, Heldout: s.heldout}
	opts := codegen.Options{PackageName: s.opts.PackageName}
	if sel := Attempted(rep); sel != nil {
		in.Candidate = sel
		src, err := codegen.Workflow(sel, opts)
		if err != nil {
			t.Fatalf("codegen.Workflow: %v", err)
		}
		in.Workflow = src
	} else {
		in.Workflow = codegen.NoCandidate(rep, opts)
	}
	return in
}

// write writes the scenario's bundle into a new directory.
func (s scenario) write(t *testing.T) (string, *Manifest) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "bundle")
	m, err := Write(context.Background(), dir, s.input(t), s.opts)
	if err != nil {
		t.Fatalf("Write: %v", err)
	}
	return dir, m
}

// releaseTraces reads the hand-made release traces of testdata/release:
// three to mine and one held out; edit changes the held-out trace.
func releaseTraces(t *testing.T, heldoutEdit func(string) string) (sources, heldout []*trace.Trace) {
	t.Helper()
	for _, n := range []string{"release_a", "release_b", "release_c"} {
		sources = append(sources, readTrace(t, "testdata/release/"+n+".json", "release/"+n+".json", nil))
	}
	heldout = append(heldout, readTrace(t, "testdata/release/holdout.json", "/home/alice/holdout/holdout.json", heldoutEdit))
	return sources, heldout
}

func opts() Options {
	return Options{PackageName: "release-workflows", Author: "ops@example.com", Approver: "release-lead@example.com", EvalPack: true, GeneratorVersion: "test"}
}

func codes(ps []candidate.Problem) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Code)
	}
	return out
}

func reasonCodes(rs []Reason) []string {
	out := []string{}
	for _, r := range rs {
		out = append(out, r.Code)
	}
	return out
}

// hasProblem reports whether v has a problem with the code whose path
// contains pathPart.
func hasProblem(v *Validation, code, pathPart string) bool {
	return slices.ContainsFunc(v.Problems, func(p candidate.Problem) bool {
		return p.Code == code && strings.Contains(p.Path, pathPart)
	})
}

// rewriteManifest applies edit to the generic candidate.json of dir.
func rewriteManifest(t *testing.T, dir string, edit func(m map[string]any)) {
	t.Helper()
	p := filepath.Join(dir, ManifestFile)
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	v, err := decodeGeneric(data)
	if err != nil {
		t.Fatal(err)
	}
	edit(v.(map[string]any))
	out, err := candidate.EncodeJSON(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, out, 0o644); err != nil {
		t.Fatal(err)
	}
}

func mustWrite(t *testing.T, p string, data []byte) {
	t.Helper()
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func describe(v *Validation) string {
	var b strings.Builder
	for _, c := range v.Checks {
		fmt.Fprintf(&b, "%s=%s ", c.Name, c.Status)
	}
	for _, p := range v.Problems {
		fmt.Fprintf(&b, "\n  %s %s: %s", p.Code, p.Path, p.Message)
	}
	return b.String()
}
