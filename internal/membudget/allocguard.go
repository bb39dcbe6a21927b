package membudget

import (
	"fmt"
	"go.starlark.net/lib/json"
	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
	"go.starlark.net/syntax"
	"strings"
	"unicode"
	"unicode/utf8"
) // Allocation guards.
//
// One Starlark step can allocate far more than the heap held before it:
// [0] * 1000000000 is 16 GB, sep.join([s] * 1000) a thousand copies of s,
// list(range(1000000000)) another 16 GB, and a built-in runs to its end
// however long the heap watch has been asking the thread to stop. Starlark
// has no allocation hook, so the run puts the checks where the large
// allocations are made:
//
//   - guardOperators rewrites the workflow's syntax tree before it is
//     compiled: every x * y, x + y and x % y (and the x of f(*x) and
//     f(**x)) becomes a call of a hidden
//     predeclared built-in ("*", "+", "%": names a workflow cannot write)
//     that sizes the result from its operands and reserves it before
//     computing it with starlark.Binary; an augmented assignment x op= y
//     keeps its target (evaluated once, and a list's += still extends it
//     in place) and wraps y in an operand that does the same check when
//     Starlark applies the operator to it. Every x.name of a method that
//     builds from its arguments (join, replace, format, split, extend,
//     union, …) becomes ".name"(x), which returns the method guarded.
//   - the built-ins that materialise an iterable (list, tuple, sorted,
//     reversed, set, dict, enumerate, zip, bytes), those that render a
//     value as text (str, repr, print, fail, json.encode, json.indent),
//     json.decode and getattr are replaced, in the workflow's predeclared
//     names, by the same built-ins behind a size check.
//
// Each check computes an upper bound of the bytes the result will take
// (see the *Bound functions), without allocating it, and calls
// Budget.Reserve, which refuses when the bound does not fit in what
// is left of the budget. Bounds under reserveFloor are not checked: what
// small steps allocate is the heap watch's to catch.

// GuardOperators rewrites f in place as described above.
func GuardOperators(f *syntax.File) {
	g := guardRewriter{}
	for _, s := range f.Stmts {
		g.stmt(s)
	}
}

type guardRewriter struct{}

// binaryGuards names the hidden built-in of each guarded operator.
var binaryGuards = map[syntax.Token]string{syntax.STAR: "*", syntax.PLUS: "+", syntax.PERCENT: "%"}

// augmentedGuards names the operand wrapper of each guarded augmented
// assignment.
var augmentedGuards = map[syntax.Token]string{syntax.STAR_EQ: "*=", syntax.PLUS_EQ: "+=", syntax.PERCENT_EQ: "%="}

// guardedMethods are the methods whose results are sized from their
// arguments rather than their receiver.
var guardedMethods = map[string]bool{
	"join": true, "replace": true, "format": true, "split": true, "rsplit": true, "splitlines": true,
	"extend": true, "update": true, "union": true, "intersection": true, "difference": true,
	"symmetric_difference": true, "issubset": true, "issuperset": true,
}

func (g guardRewriter) stmts(ss []syntax.Stmt) {
	for _, s := range ss {
		g.stmt(s)
	}
}

func (g guardRewriter) stmt(s syntax.Stmt) {
	switch s := s.(type) {
	case *syntax.AssignStmt:
		s.LHS = g.target(s.LHS)
		s.RHS = g.expr(s.RHS)
		if name, ok := augmentedGuards[s.Op]; ok {
			s.RHS = hiddenCall(name, s.OpPos, s.RHS)
		}
	case *syntax.DefStmt:
		for i, p := range s.Params {
			s.Params[i] = g.param(p)
		}
		g.stmts(s.Body)
	case *syntax.ExprStmt:
		s.X = g.expr(s.X)
	case *syntax.IfStmt:
		s.Cond = g.expr(s.Cond)
		g.stmts(s.True)
		g.stmts(s.False)
	case *syntax.ForStmt:
		s.Vars = g.target(s.Vars)
		s.X = g.expr(s.X)
		g.stmts(s.Body)
	case *syntax.WhileStmt:
		s.Cond = g.expr(s.Cond)
		g.stmts(s.Body)
	case *syntax.ReturnStmt:
		if s.Result != nil {
			s.Result = g.expr(s.Result)
		}
	}
}

