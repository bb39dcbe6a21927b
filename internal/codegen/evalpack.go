package codegen

// This file writes and reads the eval pack of a candidate (harn.eval.toml
// in a bundle): an eval-pack v1 manifest, the format harn's evaluator
// reads, holding one blocking case whose crystallization-shadow assertion
// expects the shadow comparison of the candidate to pass on the bundle's
// trace fixtures. Field names are harn's (version, id, name, package,
// fixtures, rubrics with assertions, cases with severity, metadata), so a
// pack written here runs under either evaluator.
//
// Writing goes through github.com/BurntSushi/toml's encoder rather than
// string formatting, so every string is escaped by a real TOML encoder.
// The encoder writes struct fields in declaration order (plain keys before
// tables), which makes the output deterministic.
//
// Besides the shadow assertion, a rubric may hold assertions of the
// harness case format (json_schema, tool_call_f1, … : every kind in
// assert.Blocking), whose keys are that format's with kind for type, and
// a case may have an input table in that format (recorded output,
// trajectory or trace, expected documents and tool calls). They are
// decoded into the assert package's types, so that "crystallize eval"
// checks them with the engine "harness run" uses. Packs written here
// hold only the shadow case; the others are written by people.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/crystallize-dev/crystallize/internal/assert"
	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// EvalPackVersion is the eval-pack format version written and read here.
const EvalPackVersion = 1

// Fixed values of a crystallization eval pack.
const (
	// ShadowAssertion is the assertion kind that replays a candidate in
	// shadow mode against fixtures and expects the comparison to pass.
	ShadowAssertion = "crystallization-shadow"
	// ShadowRubric is the id of the rubric holding the shadow assertion.
	ShadowRubric = "shadow-determinism"
	// FixtureKindTrace is the fixture kind of a trace file. harn names it
	// "jsonl-trace"; the name is kept for its evaluator although our
	// fixtures are single JSON documents, which that kind also reads.
	FixtureKindTrace = "jsonl-trace"

	SeverityBlocking      = "blocking"
	SeverityWarning       = "warning"
	SeverityInformational = "informational"
)

// Trace roles of an eval pack's fixtures: the candidate's.
const (
	RoleSource  = candidate.RoleSource
	RoleHeldout = candidate.RoleHeldout
)

// EvalFixture is a trace fixture of the bundle that the eval pack points
// at. Path is relative to the bundle directory, slash-separated, such as
// "fixtures/release_0.json". Role is RoleSource (the default) or
// RoleHeldout.
type EvalFixture struct {
	Path       string
	TraceID    string
	SourceHash string
	Role       string
}

// EvalPackInput is what EvalPack needs beyond the candidate. The zero
// value is valid: the workflow is named as Workflow names it, and there
// is one source fixture per example at FixturePath(trace id).
type EvalPackInput struct {
	// Options names the workflow (FuncName) and its package.
	Options Options
	// PackageVersion is the proposed version of the workflow package.
	PackageVersion string
	// WorkflowPath is the workflow file in the bundle, such as
	// "workflow.star"; recorded when set.
	WorkflowPath string
	// Fixtures are the bundle's trace fixtures, in the order to list
	// them. When nil, the candidate's examples are used as source
	// fixtures at FixturePath(trace id).
	Fixtures []EvalFixture
}

// EvalManifest is an eval-pack v1 manifest (the type cannot share the
// name of the function EvalPack). The toml tags are the file format;
// ParseEvalPack fills every field and refuses keys it does not know.
type EvalManifest struct {
	Version     int               `toml:"version"`
	ID          string            `toml:"id"`
	Name        string            `toml:"name,omitempty"`
	Description string            `toml:"description,omitempty"`
	Package     EvalPackage       `toml:"package,omitempty"`
	Fixtures    []EvalPackFixture `toml:"fixtures"`
	Rubrics     []EvalRubric      `toml:"rubrics"`
	Cases       []EvalCase        `toml:"cases"`
	Metadata    EvalMetadata      `toml:"metadata"`
}

