package bundle

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/codegen"
	"github.com/crystallize-dev/crystallize/internal/redact"
	"github.com/crystallize-dev/crystallize/internal/skill"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// Statuses of a validation check.
const (
	CheckOK      = "ok"
	CheckFail    = "fail"
	CheckSkipped = "skipped"
)

// Names of the validation checks, in the order Validate runs them.
var checkNames = []string{"manifest", "workflow", "report", "eval_pack", "skill", "fixtures", "redaction", "approval"}

// Codes of validation problems. They are stable: tools and tests match
// them.
const (
	CodeManifestSchema  = "manifest_schema"
	CodeManifestVersion = "manifest_version"
	CodeManifestInvalid = "manifest_invalid"
	CodeFileMissing     = "file_missing"
	CodePathEscape      = "path_escape"
	CodeSymlink         = "symlink"
	CodeFixtureHash     = "fixture_hash"
	CodeFixtureInvalid  = "fixture_invalid"
	CodeSecretFound     = "secret_found"
	CodeNotRedacted     = "not_redacted"
	CodeSecretIDInvalid = "secret_id_invalid"
	CodeSkillInvalid    = "skill_invalid"
	CodeWorkflowInvalid = "workflow_invalid"
	CodeWorkflowHash    = "workflow_hash"
	CodeReportInvalid   = "report_invalid"
	CodeAbsolutePath    = "absolute_path"
	CodeEvalPackInvalid = "eval_pack_invalid"
	CodeApprovalStale   = "approval_stale"
	CodeStatusInvalid   = "status_invalid"
	CodeFileUnlisted    = "file_unlisted"
)

// Check is the outcome of one validation check: CheckOK, CheckFail or
// CheckSkipped (nothing to check, or an earlier failure made it
// meaningless).
type Check struct {
	Name   string `json:"name"`
	Status string `json:"status"`
}

// Validation is the result of Validate. Problems carry a stable code, a
// message and the bundle path (with a JSON path or line where known) of
// what is wrong.
type Validation struct {
	Bundle   string              `json:"bundle"`
	Checks   []Check             `json:"checks"`
	Problems []candidate.Problem `json:"problems"`
	OK       bool                `json:"ok"`
	// Workflow is the workflow file the approval check decided about
	// (its path in the bundle) and WorkflowSHA256 the sha256 of the
	// bytes it read from it: the file and bytes a "ready" decision lets
	// run, printed so that the reviewer can compare them with what they
	// read. Both are empty when the file could not be read.
	Workflow       string `json:"workflow,omitempty"`
	WorkflowSHA256 string `json:"workflow_sha256,omitempty"`

	// Schema and SchemaVersion are the schema marker and schema_version
	// candidate.json holds, as read (the version as its JSON text), so a
	// refused manifest is shown with what it says, not with what this
	// build expects. Empty when the manifest has no such member.
	Schema        string `json:"schema,omitempty"`
	SchemaVersion string `json:"schema_version,omitempty"`

	// PromotionStatus is the promotion status the criteria and the
	// approvals give for the workflow bytes read (blocked,
	// needs_approval or ready), recomputed rather than read from the
	// manifest: "approval=ok" alone only says that the record is
	// consistent, and a reviewer must also see whether anyone approved.
	PromotionStatus string `json:"promotion_status,omitempty"`

	// status is the promotion status recomputed by the approval check,
	// claimed the one the manifest records, and workflowSHA the sha256
	// of the workflow bytes that check saw; Ready reports them.
	status, claimed, workflowSHA string
}

// validator accumulates the problems of one check at a time.
type validator struct {
	dir   string
	v     *Validation
	check int // index of the running check
	fail  bool
}

func (x *validator) problem(code, p, format string, args ...any) {
	x.v.Problems = append(x.v.Problems, candidate.Problem{Code: code, Path: p, Message: fmt.Sprintf(format, args...)})
	x.fail = true
}