// param rewrites a parameter's default value, not its name.
func (g guardRewriter) param(p syntax.Expr) syntax.Expr {
	if b, ok := p.(*syntax.BinaryExpr); ok && b.Op == syntax.EQ {
		b.Y = g.expr(b.Y)
	}
	return p
}

// target rewrites the expressions inside an assignment's target (an
// index, a receiver) but not the target itself.
func (g guardRewriter) target(e syntax.Expr) syntax.Expr {
	switch e := e.(type) {
	case *syntax.IndexExpr:
		e.X, e.Y = g.expr(e.X), g.expr(e.Y)
	case *syntax.DotExpr:
		e.X = g.expr(e.X)
	case *syntax.TupleExpr:
		for i, x := range e.List {
			e.List[i] = g.target(x)
		}
	case *syntax.ListExpr:
		for i, x := range e.List {
			e.List[i] = g.target(x)
		}
	case *syntax.ParenExpr:
		e.X = g.target(e.X)
	}
	return e
}

func (g guardRewriter) exprs(es []syntax.Expr) {
	for i, e := range es {
		es[i] = g.expr(e)
	}
}

func (g guardRewriter) expr(e syntax.Expr) syntax.Expr {
	switch e := e.(type) {
	case *syntax.BinaryExpr:
		e.X, e.Y = g.expr(e.X), g.expr(e.Y)
		if name, ok := binaryGuards[e.Op]; ok {
			return hiddenCall(name, e.OpPos, e.X, e.Y)
		}
	case *syntax.UnaryExpr:
		if e.X != nil {
			e.X = g.expr(e.X)
		}
	case *syntax.CallExpr:
		e.Fn = g.expr(e.Fn)
		for i, a := range e.Args {
			if kv, ok := a.(*syntax.BinaryExpr); ok && kv.Op == syntax.EQ { // name = value
				kv.Y = g.expr(kv.Y)
				continue
			}
			if u, ok := a.(*syntax.UnaryExpr); ok && u.X != nil && (u.Op == syntax.STAR || u.Op == syntax.STARSTAR) { // f(*args)
				u.X = hiddenCall("*args", u.OpPos, g.expr(u.X))
				continue
			}
			e.Args[i] = g.expr(a)
		}
	case *syntax.DotExpr:
		e.X = g.expr(e.X)
		if guardedMethods[e.Name.Name] {
			return hiddenCall("."+e.Name.Name, e.Dot, e.X)
		}
	case *syntax.IndexExpr:
		e.X, e.Y = g.expr(e.X), g.expr(e.Y)
	case *syntax.SliceExpr:
		e.X = g.expr(e.X)
		for _, p := range []*syntax.Expr{&e.Lo, &e.Hi, &e.Step} {
			if *p != nil {
				*p = g.expr(*p)
			}
		}
	case *syntax.ParenExpr:
		e.X = g.expr(e.X)
	case *syntax.ListExpr:
		g.exprs(e.List)
	case *syntax.TupleExpr:
		g.exprs(e.List)
	case *syntax.DictExpr:
		for _, x := range e.List {
			if kv, ok := x.(*syntax.DictEntry); ok {
				kv.Key, kv.Value = g.expr(kv.Key), g.expr(kv.Value)
			}
		}
	case *syntax.CondExpr:
		e.Cond, e.True, e.False = g.expr(e.Cond), g.expr(e.True), g.expr(e.False)
	case *syntax.LambdaExpr:
		for i, p := range e.Params {
			e.Params[i] = g.param(p)
		}
		e.Body = g.expr(e.Body)
	case *syntax.Comprehension:
		e.Body = g.expr(e.Body)
		for _, c := range e.Clauses {
			switch c := c.(type) {
			case *syntax.ForClause:
				c.Vars = g.target(c.Vars)
				c.X = g.expr(c.X)
			case *syntax.IfClause:
				c.Cond = g.expr(c.Cond)
			}
		}
	}
	return e
}

// hiddenCall is a call of the predeclared guard name, placed at pos.
func hiddenCall(name string, pos syntax.Position, args ...syntax.Expr) *syntax.CallExpr {
	return &syntax.CallExpr{Fn: &syntax.Ident{NamePos: pos, Name: name}, Lparen: pos, Args: args, Rparen: pos}
}