// EvalPackage names the workflow package the pack evaluates.
type EvalPackage struct {
	Name    string `toml:"name,omitempty"`
	Version string `toml:"version,omitempty"`
}

// EvalPackFixture is a fixture entry of the pack. ID is the trace id.
type EvalPackFixture struct {
	ID       string          `toml:"id"`
	Kind     string          `toml:"kind"`
	Path     string          `toml:"path,omitempty"`
	TraceID  string          `toml:"trace_id,omitempty"`
	Metadata FixtureMetadata `toml:"metadata,omitempty"`
}

// FixtureMetadata says where a fixture came from and what it is for.
type FixtureMetadata struct {
	SourceHash string `toml:"source_hash,omitempty"`
	Role       string `toml:"role,omitempty"`
}

// EvalRubric groups assertions that cases refer to by id.
type EvalRubric struct {
	ID          string          `toml:"id"`
	Kind        string          `toml:"kind"`
	Description string          `toml:"description,omitempty"`
	Assertions  []EvalAssertion `toml:"assertions"`
}

// EvalAssertion is one check of a rubric. A crystallization-shadow
// assertion, or one of a kind this build does not know, has Expected. An
// assertion of the harness case format (IsCheckKind) has Check instead,
// decoded from the table's keys, which are that format's (value, schema,
// threshold, expected, …) with kind for type; its schema may be a table
// or a string of JSON.
type EvalAssertion struct {
	Kind     string            `toml:"kind"`
	Expected EvalExpected      `toml:"expected"`
	Check    *assert.Assertion `toml:"-"`
}

// IsCheckKind reports whether an assertion kind is one of the harness
// case format, decided by the assert package's engine.
func IsCheckKind(kind string) bool {
	_, ok := assert.Blocking[kind]
	return ok
}

// UnmarshalTOML decodes an assertion by its kind. ParseEvalPack has
// checked the table's keys and types before this runs.
func (a *EvalAssertion) UnmarshalTOML(v any) error {
	m, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("assertion: expected table, got %s", tomlTypeName(v))
	}
	a.Kind, _ = m["kind"].(string)
	if IsCheckKind(a.Kind) {
		var errs trace.ErrorList
		a.Check = decodeCheck(&errs, "$", m)
		if len(errs) > 0 {
			return errs
		}
		return nil
	}
	e, _ := m["expected"].(map[string]any)
	a.Expected.CandidateID, _ = e["candidate_id"].(string)
	a.Expected.Pass, _ = e["pass"].(bool)
	list, _ := e["fixtures"].([]any)
	for _, f := range list {
		if id, ok := f.(string); ok {
			a.Expected.Fixtures = append(a.Expected.Fixtures, id)
		}
	}
	return nil
}

// EvalExpected is what a crystallization-shadow assertion expects: the
// shadow comparison of CandidateID gives Pass on the fixtures with the
// listed ids.
type EvalExpected struct {
	CandidateID string   `toml:"candidate_id"`
	Pass        bool     `toml:"pass"`
	Fixtures    []string `toml:"fixtures"`
}

// EvalCase is one evaluated case: the rubrics it runs, how a failure
// counts, and the input its harness-format assertions are checked
// against.
type EvalCase struct {
	ID       string     `toml:"id"`
	Name     string     `toml:"name,omitempty"`
	Rubrics  []string   `toml:"rubrics"`
	Severity string     `toml:"severity"`
	Input    *EvalInput `toml:"input,omitempty"`
}

// EvalInput is a case's input in the harness case format. A bundle's
// eval runs no commands (a bundle is data to review, not a script to
// trust), so command and timeout_seconds are refused: a case records its
// output (output, or output_file inside the bundle), its trajectory
// (trajectory, or trace: a trace file inside the bundle) and what they
// are checked against.
type EvalInput struct {
	assert.CaseInput
}

// UnmarshalTOML decodes the input table; ParseEvalPack has checked it.
func (in *EvalInput) UnmarshalTOML(v any) error {
	m, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("input: expected table, got %s", tomlTypeName(v))
	}
	var errs trace.ErrorList
	if ci := decodeInput(&errs, "$", m); ci != nil {
		in.CaseInput = *ci
	}
	if len(errs) > 0 {
		return errs
	}
	return nil
}

