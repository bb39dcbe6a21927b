package codegen

import (
	"errors"
	"fmt"
	"slices"

	"go.starlark.net/resolve"
	"go.starlark.net/starlark"
	"go.starlark.net/syntax"

	"github.com/crystallize-dev/crystallize/internal/candidate"
)

// Predeclared returns the global names the runtime provides to a workflow,
// in addition to the Starlark universe: the json module (encode, decode)
// and the struct constructor. Generated code may use only these, the
// universe, and its own parameters and locals. The slice is new on every
// call, so callers may keep or change it.
func Predeclared() []string {
	return []string{"json", "struct"}
}

// fileOptions are the dialect workflows are written in: the zero value,
// Starlark as specified, without while loops, top-level control flow,
// global reassignment, recursion or the set builtin. The runtime must
// accept at least this dialect; generated code needs nothing more.
func fileOptions() *syntax.FileOptions { return &syntax.FileOptions{} }

// Check reports whether src is a well-formed workflow file: it parses, every
// name in it resolves against Predeclared and the Starlark universe, and it
// defines exactly one top-level function, named want (any name when want
// is empty), whose first parameter is a plain ctx, and every ctx.exec
// call writes its command out: a string literal name and a list literal
// of string literals, whose program is no placeholder.
//
// Errors are positioned ("workflow.star:3:5: undefined: foo"). A syntax
// error is a syntax.Error; resolution errors, of which there may be
// several, are joined and each is a resolve.Error, so errors.As finds
// them.
func Check(filename string, src []byte, want string) error {
	f, err := fileOptions().Parse(filename, src, 0)
	if err != nil {
		return err
	}
	isPredeclared := func(name string) bool { return slices.Contains(Predeclared(), name) }
	if err := resolve.File(f, isPredeclared, starlark.Universe.Has); err != nil {
		var list resolve.ErrorList
		if !errors.As(err, &list) {
			return err
		}
		// ErrorList.Error prints only the first error; join them so the
		// message shows every problem.
		errs := make([]error, len(list))
		for i, e := range list {
			errs[i] = e
		}
		return errors.Join(errs...)
	}

	var defs []*syntax.DefStmt
	for _, stmt := range f.Stmts {
		if d, ok := stmt.(*syntax.DefStmt); ok {
			defs = append(defs, d)
		}
	}
	if len(defs) == 0 {
		pos := syntax.MakePosition(&filename, 1, 1)
		return fmt.Errorf("%s: no top-level function; a workflow defines one, def %s(ctx, ...)", pos, wantName(want))
	}
	if len(defs) > 1 {
		return fmt.Errorf("%s: second top-level function %s; a workflow defines exactly one", defs[1].Def, defs[1].Name.Name)
	}
	d := defs[0]
	if want != "" && d.Name.Name != want {
		return fmt.Errorf("%s: function %s, want %s", d.Name.NamePos, d.Name.Name, want)
	}
	if len(d.Params) == 0 {
		return fmt.Errorf("%s: function %s has no parameters, want ctx first", d.Name.NamePos, d.Name.Name)
	}
	if id, ok := d.Params[0].(*syntax.Ident); !ok || id.Name != "ctx" {
		pos, _ := d.Params[0].Span()
		return fmt.Errorf("%s: first parameter of %s is not ctx", pos, d.Name.Name)
	}
	return errors.Join(checkExec(f), checkChecks(f))
}

// checkExec reports every ctx.exec call whose command is not written out:
// its name must be a string literal and its argv a non-empty list literal
// of string literals whose first element, the program, has no
// placeholder. A reviewer then reads in the source exactly which programs
// the workflow runs, and the runtime knows them, and the grants they
// need, before the first step.
func checkExec(f *syntax.File) error {
	var errs []error
	bad := func(n syntax.Node, format string, args ...any) {
		pos, _ := n.Span()
		errs = append(errs, fmt.Errorf("%s: ctx.exec: %s", pos, fmt.Sprintf(format, args...)))
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		call, ok := n.(*syntax.CallExpr)
		if !ok {
			return true
		}
		dot, ok := call.Fn.(*syntax.DotExpr)
		if !ok || dot.Name.Name != "exec" {
			return true
		}
		if id, ok := dot.X.(*syntax.Ident); !ok || id.Name != "ctx" {
			return true
		}
		var positional []syntax.Expr
		for _, a := range call.Args {
			if b, ok := a.(*syntax.BinaryExpr); ok && b.Op == syntax.EQ {
				continue
			}
			if u, ok := a.(*syntax.UnaryExpr); ok && u.Op == syntax.STARSTAR {
				continue // keyword arguments, such as keys that are not identifiers
			}
			if u, ok := a.(*syntax.UnaryExpr); ok && u.Op == syntax.STAR {
				bad(a, "*args would hide the name or the argv; write them out")
				continue
			}
			positional = append(positional, a)
		}
		if len(positional) != 2 {
			bad(call, "takes a name and an argv list before its keyword arguments, got %d positional arguments", len(positional))
			return true
		}
		if !isString(positional[0]) {
			bad(positional[0], "the name must be a string literal")
		}
		list, ok := positional[1].(*syntax.ListExpr)
		if !ok {
			bad(positional[1], "the argv must be a list literal of string literals")
			return true
		}
		if len(list.List) == 0 {
			bad(list, "the argv is empty")
		}
		for i, el := range list.List {
			if !isString(el) {
				bad(el, "argv element %d is not a string literal", i)
				continue
			}
			if v := el.(*syntax.Literal).Value.(string); i == 0 && (v == "" || len(candidate.ArgvPlaceholders(v)) > 0) {
				bad(el, "the program %q must be a literal name or path", v)
			}
		}
		return true
	})
	return errors.Join(errs...)
}

func isString(e syntax.Expr) bool {
	lit, ok := e.(*syntax.Literal)
	return ok && lit.Token == syntax.STRING
}

func wantName(want string) string {
	if want == "" {
		return "name"
	}
	return want
}