// Predeclared is predeclared for one run: the hidden guards of
// the operators and methods, and the built-ins that allocate by size,
// checked against h's budget.
func (m *Budget) Predeclared() starlark.StringDict {
	d := starlark.StringDict{
		"struct": predeclared["struct"],
		"json": &starlarkstruct.Module{Name: "json", Members: starlark.StringDict{
			"encode": m.checked(json.Module.Members["encode"], func(args starlark.Tuple, _ []starlark.Tuple) uint64 {
				return sumBound(args, m.Limit())
			}),
			"decode": m.checked(json.Module.Members["decode"], func(args starlark.Tuple, _ []starlark.Tuple) uint64 {
				if len(args) > 0 {
					if s, ok := args[0].(starlark.String); ok {
						return jsonDecodeBound(string(s))
					}
				}
				return 0
			}),
			"indent": m.checked(json.Module.Members["indent"], func(args starlark.Tuple, kwargs []starlark.Tuple) uint64 {
				if len(args) == 0 {
					return 0
				}
				s, _ := args[0].(starlark.String)
				extra := 1 // the default indent, a tab
				for _, kv := range kwargs {
					if v, ok := kv[1].(starlark.String); ok {
						extra += len(v)
					}
				}
				return jsonIndentBound(string(s), extra)
			}),
		}},
		"getattr": starlark.NewBuiltin("getattr", func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			v, err := starlark.Call(thread, starlark.Universe["getattr"], args, kwargs)
			if err == nil && len(args) >= 2 {
				if name, ok := args[1].(starlark.String); ok && guardedMethods[string(name)] {
					return m.method(args[0], string(name), v), nil
				}
			}
			return v, err
		}),
	}
	for _, name := range []string{"list", "tuple", "sorted", "reversed"} {
		d[name] = m.materialising(name, 16)
	}
	d["set"] = m.materialising("set", hashEntryBytes)
	d["dict"] = m.materialising("dict", hashEntryBytes)
	d["enumerate"] = m.materialising("enumerate", 16+tupleBytes(2))
	d["bytes"] = m.materialising("bytes", 1)
	d["zip"] = m.checked(starlark.Universe["zip"], func(args starlark.Tuple, _ []starlark.Tuple) uint64 {
		n := -1
		for _, a := range args {
			if l := starlark.Len(a); l >= 0 && (n < 0 || l < n) {
				n = l
			}
		}
		return uint64(max(n, 0)) * (16 + tupleBytes(len(args)))
	})
	text := func(args starlark.Tuple, _ []starlark.Tuple) uint64 { return sumBound(args, m.Limit()) }
	for _, name := range []string{"repr", "fail", "print"} {
		d[name] = m.checked(starlark.Universe[name], text)
	}
	d["str"] = m.checked(starlark.Universe["str"], func(args starlark.Tuple, _ []starlark.Tuple) uint64 {
		if len(args) == 1 {
			if _, ok := args[0].(starlark.String); ok {
				return 0 // str of a string is the string
			}
		}
		return sumBound(args, m.Limit())
	})
	for tok, name := range binaryGuards {
		op := tok
		d[name] = starlark.NewBuiltin(name, func(_ *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, _ []starlark.Tuple) (starlark.Value, error) {
			x, y := args[0], args[1]
			if err := m.Reserve(binaryBound(op, x, y, m.Limit()), "the "+op.String()+" of "+x.Type()+" and "+y.Type()); err != nil {
				return nil, err
			}
			return starlark.Binary(op, x, y)
		})
	}
	for tok, name := range augmentedGuards {
		op := tok - syntax.PLUS_EQ + syntax.PLUS // x op= y applies op
		d[name] = starlark.NewBuiltin(name, func(_ *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, _ []starlark.Tuple) (starlark.Value, error) {
			return &guardedOperand{m: m, op: op, v: args[0]}, nil
		})
	}
	// f(*x) and f(**x) make a tuple or dict of x's elements.
	d["*args"] = starlark.NewBuiltin("*args", func(_ *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, _ []starlark.Tuple) (starlark.Value, error) {
		per := uint64(16) // a tuple's slot
		if _, ok := args[0].(*starlark.Dict); ok {
			per = hashEntryBytes
		}
		if err := m.Reserve(elementsBound(args, per), "the arguments unpacked from a "+args[0].Type()); err != nil {
			return nil, err
		}
		return args[0], nil
	})
	for name := range guardedMethods {
		d["."+name] = starlark.NewBuiltin(name, func(_ *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, _ []starlark.Tuple) (starlark.Value, error) {
			v, err := attr(args[0], name)
			if err != nil {
				return nil, err
			}
			return m.method(args[0], name, v), nil
		})
	}
	return d
}