// EvalMetadata records what the pack was generated from.
type EvalMetadata struct {
	CandidateID     string   `toml:"candidate_id"`
	WorkflowName    string   `toml:"workflow_name"`
	WorkflowPath    string   `toml:"workflow_path,omitempty"`
	PackageName     string   `toml:"package_name,omitempty"`
	SourceTraceIDs  []string `toml:"source_trace_ids"`
	HeldoutTraceIDs []string `toml:"heldout_trace_ids,omitempty"`
}

// FixturePath returns the bundle-relative path of the fixture of a trace:
// "fixtures/<name>.json", where name is FileName of the trace id ("trace"
// when it has no ASCII letter or digit), so that no trace id can escape
// the directory, name a device or collide.
func FixturePath(traceID string) string {
	return "fixtures/" + FileName(traceID, "trace") + ".json"
}

// EvalPack renders the eval pack of c as TOML. It fails, naming every
// problem, when a fixture path is not a clean relative path inside the
// bundle, a fixture has no trace id or an unknown role, or two fixtures
// share a trace id. What it returns parses with ParseEvalPack.
func EvalPack(c *candidate.Candidate, in EvalPackInput) ([]byte, error) {
	if c == nil {
		return nil, errors.New("no candidate")
	}
	fixtures := in.Fixtures
	if fixtures == nil {
		for _, ex := range c.Examples {
			fixtures = append(fixtures, EvalFixture{Path: FixturePath(ex.TraceID), TraceID: ex.TraceID, SourceHash: ex.SourceHash, Role: RoleSource})
		}
	}
	var errs []error
	errorf := func(p, format string, args ...any) {
		errs = append(errs, fmt.Errorf("candidate %s: %s: %s", c.ID, p, fmt.Sprintf(format, args...)))
	}
	fn := FuncName(c, in.Options)
	pack := EvalManifest{
		Version:     EvalPackVersion,
		ID:          evalPackID(in.Options.PackageName, fn),
		Name:        fn + " crystallization shadow evals",
		Description: "Blocking shadow replay of candidate " + candidate.OneLine(c.ID) + " on the bundle's trace fixtures.",
		Package:     EvalPackage{Name: in.Options.PackageName, Version: in.PackageVersion},
		Metadata: EvalMetadata{
			CandidateID:    c.ID,
			WorkflowName:   fn,
			WorkflowPath:   in.WorkflowPath,
			PackageName:    in.Options.PackageName,
			SourceTraceIDs: []string{},
		},
	}
	seenSource := map[string]bool{}
	for _, ex := range c.Examples {
		if !seenSource[ex.TraceID] {
			seenSource[ex.TraceID] = true
			pack.Metadata.SourceTraceIDs = append(pack.Metadata.SourceTraceIDs, ex.TraceID)
		}
	}
	expected := EvalExpected{CandidateID: c.ID, Pass: true, Fixtures: []string{}}
	seen := map[string]bool{}
	for i, f := range fixtures {
		p := fmt.Sprintf("fixtures[%d]", i)
		role := f.Role
		if role == "" {
			role = RoleSource
		}
		switch {
		case f.TraceID == "":
			errorf(p+".trace_id", "empty trace id")
		case seen[f.TraceID]:
			errorf(p+".trace_id", "duplicate trace id %q", f.TraceID)
		}
		seen[f.TraceID] = true
		if msg := checkRelPath(f.Path); msg != "" {
			errorf(p+".path", "%s", msg)
		}
		if role != RoleSource && role != RoleHeldout {
			errorf(p+".role", "role %q; want %q or %q", f.Role, RoleSource, RoleHeldout)
		}
		if role == RoleHeldout {
			pack.Metadata.HeldoutTraceIDs = append(pack.Metadata.HeldoutTraceIDs, f.TraceID)
		}
		pack.Fixtures = append(pack.Fixtures, EvalPackFixture{
			ID: f.TraceID, Kind: FixtureKindTrace, Path: f.Path, TraceID: f.TraceID,
			Metadata: FixtureMetadata{SourceHash: f.SourceHash, Role: role},
		})
		expected.Fixtures = append(expected.Fixtures, f.TraceID)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	pack.Rubrics = []EvalRubric{{
		ID:          ShadowRubric,
		Kind:        "deterministic",
		Description: "The candidate replays in shadow mode on every fixture without divergence.",
		Assertions:  []EvalAssertion{{Kind: ShadowAssertion, Expected: expected}},
	}}
	pack.Cases = []EvalCase{{
		ID:       fn + "-shadow",
		Name:     fn + " shadow replay",
		Rubrics:  []string{ShadowRubric},
		Severity: SeverityBlocking,
	}}
	sanitizeStrings(&pack)

	var b bytes.Buffer
	fmt.Fprintf(&b, "# eval pack for workflow %s (candidate %s), generated by crystallize\n", fn, candidate.OneLine(c.ID))
	enc := toml.NewEncoder(&b)
	enc.Indent = ""
	if err := enc.Encode(pack); err != nil {
		return nil, fmt.Errorf("encoding eval pack: %w", err)
	}
	return b.Bytes(), nil
}

// evalPackID is "<package or workflow>-crystallization", with the name
// reduced as skill names are.
func evalPackID(pkg, workflow string) string {
	base := candidate.Slug(pkg)
	if base == "" {
		base = candidate.Slug(workflow)
	}
	if base == "" {
		base = candidate.SkillName(nil) // the name of a skill with no name
	}
	return base + "-crystallization"
}

// checkRelPath returns why p is not a clean, slash-separated path inside
// the bundle directory, or "" when it is one.
func checkRelPath(p string) string {
	switch {
	case p == "":
		return "empty path"
	case strings.ContainsAny(p, "\\\x00") || candidate.OneLine(p) != p:
		return fmt.Sprintf("path %q has a backslash, white space or a control character", p)
	case path.IsAbs(p) || len(p) >= 2 && p[1] == ':':
		return fmt.Sprintf("path %q is absolute; want a path relative to the bundle", p)
	case path.Clean(p) != p:
		return fmt.Sprintf("path %q is not clean (want %q)", p, path.Clean(p))
	case p == ".." || strings.HasPrefix(p, "../"):
		return fmt.Sprintf("path %q leaves the bundle", p)
	}
	return ""
}

// sanitizeStrings replaces invalid UTF-8 in every string of the pack with
// U+FFFD: TOML documents are UTF-8, and the encoder copies bytes as they
// are.
func sanitizeStrings(p *EvalManifest) {
	v := func(s *string) { *s = strings.ToValidUTF8(*s, "\uFFFD") }
	vs := func(s []string) {
		for i := range s {
			v(&s[i])
		}
	}
	v(&p.ID)
	v(&p.Name)
	v(&p.Description)
	v(&p.Package.Name)
	v(&p.Package.Version)
	for i := range p.Fixtures {
		f := &p.Fixtures[i]
		v(&f.ID)
		v(&f.Path)
		v(&f.TraceID)
		v(&f.Metadata.SourceHash)
	}
	for i := range p.Rubrics {
		for j := range p.Rubrics[i].Assertions {
			e := &p.Rubrics[i].Assertions[j].Expected
			v(&e.CandidateID)
			vs(e.Fixtures)
		}
	}
	for i := range p.Cases {
		v(&p.Cases[i].ID)
		v(&p.Cases[i].Name)
	}
	m := &p.Metadata
	v(&m.CandidateID)
	v(&m.WorkflowName)
	v(&m.WorkflowPath)
	v(&m.PackageName)
	vs(m.SourceTraceIDs)
	vs(m.HeldoutTraceIDs)
}

// tomlType is the type a key of the pack must have.
type tomlType int

const (
	tomlString tomlType = iota
	tomlInt
	tomlBool
	tomlStrings
	tomlTable
	tomlTables
)

func (t tomlType) String() string {
	return [...]string{"string", "integer", "boolean", "array of strings", "table", "array of tables"}[t]
}

// tomlField describes a key: its type and, for tables, their keys.
type tomlField struct {
	typ  tomlType
	keys map[string]tomlField
	// check, when set, checks a table itself (reporting into errs) and
	// returns true, or returns false to leave it to keys.
	check func(errs *trace.ErrorList, p string, t map[string]any) bool
}

// evalPackSchema is every key an eval pack may have. It mirrors the toml
// tags of EvalManifest; TestEvalPackSchema keeps the two in step.
var evalPackSchema = map[string]tomlField{
	"version":     {typ: tomlInt},
	"id":          {typ: tomlString},
	"name":        {typ: tomlString},
	"description": {typ: tomlString},
	"package": {typ: tomlTable, keys: map[string]tomlField{
		"name":    {typ: tomlString},
		"version": {typ: tomlString},
	}},
	"fixtures": {typ: tomlTables, keys: map[string]tomlField{
		"id":       {typ: tomlString},
		"kind":     {typ: tomlString},
		"path":     {typ: tomlString},
		"trace_id": {typ: tomlString},
		"metadata": {typ: tomlTable, keys: map[string]tomlField{
			"source_hash": {typ: tomlString},
			"role":        {typ: tomlString},
		}},
	}},
	"rubrics": {typ: tomlTables, keys: map[string]tomlField{
		"id":          {typ: tomlString},
		"kind":        {typ: tomlString},
		"description": {typ: tomlString},
		"assertions": {typ: tomlTables, check: checkCheck, keys: map[string]tomlField{
			"kind": {typ: tomlString},
			"expected": {typ: tomlTable, keys: map[string]tomlField{
				"candidate_id": {typ: tomlString},
				"pass":         {typ: tomlBool},
				"fixtures":     {typ: tomlStrings},
			}},
		}},
	}},
	"cases": {typ: tomlTables, keys: map[string]tomlField{
		"id":       {typ: tomlString},
		"name":     {typ: tomlString},
		"rubrics":  {typ: tomlStrings},
		"severity": {typ: tomlString},
		"input":    {typ: tomlTable, check: checkInput},
	}},
	"metadata": {typ: tomlTable, keys: map[string]tomlField{
		"candidate_id":      {typ: tomlString},
		"workflow_name":     {typ: tomlString},
		"workflow_path":     {typ: tomlString},
		"package_name":      {typ: tomlString},
		"source_trace_ids":  {typ: tomlStrings},
		"heldout_trace_ids": {typ: tomlStrings},
	}},
}

// ParseEvalPack reads an eval pack. The error, when not nil, is a
// trace.ErrorList: a TOML syntax error with its line and column, or every
// problem found in the document, each at its path ($.rubrics[0].kind):
// unknown keys, values of the wrong type, missing ids, fixtures outside
// the bundle, references to unknown fixtures or rubrics, unknown
// severities. A version other than EvalPackVersion is refused before
// anything else is read. The entries carry no file name; a caller that
// has one sets File on each.
func ParseEvalPack(b []byte) (*EvalManifest, error) {
	var doc map[string]any
	if _, err := toml.Decode(string(b), &doc); err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return nil, trace.ErrorList{{Line: pe.Position.Line, Col: pe.Position.Col, Msg: "invalid TOML: " + pe.Message}}
		}
		return nil, trace.ErrorList{{Msg: "invalid TOML: " + strings.TrimPrefix(err.Error(), "toml: ")}}
	}
	switch v, ok := doc["version"]; {
	case !ok:
		return nil, trace.ErrorList{{Path: "$.version", Msg: "missing version"}}
	case !isInt(v):
		return nil, trace.ErrorList{{Path: "$.version", Msg: fmt.Sprintf("expected integer, got %s", tomlTypeName(v))}}
	case v.(int64) != EvalPackVersion:
		return nil, trace.ErrorList{{Path: "$.version", Msg: fmt.Sprintf("unsupported eval pack version %d; this build reads version %d", v, EvalPackVersion)}}
	}
	var errs trace.ErrorList
	checkTable(&errs, "$", doc, evalPackSchema)
	if len(errs) > 0 {
		return nil, errs
	}
	var pack EvalManifest
	if _, err := toml.Decode(string(b), &pack); err != nil {
		// The schema walk has checked every type, so this is a bug.
		return nil, trace.ErrorList{{Msg: "decoding eval pack: " + err.Error()}}
	}
	validateEvalPack(&errs, &pack)
	if len(errs) > 0 {
		return nil, errs
	}
	return &pack, nil
}

