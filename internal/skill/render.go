package skill

// This file projects a candidate into a skill for agents: a SKILL.md in the
// open Agent Skills format (agentskills.io). gate.go decides whether it
// may ship and writes the receipt, gate.json; check.go validates both.
//
// The frontmatter is YAML. This file writes the small part of YAML a
// SKILL.md needs itself (a block mapping of double-quoted strings, one
// level of nesting for metadata), and check.go reads frontmatter back
// with yaml.v3 (see parseFrontmatter). Writing only double-quoted
// scalars, with every character a YAML reader could misread escaped, is
// what makes hostile text safe: no value can end its scalar early, start
// a new key, or change type.

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/mdtext"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// Limits of the Agent Skills specification.
const (
	MaxDescriptionLen    = 1024
	MaxCompatibilityLen  = 500
	maxShortRunes        = 200
	maxSkillMetadataList = 20
)

// skillNamePattern is the specification's rule for a skill name: lowercase
// ASCII letters and digits in groups joined by single hyphens.
var skillNamePattern = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// Workflow names the workflow a skill projects. Code generation names it
// (codegen.FuncName) and its callers pass the names here, so that this
// package depends on the candidate alone and a skill, its gate and its
// workflow still agree on one name.
type Workflow struct {
	// Func is the name of the function the workflow defines, as
	// codegen.FuncName returns it for the candidate and the options
	// the workflow was generated with. Render requires it.
	Func string
	// Package, when set, is the package the workflow is meant for
	// (codegen.Options.PackageName); the skill's scope names it.
	Package string
}

// Render writes the SKILL.md of c under the replay gate g: frontmatter
// with only the specification's keys (name, description, compatibility,
// metadata, allowed-tools; license when one is set), then a markdown body
// with the scope, the procedure step by step, the parameters, the
// evidence, the gate decision and generalization guidance.
//
// A rejected gate renders too (the report keeps rejected skills for
// review); Check reports it as skill_gate_rejected. Render fails when w
// names no function, or when the gate is not the gate of this candidate
// and workflow: a different candidate id, skill id
// (candidate.SkillID(c.ID, w.Func)) or skill name. Whatever it returns
// passes Check(candidate.SkillName(c), out, nil) apart from that one
// finding for a rejected gate.
func Render(c *candidate.Candidate, g Gate, w Workflow) ([]byte, error) {
	return renderSkill(c, g, w, "")
}

// Activation returns what the SKILL.md that Render writes for c, g and w
// tells an agent about when to use it: the frontmatter's name,
// description, short title, when_to_use, allowed tools and paths, the
// same strings, so that a report can show them without the file.
func Activation(c *candidate.Candidate, g Gate, w Workflow) candidate.SkillActivation {
	s := &skill{c: c, g: g, w: w, name: candidate.SkillName(c)}
	fm := s.frontmatter("")
	return candidate.SkillActivation{
		Name:         fm.Name,
		Description:  fm.Description,
		Short:        fm.Metadata["short"],
		WhenToUse:    fm.Metadata["when_to_use"],
		AllowedTools: orEmpty(s.tools()),
		Paths:        orEmpty(s.paths()),
	}
}

func orEmpty(xs []string) []string {
	if xs == nil {
		return []string{}
	}
	return xs
}

// renderSkill is Render with a license. Workflow has no license field
// yet; when it gets one, Render passes it here.
func renderSkill(c *candidate.Candidate, g Gate, w Workflow, license string) ([]byte, error) {
	if c == nil {
		return nil, fmt.Errorf("no candidate")
	}
	if w.Func == "" {
		return nil, fmt.Errorf("skill for candidate %s: no workflow function name", c.ID)
	}
	var errs []string
	if g.WorkflowCandidateID != c.ID {
		errs = append(errs, fmt.Sprintf("gate is for candidate %q, not %q", g.WorkflowCandidateID, c.ID))
	}
	if want := candidate.SkillID(c.ID, w.Func); g.SkillID != want {
		errs = append(errs, fmt.Sprintf("gate skill id %q, want %q", g.SkillID, want))
	}
	if want := candidate.SkillName(c); g.SkillName != want {
		errs = append(errs, fmt.Sprintf("gate skill name %q, want %q", g.SkillName, want))
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("skill for candidate %s: %s", c.ID, strings.Join(errs, "; "))
	}
	s := &skill{c: c, g: g, w: w, name: candidate.SkillName(c)}
	var b strings.Builder
	writeFrontmatter(&b, s.frontmatter(license))
	s.body(&b)
	return []byte(b.String()), nil
}