// attr is x.name, as Starlark evaluates it.
func attr(x starlark.Value, name string) (starlark.Value, error) {
	if ha, ok := x.(starlark.HasAttrs); ok {
		v, err := ha.Attr(name)
		if err != nil || v != nil {
			return v, err
		}
	}
	return nil, fmt.Errorf("%s has no .%s field or method", x.Type(), name)
}

// hashEntryBytes bounds what one element of a set or dict takes: its
// share of a hash table bucket and the table's growth.
const hashEntryBytes = 128

// tupleBytes bounds a new tuple of n elements held as a Value.
func tupleBytes(n int) uint64 { return 32 + 16*uint64(n) }

// checked is fn behind a reservation of the bytes bound says its call
// allocates.
func (m *Budget) checked(fn starlark.Value, bound func(args starlark.Tuple, kwargs []starlark.Tuple) uint64) *starlark.Builtin {
	b := fn.(*starlark.Builtin)
	return starlark.NewBuiltin(b.Name(), func(thread *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		if err := m.Reserve(bound(args, kwargs), b.Name()); err != nil {
			return nil, err
		}
		return b.CallInternal(thread, args, kwargs)
	})
}

// materialising is the universe built-in name, which makes a collection
// of its positional arguments' elements, each taking perElem bytes, behind
// a reservation. An iterable of no known length is first collected into
// a tuple, reserving as it grows.
func (m *Budget) materialising(name string, perElem uint64) *starlark.Builtin {
	b := starlark.Universe[name].(*starlark.Builtin)
	return starlark.NewBuiltin(name, func(thread *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		args, err := m.collectUnsized(name, args)
		if err != nil {
			return nil, err
		}
		if err := m.Reserve(elementsBound(args, perElem), name); err != nil {
			return nil, err
		}
		return b.CallInternal(thread, args, kwargs)
	})
}

// collectUnsized returns args with every iterable of unknown length
// replaced by a tuple of its elements, reserving every reserveFloor bytes
// while collecting.
func (m *Budget) collectUnsized(what string, args starlark.Tuple) (starlark.Tuple, error) {
	var out starlark.Tuple
	for i, a := range args {
		it, ok := a.(starlark.Iterable)
		if !ok || starlark.Len(a) >= 0 {
			continue
		}
		if out == nil {
			out = append(starlark.Tuple(nil), args...)
		}
		var elems starlark.Tuple
		iter := it.Iterate()
		var x starlark.Value
		for iter.Next(&x) {
			if len(elems) == cap(elems) {
				if err := m.Reserve(2*16*uint64(len(elems)+1), what); err != nil {
					iter.Done()
					return nil, err
				}
			}
			elems = append(elems, x)
		}
		iter.Done()
		out[i] = elems
	}
	if out == nil {
		return args, nil
	}
	return out, nil
}

// elementsBound is the elements of args that are sized collections, at
// perElem bytes each.
func elementsBound(args starlark.Tuple, perElem uint64) uint64 {
	var n uint64
	for _, a := range args {
		if _, ok := a.(starlark.Iterable); ok {
			if l := starlark.Len(a); l > 0 {
				n += uint64(l)
			}
		}
	}
	return n * perElem
}

