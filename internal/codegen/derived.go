package codegen

import (
	"fmt"
	"strings"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/derive"
)

// derivedLocal is a derived parameter as the function computes it.
type derivedLocal struct {
	id   string
	expr derive.Expr
}

// planDerived names the locals of the candidate's derived parameters,
// after the function's parameters so those keep their names, and checks
// each expression: it must be in package derive's language (Parse
// accepts nothing else, so report.json cannot put other code into the
// workflow) and read only the function's parameters, never another
// derived value, so the assignments may run in any order before the
// first step.
func (g *generator) planDerived(alloc func(string) string) {
	params := map[string]string{}
	for name, id := range g.param {
		params[name] = id
	}
	for i, d := range g.c.DerivedParameters {
		path := fmt.Sprintf("$.derived_parameters[%d]", i)
		if _, dup := g.param[d.Name]; dup {
			g.errorf(path+".name", "derived parameter %q is also a parameter or derived twice", d.Name)
			continue
		}
		e, err := derive.Parse(d.Expression)
		if err != nil {
			g.errorf(path+".expression", "%v", err)
			continue
		}
		ok := true
		for _, r := range derive.Refs(e) {
			if _, isParam := params[r]; !isParam {
				g.errorf(path+".expression", "reads %q, which is not a parameter of the workflow", r)
				ok = false
			}
		}
		if !ok {
			continue
		}
		id := alloc(candidate.Identifier(d.Name))
		g.param[d.Name] = id
		g.derived = append(g.derived, derivedLocal{id: id, expr: derive.Rename(e, params)})
	}
}

// prologue assigns the derived parameters, the function's first
// statements: the steps read them as they read any parameter.
func (g *generator) prologue(b *strings.Builder) {
	if len(g.derived) == 0 {
		return
	}
	if len(g.c.Examples) == 1 {
		// One run: its values were found to hold the parameters' values,
		// which is not agreement between examples.
		comment(b, 1, "Made from the parameters as the recorded run made them (report.json derived_parameters).")
	} else {
		comment(b, 1, "Derived from the parameters; every example agreed (report.json derived_parameters).")
	}
	for _, d := range g.derived {
		statement(b, 1, atom(d.id+" = "+d.expr.String()))
	}
}