// bareKey matches the keys a path spells as .key rather than ["key"].
var bareKey = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// checkTable reports unknown keys and values of the wrong type in the
// table m at path p, in sorted key order.
func checkTable(errs *trace.ErrorList, p string, m map[string]any, schema map[string]tomlField) {
keys:
	for _, k := range sortedKeys(m) {
		kp := p + "." + k
		if !bareKey.MatchString(k) {
			kp = fmt.Sprintf("%s[%q]", p, k)
		}
		f, ok := schema[k]
		if !ok {
			*errs = append(*errs, &trace.Error{Path: kp, Msg: "unknown key"})
			continue
		}
		v := m[k]
		bad := func() {
			*errs = append(*errs, &trace.Error{Path: kp, Msg: fmt.Sprintf("expected %s, got %s", f.typ, tomlTypeName(v))})
		}
		switch f.typ {
		case tomlString:
			if _, ok := v.(string); !ok {
				bad()
			}
		case tomlInt:
			if !isInt(v) {
				bad()
			}
		case tomlBool:
			if _, ok := v.(bool); !ok {
				bad()
			}
		case tomlStrings:
			items, ok := v.([]any)
			if !ok {
				bad()
				break
			}
			for i, it := range items {
				if _, ok := it.(string); !ok {
					*errs = append(*errs, &trace.Error{Path: fmt.Sprintf("%s[%d]", kp, i), Msg: "expected string, got " + tomlTypeName(it)})
				}
			}
		case tomlTable:
			t, ok := v.(map[string]any)
			if !ok {
				bad()
				break
			}
			if f.check == nil || !f.check(errs, kp, t) {
				checkTable(errs, kp, t, f.keys)
			}
		case tomlTables:
			var tables []map[string]any
			switch x := v.(type) {
			case []map[string]any:
				tables = x
			case []any:
				for _, it := range x {
					t, ok := it.(map[string]any)
					if !ok {
						bad()
						continue keys
					}
					tables = append(tables, t)
				}
			default:
				bad()
				continue
			}
			for i, t := range tables {
				tp := fmt.Sprintf("%s[%d]", kp, i)
				if f.check == nil || !f.check(errs, tp, t) {
					checkTable(errs, tp, t, f.keys)
				}
			}
		}
	}
}