// method returns the method v (name of recv) guarded by a reservation,
// or v itself when recv's name does not build from its arguments.
func (m *Budget) method(recv starlark.Value, name string, v starlark.Value) starlark.Value {
	b, ok := v.(*starlark.Builtin)
	if !ok {
		return v
	}
	var bound func(args starlark.Tuple, kwargs []starlark.Tuple) uint64
	switch recv := recv.(type) {
	case starlark.String:
		s := string(recv)
		switch name {
		case "join":
			bound = func(args starlark.Tuple, _ []starlark.Tuple) uint64 {
				if len(args) == 0 {
					return 0
				}
				return joinBound(s, args[0], m.Limit())
			}
		case "replace":
			bound = func(args starlark.Tuple, _ []starlark.Tuple) uint64 { return replaceBound(s, args) }
		case "format":
			bound = func(args starlark.Tuple, kwargs []starlark.Tuple) uint64 {
				all := append(starlark.Tuple(nil), args...)
				for _, kv := range kwargs {
					all = append(all, kv[1])
				}
				return fieldsBound(s, '{', all, m.Limit())
			}
		case "split", "rsplit", "splitlines":
			bound = func(args starlark.Tuple, _ []starlark.Tuple) uint64 { return splitBound(s, name, args) }
		default:
			return v
		}
	case *starlark.List, *starlark.Dict, *starlark.Set:
		// The receiver may grow to hold its elements and the arguments'
		// (a list's backing array is reallocated at twice its length).
		per := uint64(hashEntryBytes)
		if _, ok := recv.(*starlark.List); ok {
			per = 32
		}
		base := uint64(starlark.Len(recv))
		bound = func(args starlark.Tuple, _ []starlark.Tuple) uint64 {
			n := elementsBound(args, 1)
			if n == 0 {
				return 0
			}
			return (n + base) * per
		}
	default:
		return v
	}
	return starlark.NewBuiltin(b.Name(), func(thread *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		if _, sized := recv.(starlark.String); !sized {
			var err error
			if args, err = m.collectUnsized(name, args); err != nil {
				return nil, err
			}
		}
		if err := m.Reserve(bound(args, kwargs), recv.Type()+"."+name); err != nil {
			return nil, err
		}
		return b.CallInternal(thread, args, kwargs)
	})
}

// guardedOperand is the right operand of x op= y: Starlark hands it the
// left operand through HasBinary, and it checks the result's size before
// applying op. A list's += extends the list in place, as Starlark does.
type guardedOperand struct {
	m  *Budget
	op syntax.Token
	v  starlark.Value
}

var _ starlark.HasBinary = (*guardedOperand)(nil)

func (g *guardedOperand) String() string        { return g.v.String() }
func (g *guardedOperand) Type() string          { return g.v.Type() }
func (g *guardedOperand) Freeze()               { g.v.Freeze() }
func (g *guardedOperand) Truth() starlark.Bool  { return g.v.Truth() }
func (g *guardedOperand) Hash() (uint32, error) { return g.v.Hash() }

func (g *guardedOperand) Binary(op syntax.Token, x starlark.Value, side starlark.Side) (starlark.Value, error) {
	if side == starlark.Left { // x op= y never puts y on the left
		return nil, nil
	}
	if err := g.m.Reserve(binaryBound(g.op, x, g.v, g.m.Limit()), "the "+g.op.String()+"= of "+x.Type()+" and "+g.v.Type()); err != nil {
		return nil, err
	}
	if l, ok := x.(*starlark.List); ok && g.op == syntax.PLUS {
		if it, ok := g.v.(starlark.Iterable); ok {
			iter := it.Iterate()
			defer iter.Done()
			var elems []starlark.Value // y may be x itself
			var e starlark.Value
			for iter.Next(&e) {
				elems = append(elems, e)
			}
			for _, e := range elems {
				if err := l.Append(e); err != nil {
					return nil, err
				}
			}
			return l, nil
		}
	}
	return starlark.Binary(g.op, x, g.v)
}

// binaryBound bounds the bytes of x op y: the repetitions and
// concatenations of strings, bytes, lists and tuples, and a string's %
// formatting. Other operands allocate no more than their size.
func binaryBound(op syntax.Token, x, y starlark.Value, limit uint64) uint64 {
	switch op {
	case syntax.STAR:
		if a, ok := x.(starlark.Int); ok {
			if b, ok := y.(starlark.Int); ok {
				// A product has the bits of both; Karatsuba's
				// temporaries take as much again and more.
				return 4 * (uint64(a.BigInt().BitLen()+b.BigInt().BitLen())/8 + 16)
			}
		}
		if n, ok := repeatCount(y); ok {
			return repeatBound(x, n)
		}
		if n, ok := repeatCount(x); ok {
			return repeatBound(y, n)
		}
	case syntax.PLUS:
		return seqBytes(x) + seqBytes(y)
	case syntax.PERCENT:
		if s, ok := x.(starlark.String); ok {
			args, ok := y.(starlark.Tuple)
			if !ok {
				args = starlark.Tuple{y}
			}
			return fieldsBound(string(s), '%', args, limit)
		}
	}
	return 0
}

