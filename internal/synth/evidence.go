package synth

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/crystallize-dev/crystallize/internal/atomicfile"
	"github.com/crystallize-dev/crystallize/internal/redact"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// Evidence bundle format.
const (
	EvidenceSchema        = "crystallize.synth.evidence"
	EvidenceSchemaVersion = 1
	ManifestFile          = "manifest.json"
)

// Manifest is manifest.json of an evidence bundle: the provenance of an
// experiment's result. Code files are listed with the sha256 of the code
// that ran (before redaction), so a reader can tell whether a redacted
// file still is that code.
type Manifest struct {
	Schema        string          `json:"schema"`
	SchemaVersion int             `json:"schema_version"`
	Claim         Claim           `json:"claim"`
	Spec          json.RawMessage `json:"spec"`
	Code          []EvidenceCode  `json:"code"`
	ModelCalls    []ModelCall     `json:"model_calls"`
	// Replicates holds, per replicate, each condition's metrics.
	Replicates []map[string]map[string]any `json:"replicates"`
	Checks     []Check                     `json:"checks"`
	Hypotheses []Verdict                   `json:"hypotheses"`
	Stopped    *CapsuleError               `json:"stopped,omitempty"`
	Pass       bool                        `json:"pass"`
	Capsule    EvidenceCapsule             `json:"capsule"`
	// Files lists every other file of the bundle with its sha256.
	Files map[string]string `json:"files"`
	// Redactions counts the private values removed when writing.
	Redactions int `json:"redactions"`
}

// EvidenceCode is one condition's code in the bundle.
type EvidenceCode struct {
	Condition  string `json:"condition"`
	File       string `json:"file"`
	Entrypoint string `json:"entrypoint"`
	SHA256     string `json:"sha256"`
}

// EvidenceCapsule records the bounds the code ran under.
type EvidenceCapsule struct {
	Resources      Resources `json:"resources"`
	StepsPerSecond int       `json:"steps_per_second"`
	Isolation      string    `json:"isolation"`
}