func isInt(v any) bool {
	_, ok := v.(int64)
	return ok
}

// tomlTypeName names the TOML type of a decoded value.
func tomlTypeName(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case int64:
		return "integer"
	case float64:
		return "float"
	case bool:
		return "boolean"
	case map[string]any:
		return "table"
	case []map[string]any:
		return "array of tables"
	case []any:
		return "array"
	}
	return "datetime"
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// validateEvalPack checks the meaning of a well-typed pack: ids present
// and unique, paths inside the bundle, references resolved.
func validateEvalPack(errs *trace.ErrorList, p *EvalManifest) {
	add := func(path, format string, args ...any) {
		*errs = append(*errs, &trace.Error{Path: path, Msg: fmt.Sprintf(format, args...)})
	}
	if p.ID == "" {
		add("$.id", "missing id")
	}
	fixtures := map[string]bool{}
	for i, f := range p.Fixtures {
		fp := fmt.Sprintf("$.fixtures[%d]", i)
		switch {
		case f.ID == "":
			add(fp+".id", "missing id")
		case fixtures[f.ID]:
			add(fp+".id", "duplicate fixture id %q", f.ID)
		}
		fixtures[f.ID] = true
		if f.Kind == "" {
			add(fp+".kind", "missing kind")
		}
		if f.Path != "" {
			if msg := checkRelPath(f.Path); msg != "" {
				add(fp+".path", "%s", msg)
			}
		}
		if r := f.Metadata.Role; r != "" && r != RoleSource && r != RoleHeldout {
			add(fp+".metadata.role", "role %q; want %q or %q", r, RoleSource, RoleHeldout)
		}
	}
	rubrics := map[string]bool{}
	for i, r := range p.Rubrics {
		rp := fmt.Sprintf("$.rubrics[%d]", i)
		switch {
		case r.ID == "":
			add(rp+".id", "missing id")
		case rubrics[r.ID]:
			add(rp+".id", "duplicate rubric id %q", r.ID)
		}
		rubrics[r.ID] = true
		if r.Kind == "" {
			add(rp+".kind", "missing kind")
		}
		for j, a := range r.Assertions {
			ap := fmt.Sprintf("%s.assertions[%d]", rp, j)
			if a.Kind == "" {
				add(ap+".kind", "missing kind")
			}
			if a.Kind != ShadowAssertion {
				continue
			}
			switch id := a.Expected.CandidateID; {
			case id == "":
				add(ap+".expected.candidate_id", "missing candidate id")
			case p.Metadata.CandidateID != "" && id != p.Metadata.CandidateID:
				add(ap+".expected.candidate_id", "candidate %q differs from $.metadata.candidate_id %q", id, p.Metadata.CandidateID)
			}
			for k, f := range a.Expected.Fixtures {
				if !fixtures[f] {
					add(fmt.Sprintf("%s.expected.fixtures[%d]", ap, k), "unknown fixture %q", f)
				}
			}
		}
	}
	for i, c := range p.Cases {
		cp := fmt.Sprintf("$.cases[%d]", i)
		if c.ID == "" {
			add(cp+".id", "missing id")
		}
		for j, r := range c.Rubrics {
			if !rubrics[r] {
				add(fmt.Sprintf("%s.rubrics[%d]", cp, j), "unknown rubric %q", r)
			}
		}
		switch c.Severity {
		case "", SeverityBlocking, SeverityWarning, SeverityInformational:
		default:
			add(cp+".severity", "severity %q; want %q, %q or %q", c.Severity, SeverityBlocking, SeverityWarning, SeverityInformational)
		}
	}
}

