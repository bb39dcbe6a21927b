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

import (
	"bytes"
	"errors"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"

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

// EvalAssertion is one check of a rubric.
type EvalAssertion struct {
	Kind     string       `toml:"kind"`
	Expected EvalExpected `toml:"expected"`
}

// EvalExpected is what a crystallization-shadow assertion expects: the
// shadow comparison of CandidateID gives Pass on the fixtures with the
// listed ids.
type EvalExpected struct {
	CandidateID string   `toml:"candidate_id"`
	Pass        bool     `toml:"pass"`
	Fixtures    []string `toml:"fixtures"`
}

// EvalCase is one evaluated case: the rubrics it runs and how a failure
// counts.
type EvalCase struct {
	ID       string   `toml:"id"`
	Name     string   `toml:"name,omitempty"`
	Rubrics  []string `toml:"rubrics"`
	Severity string   `toml:"severity"`
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
// "fixtures/<trace id>.json" when the id is a safe file name (ASCII
// letters, digits, ".", "_" and "-", not starting with a dot, at most 100
// bytes), and otherwise "fixtures/<slug>-<hash>.json", where the slug is
// the id's safe characters and the hash the first 12 hex digits of its
// sha256, so that no trace id can escape the directory or collide.
func FixturePath(traceID string) string {
	safe := traceID != "" && len(traceID) <= 100 && traceID[0] != '.'
	for i := 0; safe && i < len(traceID); i++ {
		c := traceID[i]
		safe = isASCIILetter(c) || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-'
	}
	if safe {
		return "fixtures/" + traceID + ".json"
	}
	name := slug(traceID)
	if len(name) > 40 {
		name = strings.TrimRight(name[:40], "-")
	}
	hash := strings.TrimPrefix(SkillID(traceID, ""), "skill_")[:12]
	if name == "" {
		return "fixtures/trace-" + hash + ".json"
	}
	return "fixtures/" + name + "-" + hash + ".json"
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
		Description: "Blocking shadow replay of candidate " + oneLine(c.ID) + " on the bundle's trace fixtures.",
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
	fmt.Fprintf(&b, "# eval pack for workflow %s (candidate %s), generated by crystallize\n", fn, oneLine(c.ID))
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
	base := slug(pkg)
	if base == "" {
		base = slug(workflow)
	}
	if base == "" {
		base = skillNameFallback
	}
	return base + "-crystallization"
}

// checkRelPath returns why p is not a clean, slash-separated path inside
// the bundle directory, or "" when it is one.
func checkRelPath(p string) string {
	switch {
	case p == "":
		return "empty path"
	case strings.ContainsAny(p, "\\\x00") || oneLine(p) != p:
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
		"assertions": {typ: tomlTables, keys: map[string]tomlField{
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
			checkTable(errs, kp, t, f.keys)
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
				checkTable(errs, fmt.Sprintf("%s[%d]", kp, i), t, f.keys)
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
