package normalize

import (
	"maps"
	"strings"

	"github.com/crystallize-dev/crystallize/internal/trace"
)

// FileEdit is the name of the canonical file mutation action, whichever
// tool made the edit.
const FileEdit = "file.edit"

// fileActions converts a file tool's call: one file.edit per file, with
// the path as the only parameter and the rest of the arguments as inputs.
func (r *Rules) fileActions(c Call) []trace.Action {
	for _, k := range patchKeys {
		if p, ok := c.Args[k].(string); ok && strings.Contains(p, "*** Begin Patch") {
			return patchActions(p, "", "")
		}
	}
	if cmd, _ := c.Args["command"].(string); cmd == "view" {
		// The editor tools of some agents also read.
		return []trace.Action{{Kind: trace.KindObservation, Name: c.Tool, Parameters: maps.Clone(c.Args)}}
	}
	for _, k := range fileToolPathKeys {
		p, ok := c.Args[k].(string)
		if !ok || p == "" {
			continue
		}
		inputs := maps.Clone(c.Args)
		delete(inputs, k)
		var in any
		if len(inputs) > 0 {
			in = inputs
		}
		return []trace.Action{fileAction(p, in, "")}
	}
	return nil
}

func fileAction(path string, inputs any, mutation string) trace.Action {
	return trace.Action{
		Kind:         trace.KindFileMutation,
		Name:         FileEdit,
		Parameters:   map[string]any{"path": path},
		Inputs:       inputs,
		Capabilities: []string{"fs.write"},
		SideEffects:  []trace.SideEffect{{Kind: "file_write", Target: path, Capability: "fs.write", Mutation: mutation}},
	}
}

// patchActions converts a patch in the apply_patch format, whose file
// sections start with "*** Add File: P", "*** Update File: P" (perhaps
// followed by "*** Move to: Q") or "*** Delete File: P", into one file.edit
// per section. A patch without a section is one unparsed tool call, so
// that nothing the agent did is lost.
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
		in := map[string]any{"operation": s.op, "patch": s.body.String()}
		a := fileAction(s.path, in, s.op)
		a.Metadata = maps.Clone(md)
		if s.moveTo != "" {
			in["move_to"] = s.moveTo
			a.SideEffects = append(a.SideEffects, trace.SideEffect{Kind: "file_write", Target: s.moveTo, Capability: "fs.write", Mutation: "add"})
		}
		if len(a.Metadata) == 0 {
			a.Metadata = nil
		}
		acts = append(acts, a)
	}
	return acts
}
