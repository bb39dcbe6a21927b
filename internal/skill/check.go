package skill

// Checking a SKILL.md, generated or hand-written, and its gate.json.

import (
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// Codes of the problems Check reports.
const (
	CodeFrontmatter     = "skill_frontmatter"
	CodeUnknownKey      = "skill_unknown_key"
	CodeName            = "skill_name"
	CodeNameDirMismatch = "skill_name_dir_mismatch"
	CodeDescription     = "skill_description"
	CodeCompatibility   = "skill_compatibility"
	CodeAllowedTools    = "skill_allowed_tools"
	CodeMetadata        = "skill_metadata"
	CodeGateMismatch    = "skill_gate_mismatch"
	CodeGateRejected    = "skill_gate_rejected"
)

// Check validates a SKILL.md against the Agent Skills specification
// and, when gate is not nil, against its replay-gate receipt. dir is the
// skill's directory (its base name is compared with the skill name; "" skips
// that check). It reports every problem found, in document order, each with
// a stable code:
//
//   - skill_frontmatter: no frontmatter, YAML that does not parse, a
//     duplicate or complex key, an anchor, alias or tag, or a license that
//     is not a string;
//   - skill_unknown_key: a top-level key other than name, description,
//     license, compatibility, metadata and allowed-tools;
//   - skill_name: a name missing, not a string, longer than 64 characters
//     or not matching ^[a-z0-9]+(-[a-z0-9]+)*$;
//   - skill_name_dir_mismatch: a name other than the directory's;
//   - skill_description: a description missing, not a string, empty or
//     longer than 1024 characters;
//   - skill_compatibility: a compatibility that is not a string of 1 to 500
//     characters;
//   - skill_allowed_tools: allowed-tools that is not one string;
//   - skill_metadata: metadata that is not a mapping of strings to strings;
//   - skill_gate_mismatch: gate.json that does not parse, is not a skill
//     gate, or names another skill, skill id, candidate or decision;
//   - skill_gate_rejected: a gate, or the skill's own gate_decision, that
//     is not "accepted".
//
// Lengths count characters (runes), as the specification does.
func Check(dir string, src []byte, gate []byte) []candidate.Problem {
	var probs []candidate.Problem
	report := func(code, path, format string, args ...any) {
		probs = append(probs, candidate.Problem{Code: code, Path: path, Message: fmt.Sprintf(format, args...)})
	}
	doc, err := parseFrontmatter(src)
	if err != nil {
		report(CodeFrontmatter, "", "%v", err)
		return probs
	}
	fields := map[string]*yamlValue{}
	for _, p := range doc {
		fields[p.key] = p.val
	}
	for _, p := range doc {
		switch p.key {
		case "name", "description", "license", "compatibility", "metadata", "allowed-tools":
		default:
			report(CodeUnknownKey, p.key, "line %d: unknown top-level key %q; the specification allows name, description, license, compatibility, metadata and allowed-tools (put other fields under metadata)", p.line, p.key)
		}
	}

	name, nameOK := "", false
	switch v := fields["name"]; {
	case v == nil:
		report(CodeName, "name", "missing name")
	case v.typ != yamlString:
		report(CodeName, "name", "line %d: name is a %s, not a string", v.line, v.typ)
	case utf8.RuneCountInString(v.str) > candidate.MaxSkillNameLen:
		report(CodeName, "name", "line %d: name has %d characters; at most %d are allowed", v.line, utf8.RuneCountInString(v.str), candidate.MaxSkillNameLen)
	case !skillNamePattern.MatchString(v.str):
		report(CodeName, "name", "line %d: name %q is not lowercase letters and digits in groups joined by single hyphens", v.line, v.str)
	default:
		name, nameOK = v.str, true
	}
	if base := path.Base(strings.ReplaceAll(dir, `\`, "/")); nameOK && dir != "" && base != name {
		report(CodeNameDirMismatch, "name", "name %q differs from its directory %q", name, base)
	}

	switch v := fields["description"]; {
	case v == nil:
		report(CodeDescription, "description", "missing description")
	case v.typ != yamlString:
		report(CodeDescription, "description", "line %d: description is a %s, not a string", v.line, v.typ)
	case strings.TrimSpace(v.str) == "":
		report(CodeDescription, "description", "line %d: description is empty", v.line)
	case utf8.RuneCountInString(v.str) > MaxDescriptionLen:
		report(CodeDescription, "description", "line %d: description has %d characters; at most %d are allowed", v.line, utf8.RuneCountInString(v.str), MaxDescriptionLen)
	}
	if v := fields["license"]; v != nil && v.typ != yamlString {
		report(CodeFrontmatter, "license", "line %d: license is a %s, not a string", v.line, v.typ)
	}
	switch v := fields["compatibility"]; {
	case v == nil:
	case v.typ != yamlString:
		report(CodeCompatibility, "compatibility", "line %d: compatibility is a %s, not a string", v.line, v.typ)
	case v.str == "" || utf8.RuneCountInString(v.str) > MaxCompatibilityLen:
		report(CodeCompatibility, "compatibility", "line %d: compatibility has %d characters; it must have 1 to %d", v.line, utf8.RuneCountInString(v.str), MaxCompatibilityLen)
	}

	meta := map[string]string{}
	if v := fields["metadata"]; v != nil {
		if v.typ != yamlMapping {
			report(CodeMetadata, "metadata", "line %d: metadata is a %s, not a mapping", v.line, v.typ)
		}
		for _, p := range v.pairs {
			if p.val.typ != yamlString {
				report(CodeMetadata, "metadata."+p.key, "line %d: metadata value %q is a %s, not a string (quote it)", p.line, p.key, p.val.typ)
				continue
			}
			meta[p.key] = p.val.str
		}
	}
	if v := fields["allowed-tools"]; v != nil && v.typ != yamlString {
		report(CodeAllowedTools, "allowed-tools", "line %d: allowed-tools is a %s; it must be one space-separated string", v.line, v.typ)
	}

	rejected := false
	if d, ok := meta["gate_decision"]; ok && d != GateAccepted {
		report(CodeGateRejected, "metadata.gate_decision", "the skill's replay gate decision is %q, not %q", d, GateAccepted)
		rejected = true
	}
	if gate == nil {
		return probs
	}
	var g Gate
	if err := json.Unmarshal(gate, &g); err != nil {
		report(CodeGateMismatch, "gate.json", "gate.json: %v", err)
		return probs
	}
	// A duplicate or case-folded member would make the gate say what
	// its reader did not see.
	if errs := trace.CheckNames(gate, "gate.json", 0, &g); len(errs) > 0 {
		for _, e := range errs {
			report(CodeGateMismatch, fmt.Sprintf("gate.json:%s", e.Path), "gate.json:%d: %s", e.Line, e.Msg)
		}
		return probs
	}
	if g.Schema != GateSchema || g.SchemaVersion != GateSchemaVersion {
		report(CodeGateMismatch, "gate.json:$.schema", "gate.json is %q version %d, not %q version %d", g.Schema, g.SchemaVersion, GateSchema, GateSchemaVersion)
		return probs
	}
	agree := func(field, gateValue, key, skillValue string) {
		if gateValue != skillValue {
			report(CodeGateMismatch, key, "SKILL.md %s is %q but gate.json %s is %q", key, skillValue, field, gateValue)
		}
	}
	if nameOK {
		agree("skill_name", g.SkillName, "name", name)
	}
	agree("skill_id", g.SkillID, "metadata.skill_id", meta["skill_id"])
	agree("workflow_candidate_id", g.WorkflowCandidateID, "metadata.workflow_candidate_id", meta["workflow_candidate_id"])
	if d, ok := meta["gate_decision"]; ok {
		agree("decision", g.Decision, "metadata.gate_decision", d)
	}
	if !rejected && !g.Accepted() {
		report(CodeGateRejected, "gate.json:$.decision", "gate.json decision is %q with %d rejection reasons; only accepted skills ship", g.Decision, len(g.RejectionReasons))
	}
	return probs
}

// Reading the frontmatter. parseFrontmatter reads the YAML between the
// opening and closing "---" lines of a SKILL.md with yaml.v3's node API,
// which keeps each value's line, its resolved tag and whether it carries
// an anchor, an alias or an explicit tag. The checks need only the
// top-level keys, the keys of metadata, and each value's type, text and
// line, so the nodes are reduced to yamlPairs. Anchors, aliases and tags
// are refused with a positioned error rather than followed: a skill is
// read by agents that may not resolve them the same way. Plain scalars are
// typed as yaml.v3 resolves them, so that `version: 1.0` counts as a
// number.

// yamlType is the type of a value, as reported in messages.
type yamlType string

const (
	yamlString   yamlType = "string"
	yamlNumber   yamlType = "number"
	yamlBool     yamlType = "boolean"
	yamlNull     yamlType = "null"
	yamlMapping  yamlType = "mapping"
	yamlSequence yamlType = "sequence"
)

// yamlValue is a parsed value: a string's text, or a mapping's pairs.
type yamlValue struct {
	typ   yamlType
	str   string
	line  int
	pairs []yamlPair
}

// yamlPair is one key of a mapping, with the line it is on.
type yamlPair struct {
	key  string
	val  *yamlValue
	line int
}

// lineError is a frontmatter problem at a line of SKILL.md.
type lineError struct {
	line int
	msg  string
}

func (e *lineError) Error() string {
	if e.line == 0 {
		return e.msg
	}
	return fmt.Sprintf("line %d: %s", e.line, e.msg)
}

// parseFrontmatter returns the top-level pairs of the frontmatter of src.
func parseFrontmatter(src []byte) ([]yamlPair, error) {
	text := strings.ReplaceAll(string(src), "\r\n", "\n")
	if !utf8.ValidString(text) {
		return nil, &lineError{0, "SKILL.md is not valid UTF-8"}
	}
	raw := strings.Split(text, "\n")
	if len(raw) == 0 || strings.TrimRight(raw[0], " ") != "---" {
		return nil, &lineError{1, `no frontmatter: SKILL.md must start with a "---" line`}
	}
	end := -1
	for i := 1; i < len(raw); i++ {
		if strings.TrimRight(raw[i], " ") == "---" {
			end = i
			break
		}
	}
	if end < 0 {
		return nil, &lineError{1, `frontmatter is not closed by a "---" line`}
	}
	// The frontmatter starts on line 2 of the file.
	const offset = 1
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(strings.Join(raw[1:end], "\n")), &doc); err != nil {
		return nil, yamlError(err, offset, end)
	}
	if len(doc.Content) == 0 {
		return nil, &lineError{1, "frontmatter is empty"}
	}
	root := doc.Content[0]
	v, err := nodeValue(root, offset)
	if err != nil {
		return nil, err
	}
	if v.typ != yamlMapping {
		return nil, &lineError{v.line, fmt.Sprintf("frontmatter is a %s, not a mapping", v.typ)}
	}
	if len(v.pairs) == 0 {
		return nil, &lineError{1, "frontmatter is empty"}
	}
	return v.pairs, nil
}

// yamlLine finds the line in a yaml.v3 error message.
var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// yamlError turns a yaml.v3 error into a lineError on the line of
// SKILL.md, at most last (the closing "---").
func yamlError(err error, offset, last int) error {
	msg := err.Error()
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		n, _ := strconv.Atoi(m[1])
		return &lineError{min(n+offset, last), m[2]}
	}
	return &lineError{0, strings.TrimPrefix(msg, "yaml: ")}
}

// nodeValue reduces n to a yamlValue whose lines are lines of SKILL.md.
func nodeValue(n *yaml.Node, offset int) (*yamlValue, error) {
	line := n.Line + offset
	if n.Kind == yaml.AliasNode || n.Anchor != "" || n.Style&yaml.TaggedStyle != 0 {
		return nil, &lineError{line, "anchors, aliases and tags are not supported"}
	}
	v := &yamlValue{line: line}
	switch n.Kind {
	case yaml.ScalarNode:
		v.str = n.Value
		switch n.ShortTag() {
		case "!!int", "!!float":
			v.typ = yamlNumber
		case "!!bool":
			v.typ = yamlBool
		case "!!null":
			v.typ, v.str = yamlNull, ""
		default:
			v.typ = yamlString
		}
	case yaml.SequenceNode:
		v.typ = yamlSequence
		for _, c := range n.Content {
			if _, err := nodeValue(c, offset); err != nil {
				return nil, err
			}
		}
	case yaml.MappingNode:
		v.typ = yamlMapping
		seen := map[string]bool{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, val := n.Content[i], n.Content[i+1]
			kline := k.Line + offset
			if k.Kind != yaml.ScalarNode {
				return nil, &lineError{kline, "complex keys are not supported"}
			}
			if k.Anchor != "" || k.Style&yaml.TaggedStyle != 0 {
				return nil, &lineError{kline, "anchors, aliases and tags are not supported"}
			}
			if seen[k.Value] {
				return nil, &lineError{kline, fmt.Sprintf("duplicate key %q", k.Value)}
			}
			seen[k.Value] = true
			pv, err := nodeValue(val, offset)
			if err != nil {
				return nil, err
			}
			// A value is placed on its key's line: a block value below
			// the key is the key's value, and messages name the key.
			pv.line = kline
			v.pairs = append(v.pairs, yamlPair{key: k.Value, val: pv, line: kline})
		}
	default:
		return nil, &lineError{line, "unsupported YAML node"}
	}
	return v, nil
}

func asciiLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