// checkCheck checks an assertion of the harness case format and leaves
// the others (the shadow kind, unknown kinds) to the schema.
func checkCheck(errs *trace.ErrorList, p string, t map[string]any) bool {
	kind, _ := t["kind"].(string)
	if !IsCheckKind(kind) {
		return false
	}
	decodeCheck(errs, p, t)
	return true
}

// decodeCheck decodes an assertion table of the harness case format into
// assert.Assertion, through JSON so the field names are that format's
// own, reporting every unknown key and wrong type at its path.
func decodeCheck(errs *trace.ErrorList, p string, t map[string]any) *assert.Assertion {
	m := make(map[string]any, len(t))
	for k, v := range t {
		m[k] = v
	}
	kind, _ := m["kind"].(string)
	delete(m, "kind")
	if _, ok := m["type"]; ok {
		*errs = append(*errs, &trace.Error{Path: p + ".type", Msg: "unknown key (kind names the assertion type)"})
		delete(m, "type")
	}
	// A schema written as a string is JSON text; as a table it is the
	// schema itself.
	if s, ok := m["schema"].(string); ok {
		var doc any
		if err := json.Unmarshal([]byte(s), &doc); err != nil {
			*errs = append(*errs, &trace.Error{Path: p + ".schema", Msg: "schema is not JSON: " + err.Error()})
			delete(m, "schema")
		} else {
			m["schema"] = json.RawMessage(s)
		}
	}
	var a assert.Assertion
	if !decodeJSON(errs, p, m, &a) {
		return nil
	}
	a.Type = kind
	if a.Threshold != nil && (*a.Threshold < 0 || *a.Threshold > 1) {
		*errs = append(*errs, &trace.Error{Path: p + ".threshold", Msg: fmt.Sprintf("threshold %v outside [0, 1]", *a.Threshold)})
	}
	return &a
}

