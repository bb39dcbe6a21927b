package codegen

import (
	"errors"
	"fmt"
	"slices"

	"go.starlark.net/resolve"
	"go.starlark.net/starlark"
	"go.starlark.net/syntax"
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
// is empty), whose first parameter is a plain ctx.
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
	return nil
}

func wantName(want string) string {
	if want == "" {
		return "name"
	}
	return want
}