// skill holds what rendering one SKILL.md needs.
type skill struct {
	c    *candidate.Candidate
	g    Gate
	w    Workflow
	name string // the skill name
}

// frontmatter is the YAML header of a SKILL.md as this package writes it.
// Every field is a string; Metadata is written with sorted keys.
type frontmatter struct {
	Name          string
	Description   string
	License       string
	Compatibility string
	Metadata      map[string]string
	AllowedTools  string
}

// frontmatter computes the header fields.
func (s *skill) frontmatter(license string) frontmatter {
	c := s.c
	steps := s.stepNames()
	var params []string
	for _, p := range c.Parameters {
		params = append(params, p.Name)
	}

	desc := fmt.Sprintf("Runs the %s procedure", candidate.OneLine(s.w.Func))
	if len(steps) > 0 {
		desc += " (" + sequence(steps, ", then ") + ")"
	}
	desc += fmt.Sprintf(", crystallized from %d agent %s and checked by replay.", len(c.Examples), plural(len(c.Examples), "trace", "traces"))
	if len(params) > 0 {
		desc += " Use it when a task asks for the same outcome with new values for " + sequence(params, " and ") + "."
	} else {
		desc += " Use it when a task asks for the same outcome."
	}
	// The goal a person gave the agent says best when to use the skill;
	// it comes last, so that a long one is what the limit cuts.
	if goal := strings.Join(strings.Fields(c.Description), " "); goal != "" {
		desc += " Goal: " + goal
	}
	desc = truncateRunes(desc, MaxDescriptionLen)

	short := candidate.OneLine(s.w.Func)
	if len(steps) > 0 {
		short += ": " + strings.Join(steps, " → ")
	}
	short = truncateRunes(short, maxShortRunes)

	when := fmt.Sprintf("A task asks for the outcome of workflow %s", candidate.OneLine(s.w.Func))
	if len(params) > 0 {
		when += " with its own values for " + sequence(params, " and ")
	}
	when += fmt.Sprintf("; the replay gate compared it on %d held-out %s.", s.g.HeldoutReplay.Compared,
		plural(s.g.HeldoutReplay.Compared, "trace", "traces"))

	var source, heldout []string
	for _, t := range s.evidence() {
		if t.Role == RoleSource {
			source = append(source, candidate.OneLine(t.TraceID))
		} else {
			heldout = append(heldout, candidate.OneLine(t.TraceID))
		}
	}
	evidence := "source: " + listOrNone(source) + "; heldout: " + listOrNone(heldout)

	tools := s.tools()
	compat := "crystallize workflow runtime; tools: " + listOrNone(tools)
	if caps := s.c.DeclaredCapabilities(); len(caps) > 0 {
		compat += "; capabilities: " + candidate.JoinNames(caps)
	}
	compat = truncateRunes(compat, MaxCompatibilityLen)

	fm := frontmatter{
		Name:          s.name,
		Description:   desc,
		License:       candidate.OneLine(license),
		Compatibility: compat,
		Metadata: map[string]string{
			"short":                 short,
			"when_to_use":           when,
			"evidence":              evidence,
			"gate_decision":         candidate.OneLine(s.g.Decision),
			"skill_id":              s.g.SkillID,
			"workflow_candidate_id": c.ID,
			"workflow":              s.w.Func,
			"confidence":            strconv.FormatFloat(c.Confidence, 'f', 2, 64),
		},
		AllowedTools: strings.Join(tools, " "),
	}
	if paths := s.paths(); len(paths) > 0 {
		fm.Metadata["paths"] = strings.Join(paths, ",")
	}
	return fm
}

// stepNames returns the one-line titles of the steps.
func (s *skill) stepNames() []string {
	var names []string
	for _, st := range s.c.Steps {
		names = append(names, candidate.OneLine(candidate.StepTitle(st)))
	}
	return names
}