// WriteEvidence writes rep as an evidence bundle directory at dir,
// replacing what was there: manifest.json, spec.json, claim.json,
// metrics.json and code/<condition>.star. Every file is redacted like a
// crystallization bundle; the directory appears complete or not at all
// (it is written beside dir and renamed).
//
// Only an empty directory or an earlier evidence bundle is replaced: dir
// comes from --out, and removing whatever a mistyped path names would
// delete files the user never gave the tool.
func WriteEvidence(dir string, rep *Report) error {
	if err := replaceable(dir); err != nil {
		return fmt.Errorf("writing evidence: %w", err)
	}
	m := &Manifest{
		Schema: EvidenceSchema, SchemaVersion: EvidenceSchemaVersion,
		Claim: rep.Claim, ModelCalls: rep.ModelCalls, Checks: rep.Checks, Hypotheses: rep.Hypotheses,
		Stopped: rep.Stopped, Pass: rep.Pass(), Files: map[string]string{},
		Capsule: EvidenceCapsule{Resources: rep.Spec.Resources.WithDefaults(), StepsPerSecond: StepsPerSecond, Isolation: rep.Isolation},
	}
	if m.ModelCalls == nil {
		m.ModelCalls = []ModelCall{}
	}
	if m.Checks == nil {
		m.Checks = []Check{}
	}
	if m.Hypotheses == nil {
		m.Hypotheses = []Verdict{}
	}
	for r := 0; r < rep.Replicates; r++ {
		row := map[string]map[string]any{}
		for _, c := range rep.Conditions {
			vals := map[string]any{}
			for k, v := range c.Metrics {
				if r < len(v) {
					vals[k] = v[r]
				}
			}
			row[c.Name] = vals
		}
		m.Replicates = append(m.Replicates, row)
	}
	// The files are collected, then written and swapped in whole by
	// atomicfile.ReplaceDir, which syncs them before the swap.
	contents := map[string][]byte{}
	write := func(name string, data []byte) error {
		m.Files[name] = sha(string(data))
		contents[name] = data
		return nil
	}
	writeJSON := func(name string, v any) ([]byte, error) {
		b, n, err := redactedJSON(v)
		if err != nil {
			return nil, err
		}
		m.Redactions += n
		return b, write(name, b)
	}
	specValue := rep.Spec
	if specValue.AllowedImports == nil {
		specValue.AllowedImports = []string{}
	}
	if specValue.Properties == nil {
		specValue.Properties = []Property{}
	}
	if specValue.Contracts == nil {
		specValue.Contracts = []string{}
	}
	spec, err := writeJSON("spec.json", specValue)
	if err != nil {
		return fmt.Errorf("writing evidence: %w", err)
	}
	m.Spec = json.RawMessage(bytes.TrimSpace(spec))
	if _, err := writeJSON("claim.json", rep.Claim); err != nil {
		return fmt.Errorf("writing evidence: %w", err)
	}
	if _, err := writeJSON("metrics.json", rep.Samples()); err != nil {
		return fmt.Errorf("writing evidence: %w", err)
	}
	for _, c := range rep.Conditions {
		name := "code/" + c.Name + ".star"
		src, n := redactText(c.Source)
		m.Redactions += n
		if err := write(name, []byte(src)); err != nil {
			return fmt.Errorf("writing evidence: %w", err)
		}
		m.Code = append(m.Code, EvidenceCode{Condition: c.Name, File: name, Entrypoint: c.Entrypoint, SHA256: c.SHA256})
	}
	files := m.Files
	m.Files = nil
	// The manifest's own redactions are counted in a first pass and the
	// manifest encoded in a second, so the count it states is final.
	_, n, err := redactedJSON(m)
	if err != nil {
		return fmt.Errorf("writing evidence: %w", err)
	}
	m.Files, m.Redactions = files, m.Redactions+n
	b, _, err := redactedJSON(m)
	if err != nil {
		return fmt.Errorf("writing evidence: %w", err)
	}
	contents[ManifestFile] = b
	names := make([]string, 0, len(contents))
	for name := range contents {
		names = append(names, name)
	}
	sort.Strings(names)
	err = atomicfile.ReplaceDir(dir, func(tmp string) error {
		for _, name := range names {
			p := filepath.Join(tmp, filepath.FromSlash(name))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(p, contents[name], 0o644); err != nil {
				return err
			}
		}
		// dir is checked again last: it may have become something that
		// is not an evidence bundle while this one was written.
		return replaceable(dir)
	})
	if err != nil {
		return fmt.Errorf("writing evidence: %w", err)
	}
	return nil
}

// replaceable reports whether WriteEvidence may replace dir: it does not
// exist, is an empty directory, or holds an evidence manifest.
func replaceable(dir string) error {
	fi, err := os.Lstat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	case !fi.IsDir():
		return fmt.Errorf("%s exists and is not a directory", dir)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	if len(entries) == 0 {
		return nil
	}
	var m struct {
		Schema string `json:"schema"`
	}
	data, err := os.ReadFile(filepath.Join(dir, ManifestFile))
	// "Schema" is not the marker, though encoding/json would read it so.
	if err == nil && json.Unmarshal(data, &m) == nil && len(trace.CheckNames(data, "", 0, &m)) == 0 && m.Schema == EvidenceSchema {
		return nil
	}
	return fmt.Errorf("%s is not empty and not an evidence bundle; refusing to replace it", dir)
}

// redactedJSON encodes v, redacts it and indents it for reading.
func redactedJSON(v any) ([]byte, int, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, 0, err
	}
	red, n, err := redact.Bytes(raw)
	if err != nil {
		return nil, 0, err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, red, "", "  "); err != nil {
		return nil, 0, err
	}
	out.WriteByte('\n')
	return out.Bytes(), n, nil
}

// redactText redacts a text file (code) as redact.Value redacts a string:
// a secret inside the text becomes "[redacted:<kind>]".
func redactText(s string) (string, int) {
	out, n := redact.Value(s)
	if r, ok := out.(string); ok {
		return r, n
	}
	return s, 0
}