// repeatCount is v as a repetition count, if it is an int.
func repeatCount(v starlark.Value) (uint64, bool) {
	i, ok := v.(starlark.Int)
	if !ok {
		return 0, false
	}
	n, ok := i.Int64()
	if !ok {
		return 1 << 62, true // Starlark refuses it; no allocation happens
	}
	return uint64(max(n, 0)), true
}

func repeatBound(v starlark.Value, n uint64) uint64 {
	b := seqBytes(v)
	if b != 0 && n > (1<<62)/b {
		return 1 << 62
	}
	return b * n
}

// seqBytes is what the elements of a string, bytes, list or tuple take
// (a list's and tuple's elements are shared, not copied).
func seqBytes(v starlark.Value) uint64 {
	switch v := v.(type) {
	case starlark.String:
		return uint64(len(v))
	case starlark.Bytes:
		return uint64(len(v))
	case *starlark.List:
		return 16 * uint64(v.Len())
	case starlark.Tuple:
		return 16 * uint64(len(v))
	}
	return 0
}

// fieldsBound bounds a format string s with at most one field per mark
// (% or {), each filled by at most the longest rendering of args.
func fieldsBound(s string, mark byte, args starlark.Tuple, limit uint64) uint64 {
	fields := uint64(strings.Count(s, string(mark)))
	if fields == 0 {
		return uint64(len(s))
	}
	var widest uint64
	for _, a := range args {
		widest = max(widest, TextBound(a, limit/fields+1))
	}
	return uint64(len(s)) + fields*widest
}

// joinBound bounds sep.join(iterable).
func joinBound(sep string, iterable starlark.Value, limit uint64) uint64 {
	it, ok := iterable.(starlark.Iterable)
	if !ok {
		return 0
	}
	iter := it.Iterate()
	defer iter.Done()
	var n uint64
	var x starlark.Value
	for iter.Next(&x) {
		s, ok := x.(starlark.String)
		if !ok {
			return 0 // join refuses it
		}
		n += uint64(len(s)) + uint64(len(sep))
		if n > limit {
			break
		}
	}
	return n
}

// replaceBound bounds s.replace(old, new, count?).
func replaceBound(s string, args starlark.Tuple) uint64 {
	if len(args) < 2 {
		return 0
	}
	old, ok1 := args[0].(starlark.String)
	repl, ok2 := args[1].(starlark.String)
	if !ok1 || !ok2 || len(repl) <= len(old) {
		return uint64(len(s))
	}
	n := uint64(strings.Count(s, string(old)))
	if len(args) > 2 {
		if c, ok := args[2].(starlark.Int); ok {
			if c, ok := c.Uint64(); ok && c < n {
				n = c
			}
		}
	}
	return uint64(len(s)) + n*uint64(len(repl)-len(old))
}

// splitBound bounds s.split/rsplit/splitlines: a list of substrings, each
// a string header in the list and in the slice it is made from.
func splitBound(s, method string, args starlark.Tuple) uint64 {
	var n uint64
	switch {
	case method == "splitlines":
		n = uint64(strings.Count(s, "\n")+strings.Count(s, "\r")) + 1
	case len(args) > 0 && args[0] != starlark.None:
		sep, ok := args[0].(starlark.String)
		if !ok || len(sep) == 0 {
			return 0
		}
		n = uint64(strings.Count(s, string(sep))) + 1
	default:
		n = 1
		space := true
		for _, r := range s {
			if unicode.IsSpace(r) != space {
				space = !space
				if !space {
					n++
				}
			}
		}
	}
	return 48 * n
}

