package normalize

import (
	"maps"
	"path"
	"strings"

	"github.com/crystallize-dev/crystallize/internal/trace"
)

// The names of the canonical file mutations. FileWrite and FileEdit are
// the runtime's built-in tools of the same names, so a workflow mined from
// an agent's file edits calls them directly and runs without a binding.
const (
	// FileWrite writes a whole file: parameters path and content.
	FileWrite = "fs.write"
	// FileEdit replaces exact text in a file: parameters path, old and
	// new (and replace_all, only when true) for one replacement, or path
	// and edits, a list of {old, new, replace_all?}, for several, applied
	// in order.
	FileEdit = "fs.edit"
	// FileChange is a file tool's call whose change the log does not hold
	// in a form a built-in can redo (a notebook cell, an instruction to
	// another model, a patch hunk without context, a deletion or a move):
	// the path is its only parameter and the rest of the arguments are
	// its inputs, so that nothing the agent did is lost. A workflow needs
	// a binding to run it.
	FileChange = "file.edit"
)

// The mutation a canonical file action's side effect records, the same
// word the runtime's receipt of the built-in records.
const (
	mutationWrite = "write"
	mutationEdit  = "edit"
)

// Argument keys, in the order they are looked for, that hold a file
// tool's whole content, an edit's old and new text, and whether an edit
// replaces every occurrence. They cover Claude Code (content, old_string,
// new_string, replace_all), Gemini CLI (content, old_string, new_string,
// expected_replacements), Anthropic's text editor tool (file_text,
// old_str, new_str) and edit lists of the old_text/new_text form.
var (
	contentKeys = []string{"content", "file_text", "contents"}
	oldKeys     = []string{"old_string", "old_str", "old_text"}
	newKeys     = []string{"new_string", "new_str", "new_text"}
)

// fileActions converts a file tool's call: one fs.write or fs.edit per
// file when the call holds what it wrote, else one file.edit with the
// path as its only parameter and the rest of the arguments as inputs.
func (r *Rules) fileActions(c Call) []trace.Action {
	for _, k := range patchKeys {
		if p, ok := c.Args[k].(string); ok && strings.Contains(p, "*** Begin Patch") {
			return patchActions(p, "", "")
		}
	}
	cmd, _ := c.Args["command"].(string)
	if cmd == "view" {
		// The editor tools of some agents also read.
		return []trace.Action{{Kind: trace.KindObservation, Name: c.Tool, Parameters: maps.Clone(c.Args)}}
	}
	for _, k := range fileToolPathKeys {
		p, ok := c.Args[k].(string)
		if !ok || p == "" {
			continue
		}
		if a, ok := mutationOf(p, cmd, c.Args); ok {
			return []trace.Action{a}
		}
		inputs := maps.Clone(c.Args)
		delete(inputs, k)
		var in any
		if len(inputs) > 0 {
			in = inputs
		}
		return []trace.Action{changeAction(p, in, "")}
	}
	return nil
}

// mutationOf reads what a file tool's arguments wrote to p: a whole
// content (fs.write) or exact replacements (fs.edit). cmd is the text
// editor tool's command ("create", "str_replace"), "" for other tools.
// It reports false when the arguments hold neither, or something else
// besides (an editor's "insert").
func mutationOf(p, cmd string, args map[string]any) (trace.Action, bool) {
	switch cmd {
	case "", "create", "str_replace":
	default:
		return trace.Action{}, false
	}
	if e, ok := editOf(args); ok {
		if e.old == "" {
			// Claude Code's Edit with an empty old_string creates the
			// file with new_string.
			return writeAction(p, e.new), true
		}
		return editAction(p, []edit{e}), true
	}
	if list, ok := args["edits"].([]any); ok && len(list) > 0 {
		edits := make([]edit, 0, len(list))
		for _, el := range list {
			m, _ := el.(map[string]any)
			e, ok := editOf(m)
			if !ok || e.old == "" {
				return trace.Action{}, false
			}
			edits = append(edits, e)
		}
		return editAction(p, edits), true
	}
	if content, ok := firstString(args, contentKeys); ok {
		return writeAction(p, content), true
	}
	return trace.Action{}, false
}

// edit is one exact replacement.
type edit struct {
	old, new   string
	replaceAll bool
}

