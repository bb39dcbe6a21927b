// Package starfile reads what a workflow's Starlark source says without
// running it: its function's signature, the tools, models and worker
// presets it names with literals, the members it reads from tool
// results, its ctx.exec command lines and its declaration header. What
// it reads is what the runner checks before the first step (bindings,
// grants, secrets) and what a dry run answers with, so it is read from
// the syntax tree, never from a run.
package starfile

import (
	"fmt"
	"sort"
	"strings"

	"go.starlark.net/syntax"

	"github.com/crystallize-dev/crystallize/internal/codegen"
)

// File is what a workflow's source says.
type File struct {
	// Name is the workflow function's name and Params its parameters
	// after ctx, in order; Required says which have no default.
	Name     string
	Params   []string
	Required []bool
	// Tools and Models are the tool names and model step names the
	// source calls with a literal name, in order of first appearance.
	Tools  []string
	Models []string
	// Workers are the worker presets ctx.agent names with a literal
	// worker="…"; such a step's model is the preset's, not in Models.
	Workers []string
	// ResultKeys are, per tool name, the members the source reads from
	// the tool's result (step1["branch"] gives ["branch"]).
	ResultKeys map[string][][]string
}

// Parse checks src, the workflow in file, with codegen.Check and reads
// what it says.
func Parse(file string, src []byte) (*File, error) {
	if err := codegen.Check(file, src, ""); err != nil {
		return nil, err
	}
	f, err := (&syntax.FileOptions{}).Parse(file, src, 0)
	if err != nil {
		return nil, err // unreachable: Check parsed it
	}
	w := &File{ResultKeys: resultKeys(f)}
	for _, stmt := range f.Stmts {
		if l, ok := stmt.(*syntax.LoadStmt); ok {
			return nil, fmt.Errorf("%s: load is not allowed in a workflow", l.Load)
		}
	}
	for _, stmt := range f.Stmts {
		d, ok := stmt.(*syntax.DefStmt)
		if !ok {
			continue
		}
		w.Name = d.Name.Name
		for _, p := range d.Params[1:] {
			switch p := p.(type) {
			case *syntax.Ident:
				w.Params = append(w.Params, p.Name)
				w.Required = append(w.Required, true)
			case *syntax.BinaryExpr: // name = default
				if id, ok := p.X.(*syntax.Ident); ok {
					w.Params = append(w.Params, id.Name)
					w.Required = append(w.Required, false)
				}
			}
		}
	}
	seen := map[string]bool{}
	add := func(list *[]string, kind, name string) {
		if !seen[kind+" "+name] {
			seen[kind+" "+name] = true
			*list = append(*list, name)
		}
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		method, name, ok := ctxCall(n)
		if !ok {
			return true
		}
		switch method {
		case "tool", "try_tool":
			add(&w.Tools, "tool", name)
		case "model", "map":
			add(&w.Models, "model", name)
		case "agent":
			// An agent's tools are called by name from its tools list;
			// a worker preset brings its own model.
			call := n.(*syntax.CallExpr)
			worker := ""
			for _, arg := range call.Args[1:] {
				kv, ok := arg.(*syntax.BinaryExpr)
				if !ok || kv.Op != syntax.EQ {
					continue
				}
				key, _ := kv.X.(*syntax.Ident)
				switch {
				case key == nil:
				case key.Name == "tools":
					if l, ok := kv.Y.(*syntax.ListExpr); ok {
						for _, e := range l.List {
							if s, ok := stringLit(e); ok {
								add(&w.Tools, "tool", s)
							}
						}
					}
				case key.Name == "worker":
					worker, _ = stringLit(kv.Y)
				}
			}
			if worker != "" {
				add(&w.Workers, "worker", worker)
			} else {
				add(&w.Models, "model", name)
			}
		}
		return true
	})
	return w, nil
}

// ctxCall reports whether n is ctx.method("literal", …) and returns the
// method and the literal.
func ctxCall(n syntax.Node) (method, name string, ok bool) {
	call, ok := n.(*syntax.CallExpr)
	if !ok || len(call.Args) == 0 {
		return "", "", false
	}
	dot, ok := call.Fn.(*syntax.DotExpr)
	if !ok {
		return "", "", false
	}
	if id, ok := dot.X.(*syntax.Ident); !ok || id.Name != "ctx" {
		return "", "", false
	}
	s, ok := stringLit(call.Args[0])
	return dot.Name.Name, s, ok
}

// stringLit returns the value of a string literal expression.
func stringLit(e syntax.Expr) (string, bool) {
	lit, ok := e.(*syntax.Literal)
	if !ok || lit.Token != syntax.STRING {
		return "", false
	}
	s, ok := lit.Value.(string)
	return s, ok
}