// sumBound bounds the text of every value of args, as str, repr or JSON
// writes it.
func sumBound(args starlark.Tuple, limit uint64) uint64 {
	var n uint64
	for _, a := range args {
		n += TextBound(a, limit) + 1
		if n > limit {
			break
		}
	}
	return n
}

// TextBound bounds the length of v written as text: repr, str and JSON
// escape at most a few bytes per byte of a string and never write more
// around a value than these counts. It stops counting once over limit.
func TextBound(v starlark.Value, limit uint64) uint64 {
	t := textSizer{limit: limit, path: map[starlark.Value]bool{}}
	t.value(v)
	return t.n
}

type textSizer struct {
	n, limit uint64
	path     map[starlark.Value]bool // containers being written (a cycle is written [...])
}

func (t *textSizer) value(v starlark.Value) {
	if t.n > t.limit {
		return
	}
	switch v := v.(type) {
	case starlark.String:
		t.n += escapedBound(string(v))
	case starlark.Bytes:
		t.n += escapedBound(string(v))
	case starlark.Int:
		t.n += uint64(v.BigInt().BitLen()/3 + 2)
	case starlark.Float, starlark.Bool, starlark.NoneType:
		t.n += 32
	case starlark.Tuple:
		t.elems(v)
	case *starlark.List, *starlark.Dict, *starlark.Set:
		if t.path[v] {
			t.n += 5
			return
		}
		t.path[v] = true
		if d, ok := v.(*starlark.Dict); ok {
			for _, kv := range d.Items() {
				t.elems(kv)
			}
		} else {
			it := v.(starlark.Iterable).Iterate()
			var e starlark.Value
			for it.Next(&e) && t.n <= t.limit {
				t.value(e)
				t.n += 2
			}
			it.Done()
		}
		delete(t.path, v)
		t.n += 8
	case *starlarkstruct.Struct:
		for _, name := range v.AttrNames() {
			f, _ := v.Attr(name)
			t.n += uint64(len(name)) + 4
			t.value(f)
		}
		t.n += 16
	default:
		t.n += uint64(len(v.String()))
	}
}

func (t *textSizer) elems(vs starlark.Tuple) {
	for _, e := range vs {
		t.value(e)
		t.n += 2
	}
	t.n += 4
}

// escapedBound bounds s quoted: \uXXXX is at most six bytes for one.
func escapedBound(s string) uint64 {
	n := uint64(len(s)) + 2
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' || c == 0x7f {
			n += 5
		}
	}
	return n
}

// JSON decoding costs, per token, of what json.decode makes of it: a
// dict's hash table, a list's header, a slot in either (with the room a
// growing list or table leaves), a string's header and bytes, a number.
const (
	jsonDictBytes  = 640
	jsonListBytes  = 64
	jsonSlotBytes  = 160
	jsonValueBytes = 32
)

// jsonDecodeBound bounds the bytes json.decode makes of s, from one pass
// over it counting its containers, members and values.
func jsonDecodeBound(s string) uint64 {
	var dicts, lists, slots, values uint64
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '{':
			dicts++
			slots++
		case '[':
			lists++
			slots++
		case ',':
			slots++
		case '"':
			values++
			for i++; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' {
					i++
				}
			}
		case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9', 't', 'f', 'n':
			values++
			for i+1 < len(s) && strings.IndexByte(",]}: \t\r\n", s[i+1]) < 0 {
				i++
			}
		}
	}
	return uint64(len(s)) + dicts*jsonDictBytes + lists*jsonListBytes + slots*jsonSlotBytes + values*jsonValueBytes
}

// jsonIndentBound bounds json.indent(s): every token may start a line of
// the prefix and one indent per level of nesting.
func jsonIndentBound(s string, perLevel int) uint64 {
	var depth, maxDepth, tokens uint64
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '{', '[':
			depth++
			maxDepth = max(maxDepth, depth)
			tokens++
		case '}', ']':
			if depth > 0 {
				depth--
			}
			tokens++
		case ',', ':':
			tokens++
		}
	}
	return uint64(len(s)) + tokens*(1+(maxDepth+1)*uint64(perLevel))
}

// predeclared are the globals of every workflow (codegen.Predeclared).
var predeclared = starlark.StringDict{
	"json":   json.Module,
	"struct": starlark.NewBuiltin("struct", starlarkstruct.Make),
}
