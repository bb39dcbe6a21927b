// Package derive finds, without a model, expressions that compute one
// parameter of a workflow from others, and reads them back.
//
// The language is small on purpose: string literals, parameter
// references, x.split(sep)[i], x.replace(old, new), x.lower(), x.upper()
// and the concatenation of these. Every expression is printed as
// Starlark (and Python) that means the same as Expr.Eval, so a workflow
// can compute a value its caller no longer passes. The search is
// enumerative and bounded (smallest expression first), and an
// expression is only ever returned after it has been evaluated on every
// example it was found on. Parse accepts exactly the printed form, so an
// expression stored in a candidate cannot smuggle any other code into a
// generated workflow.
package derive

import (
	"container/heap"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Expr is an expression of the template language that derives one
// parameter's value from others: string literals, parameter references,
// x.split(sep)[i], x.replace(old, new), x.lower(), x.upper(), and the
// concatenation of these. String returns it as Starlark (and Python), so
// it can be written into a workflow as is.
type Expr interface {
	// Eval computes the expression over one example's values; false
	// when it is undefined there (a missing value, an index out of
	// range).
	Eval(values map[string]string) (string, bool)
	String() string
	// Size is the expression's cost in the search: one per literal,
	// reference and operation.
	Size() int
}

type (
	litExpr   struct{ s string }
	refExpr   struct{ name string }
	lowerExpr struct{ x Expr }
	upperExpr struct{ x Expr }
	splitExpr struct {
		x   Expr
		sep string
		i   int
	}
	replaceExpr struct {
		x        Expr
		old, new string
	}
	concatExpr struct{ parts []Expr }
)

func (e litExpr) Eval(map[string]string) (string, bool) { return e.s, true }
func (e litExpr) String() string                        { return strconv.Quote(e.s) }
func (e litExpr) Size() int                             { return 1 }

func (e refExpr) Eval(v map[string]string) (string, bool) { s, ok := v[e.name]; return s, ok }
func (e refExpr) String() string                          { return e.name }
func (e refExpr) Size() int                               { return 1 }

func (e lowerExpr) Eval(v map[string]string) (string, bool) {
	s, ok := e.x.Eval(v)
	return strings.ToLower(s), ok
}
func (e lowerExpr) String() string { return e.x.String() + ".lower()" }
func (e lowerExpr) Size() int      { return 1 + e.x.Size() }

func (e upperExpr) Eval(v map[string]string) (string, bool) {
	s, ok := e.x.Eval(v)
	return strings.ToUpper(s), ok
}
func (e upperExpr) String() string { return e.x.String() + ".upper()" }
func (e upperExpr) Size() int      { return 1 + e.x.Size() }

// Eval splits as Python's str.split(sep) does and indexes from the end
// for negative i.
func (e splitExpr) Eval(v map[string]string) (string, bool) {
	s, ok := e.x.Eval(v)
	if !ok {
		return "", false
	}
	parts := strings.Split(s, e.sep)
	i := e.i
	if i < 0 {
		i += len(parts)
	}
	if i < 0 || i >= len(parts) {
		return "", false
	}
	return parts[i], true
}
func (e splitExpr) String() string {
	return e.x.String() + ".split(" + strconv.Quote(e.sep) + ")[" + strconv.Itoa(e.i) + "]"
}
func (e splitExpr) Size() int { return 1 + e.x.Size() }

func (e replaceExpr) Eval(v map[string]string) (string, bool) {
	s, ok := e.x.Eval(v)
	return strings.ReplaceAll(s, e.old, e.new), ok
}
func (e replaceExpr) String() string {
	return e.x.String() + ".replace(" + strconv.Quote(e.old) + ", " + strconv.Quote(e.new) + ")"
}
func (e replaceExpr) Size() int { return 1 + e.x.Size() }

func (e concatExpr) Eval(v map[string]string) (string, bool) {
	var b strings.Builder
	for _, p := range e.parts {
		s, ok := p.Eval(v)
		if !ok {
			return "", false
		}
		b.WriteString(s)
	}
	return b.String(), true
}
func (e concatExpr) String() string {
	s := make([]string, len(e.parts))
	for i, p := range e.parts {
		s[i] = p.String()
	}
	return strings.Join(s, " + ")
}
func (e concatExpr) Size() int {
	n := 0
	for _, p := range e.parts {
		n += p.Size()
	}
	return n
}

// Bounds of the search. They keep it to milliseconds on a step's
// parameters while covering the shapes seen in practice (a branch or a
// title built from a version and a path).
const (
	deriveMaxAtomSize   = 3     // a reference under at most two operations
	deriveMaxAtoms      = 1000  // distinct atoms kept per parameter
	deriveMaxPieces     = 7     // parts of a concatenation
	deriveMaxExpansions = 50000 // search states expanded
)

// MinValues is the fewest distinct values a parameter must take in the
// examples to be derived. Two points fit many expressions: release-0.8.0
// and /work/harn-0 share a trailing 0 by accident.
const MinValues = 3

// minPiece is the shortest value a piece of a parameter (a split) may
// contribute to an expression in any example. A single character taken
// out of a longer value (the last digit of a version) matches a counter
// or an index by coincidence far more often than by design; a whole
// parameter may be as short as it likes.
const minPiece = 2

// deriveSeparators are the characters split and replace may use, when
// they occur in the examples.
const deriveSeparators = "/-_.@: "

// Parameter searches for the smallest expression over the other
// keys of the examples that yields examples[i][target] in every example,
// and reports whether it found one. It needs the target to take at
// least MinValues distinct values (a value that never varies is a
// constant, and an expression fitted to two values is a guess), and the
// expression must use at least one other value.
//
// The search has two levels. Atoms are references under up to two string
// operations, enumerated bottom-up and deduplicated by what they compute
// on the examples (observational equivalence: of two atoms with the same
// outputs only the smaller is kept). A concatenation is then a path that
// consumes every example's target from left to right, each step taking an
// atom or a literal that is a prefix of what is left in every example;
// uniform-cost search over the per-example offsets finds the cheapest
// path first, so the first complete expression is a smallest one. Every
// step is checked on every example, and the result is evaluated once
// more on all of them before it is returned.
func Parameter(examples []map[string]string, target string) (Expr, bool) {
	if len(examples) < MinValues {
		return nil, false
	}
	var names []string
	for k := range examples[0] {
		if k != target && inAll(examples, k) {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	return search(examples, target, enumerateAtoms(examples, names), func(string) bool { return true })
}

// inAll reports whether every example has key k.
func inAll(examples []map[string]string, k string) bool {
	for _, ex := range examples {
		if _, ok := ex[k]; !ok {
			return false
		}
	}
	return true
}

// search finds the smallest concatenation of literals and the atoms
// whose reference allow accepts that yields target in every example.
// Only atoms whose output occurs in the target of every example can be
// part of it, so the others are dropped before the search, which keeps
// its inner loop short.
func search(examples []map[string]string, target string, atoms []atom, allow func(ref string) bool) (Expr, bool) {
	want := make([]string, len(examples))
	distinct := map[string]bool{}
	for i, ex := range examples {
		v, ok := ex[target]
		if !ok {
			return nil, false
		}
		want[i] = v
		distinct[v] = true
	}
	if len(distinct) < MinValues {
		return nil, false
	}
	var usable []atom
	for _, a := range atoms {
		if a.ref == target || !allow(a.ref) {
			continue
		}
		ok := true
		for i, o := range a.out {
			if !strings.Contains(want[i], o) {
				ok = false
				break
			}
		}
		if ok {
			usable = append(usable, a)
		}
	}
	expr, ok := deriveConcat(usable, want)
	if !ok {
		return nil, false
	}
	for i, ex := range examples {
		if got, ok := expr.Eval(ex); !ok || got != want[i] {
			return nil, false
		}
	}
	return expr, true
}

// atom is a reference under string operations, with what it computes on
// each example.
type atom struct {
	expr Expr
	ref  string
	out  []string
}

// enumerateAtoms enumerates the atoms of each name, in name order and
// then in order of size. Atoms of one name are deduplicated by what they
// compute on the examples (of two with the same outputs only the smaller
// is kept); atoms of different names are not, so that a search that may
// not read one name still has the other's.
func enumerateAtoms(examples []map[string]string, names []string) []atom {
	var seps []string
	for _, c := range deriveSeparators {
		s := string(c)
		for _, ex := range examples {
			found := false
			for _, v := range ex {
				if strings.Contains(v, s) {
					found = true
					break
				}
			}
			if found {
				seps = append(seps, s)
				break
			}
		}
	}
	var atoms []atom
	for _, name := range names {
		seen := map[string]bool{}
		n := 0
		add := func(e Expr) bool {
			if n >= deriveMaxAtoms {
				return false
			}
			out := make([]string, len(examples))
			empty := true
			piece := hasSplit(e)
			for i, ex := range examples {
				s, ok := e.Eval(ex)
				if !ok || piece && utf8.RuneCountInString(s) < minPiece {
					return false
				}
				out[i] = s
				empty = empty && s == ""
			}
			key := strings.Join(out, "\x00")
			if empty || seen[key] {
				return false
			}
			seen[key] = true
			n++
			atoms = append(atoms, atom{e, name, out})
			return true
		}
		level := []Expr{}
		if add(refExpr{name}) {
			level = append(level, refExpr{name})
		}
		for size := 2; size <= deriveMaxAtomSize; size++ {
			var next []Expr
			for _, x := range level {
				cands := []Expr{lowerExpr{x}, upperExpr{x}}
				for _, sep := range seps {
					// -1 first: among splits that agree on the
					// examples, the last segment is the one that
					// generalizes (a path's base name, however deep the
					// path).
					for _, i := range []int{-1, 0, 1, 2, -2} {
						cands = append(cands, splitExpr{x, sep, i})
					}
					for _, rep := range append([]string{""}, seps...) {
						if rep != sep {
							cands = append(cands, replaceExpr{x, sep, rep})
						}
					}
				}
				for _, c := range cands {
					if add(c) {
						next = append(next, c)
					}
				}
			}
			level = next
		}
	}
	return atoms
}

// hasSplit reports whether e takes a piece of a value.
func hasSplit(e Expr) bool {
	switch x := e.(type) {
	case splitExpr:
		return true
	case lowerExpr:
		return hasSplit(x.x)
	case upperExpr:
		return hasSplit(x.x)
	case replaceExpr:
		return hasSplit(x.x)
	}
	return false
}

// deriveState is a node of the concatenation search.
type deriveState struct {
	off     []int
	parts   []Expr
	cost    int
	lastLit bool
	refs    int
	seq     int
}

type deriveQueue []*deriveState

func (q deriveQueue) Len() int { return len(q) }
func (q deriveQueue) Less(i, j int) bool {
	if q[i].cost != q[j].cost {
		return q[i].cost < q[j].cost
	}
	if len(q[i].parts) != len(q[j].parts) {
		return len(q[i].parts) < len(q[j].parts)
	}
	return q[i].seq < q[j].seq
}
func (q deriveQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *deriveQueue) Push(x any)   { *q = append(*q, x.(*deriveState)) }
func (q *deriveQueue) Pop() any {
	old := *q
	x := old[len(old)-1]
	*q = old[:len(old)-1]
	return x
}

func deriveConcat(atoms []atom, want []string) (Expr, bool) {
	seq := 0
	q := &deriveQueue{{off: make([]int, len(want))}}
	best := map[string]int{}
	for expansions := 0; q.Len() > 0 && expansions < deriveMaxExpansions; expansions++ {
		s := heap.Pop(q).(*deriveState)
		done := true
		for i, o := range s.off {
			if o != len(want[i]) {
				done = false
				break
			}
		}
		if done {
			if s.refs == 0 {
				continue
			}
			if len(s.parts) == 1 {
				return s.parts[0], true
			}
			return concatExpr{s.parts}, true
		}
		if len(s.parts) >= deriveMaxPieces {
			continue
		}
		push := func(e Expr, off []int, lit bool) {
			key := offKey(off)
			cost := s.cost + e.Size()
			if c, ok := best[key+boolKey(lit)]; ok && c <= cost {
				return
			}
			best[key+boolKey(lit)] = cost
			seq++
			refs := s.refs
			if !lit {
				refs++
			}
			heap.Push(q, &deriveState{off: off, parts: append(append([]Expr(nil), s.parts...), e), cost: cost, lastLit: lit, refs: refs, seq: seq})
		}
		for _, a := range atoms {
			off := make([]int, len(want))
			ok := true
			for i, o := range a.out {
				if !strings.HasPrefix(want[i][s.off[i]:], o) {
					ok = false
					break
				}
				off[i] = s.off[i] + len(o)
			}
			if ok {
				push(a.expr, off, false)
			}
		}
		if !s.lastLit {
			// Literals: every common prefix of what is left.
			rest := want[0][s.off[0]:]
			n := len(rest)
			for i := 1; i < len(want) && n > 0; i++ {
				n = min(n, commonPrefix(rest, want[i][s.off[i]:]))
			}
			for l := 1; l <= n; l++ {
				if l < len(rest) && !utf8.RuneStart(rest[l]) {
					continue // never split a character
				}
				off := make([]int, len(want))
				for i := range off {
					off[i] = s.off[i] + l
				}
				push(litExpr{rest[:l]}, off, true)
			}
		}
	}
	return nil, false
}

func commonPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

func offKey(off []int) string {
	var b strings.Builder
	for _, o := range off {
		b.WriteString(strconv.Itoa(o))
		b.WriteByte(',')
	}
	return b.String()
}

func boolKey(b bool) string {
	if b {
		return "L"
	}
	return "A"
}

// Refs returns the parameters e reads, sorted, without duplicates.
func Refs(e Expr) []string {
	seen := map[string]bool{}
	var walk func(Expr)
	walk = func(e Expr) {
		switch x := e.(type) {
		case refExpr:
			seen[x.name] = true
		case lowerExpr:
			walk(x.x)
		case upperExpr:
			walk(x.x)
		case splitExpr:
			walk(x.x)
		case replaceExpr:
			walk(x.x)
		case concatExpr:
			for _, p := range x.parts {
				walk(p)
			}
		}
	}
	walk(e)
	names := make([]string, 0, len(seen))
	for k := range seen {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// Parameters decides which parameters of a step (or a workflow) a
// caller need not pass: it returns an expression for each parameter that
// derives it from the parameters kept, which are the others. Every
// expression reads only kept parameters, so the derived values can be
// computed at the start of the workflow in any order.
//
// A parameter is derived only from parameters whose values are shorter
// (summed over the examples), and parameters are tried longest first: a
// composite such as a branch name is longer than its parts, so the parts
// (version, repository) stay parameters and the composite is derived,
// never a part from a composite (version from branch.split("-")[-1]),
// even when the composite itself holds something no parameter has (a
// title that also names the previous version) and so cannot be derived.
// Once the kept set is chosen, an expression that reads a parameter
// derived after all is searched again over the kept set alone; a
// parameter for which that finds nothing is kept, and the pass repeats
// until nothing changes (at most once per parameter).
func Parameters(examples []map[string]string) map[string]Expr {
	if len(examples) < MinValues {
		return map[string]Expr{}
	}
	var names []string
	length := map[string]int{}
	for k := range examples[0] {
		names = append(names, k)
		for _, ex := range examples {
			length[k] += len(ex[k])
		}
	}
	sort.Slice(names, func(i, j int) bool {
		if length[names[i]] != length[names[j]] {
			return length[names[i]] > length[names[j]]
		}
		return names[i] < names[j]
	})
	kept := map[string]bool{}
	for _, k := range names {
		kept[k] = true
	}
	// The atoms of every parameter are enumerated once; each search
	// takes those of the parameters it may read: kept and shorter.
	var inEvery []string
	for _, k := range names {
		if inAll(examples, k) {
			inEvery = append(inEvery, k)
		}
	}
	sort.Strings(inEvery)
	atoms := enumerateAtoms(examples, inEvery)
	derive := func(target string) (Expr, bool) {
		return search(examples, target, atoms, func(ref string) bool {
			return kept[ref] && length[ref] < length[target]
		})
	}
	derived := map[string]Expr{}
	for _, k := range names {
		if e, ok := derive(k); ok {
			derived[k] = e
			delete(kept, k)
		}
	}
	for range names {
		changed := false
		for _, k := range names {
			e, ok := derived[k]
			if !ok || allKept(e, kept) {
				// Its expression reads only kept parameters, so it
				// still holds; searching again would cost as much as
				// the first search.
				continue
			}
			e, ok = derive(k)
			if ok {
				derived[k] = e
				continue
			}
			delete(derived, k)
			kept[k] = true
			changed = true
		}
		if !changed {
			break
		}
	}
	return derived
}

// allKept reports whether every parameter e reads is kept.
func allKept(e Expr, kept map[string]bool) bool {
	for _, r := range Refs(e) {
		if !kept[r] {
			return false
		}
	}
	return true
}

// Kept lists, sorted, the keys of the examples that derived (the result
// of Parameters) does not derive: the parameters a caller still has to
// give. It is empty without examples.
func Kept(examples []map[string]string, derived map[string]Expr) []string {
	kept := []string{}
	if len(examples) > 0 {
		for k := range examples[0] {
			if _, ok := derived[k]; !ok {
				kept = append(kept, k)
			}
		}
	}
	sort.Strings(kept)
	return kept
}