// checkInput checks a case's input table.
func checkInput(errs *trace.ErrorList, p string, t map[string]any) bool {
	decodeInput(errs, p, t)
	return true
}

// decodeInput decodes a case's input table into assert.CaseInput and
// checks what a bundle's eval allows of it.
func decodeInput(errs *trace.ErrorList, p string, t map[string]any) *assert.CaseInput {
	var in assert.CaseInput
	if !decodeJSON(errs, p, t, &in) {
		return nil
	}
	add := func(path, format string, args ...any) {
		*errs = append(*errs, &trace.Error{Path: path, Msg: fmt.Sprintf(format, args...)})
	}
	if len(in.Command) > 0 {
		add(p+".command", "a bundle's eval runs no commands; record the output in output or output_file")
	}
	if in.TimeoutSeconds != 0 {
		add(p+".timeout_seconds", "a bundle's eval runs no commands, so nothing times out")
	}
	if in.Output != nil && in.OutputFile != "" {
		add(p, "both output and output_file")
	}
	if in.Trace != "" && len(in.Trajectory) > 0 {
		add(p, "both trace and trajectory")
	}
	for _, f := range []struct{ key, path string }{{"output_file", in.OutputFile}, {"trace", in.Trace}} {
		if f.path == "" {
			continue
		}
		if msg := checkRelPath(f.path); msg != "" {
			add(p+"."+f.key, "%s", msg)
		}
	}
	return &in
}