// finish records the running check's status and starts the next one.
func (x *validator) finish(skipped bool) {
	st := CheckOK
	switch {
	case x.fail:
		st = CheckFail
	case skipped:
		st = CheckSkipped
	}
	x.v.Checks = append(x.v.Checks, Check{Name: checkNames[x.check], Status: st})
	x.check++
	x.fail = false
}

// Validate checks the bundle in dir and lists every problem it finds; it
// never panics and never trusts a claim of the manifest it can check
// against the files. The checks, in order:
//
//   - manifest: candidate.json exists and parses (manifest_invalid), has
//     the schema marker (manifest_schema) and a schema_version this build
//     reads (manifest_version), a known kind, and logical secret ids in
//     required_secrets (secret_id_invalid); no file or directory of the
//     bundle is a symlink (symlink), and every file is one the manifest
//     lists (file_unlisted);
//   - workflow: workflow.path is a safe path (path_escape) to a file
//     (file_missing) with the recorded sha256 (workflow_hash) that passes
//     codegen.Check (workflow_invalid);
//   - report: report.json parses as a report that holds the candidate
//     (report_invalid) and has no absolute provenance path (absolute_path);
//   - eval_pack: when one is recorded, it parses (eval_pack_invalid) and
//     its fixtures are the bundle's;
//   - skill: when one is recorded, SKILL.md passes skill.Check
//     against gate.json and the manifest (skill_invalid);
//   - fixtures: every fixture and source trace path is safe and present,
//     each fixture's sha256 matches (fixture_hash) and it decodes as the
//     trace the manifest names (fixture_invalid);
//   - redaction: no file of the bundle contains a secret (secret_found),
//     whatever redaction.applied says, and the manifest does not say a
//     fixture or the bundle is unredacted (not_redacted): such a bundle
//     was not written by mine, and its fixtures may hold payloads the
//     secret scan does not recognise;
//   - approval: the latest approval was given for the current workflow
//     bytes and candidate (approval_stale), and the recorded status is the
//     one the criteria and approvals give (status_invalid).
func Validate(dir string) (v *Validation) {
	v = &Validation{Bundle: dir, Checks: []Check{}, Problems: []candidate.Problem{}}
	x := &validator{dir: dir, v: v}
	// A change in place (approve) running now is waited for, so that
	// what is checked is a bundle as some change left it, not one half
	// written; the temporary files of one that was killed are removed
	// (lock), as they would be by the next change. A directory that
	// cannot be opened is reported by the checks.
	if unlock, err := lock(dir); err == nil {
		defer unlock()
	}
	defer func() {
		// Validate promises not to panic on any input; a bug here is
		// reported as a problem rather than crashing the caller.
		if r := recover(); r != nil {
			v.Problems = append(v.Problems, candidate.Problem{Code: CodeManifestInvalid, Message: fmt.Sprintf("internal error validating bundle: %v", r)})
			for len(v.Checks) < len(checkNames) {
				v.Checks = append(v.Checks, Check{Name: checkNames[len(v.Checks)], Status: CheckFail})
			}
			v.OK = false
		}
	}()

	m := x.manifest()
	if m == nil {
		for x.check < len(checkNames) {
			x.finish(true)
		}
		v.OK = false
		return v
	}
	x.workflow(m)
	x.report(m)
	x.evalPack(m)
	x.skill(m)
	x.fixtures(m)
	x.redaction(m)
	x.approval(m)
	v.OK = len(v.Problems) == 0
	return v
}

