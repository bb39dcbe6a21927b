package harness

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/crystallize-dev/crystallize/internal/trace"
)

// Manifest format constants. The schema name is the seed's, so a
// manifest written here reads in tools that know that format.
const (
	ManifestSchema = "sf.harness.v1"
	ManifestPath   = "harness/manifest.json"
	// Owner is the manifest's owner and generator when this tool wrote
	// it; a manifest with another owner is never rewritten.
	Owner = "crystallize"
	// RunnerEval is the runner of eval suites in the case format of
	// this package.
	RunnerEval = "crystallize-eval"
)

// Manifest is harness/manifest.json: the tracked contract of a
// repository's harness. The store keeps run history for it, never the
// manifest itself.
type Manifest struct {
	Schema        string      `json:"schema"`
	Owner         string      `json:"owner"`
	GeneratedBy   string      `json:"generatedBy"`
	RepoProfileID string      `json:"repoProfileId"`
	RiskFamilies  []string    `json:"riskFamilies"`
	Kits          []string    `json:"kits,omitempty"`
	Commands      []Command   `json:"commands"`
	EvalSuites    []EvalSuite `json:"evalSuites"`
	// Files are the files the tool wrote, with the hash of what it
	// wrote: a file is the tool's to replace only while its content
	// still has that hash. An edit makes it the user's.
	Files []OwnedFile `json:"files,omitempty"`
}

// Command is a gate: a shell command run from the repository root.
type Command struct {
	ID             string `json:"id"`
	Command        string `json:"command"`
	Phase          string `json:"phase"`
	Blocks         bool   `json:"blocks"`
	TimeoutSeconds int    `json:"timeoutSeconds"`
	Kit            string `json:"kit,omitempty"`
}

// EvalSuite is a JSONL file of eval cases. Threshold is the share of
// cases whose blocking assertions must all pass.
type EvalSuite struct {
	ID        string  `json:"id"`
	Path      string  `json:"path"`
	Runner    string  `json:"runner"`
	Threshold float64 `json:"threshold"`
	Phase     string  `json:"phase,omitempty"`
	Kit       string  `json:"kit,omitempty"`
}

// OwnedFile is a file the tool wrote.
type OwnedFile struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
	Kit    string `json:"kit,omitempty"`
}

func (m *Manifest) owned() map[string]string {
	o := map[string]string{}
	if m.Owner != Owner {
		return o
	}
	for _, f := range m.Files {
		o[f.Path] = "sha256:" + f.SHA256
	}
	return o
}

// ReadManifest reads and checks root/harness/manifest.json. A missing
// manifest is an error wrapping fs.ErrNotExist.
func ReadManifest(root string) (*Manifest, error) {
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(ManifestPath)))
	if err != nil {
		return nil, err
	}
	return ParseManifest(data, ManifestPath)
}

var idRe = regexp.MustCompile(`^[a-z0-9][a-z0-9_.-]*$`)

// ParseManifest decodes and checks a manifest, reporting every problem
// with the file and JSON path.
func ParseManifest(data []byte, file string) (*Manifest, error) {
	// trace.ParseJSON first: the Decoder below stops after one value, so
	// it would accept text after the manifest, and its syntax errors have
	// no line and column.
	if _, err := trace.ParseJSON(data, file, 1); err != nil {
		return nil, err
	}
	// DisallowUnknownFields does not refuse "Command" or "ſtatus":
	// encoding/json takes them for "command" and "status", and the
	// last one wins over the gate a reviewer read.
	if errs := trace.CheckNames(data, file, 1, new(Manifest)); len(errs) > 0 {
		return nil, errs
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var m Manifest
	if err := dec.Decode(&m); err != nil {
		return nil, trace.ErrorList{{File: file, Path: "$", Msg: "decoding manifest: " + err.Error()}}
	}
	var errs trace.ErrorList
	bad := func(p, format string, args ...any) {
		errs = append(errs, &trace.Error{File: file, Path: p, Msg: fmt.Sprintf(format, args...)})
	}
	if m.Schema != ManifestSchema {
		bad("$.schema", "schema %q, want %q", m.Schema, ManifestSchema)
	}
	for i, f := range m.RiskFamilies {
		if !slices.Contains(Families, f) {
			bad(fmt.Sprintf("$.riskFamilies[%d]", i), "unknown risk family %q", f)
		}
	}
	ids := map[string]bool{}
	for i, c := range m.Commands {
		p := fmt.Sprintf("$.commands[%d]", i)
		switch {
		case !idRe.MatchString(c.ID):
			bad(p+".id", "id %q is not lowercase letters, digits, '.', '_' or '-'", c.ID)
		case ids[c.ID]:
			bad(p+".id", "duplicate id %q", c.ID)
		}
		ids[c.ID] = true
		if strings.TrimSpace(c.Command) == "" {
			bad(p+".command", "empty command")
		}
		if !idRe.MatchString(c.Phase) {
			bad(p+".phase", "phase %q is not lowercase letters, digits, '.', '_' or '-'", c.Phase)
		}
		if c.TimeoutSeconds < 0 {
			bad(p+".timeoutSeconds", "negative timeout %d", c.TimeoutSeconds)
		}
	}
	for i, s := range m.EvalSuites {
		p := fmt.Sprintf("$.evalSuites[%d]", i)
		switch {
		case !idRe.MatchString(s.ID):
			bad(p+".id", "id %q is not lowercase letters, digits, '.', '_' or '-'", s.ID)
		case ids[s.ID]:
			bad(p+".id", "duplicate id %q", s.ID)
		}
		ids[s.ID] = true
		if err := checkRel(s.Path); err != nil {
			bad(p+".path", "%v", err)
		}
		if s.Runner != RunnerEval {
			bad(p+".runner", "runner %q, want %q", s.Runner, RunnerEval)
		}
		if s.Threshold < 0 || s.Threshold > 1 {
			bad(p+".threshold", "threshold %v outside [0, 1]", s.Threshold)
		}
	}
	for i, f := range m.Files {
		p := fmt.Sprintf("$.files[%d]", i)
		if err := checkRel(f.Path); err != nil {
			bad(p+".path", "%v", err)
		}
		if _, err := hex.DecodeString(f.SHA256); err != nil || len(f.SHA256) != 64 {
			bad(p+".sha256", "not a hex sha256")
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return &m, nil
}

// checkRel refuses paths that leave the repository.
func checkRel(p string) error {
	switch {
	case p == "":
		return fmt.Errorf("empty path")
	case path.IsAbs(p) || filepath.IsAbs(p) || strings.Contains(p, `\`):
		return fmt.Errorf("path %q is not relative with '/'", p)
	case path.Clean(p) != p || p == ".." || strings.HasPrefix(p, "../"):
		return fmt.Errorf("path %q is not clean or leaves the repository", p)
	}
	return nil
}

// Encode writes the manifest as indented JSON with a final newline.
func (m *Manifest) Encode() []byte {
	b, _ := json.MarshalIndent(m, "", "  ") // a Manifest always marshals
	return append(b, '\n')
}

// ManifestHash is the hash the ledger records a run's manifest by.
func ManifestHash(data []byte) string { return "sha256:" + hashBytes(data) }
