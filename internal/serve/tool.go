package serve

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.yaml.in/yaml/v3"

	"github.com/crystallize-dev/crystallize/internal/bundle"
	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/runner"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// SchemaDialect is the JSON Schema dialect of every inputSchema.
const SchemaDialect = "https://json-schema.org/draft/2020-12/schema"

// ready reports whether the bundle in dir may be served, and when not,
// why, in one line naming the problems' codes. It asks bundle.Ready, the
// decision validate, run and resume make too: the status is recomputed
// from the approval history and the workflow bytes on disk, and any
// validation problem counts against it.
func ready(dir string) (bool, string) {
	r := bundle.Ready(dir)
	if r.OK() {
		return true, ""
	}
	if len(r.Problems) > 0 {
		var ps []string
		for _, p := range r.Problems {
			s := p.Code + ": " + p.Message
			if p.Path != "" {
				s = p.Path + ": " + s
			}
			ps = append(ps, s)
		}
		return false, "invalid bundle: " + strings.Join(ps, "; ")
	}
	why := "promotion status " + r.Status
	// The recorded reasons explain the status (approval_required, …);
	// they are shown, never trusted: the status itself was recomputed.
	if b, err := bundle.Read(dir); err == nil && b.Manifest.Promotion.Criteria.Status == r.Status {
		var rs []string
		for _, reason := range b.Manifest.Promotion.Criteria.Reasons {
			rs = append(rs, reason.Code)
		}
		if len(rs) > 0 {
			why += " (" + strings.Join(rs, ", ") + ")"
		}
	}
	if r.Status == bundle.StatusNeedsApproval {
		why += "; approve it with crystallize approve " + dir + " --approver NAME"
	}
	return false, why
}

// Tool is a bundle as an MCP tool.
type Tool struct {
	// Dir is the bundle directory.
	Dir string
	// Workflow is the loaded workflow the calls run.
	Workflow *runner.Workflow
	// MCP is the tool as listed.
	MCP *mcp.Tool

	// print is the fingerprint of the bundle the tool was loaded from
	// and found ready.
	print string
}

// LoadTool loads the bundle in dir as a tool, without deciding whether it
// is ready (see ready): the workflow, and the schema, description and
// annotations built from the bundle's report, SKILL.md and manifest.
func LoadTool(dir string) (*Tool, error) {
	w, err := runner.Load(dir)
	if err != nil {
		return nil, err
	}
	m := w.Bundle.Manifest
	var params []candidate.Parameter
	if c, err := reportCandidate(dir, m.CandidateID); err == nil {
		params = c.Parameters
	}
	schema := InputSchema(w, params)
	raw, err := json.Marshal(schema)
	if err != nil {
		return nil, fmt.Errorf("%s: input schema: %w", dir, err)
	}
	t := &mcp.Tool{
		Name:        w.Name,
		Title:       m.Title,
		Description: description(dir, w, m),
		InputSchema: json.RawMessage(raw),
		Annotations: Annotations(m.SideEffects),
	}
	return &Tool{Dir: dir, Workflow: w, MCP: t}, nil
}

// reportCandidate reads the candidate id from the bundle's report.json.
func reportCandidate(dir, id string) (*candidate.Candidate, error) {
	r, err := bundle.ReadReport(dir)
	if err != nil {
		return nil, err
	}
	for i := range r.Candidates {
		if r.Candidates[i].ID == id {
			return &r.Candidates[i], nil
		}
	}
	return nil, fmt.Errorf("%s: no candidate %s", bundle.ReportFile, id)
}

// InputSchema builds the JSON Schema of a workflow's arguments: one
// property per parameter, with the candidate's type (string, number,
// boolean, object, array, null; none for "mixed") and up to five
// examples, the parameters without a default required, nothing else
// allowed (the runtime refuses unknown parameters too).
func InputSchema(w *runner.Workflow, params []candidate.Parameter) map[string]any {
	props := map[string]any{}
	required := []any{}
	for i, name := range w.Params {
		p := map[string]any{}
		if j := slices.IndexFunc(params, func(p candidate.Parameter) bool { return p.Name == name }); j >= 0 {
			c := params[j]
			if t := jsonType(c.Type); t != "" {
				p["type"] = t
			}
			if len(c.Examples) > 0 {
				p["examples"] = c.Examples
			}
			if len(c.SourcePaths) > 0 {
				p["description"] = "the value of " + strings.Join(c.SourcePaths, ", ") + " in the traces this workflow was crystallized from"
			}
		}
		props[name] = p
		if w.Required[i] {
			required = append(required, name)
		}
	}
	return map[string]any{
		"$schema":              SchemaDialect,
		"type":                 "object",
		"properties":           props,
		"required":             required,
		"additionalProperties": false,
	}
}