func (x *validator) manifest() *Manifest {
	x.symlinks()
	data, err := x.read(ManifestFile, ManifestFile)
	if err != nil {
		x.finish(false)
		return nil
	}
	x.v.Schema, x.v.SchemaVersion = peekSchema(data)
	m, err := decodeManifest(data, ManifestFile)
	if err != nil {
		var (
			se   *schemaError
			list trace.ErrorList
		)
		switch {
		case errors.As(err, &list):
			// One problem per member, each at its line and JSON path.
			for _, e := range list {
				x.problem(CodeManifestInvalid, fmt.Sprintf("%s:%d:%s", ManifestFile, e.Line, e.Path), "%s", e.Msg)
			}
		case errors.As(err, &se) && se.field == "$.schema":
			x.problem(CodeManifestSchema, ManifestFile+":$.schema", "%s", se.msg)
		case errors.As(err, &se):
			x.problem(CodeManifestVersion, ManifestFile+":$.schema_version", "%s", se.msg)
		default:
			x.problem(CodeManifestInvalid, ManifestFile, "%v", err)
		}
		x.finish(false)
		return nil
	}
	switch m.Kind {
	case KindCandidate, KindPlanOnly, KindRejected:
	default:
		x.problem(CodeManifestInvalid, ManifestFile+":$.kind", "kind %q; want candidate, plan_only or rejected", m.Kind)
	}
	if m.Kind != KindRejected && m.CandidateID == "" {
		x.problem(CodeManifestInvalid, ManifestFile+":$.candidate_id", "a %s bundle needs a candidate_id", m.Kind)
	}
	switch m.Promotion.Criteria.Status {
	case StatusBlocked, StatusNeedsApproval, StatusReady:
	default:
		x.problem(CodeManifestInvalid, ManifestFile+":$.promotion.criteria.status", "status %q; want blocked, needs_approval or ready", m.Promotion.Criteria.Status)
	}
	for i, id := range m.RequiredSecrets {
		p := fmt.Sprintf("%s:$.required_secrets[%d]", ManifestFile, i)
		if _, secret := redact.Secret(id); secret {
			x.problem(CodeSecretIDInvalid, p, "required secret is a secret value, not a logical id")
		} else if !isLogicalSecretID(id) {
			x.problem(CodeSecretIDInvalid, p, "required secret %q is not a logical id (UPPER_SNAKE_CASE, such as CRATES_IO_TOKEN)", id)
		}
	}
	x.unlisted(m)
	x.finish(false)
	return m
}

// unlisted reports every file of the bundle the manifest does not list:
// nothing checks it, so nothing a reviewer approved vouches for it, and
// a file beside the workflow can change what runs (a crystallize.toml
// rebinding every tool, a script such a configuration would call). A
// bundle holds only what Write put there. The listed paths are compared
// as written; a path the manifest gives that is not safe is reported by
// its own check.
func (x *validator) unlisted(m *Manifest) {
	listed := map[string]bool{ManifestFile: true, ReportFile: true, m.Workflow.Path: true}
	if m.EvalPack.Path != nil {
		listed[*m.EvalPack.Path] = true
		// The eval pack's cases name files of the bundle too (output_file,
		// trace), which the eval reads: they are listed through it. A
		// pack that cannot be read or parsed is the eval_pack check's to
		// report; then its files count as unlisted.
		for _, f := range x.evalPackFiles(*m.EvalPack.Path) {
			listed[f] = true
		}
	}
	if m.Skill != nil {
		listed[m.Skill.Path], listed[m.Skill.GateReceiptPath] = true, true
	}
	for _, f := range m.Fixtures {
		listed[f.Path] = true
	}
	for _, s := range m.SourceTraces {
		listed[s.FixturePath] = true
	}
	filepath.WalkDir(x.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Type()&fs.ModeSymlink != 0 {
			return nil // reported by symlinks, or unreadable: nothing to list
		}
		rel, err := filepath.Rel(x.dir, p)
		if err != nil {
			return nil
		}
		rel = filepath.ToSlash(rel)
		if listed[rel] {
			return nil
		}
		why := "a bundle holds only the files its manifest lists, which validation checks"
		if strings.EqualFold(path.Base(rel), "crystallize.toml") {
			why = "a configuration inside a bundle is never loaded; the project's configuration binds the tools"
		}
		x.problem(CodeFileUnlisted, rel, "%s is not a file %s (or its eval pack) lists: %s", rel, ManifestFile, why)
		return nil
	})
}