// editOf reads one replacement from m; false when m has no old and new
// text.
func editOf(m map[string]any) (edit, bool) {
	old, ok1 := firstString(m, oldKeys)
	nw, ok2 := firstString(m, newKeys)
	if !ok1 || !ok2 {
		return edit{}, false
	}
	e := edit{old: old, new: nw}
	if b, _ := m["replace_all"].(bool); b {
		e.replaceAll = true
	}
	// Gemini CLI's replace says how many occurrences it expects; more
	// than one is every occurrence of the text.
	if n, ok := m["expected_replacements"].(float64); ok && n > 1 {
		e.replaceAll = true
	}
	return e, true
}

func firstString(m map[string]any, keys []string) (string, bool) {
	for _, k := range keys {
		if s, ok := m[k].(string); ok {
			return s, true
		}
	}
	return "", false
}

// writeAction is fs.write of content to p.
func writeAction(p, content string) trace.Action {
	a := fileAction(FileWrite, p, mutationWrite)
	a.Parameters["content"] = content
	return a
}

// editAction is fs.edit of p. One replacement is written as the
// parameters old and new, so that each is a literal or a workflow
// parameter of its own; several as the list edits. replace_all appears
// only when true: most edits replace one occurrence, and an absent key
// keeps their signature the same.
func editAction(p string, edits []edit) trace.Action {
	a := fileAction(FileEdit, p, mutationEdit)
	if len(edits) == 1 {
		e := edits[0]
		a.Parameters["old"], a.Parameters["new"] = e.old, e.new
		if e.replaceAll {
			a.Parameters["replace_all"] = true
		}
		return a
	}
	list := make([]any, len(edits))
	for i, e := range edits {
		m := map[string]any{"old": e.old, "new": e.new}
		if e.replaceAll {
			m["replace_all"] = true
		}
		list[i] = m
	}
	a.Parameters["edits"] = list
	return a
}

// changeAction is a file.edit of path whose change is kept only as
// inputs.
func changeAction(path string, inputs any, mutation string) trace.Action {
	a := fileAction(FileChange, path, mutation)
	a.Inputs = inputs
	return a
}

func fileAction(name, path, mutation string) trace.Action {
	return trace.Action{
		Kind:         trace.KindFileMutation,
		Name:         name,
		Parameters:   map[string]any{"path": path},
		Capabilities: []string{"fs.write"},
		SideEffects:  []trace.SideEffect{{Kind: "file_write", Target: path, Capability: "fs.write", Mutation: mutation}},
	}
}

// relativeTo makes the file mutations among acts name their files
// relative to cwd, the directory the agent worked in, when they lie
// below it: a workflow that writes "/home/ann/app/go.mod" runs only on
// Ann's machine, one that writes "go.mod" in any workspace. A path
// elsewhere is kept as it is.
func relativeTo(acts []trace.Action, cwd string) {
	if cwd == "" || !strings.HasPrefix(cwd, "/") {
		return
	}
	cwd = path.Clean(cwd)
	for i := range acts {
		a := &acts[i]
		if a.Kind != trace.KindFileMutation {
			continue
		}
		if p, ok := a.Parameters["path"].(string); ok {
			a.Parameters["path"] = below(p, cwd)
		}
		for j := range a.SideEffects {
			a.SideEffects[j].Target = below(a.SideEffects[j].Target, cwd)
		}
	}
}

// below returns p relative to dir when p is an absolute path under dir.
func below(p, dir string) string {
	if !strings.HasPrefix(p, "/") {
		return p
	}
	c := path.Clean(p)
	if rest, ok := strings.CutPrefix(c, dir+"/"); ok && rest != "" {
		return rest
	}
	if dir == "/" && c != "/" {
		return c[1:]
	}
	return p
}