// tools returns the sorted, distinct names of the tools the steps call, as
// allowed-tools lists them. A name that would not survive the
// space-separated list (empty, or with white space or non-printing
// characters) is left out; the procedure still names it.
func (s *skill) tools() []string {
	var tools []string
	for _, st := range s.c.Steps {
		switch candidate.StepCall(st) {
		case candidate.CallTool:
			if toolToken(st.Name) {
				tools = append(tools, st.Name)
			}
		case candidate.CallExec:
			// An agent runs a command step through its shell tool; the
			// entry allows that one program (Claude Code's Bash(git:*)
			// form), never a shell in general.
			if p := candidate.ArgvProgram(st.Argv); toolToken(p) && !strings.ContainsAny(p, "():*") {
				tools = append(tools, "Bash("+p+":*)")
			}
		}
	}
	slices.Sort(tools)
	return slices.Compact(tools)
}

// toolToken reports whether name can stand as one entry of allowed-tools.
func toolToken(name string) bool {
	if name == "" || !utf8.ValidString(name) {
		return false
	}
	for _, r := range name {
		if unicode.IsSpace(r) || !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}

// paths returns the file paths and targets the candidate touches, sorted
// and distinct: side-effect targets and string constants of path-like
// keys (path, file, dir, glob, manifest) that look like a relative path
// (see looksLikePath). A constant under another key ("crates.io" as a
// release target) is a value, not a place. Absolute paths and URLs name
// one machine or service and would teach the model trace-specific values.
func (s *skill) paths() []string {
	var paths []string
	add := func(v string) {
		if looksLikePath(v) {
			paths = append(paths, v)
		}
	}
	for _, st := range s.c.Steps {
		for _, a := range st.Arguments {
			if v, ok := a.Value.(string); ok && a.Kind == candidate.ArgConstant && pathKey(a.Key) {
				add(v)
			}
		}
		for _, se := range st.SideEffects {
			add(se.Target)
		}
	}
	slices.Sort(paths)
	paths = slices.Compact(paths)
	if len(paths) > maxSkillMetadataList {
		paths = paths[:maxSkillMetadataList]
	}
	return paths
}

// pathKey reports whether an argument key names a file system location.
func pathKey(key string) bool {
	k := strings.ToLower(key)
	for _, w := range []string{"path", "file", "dir", "glob", "manifest"} {
		if strings.Contains(k, w) {
			return true
		}
	}
	return false
}

// looksLikePath reports whether v reads as a relative file path or glob:
// it has a slash, a dot or a leading "*", is one printable line without
// commas (the metadata list separator) or spaces, and is neither absolute
// nor a URL.
func looksLikePath(v string) bool {
	if v == "" || len(v) > candidate.MaxTextRunes || candidate.OneLine(v) != v || strings.ContainsAny(v, ", \\") {
		return false
	}
	switch {
	case strings.Contains(v, "://"), strings.HasPrefix(v, "/"), strings.HasPrefix(v, "~"),
		len(v) >= 2 && v[1] == ':' && asciiLetter(v[0]):
		return false
	}
	return strings.ContainsAny(v, "/.") || strings.HasPrefix(v, "*")
}

// evidence returns the traces to cite: the gate's compared traces, then
// the candidate's examples the gate did not compare (as source traces
// with status "not compared"), sorted like the gate's list. A compared
// trace without a hash takes its example's.
func (s *skill) evidence() []GateTrace {
	out := slices.Clone(s.g.ComparedTraces)
	index := map[string]int{}
	for i, t := range out {
		index[t.TraceID] = i
	}
	for _, ex := range s.c.Examples {
		i, ok := index[ex.TraceID]
		if !ok {
			index[ex.TraceID] = len(out)
			out = append(out, GateTrace{TraceID: ex.TraceID, SourceHash: ex.SourceHash, Role: RoleSource, Status: "not compared"})
			continue
		}
		if out[i].SourceHash == "" {
			out[i].SourceHash = ex.SourceHash
		}
	}
	slices.SortStableFunc(out, compareGateTraces)
	return out
}

// body writes the markdown after the frontmatter.
func (s *skill) body(b *strings.Builder) {
	c := s.c
	fmt.Fprintf(b, "\n# %s\n\n", mdText(s.name))
	fmt.Fprintf(b, "Crystallized from %d %s as workflow %s (candidate %s, skill %s). Replay gate: **%s**.\n\n",
		len(c.Examples), plural(len(c.Examples), "trace", "traces"), mdCode(s.w.Func), mdCode(c.ID), mdCode(s.g.SkillID), mdText(s.g.Decision))

	b.WriteString("## Scope\n\n")
	b.WriteString("Use this skill only for a task that asks for the same outcome as workflow " + mdCode(s.w.Func))
	if s.w.Package != "" {
		b.WriteString(" (package " + mdCode(s.w.Package) + ")")
	}
	b.WriteString(", following the steps below with the task's own values. Do not load it as general guidance.")
	if paths := s.paths(); len(paths) > 0 {
		b.WriteString(" It touches ")
		for i, p := range paths {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(mdCode(p))
		}
		b.WriteString(".")
	}
	b.WriteString("\n\n")

	b.WriteString("## Procedure\n\n")
	if len(c.Steps) == 0 {
		b.WriteString("The candidate has no steps.\n")
	}
	for i, st := range c.Steps {
		s.step(b, i, st)
	}
	b.WriteString("\n")

	b.WriteString("## Parameters\n\n")
	if len(c.Parameters) == 0 {
		b.WriteString("None: every value the steps use was the same in all traces.\n\n")
	} else {
		b.WriteString("| name | key | type | required | used at |\n|---|---|---|---|---|\n")
		for _, p := range c.Parameters {
			var used []string
			for _, sp := range p.SourcePaths {
				used = append(used, mdCell(sp))
			}
			fmt.Fprintf(b, "| %s | %s | %s | %s | %s |\n", mdCell(p.Name), mdCell(p.Key), mdCell(p.Type),
				strconv.FormatBool(p.Required), strings.Join(used, ", "))
		}
		b.WriteString("\n")
	}

	b.WriteString("## Evidence\n\n")
	ev := s.evidence()
	if len(ev) == 0 {
		b.WriteString("No traces.\n\n")
	} else {
		b.WriteString("| role | trace | source hash | replay |\n|---|---|---|---|\n")
		for _, t := range ev {
			fmt.Fprintf(b, "| %s | %s | %s | %s |\n", mdCell(t.Role), mdCell(t.TraceID), mdCell(t.SourceHash), mdCell(t.Status))
		}
		b.WriteString("\n")
	}

	g := s.g
	b.WriteString("## Replay gate\n\n")
	fmt.Fprintf(b, "- decision: **%s** (receipt: `gate.json`)\n", mdText(g.Decision))
	fmt.Fprintf(b, "- source replay: %d of %d passed\n", g.SourceReplay.Passed, g.SourceReplay.Compared)
	fmt.Fprintf(b, "- held-out replay: %d of %d passed, %d unmatched\n", g.HeldoutReplay.Passed, g.HeldoutReplay.Compared, g.HeldoutReplay.Unmatched)
	for _, p := range g.RejectionReasons {
		fmt.Fprintf(b, "- rejected: %s\n", mdProblem(p))
	}
	for _, p := range c.Warnings {
		fmt.Fprintf(b, "- warning: %s\n", mdProblem(p))
	}
	b.WriteString("\n")

	b.WriteString("## Generalization\n\n")
	b.WriteString("- Parameterize the pattern: take every parameter above from the task at hand. " +
		"Do not reuse repository names, branch names, ids, timestamps or outputs from the evidence traces.\n")
	b.WriteString("- Keep constants as they are only when the task agrees with them; they never varied in the traces, which is evidence, not a rule.\n")
	b.WriteString("- Keep side-effect, secret and approval boundaries at least as strict as recorded: ask for every approval, and use secrets by their logical id only.\n")
	b.WriteString("- Steps marked review-required did not agree across traces: decide them from the task and have a person check the result.\n")
	fmt.Fprintf(b, "- Prefer running the reviewed workflow %s over repeating the steps by hand.\n", mdCode(s.w.Func))
}

// step writes one numbered item of the procedure and its details.
func (s *skill) step(b *strings.Builder, i int, st candidate.Step) {
	num := strconv.Itoa(i + 1)
	indent := strings.Repeat(" ", len(num)+2)
	segment := "deterministic"
	if st.Segment == candidate.Fuzzy {
		segment = "**review required**"
	}
	var call string
	switch candidate.StepCall(st) {
	case candidate.CallApprove:
		call = "ask for approval"
	case candidate.CallDecide:
		call = "ask for a decision"
	case candidate.CallModel:
		call = "model call"
	case candidate.CallExec:
		call = "command"
	default:
		call = "tool call"
	}
	fmt.Fprintf(b, "%s. %s %s — %s, %s\n", num, mdCode(string(st.Kind)), mdCode(st.Name), call, segment)
	detail := func(label, text string) {
		fmt.Fprintf(b, "%s- %s: %s\n", indent, label, text)
	}
	if candidate.StepCall(st) == candidate.CallExec {
		// The template's {key} placeholders are the arguments below; each
		// value is one argument, never split by a shell.
		detail("runs", mdCode(strings.Join(st.Argv, " ")))
	}
	if candidate.StepCall(st) == candidate.CallDecide {
		opts := make([]string, len(st.Options))
		for i, o := range st.Options {
			opts[i] = mdCode(o)
		}
		detail("options", strings.Join(opts, ", "))
	}
	var params, consts, flows, secrets []string
	for _, a := range st.Arguments {
		switch a.Kind {
		case candidate.ArgParameter:
			params = append(params, mdCode(a.Key)+" ← parameter "+mdCode(a.Parameter))
		case candidate.ArgConstant:
			consts = append(consts, mdCode(a.Key)+" = "+mdCode(jsonText(a.Value)))
		case candidate.ArgBinding:
			if a.Binding != nil {
				from := a.Binding.FromField
				if from == "" {
					from = "output"
				}
				flows = append(flows, fmt.Sprintf("%s ← step %d %s %s", mdCode(a.Key), a.Binding.FromStep, mdText(from), mdCode(a.Binding.FromPath)))
			}
		case candidate.ArgSecret:
			secrets = append(secrets, mdCode(a.Key)+" ← secret "+mdCode(a.Secret))
		}
	}
	if len(params) > 0 {
		detail("parameters", strings.Join(params, ", "))
	}
	if len(consts) > 0 {
		detail("constants", strings.Join(consts, ", "))
	}
	if len(flows) > 0 {
		detail("data flow", strings.Join(flows, ", "))
	}
	if len(secrets) > 0 {
		detail("secrets (logical ids; never write the value)", strings.Join(secrets, ", "))
	}
	for _, se := range st.SideEffects {
		text := mdCode(se.Kind) + " on " + mdCode(se.Target)
		if se.Capability != "" {
			text += " (" + mdCode(se.Capability) + ")"
		}
		detail("side effect", text)
	}
	if stcaps := candidate.StepCapabilities(st); len(stcaps) > 0 {
		var caps []string
		for _, cp := range stcaps {
			caps = append(caps, mdCode(cp))
		}
		detail("capabilities", strings.Join(caps, ", "))
	}
	if st.Approval != nil || st.Kind == trace.KindHumanApproval {
		boundary, prompt := s.c.Approval(st)
		req := "required"
		if st.Approval != nil && !st.Approval.Required {
			req = "recorded, not required"
		}
		detail("approval", fmt.Sprintf("%s at boundary %s: %s", req, mdCode(boundary), mdText(prompt)))
	}
	notes := st.ReviewNotes
	if st.Segment == candidate.Fuzzy {
		why := "the traces disagree on this step; decide it from the task and check its inputs and output"
		if len(notes) > 0 {
			why, notes = notes[0], notes[1:]
		}
		detail("review required", mdText(why))
	}
	for _, n := range notes {
		detail("note", mdText(n))
	}
}

// jsonText renders a constant for the procedure as compact JSON, cut to
// one line of at most maxTextRunes runes.
func jsonText(v any) string {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%v", v)
	}
	return candidate.OneLine(string(data))
}