// evalPackFiles returns the bundle files the cases of the eval pack at p
// name, cleaned, or none when the pack cannot be read.
func (x *validator) evalPackFiles(p string) []string {
	if !x.safePathQuiet(p) {
		return nil
	}
	full := filepath.Join(x.dir, filepath.FromSlash(p))
	if st, err := os.Lstat(full); err != nil || !st.Mode().IsRegular() {
		return nil
	}
	data, err := os.ReadFile(full)
	if err != nil {
		return nil
	}
	pack, err := codegen.ParseEvalPack(data)
	if err != nil {
		return nil
	}
	var out []string
	for _, c := range pack.Cases {
		if c.Input == nil {
			continue
		}
		for _, f := range []string{c.Input.OutputFile, c.Input.Trace} {
			if f != "" {
				out = append(out, path.Clean(f))
			}
		}
	}
	return out
}

// symlinks reports every symlink in the bundle: a link can make a checked
// path read a file outside the bundle, or change after validation.
func (x *validator) symlinks() {
	filepath.WalkDir(x.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == x.dir {
				x.problem(CodeFileMissing, ".", "bundle directory: %v", unwrap(err))
				return fs.SkipAll
			}
			return nil
		}
		if d.Type()&fs.ModeSymlink != 0 {
			rel, _ := filepath.Rel(x.dir, p)
			x.problem(CodeSymlink, filepath.ToSlash(rel), "symlinks are not allowed in a bundle")
		}
		return nil
	})
}