// jsonType maps a candidate parameter type to a JSON Schema type.
func jsonType(t string) string {
	switch t {
	case "string", "number", "object", "array", "null":
		return t
	case "bool", "boolean":
		return "boolean"
	case "integer":
		return "integer"
	}
	return ""
}

// Annotations derives a tool's hints from the workflow's side effects:
// none is read-only; a side effect not marked additive may overwrite or
// delete, which is destructive. Workflows are replays of recorded calls
// against a world that changes, so idempotence is never claimed.
func Annotations(effects []trace.SideEffect) *mcp.ToolAnnotations {
	if len(effects) == 0 {
		no := false
		return &mcp.ToolAnnotations{ReadOnlyHint: true, DestructiveHint: &no}
	}
	destructive := false
	for _, se := range effects {
		if se.Mutation != "additive" {
			destructive = true
		}
	}
	return &mcp.ToolAnnotations{DestructiveHint: &destructive}
}

// description is SKILL.md's description when the bundle has one that
// reads, else the title and the workflow's docstring.
func description(dir string, w *runner.Workflow, m *bundle.Manifest) string {
	if m.Skill != nil && m.Skill.Path != "" && filepath.IsLocal(filepath.FromSlash(m.Skill.Path)) {
		if data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(m.Skill.Path))); err == nil {
			if d := skillDescription(data); d != "" {
				return d
			}
		}
	}
	parts := []string{}
	if m.Title != "" {
		parts = append(parts, "Crystallized workflow "+m.Title+".")
	}
	if doc := docstring(w.Src); doc != "" {
		parts = append(parts, doc)
	}
	return strings.Join(parts, " ")
}

// skillDescription reads the description of SKILL.md's frontmatter.
func skillDescription(data []byte) string {
	rest, ok := bytes.CutPrefix(data, []byte("---\n"))
	if !ok {
		return ""
	}
	front, _, ok := bytes.Cut(rest, []byte("\n---"))
	if !ok {
		return ""
	}
	var fm struct {
		Description string `yaml:"description"`
	}
	if yaml.Unmarshal(front, &fm) != nil {
		return ""
	}
	return strings.TrimSpace(fm.Description)
}

// docstring returns the first line of the workflow function's docstring,
// the summary codegen writes ("Runs a, b, then c.").
func docstring(src []byte) string {
	for line := range strings.Lines(string(src)) {
		line = strings.TrimSpace(line)
		if s, ok := strings.CutPrefix(line, `"""`); ok {
			return strings.TrimSpace(strings.TrimSuffix(s, `"""`))
		}
	}
	return ""
}

// fingerprint identifies the content a bundle's readiness and tool depend
// on: the path, type and bytes of every file under dir (a symlink by its
// target, which Validate refuses anyway). Bundles are a few small files,
// so hashing them all each poll costs less than a validation, and a
// readiness verdict is reused only for exactly the bytes it was given for.
// A directory without a manifest has the empty fingerprint.
func fingerprint(dir string) string {
	if _, err := os.Stat(filepath.Join(dir, bundle.ManifestFile)); err != nil {
		return ""
	}
	h := sha256.New()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			fmt.Fprintf(h, "L %s %s\n", rel, target)
		case d.Type().IsRegular():
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(data)
			fmt.Fprintf(h, "F %s %x\n", rel, sum)
		case d.IsDir():
			fmt.Fprintf(h, "D %s\n", rel)
		}
		return nil
	})
	if err != nil {
		// Unreadable now: a value no evaluation matches, so the bundle
		// is evaluated again (and Validate says what is wrong).
		return "unreadable: " + err.Error()
	}
	return hex.EncodeToString(h.Sum(nil))
}