// decodeJSON decodes a TOML table into v by way of JSON, refusing
// unknown keys: the harness case format is defined by its JSON field
// names, and this keeps one definition of it. Errors are reported at
// their path under p.
func decodeJSON(errs *trace.ErrorList, p string, t map[string]any, v any) bool {
	// Every unknown key of the table itself is reported, not only the
	// first one the decoder meets.
	known := jsonFields(reflect.TypeOf(v).Elem())
	ok := true
	for _, k := range sortedKeys(t) {
		if !known[k] {
			*errs = append(*errs, &trace.Error{Path: p + "." + k, Msg: "unknown key"})
			ok = false
		}
	}
	if !ok {
		return false
	}
	data, err := json.Marshal(t)
	if err != nil {
		*errs = append(*errs, &trace.Error{Path: p, Msg: err.Error()})
		return false
	}
	// The keys of nested tables are refused when they only fold onto a
	// field's name, which encoding/json would otherwise decode into it.
	if names := trace.CheckNames(data, "", 0, v); len(names) > 0 {
		for _, e := range names {
			*errs = append(*errs, &trace.Error{Path: p + strings.TrimPrefix(e.Path, "$"), Msg: e.Msg})
		}
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	err = dec.Decode(v)
	if err == nil {
		return true
	}
	var te *json.UnmarshalTypeError
	switch msg := err.Error(); {
	case errors.As(err, &te) && te.Field != "":
		*errs = append(*errs, &trace.Error{Path: p + "." + te.Field, Msg: fmt.Sprintf("expected %s, got %s", jsonTypeName(te.Type.String()), te.Value)})
	case strings.HasPrefix(msg, `json: unknown field "`):
		// A key of a nested table (such as a tool call's).
		*errs = append(*errs, &trace.Error{Path: p, Msg: "unknown key " + strings.TrimPrefix(msg, "json: unknown field ")})
	default:
		*errs = append(*errs, &trace.Error{Path: p, Msg: strings.TrimPrefix(msg, "json: ")})
	}
	return false
}

// jsonFields is the set of JSON names of a struct's fields.
func jsonFields(t reflect.Type) map[string]bool {
	names := map[string]bool{}
	for i := range t.NumField() {
		f := t.Field(i)
		if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); name != "" && name != "-" {
			names[name] = true
		}
	}
	return names
}

// jsonTypeName names a Go type of the case format as TOML would.
func jsonTypeName(goType string) string {
	switch {
	case goType == "string":
		return "string"
	case goType == "bool":
		return "boolean"
	case strings.HasPrefix(goType, "int"):
		return "integer"
	case strings.HasPrefix(goType, "float"):
		return "float"
	case strings.HasPrefix(goType, "[]"):
		return "array"
	}
	return "table"
}