// patchActions converts a patch in the apply_patch format, whose file
// sections start with "*** Add File: P", "*** Update File: P" (perhaps
// followed by "*** Move to: Q") or "*** Delete File: P", into one action
// per section: an added file is fs.write of its lines, an updated one
// fs.edit with one replacement per hunk (its context and "-" lines
// replaced by its context and "+" lines), and what the built-ins cannot
// redo (a deletion, a move, a hunk without a line to find) a file.edit
// keeping its part of the patch. A patch without a section is one
// unparsed tool call, so that nothing the agent did is lost.
func patchActions(patch, raw, cwd string) []trace.Action {
	type section struct {
		op, path, moveTo string
		body             strings.Builder
	}
	var secs []*section
	var cur *section
	for line := range strings.Lines(patch) {
		l := strings.TrimRight(line, "\r\n")
		op := ""
		var p string
		for _, h := range [...]struct{ prefix, op string }{
			{"*** Add File: ", "add"}, {"*** Update File: ", "update"}, {"*** Delete File: ", "delete"},
		} {
			if rest, ok := strings.CutPrefix(l, h.prefix); ok {
				op, p = h.op, strings.TrimSpace(rest)
			}
		}
		switch {
		case op != "" && p != "":
			cur = &section{op: op, path: p}
			secs = append(secs, cur)
			continue
		case cur == nil:
			continue
		case strings.HasPrefix(l, "*** Move to: "):
			cur.moveTo = strings.TrimSpace(strings.TrimPrefix(l, "*** Move to: "))
			continue
		case l == "*** End Patch" || l == "*** End of File":
			continue
		}
		cur.body.WriteString(line)
	}
	md := map[string]any{}
	if raw != "" {
		md["command"] = raw
	}
	if cwd != "" {
		md["cwd"] = cwd
	}
	if len(secs) == 0 {
		md["unparsed"] = true
		if raw == "" {
			md["command"] = patch
		}
		return []trace.Action{{Kind: trace.KindToolCall, Name: "apply_patch", Metadata: md, Capabilities: []string{"fs.write"}}}
	}
	acts := make([]trace.Action, 0, len(secs))
	for _, s := range secs {
		body := s.body.String()
		var a trace.Action
		edits, editable := hunks(body)
		switch {
		case s.op == "add" && s.moveTo == "":
			a = writeAction(s.path, addedContent(body))
		case s.op == "update" && s.moveTo == "" && editable:
			a = editAction(s.path, edits)
		default:
			in := map[string]any{"operation": s.op, "patch": body}
			a = changeAction(s.path, in, s.op)
			if s.moveTo != "" {
				in["move_to"] = s.moveTo
				a.SideEffects = append(a.SideEffects, trace.SideEffect{Kind: "file_write", Target: s.moveTo, Capability: "fs.write", Mutation: "add"})
			}
		}
		a.Metadata = maps.Clone(md)
		if len(a.Metadata) == 0 {
			a.Metadata = nil
		}
		acts = append(acts, a)
	}
	return acts
}

// addedContent is the file an added section's "+" lines make.
func addedContent(body string) string {
	var b strings.Builder
	for line := range strings.Lines(body) {
		b.WriteString(strings.TrimPrefix(line, "+"))
	}
	return b.String()
}

// hunks reads an updated section's hunks as exact replacements, in
// order. A hunk starts at a "@@" line (whose text, a line somewhere above
// the change, only guides apply_patch's search and is not part of the
// replacement) or at the section's first line; a line starting with " "
// is context on both sides, "-" only in the old text, "+" only in the
// new, and an empty line is an empty line of context. It reports false
// when a hunk has no old text to find (a pure insertion without
// context) or a line of another form, which a replacement cannot redo.
func hunks(body string) ([]edit, bool) {
	var edits []edit
	var old, nw strings.Builder
	open := false
	flush := func() bool {
		if !open {
			return true
		}
		open = false
		if old.Len() == 0 {
			return false
		}
		edits = append(edits, edit{old: old.String(), new: nw.String()})
		old.Reset()
		nw.Reset()
		return true
	}
	for line := range strings.Lines(body) {
		if strings.HasPrefix(line, "@@") {
			if !flush() {
				return nil, false
			}
			open = true
			continue
		}
		open = true
		switch {
		case strings.TrimRight(line, "\r\n") == "":
			old.WriteString(line)
			nw.WriteString(line)
		case line[0] == ' ':
			old.WriteString(line[1:])
			nw.WriteString(line[1:])
		case line[0] == '-':
			old.WriteString(line[1:])
		case line[0] == '+':
			nw.WriteString(line[1:])
		default:
			return nil, false
		}
	}
	if !flush() || len(edits) == 0 {
		return nil, false
	}
	return edits, true
}