// Header reads the declared capabilities and secrets from the comment
// line codegen writes: "# capabilities: a, b · secrets: none · …".
func Header(src []byte) (caps, secrets []string) {
	for line := range strings.Lines(string(src)) {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "#") {
			if line == "" {
				continue
			}
			break // the header is the leading comment block
		}
		body := strings.TrimSpace(strings.TrimPrefix(line, "#"))
		if !strings.HasPrefix(body, "capabilities:") {
			continue
		}
		for part := range strings.SplitSeq(body, "·") {
			k, v, ok := strings.Cut(strings.TrimSpace(part), ":")
			if !ok {
				continue
			}
			switch strings.TrimSpace(k) {
			case "capabilities":
				caps = splitList(v)
			case "secrets":
				secrets = splitList(v)
			}
		}
		break
	}
	return caps, secrets
}

func splitList(s string) []string {
	s = strings.TrimSpace(s)
	if s == "" || s == "none" {
		return nil
	}
	var out []string
	for f := range strings.SplitSeq(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// resultKeys finds, for each tool a workflow calls with a literal name,
// the members it reads from the call's result: in
//
//	step1 = ctx.tool("git.create_branch", …)
//	… step1["branch"] …
//
// the tool git.create_branch has the key path ["branch"]; x["a"]["b"]
// gives ["a", "b"]. Generated workflows read results only this way, so it
// is the shape a dry run must answer with when nothing was recorded.
// Paths are sorted, per tool, for a deterministic answer.
func resultKeys(f *syntax.File) map[string][][]string {
	vars := map[string]string{} // variable → tool name
	syntax.Walk(f, func(n syntax.Node) bool {
		a, ok := n.(*syntax.AssignStmt)
		if !ok || a.Op != syntax.EQ {
			return true
		}
		id, ok := a.LHS.(*syntax.Ident)
		if !ok {
			return true
		}
		// ctx.try_tool returns {ok, output, error}, not the tool's
		// result, so only ctx.tool and ctx.exec assignments count.
		if method, name, ok := ctxCall(a.RHS); ok && (method == "tool" || method == "exec") {
			vars[id.Name] = name
		}
		return true
	})
	out := map[string][][]string{}
	seen := map[string]bool{}
	syntax.Walk(f, func(n syntax.Node) bool {
		ix, ok := n.(*syntax.IndexExpr)
		if !ok {
			return true
		}
		// Only the outermost index of a chain: x["a"]["b"] once, not
		// again as x["a"].
		var keys []string
		var x syntax.Expr = ix
		for {
			e, ok := x.(*syntax.IndexExpr)
			if !ok {
				break
			}
			lit, ok := e.Y.(*syntax.Literal)
			if !ok || lit.Token != syntax.STRING {
				return true
			}
			keys = append([]string{lit.Value.(string)}, keys...)
			x = e.X
		}
		id, ok := x.(*syntax.Ident)
		if !ok {
			return true
		}
		tool, ok := vars[id.Name]
		if !ok {
			return true
		}
		k := tool + "\x00" + strings.Join(keys, "\x00")
		if !seen[k] {
			seen[k] = true
			out[tool] = append(out[tool], keys)
		}
		return false
	})
	for _, paths := range out {
		sort.Slice(paths, func(i, j int) bool { return strings.Join(paths[i], "\x00") < strings.Join(paths[j], "\x00") })
	}
	return out
}

// ExecSite is one ctx.exec call written in a workflow's source.
type ExecSite struct {
	Name string
	Argv []string
}

// ExecSites returns the ctx.exec calls of src, the workflow in file,
// whose name and argv are literals, in source order, without repeats;
// none for a source Parse refuses.
func ExecSites(file string, src []byte) []ExecSite {
	f, err := (&syntax.FileOptions{}).Parse(file, src, 0)
	if err != nil {
		return nil // unreachable for a workflow Parse accepted
	}
	var sites []ExecSite
	seen := map[string]bool{}
	syntax.Walk(f, func(n syntax.Node) bool {
		method, name, ok := ctxCall(n)
		if !ok || method != "exec" {
			return true
		}
		call := n.(*syntax.CallExpr)
		if len(call.Args) < 2 {
			return true
		}
		list, ok := call.Args[1].(*syntax.ListExpr)
		if !ok {
			return true
		}
		var argv []string
		for _, el := range list.List {
			s, ok := stringLit(el)
			if !ok {
				return true
			}
			argv = append(argv, s)
		}
		if len(argv) == 0 {
			return true
		}
		key := name + "\x00" + strings.Join(argv, "\x00")
		if !seen[key] {
			seen[key] = true
			sites = append(sites, ExecSite{Name: name, Argv: argv})
		}
		return true
	})
	return sites
}