// sequence joins names as "a, b, then c" (with last as the final
// separator), showing at most five and counting the rest.
func sequence(names []string, last string) string {
	const shown = 5
	var s []string
	for _, n := range names {
		s = append(s, candidate.OneLine(n))
	}
	switch n := len(s); {
	case n == 0:
		return ""
	case n == 1:
		return s[0]
	case n <= shown:
		return strings.Join(s[:n-1], ", ") + last + s[n-1]
	default:
		return fmt.Sprintf("%s and %d more", strings.Join(s[:shown], ", "), n-shown)
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// listOrNone is list without sorting: names in the given order, or "none".
func listOrNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// truncateRunes cuts s to at most n runes, ending it with "…" when cut.
func truncateRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return strings.TrimRightFunc(string(r[:n-1]), unicode.IsSpace) + "…"
}

// mdProblem describes a finding for markdown: "`code` (step n): message".
func mdProblem(p candidate.Problem) string {
	s := mdCode(p.Code)
	if p.Step > 0 {
		s += fmt.Sprintf(" (step %d)", p.Step)
	}
	if p.TraceID != "" {
		s += " (trace " + mdCode(p.TraceID) + ")"
	}
	if p.Message != "" {
		s += ": " + mdText(p.Message)
	}
	return s
}

// mdText makes untrusted text safe as inline markdown: one line (oneLine),
// with every character that could start markup, a link, raw HTML or an
// entity escaped by a backslash, which CommonMark allows before any ASCII
// punctuation.
func mdText(s string) string {
	s = candidate.OneLine(s)
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune("\\`*_[]<>#|!~&", r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// mdCode writes untrusted text as a code span, where markdown does not
// apply: one line, fenced by one more backtick than its longest run of
// backticks, padded with spaces when it starts or ends with a backtick or
// a space (CommonMark strips one space on each side). Empty text is
// written as `""`.
func mdCode(s string) string {
	s = candidate.OneLine(s)
	if s == "" {
		return "`\"\"`"
	}
	fence := mdtext.Fence(s)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") || strings.HasPrefix(s, " ") || strings.HasSuffix(s, " ") {
		s = " " + s + " "
	}
	return fence + s + fence
}

// mdCell is mdCode for a table cell: GitHub-flavoured tables split rows at
// "|" before they see code spans, so pipes are escaped as well.
func mdCell(s string) string {
	return strings.ReplaceAll(mdCode(s), "|", `\|`)
}

// writeFrontmatter writes the YAML header: the specification's keys in a
// fixed order, every value a double-quoted string, metadata keys sorted.
func writeFrontmatter(b *strings.Builder, fm frontmatter) {
	b.WriteString("---\n")
	field := func(indent, key, value string) {
		b.WriteString(indent + key + ": " + yamlQuote(value) + "\n")
	}
	field("", "name", fm.Name)
	field("", "description", fm.Description)
	if fm.License != "" {
		field("", "license", fm.License)
	}
	if fm.Compatibility != "" {
		field("", "compatibility", fm.Compatibility)
	}
	if len(fm.Metadata) > 0 {
		b.WriteString("metadata:\n")
		keys := make([]string, 0, len(fm.Metadata))
		for k := range fm.Metadata {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			// Metadata keys are this package's own identifiers, so
			// they need no quoting.
			field("  ", k, fm.Metadata[k])
		}
	}
	if fm.AllowedTools != "" {
		field("", "allowed-tools", fm.AllowedTools)
	}
	b.WriteString("---\n")
}

// yamlQuote returns s as a YAML double-quoted scalar on one line. Quotes
// and backslashes are escaped, and so is every rune YAML or a reader could
// take for something else: control characters, the line breaks YAML
// recognizes beyond \n (NEL, LS, PS), the byte order mark, and every other
// non-printing or format rune (bidirectional overrides). Each byte of
// invalid UTF-8 becomes U+FFFD, as encoding/json does, so an id written
// here and in gate.json reads back the same from both.
func yamlQuote(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\t':
			b.WriteString(`\t`)
		case '\r':
			b.WriteString(`\r`)
		default:
			switch {
			case r != 0x85 && r != 0x2028 && r != 0x2029 && r != 0xFEFF && unicode.IsPrint(r):
				b.WriteRune(r)
			case r <= 0xFF:
				fmt.Fprintf(&b, `\x%02X`, r)
			case r <= 0xFFFF:
				fmt.Fprintf(&b, `\u%04X`, r)
			default:
				fmt.Fprintf(&b, `\U%08X`, r)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}