// safePath reports, with code path_escape, a manifest path that could
// leave the bundle: empty, absolute, a drive or UNC path, a backslash, or
// a ".." element. field is where the manifest holds it.
func (x *validator) safePath(p, field string) bool {
	msg := ""
	switch {
	case p == "":
		msg = "empty path"
	case strings.HasPrefix(p, "/") || strings.HasPrefix(p, `\`) || len(p) >= 2 && p[1] == ':':
		msg = fmt.Sprintf("path %q is absolute; bundle paths are relative", p)
	case strings.ContainsAny(p, "\\\x00"):
		msg = fmt.Sprintf("path %q has a backslash or NUL", p)
	case p == ".." || strings.HasPrefix(p, "../") || strings.Contains(p, "/../") || strings.HasSuffix(p, "/.."):
		msg = fmt.Sprintf("path %q leaves the bundle", p)
	case path.Clean(p) != p:
		msg = fmt.Sprintf("path %q is not clean", p)
	}
	if msg != "" {
		x.problem(CodePathEscape, field, "%s", msg)
		return false
	}
	return true
}

// read reads the bundle file at the safe path p; field names the
// reference for the file_missing problem.
func (x *validator) read(p, field string) ([]byte, error) {
	full := filepath.Join(x.dir, filepath.FromSlash(p))
	st, err := os.Lstat(full)
	if err == nil && !st.Mode().IsRegular() {
		if st.Mode()&fs.ModeSymlink == 0 {
			x.problem(CodeFileMissing, field, "%s is not a regular file", p)
		}
		return nil, errors.New("not a regular file")
	}
	data, err := os.ReadFile(full)
	if err != nil {
		x.problem(CodeFileMissing, field, "%s: %v", p, unwrap(err))
		return nil, err
	}
	return data, nil
}

func unwrap(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func (x *validator) workflow(m *Manifest) {
	w := m.Workflow
	if !x.safePath(w.Path, ManifestFile+":$.workflow.path") {
		x.finish(false)
		return
	}
	src, err := x.read(w.Path, w.Path)
	if err != nil {
		x.finish(false)
		return
	}
	if w.SHA256 != "" && hexSHA(src) != w.SHA256 {
		x.problem(CodeWorkflowHash, w.Path, "sha256 %s differs from the manifest's %s: the workflow changed after the bundle was written", hexSHA(src), w.SHA256)
	}
	if err := codegen.Check(w.Path, src, w.Name); err != nil {
		x.problem(CodeWorkflowInvalid, w.Path, "%v", err)
	}
	x.finish(false)
}

func (x *validator) report(m *Manifest) {
	data, err := x.read(ReportFile, ReportFile)
	if err != nil {
		x.finish(false)
		return
	}
	r, err := decodeReport(data, ReportFile)
	if err != nil {
		var list trace.ErrorList
		if errors.As(err, &list) {
			for _, d := range list {
				x.problem(CodeReportInvalid, fmt.Sprintf("%s:%d:%s", ReportFile, d.Line, d.Path), "%s", d.Msg)
			}
		} else {
			x.problem(CodeReportInvalid, ReportFile, "%v", err)
		}
		x.finish(false)
		return
	}
	if m.CandidateID != "" && findCandidate(r, m.CandidateID) == nil {
		x.problem(CodeReportInvalid, ReportFile, "the report does not hold candidate %s", m.CandidateID)
	}
	abs := func(p, field string) {
		if isLocalAbs(p) {
			x.problem(CodeAbsolutePath, ReportFile+":"+field, "absolute local path in the report")
		}
	}
	abs(r.WorkflowPath, "$.workflow_path")
	for i, s := range r.ShadowSources {
		abs(s, fmt.Sprintf("$.shadow_sources[%d]", i))
	}
	for i, s := range r.SkippedFiles {
		abs(s.Path, fmt.Sprintf("$.skipped_files[%d].path", i))
	}
	for i, e := range r.ExcludedTraces {
		abs(e.Source, fmt.Sprintf("$.excluded_traces[%d].source", i))
	}
	for key, cs := range map[string][]candidate.Candidate{"candidates": r.Candidates, "rejected_candidates": r.RejectedCandidates} {
		for i, c := range cs {
			for j, e := range c.Examples {
				abs(e.Source, fmt.Sprintf("$.%s[%d].examples[%d].source", key, i, j))
			}
		}
	}
	x.finish(false)
}

func (x *validator) evalPack(m *Manifest) {
	if m.EvalPack.Path == nil {
		x.finish(true)
		return
	}
	p := *m.EvalPack.Path
	if !x.safePath(p, ManifestFile+":$.eval_pack.path") {
		x.finish(false)
		return
	}
	data, err := x.read(p, p)
	if err != nil {
		x.finish(false)
		return
	}
	pack, err := codegen.ParseEvalPack(data)
	if err != nil {
		var list trace.ErrorList
		if errors.As(err, &list) {
			for _, e := range list {
				e.File = p
				x.problem(CodeEvalPackInvalid, p, "%v", e)
			}
		} else {
			x.problem(CodeEvalPackInvalid, p, "%v", err)
		}
		x.finish(false)
		return
	}
	if pack.Metadata.CandidateID != m.CandidateID {
		x.problem(CodeEvalPackInvalid, p+":$.metadata.candidate_id", "eval pack is for candidate %q, not %q", pack.Metadata.CandidateID, m.CandidateID)
	}
	fixtures := map[string]bool{}
	for _, f := range m.Fixtures {
		fixtures[f.Path] = true
	}
	for i, f := range pack.Fixtures {
		if !fixtures[f.Path] {
			x.problem(CodeEvalPackInvalid, fmt.Sprintf("%s:$.fixtures[%d].path", p, i), "fixture %q is not one of the bundle's fixtures", f.Path)
		}
	}
	x.finish(false)
}

func (x *validator) skill(m *Manifest) {
	s := m.Skill
	if s == nil {
		x.finish(true)
		return
	}
	ok := x.safePath(s.Path, ManifestFile+":$.skill.path")
	ok = x.safePath(s.GateReceiptPath, ManifestFile+":$.skill.gate_receipt_path") && ok
	if !ok {
		x.finish(false)
		return
	}
	if want := SkillDir + "/" + s.Name + "/" + SkillFile; s.Path != want {
		x.problem(CodeSkillInvalid, ManifestFile+":$.skill.path", "skill path %q; want %q", s.Path, want)
	}
	if s.WorkflowCandidateID != m.CandidateID {
		x.problem(CodeSkillInvalid, ManifestFile+":$.skill.workflow_candidate_id", "skill is for candidate %q, not %q", s.WorkflowCandidateID, m.CandidateID)
	}
	src, err1 := x.read(s.Path, s.Path)
	gate, err2 := x.read(s.GateReceiptPath, s.GateReceiptPath)
	if err1 != nil || err2 != nil {
		x.finish(false)
		return
	}
	for _, p := range skill.Check(path.Dir(s.Path), src, gate) {
		at := s.Path
		if p.Path != "" {
			at += ":" + p.Path
		}
		x.problem(CodeSkillInvalid, at, "%s: %s", p.Code, p.Message)
	}
	var g skill.Gate
	if json.Unmarshal(gate, &g) == nil {
		if g.SkillID != s.SkillCandidateID {
			x.problem(CodeSkillInvalid, s.GateReceiptPath+":$.skill_id", "gate skill id %q differs from the manifest's %q", g.SkillID, s.SkillCandidateID)
		}
		if g.WorkflowCandidateID != m.CandidateID {
			x.problem(CodeSkillInvalid, s.GateReceiptPath+":$.workflow_candidate_id", "gate is for candidate %q, not %q", g.WorkflowCandidateID, m.CandidateID)
		}
	}
	x.finish(false)
}

func (x *validator) fixtures(m *Manifest) {
	paths := map[string]bool{}
	for i, f := range m.Fixtures {
		field := fmt.Sprintf("%s:$.fixtures[%d].path", ManifestFile, i)
		if !x.safePath(f.Path, field) {
			continue
		}
		if paths[f.Path] {
			x.problem(CodeManifestInvalid, field, "fixture %s is listed twice", f.Path)
		}
		paths[f.Path] = true
		data, err := x.read(f.Path, f.Path)
		if err != nil {
			continue
		}
		if got := hexSHA(data); got != f.SHA256 {
			x.problem(CodeFixtureHash, f.Path, "sha256 %s differs from the manifest's %s: the fixture changed after the bundle was written", got, f.SHA256)
		}
		t, err := trace.Decode(data, f.Path, 0)
		if err != nil {
			x.problem(CodeFixtureInvalid, f.Path, "%v", err)
			continue
		}
		if t.ID != f.TraceID || t.SourceHash != f.SourceHash {
			x.problem(CodeFixtureInvalid, f.Path, "fixture holds trace %s (%s), the manifest names %s (%s)", t.ID, t.SourceHash, f.TraceID, f.SourceHash)
		}
		if f.Role != candidate.RoleSource && f.Role != candidate.RoleHeldout {
			x.problem(CodeFixtureInvalid, fmt.Sprintf("%s:$.fixtures[%d].role", ManifestFile, i), "role %q; want source or heldout", f.Role)
		}
	}
	for i, st := range m.SourceTraces {
		field := fmt.Sprintf("%s:$.source_traces[%d].fixture_path", ManifestFile, i)
		if x.safePath(st.FixturePath, field) && !paths[st.FixturePath] {
			x.problem(CodeFileMissing, field, "source trace %s points at %s, which is not a fixture of the bundle", st.TraceID, st.FixturePath)
		}
		if st.SourceURL != nil && isLocalAbs(*st.SourceURL) {
			x.problem(CodeAbsolutePath, fmt.Sprintf("%s:$.source_traces[%d].source_url", ManifestFile, i), "source_url is an absolute local path")
		}
	}
	x.finish(false)
}

// peekSchema returns the schema marker and the schema_version text of a
// manifest, whatever they are, for printing; "" for one that is missing
// or not readable.
func peekSchema(data []byte) (schema, version string) {
	var head map[string]json.RawMessage
	if json.Unmarshal(data, &head) != nil {
		return "", ""
	}
	if raw, ok := head["schema"]; ok {
		if json.Unmarshal(raw, &schema) != nil {
			schema = string(raw)
		}
	}
	if raw, ok := head["schema_version"]; ok {
		version = string(raw)
	}
	return schema, version
}

// redaction refuses a manifest that says its content is unredacted, and
// scans every regular file of the bundle for secrets. The scan finds only
// secrets it has a rule for; mine redacts more (private payloads, home
// paths), so a fixture the manifest calls unredacted is refused even
// when the scan finds nothing in it.
func (x *validator) redaction(m *Manifest) {
	if !m.Redaction.Applied {
		x.problem(CodeNotRedacted, ManifestFile+":$.redaction.applied", "the manifest says the bundle is not redacted; write it again with crystallize mine --bundle")
	}
	for i, f := range m.Fixtures {
		if !f.Redacted {
			x.problem(CodeNotRedacted, fmt.Sprintf("%s:$.fixtures[%d].redacted", ManifestFile, i), "the manifest says fixture %s is not redacted; write the bundle again with crystallize mine --bundle", f.Path)
		}
	}
	filepath.WalkDir(x.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(x.dir, p)
		rel = filepath.ToSlash(rel)
		for _, f := range redact.Scan(data) {
			x.problem(CodeSecretFound, fmt.Sprintf("%s:%d", rel, f.Line), "%s secret %s", f.Kind, f.Excerpt)
		}
		return nil
	})
	x.finish(false)
}

func (x *validator) approval(m *Manifest) {
	cur := m.Workflow.SHA256
	if m.Workflow.Path != "" && x.safePathQuiet(m.Workflow.Path) {
		// Only a regular file is read (the workflow check reported
		// anything else): a FIFO would block validation.
		p := filepath.Join(x.dir, filepath.FromSlash(m.Workflow.Path))
		if st, err := os.Lstat(p); err == nil && st.Mode().IsRegular() {
			if src, err := os.ReadFile(p); err == nil {
				cur = hexSHA(src)
				x.v.Workflow, x.v.WorkflowSHA256 = m.Workflow.Path, cur
			}
		}
	}
	h := m.Promotion.ApprovalHistory
	if n := len(h); n > 0 {
		last := h[n-1]
		field := fmt.Sprintf("%s:$.promotion.approval_history[%d]", ManifestFile, n-1)
		if last.WorkflowSHA256 != cur {
			x.problem(CodeApprovalStale, field, "the latest %s decision by %s was for workflow sha256 %s, but %s is now %s: approve again", last.Decision, last.Actor, last.WorkflowSHA256, m.Workflow.Path, cur)
		}
		if last.CandidateID != m.CandidateID {
			x.problem(CodeApprovalStale, field, "the latest decision was for candidate %s, not %s", last.CandidateID, m.CandidateID)
		}
	}
	want := *m
	want.Workflow.SHA256 = cur
	want.Promotion.Criteria.Reasons = recompute(m)
	settle(&want)
	x.v.status, x.v.claimed, x.v.workflowSHA = want.Promotion.Criteria.Status, m.Promotion.Criteria.Status, cur
	x.v.PromotionStatus = want.Promotion.Criteria.Status
	if got := m.Promotion.Criteria.Status; got != want.Promotion.Criteria.Status && got != "" {
		x.problem(CodeStatusInvalid, ManifestFile+":$.promotion.criteria.status", "status %q, but the criteria and approvals give %q", got, want.Promotion.Criteria.Status)
	}
	x.finish(false)
}

// safePathQuiet is safePath without reporting.
func (x *validator) safePathQuiet(p string) bool {
	n := len(x.v.Problems)
	fail := x.fail
	ok := x.safePath(p, "")
	x.v.Problems = x.v.Problems[:n]
	x.fail = fail
	return ok
}
