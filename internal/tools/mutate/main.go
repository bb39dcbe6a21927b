// Mutate measures how well a package's tests guard its rules: it breaks
// the package's code one small change (a mutant) at a time, runs the
// package's tests against each, and counts the mutants the tests kill.
//
// Usage:
//
//	go run ./internal/tools/mutate [flags] PKG...
//
// PKG is a package pattern go list accepts (./internal/mine). A mutant is
// one of:
//
//   - cmp: a comparison turned into its negation (== and !=, < and >=,
//     > and <=);
//   - bool: && and || swapped;
//   - not: the condition of an if or for negated;
//   - zero: one value of a return statement replaced by its type's zero
//     value (for the types it can name without type checking), unless it
//     is a constant of the package that already is that zero;
//   - del: a call, assignment or increment statement deleted.
//
// Each mutant is written to a temporary file and laid over the original
// with go test -overlay, so the work tree is never modified and mutants can
// be tested one after another. A mutant is killed when the tests fail or
// time out, survives when they pass, and is not viable when it does not
// compile; the score is killed / (killed + survived). Mutants in functions
// the tests never enter (one coverage run first) survive without a run.
//
// With -match it tests only the mutants whose description matches. With
// -sample N it tests a deterministic sample (by -seed) of N mutants
// of each package, which bounds the run; -timeout bounds each test run.
// It prints one line a package and, with -v, every surviving mutant.
// The exit status is 1 when a package scores under -min.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		if errors.Is(err, errLow) {
			fmt.Fprintln(os.Stderr, "mutate:", err)
			os.Exit(1)
		}
		fmt.Fprintln(os.Stderr, "mutate:", err)
		os.Exit(2)
	}
}

var errLow = errors.New("a package scores under -min")

type config struct {
	sample  int
	seed    uint64
	timeout time.Duration
	min     float64
	verbose bool
	list    bool
	run     string
	match   *regexp.Regexp
}

func run(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("mutate", flag.ContinueOnError)
	var c config
	fs.IntVar(&c.sample, "sample", 0, "test at most `N` mutants of each package, a deterministic sample (0: all)")
	fs.Uint64Var(&c.seed, "seed", 1, "seed of the sample")
	fs.DurationVar(&c.timeout, "timeout", 3*time.Minute, "time one test run of a mutant may take before it counts as killed")
	fs.Float64Var(&c.min, "min", 0, "exit 1 when a package kills less than this `share` of its mutants (0 to 1)")
	fs.BoolVar(&c.verbose, "v", false, "list every surviving mutant")
	fs.BoolVar(&c.list, "list", false, "list the mutants of the sample without testing them")
	fs.StringVar(&c.run, "run", "", "pass -run `REGEXP` to go test")
	match := fs.String("match", "", "only the mutants whose description (as -list prints it) matches `REGEXP`")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *match != "" {
		re, err := regexp.Compile(*match)
		if err != nil {
			return fmt.Errorf("-match: %w", err)
		}
		c.match = re
	}
	if fs.NArg() == 0 {
		return errors.New("usage: mutate [flags] PKG [PKG ...] (one or more packages)")
	}
	tmp, err := os.MkdirTemp("", "mutate-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	low := false
	for _, pattern := range fs.Args() {
		pkgs, err := listPackages(pattern)
		if err != nil {
			return err
		}
		for _, p := range pkgs {
			res, err := mutatePackage(p, c, tmp, out)
			if err != nil {
				return fmt.Errorf("%s: %w", p.ImportPath, err)
			}
			fmt.Fprintln(out, res.line(p.ImportPath))
			if c.min > 0 && res.score() < c.min {
				low = true
			}
		}
	}
	if low {
		return errLow
	}
	return nil
}

// pkg is what go list says of a package.
type pkg struct {
	ImportPath string
	Dir        string
	GoFiles    []string
}

func listPackages(pattern string) ([]pkg, error) {
	cmd := exec.Command("go", "list", "-json", pattern)
	cmd.Stderr = os.Stderr
	b, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list %s: %w", pattern, err)
	}
	var out []pkg
	dec := json.NewDecoder(bytes.NewReader(b))
	for dec.More() {
		var p pkg
		if err := dec.Decode(&p); err != nil {
			return nil, fmt.Errorf("go list %s: %w", pattern, err)
		}
		out = append(out, p)
	}
	return out, nil
}

// mutant is one change to one file: the bytes [start, end) replaced.
type mutant struct {
	file       string
	line       int
	start, end int
	repl       string
	op         string // cmp, bool, not, zero, del
	desc       string
	// body is the lines of the function it is in: a mutant of a
	// function no test enters cannot be killed.
	body [2]int
}

func (m mutant) String() string {
	return fmt.Sprintf("%s:%d: %s %s", filepath.Base(m.file), m.line, m.op, m.desc)
}

type result struct {
	total, tested               int
	killed, survived, notViable int
	uncovered                   int // survivors never run: no test enters their function
	survivors                   []mutant
}

func (r result) score() float64 {
	if r.killed+r.survived == 0 {
		return 1
	}
	return float64(r.killed) / float64(r.killed+r.survived)
}

func (r result) line(name string) string {
	return fmt.Sprintf("%s: %d of %d mutants: %d killed, %d survived (%d in functions no test enters), %d not viable: score %.1f%%",
		name, r.tested, r.total, r.killed, r.survived, r.uncovered, r.notViable, 100*r.score())
}

func mutatePackage(p pkg, c config, tmp string, out io.Writer) (result, error) {
	var all []mutant
	srcs := map[string][]byte{}
	for _, name := range p.GoFiles {
		path := filepath.Join(p.Dir, name)
		src, err := os.ReadFile(path)
		if err != nil {
			return result{}, err
		}
		srcs[path] = src
	}
	zeros, err := zeroConstants(srcs)
	if err != nil {
		return result{}, err
	}
	for _, name := range p.GoFiles {
		path := filepath.Join(p.Dir, name)
		ms, err := mutants(path, srcs[path], zeros)
		if err != nil {
			return result{}, err
		}
		all = append(all, ms...)
	}
	if c.match != nil {
		all = slices.DeleteFunc(all, func(m mutant) bool { return !c.match.MatchString(m.String()) })
	}
	res := result{total: len(all)}
	sample := all
	if c.sample > 0 && len(all) > c.sample {
		r := rand.New(rand.NewPCG(c.seed, uint64(len(all))))
		idx := r.Perm(len(all))[:c.sample]
		slices.Sort(idx)
		sample = make([]mutant, len(idx))
		for i, k := range idx {
			sample[i] = all[k]
		}
	}
	res.tested = len(sample)
	if c.list {
		for _, m := range sample {
			fmt.Fprintln(out, m)
		}
		return res, nil
	}
	covered, err := coverage(p, c, tmp)
	if err != nil {
		return res, err
	}
	for i, m := range sample {
		if !entered(covered, m) {
			res.survived++
			res.uncovered++
			res.survivors = append(res.survivors, m)
			if c.verbose {
				fmt.Fprintf(out, "  survived (not entered) %s\n", m)
			}
			continue
		}
		verdict, err := testMutant(p, c, tmp, i, m, srcs[m.file])
		if err != nil {
			return res, err
		}
		switch verdict {
		case killed:
			res.killed++
		case notViable:
			res.notViable++
		default:
			res.survived++
			res.survivors = append(res.survivors, m)
			if c.verbose {
				fmt.Fprintf(out, "  survived %s\n", m)
			}
		}
	}
	return res, nil
}

// entered reports whether the tests ran any statement of the function
// m is in. Lines are not enough: a case expression or a condition
// continued on another line belongs to no statement block of a profile.
func entered(covered map[coverKey]bool, m mutant) bool {
	for l := m.body[0]; l <= m.body[1]; l++ {
		if covered[coverKey{filepath.Base(m.file), l}] {
			return true
		}
	}
	return false
}

type coverKey struct {
	file string
	line int
}

// coverage runs the package's tests once with a cover profile and returns
// the lines some statement covered.
func coverage(p pkg, c config, tmp string) (map[coverKey]bool, error) {
	profile := filepath.Join(tmp, "cover.out")
	args := []string{"test", "-count=1", "-covermode=set", "-coverprofile=" + profile}
	if c.run != "" {
		args = append(args, "-run", c.run)
	}
	cmd := exec.Command("go", append(args, p.ImportPath)...)
	if b, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("the tests fail before any mutant: %w\n%s", err, b)
	}
	f, err := os.Open(profile)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	covered := map[coverKey]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// file.go:12.3,14.5 2 1
		line := sc.Text()
		colon := strings.LastIndex(line, ":")
		fields := strings.Fields(line[colon+1:])
		if colon < 0 || len(fields) != 3 || fields[2] == "0" {
			continue
		}
		var l0, c0, l1, c1 int
		if _, err := fmt.Sscanf(fields[0], "%d.%d,%d.%d", &l0, &c0, &l1, &c1); err != nil {
			continue
		}
		file := filepath.Base(line[:colon])
		for l := l0; l <= l1; l++ {
			covered[coverKey{file, l}] = true
		}
	}
	return covered, sc.Err()
}

type verdict int

const (
	survived verdict = iota
	killed
	notViable
)

// testMutant runs the package's tests with m laid over its file.
func testMutant(p pkg, c config, tmp string, i int, m mutant, src []byte) (verdict, error) {
	mutated := make([]byte, 0, len(src)+len(m.repl))
	mutated = append(mutated, src[:m.start]...)
	mutated = append(mutated, m.repl...)
	mutated = append(mutated, src[m.end:]...)
	file := filepath.Join(tmp, fmt.Sprintf("mutant%d.go", i))
	if err := os.WriteFile(file, mutated, 0o644); err != nil {
		return 0, err
	}
	defer os.Remove(file)
	overlay, err := json.Marshal(map[string]map[string]string{"Replace": {m.file: file}})
	if err != nil {
		return 0, err
	}
	ovl := filepath.Join(tmp, "overlay.json")
	if err := os.WriteFile(ovl, overlay, 0o644); err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	args := []string{"test", "-count=1", "-failfast", "-vet=off", "-overlay=" + ovl,
		"-timeout=" + (c.timeout + time.Minute).String()}
	if c.run != "" {
		args = append(args, "-run", c.run)
	}
	cmd := exec.CommandContext(ctx, "go", append(args, p.ImportPath)...)
	cmd.WaitDelay = 10 * time.Second
	b, err := cmd.CombinedOutput()
	switch {
	case err == nil:
		return survived, nil
	case ctx.Err() != nil:
		return killed, nil // a mutant that makes the tests hang is caught
	case bytes.Contains(b, []byte("[build failed]")) || bytes.Contains(b, []byte("[setup failed]")):
		return notViable, nil
	default:
		return killed, nil
	}
}

// zeroConstants returns the package-level constants of a package's
// files whose value is the zero value as a zero mutant writes it ("0",
// `""` or "false"), by name: replacing such a constant by that zero
// changes nothing, so it is no mutant. A constant is zero when its value
// (or the one it repeats, in a const block) is a literal 0, "" or false,
// or iota in the block's first spec.
func zeroConstants(srcs map[string][]byte) (map[string]string, error) {
	zeros := map[string]string{}
	fset := token.NewFileSet()
	for path, src := range srcs {
		f, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			var values []ast.Expr // the value list the spec repeats
			for i, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				if len(vs.Values) > 0 {
					values = vs.Values
				}
				for k, name := range vs.Names {
					if k >= len(values) {
						break
					}
					if z := zeroLiteral(values[k], i); z != "" {
						zeros[name.Name] = z
					}
				}
			}
		}
	}
	return zeros, nil
}

// zeroLiteral is the zero value v spells in the const spec of index i of
// its block, or "".
func zeroLiteral(v ast.Expr, i int) string {
	switch v := v.(type) {
	case *ast.BasicLit:
		switch {
		case v.Kind == token.INT && v.Value == "0":
			return "0"
		case v.Kind == token.STRING && (v.Value == `""` || v.Value == "``"):
			return `""`
		}
	case *ast.Ident:
		switch {
		case v.Name == "false":
			return "false"
		case v.Name == "iota" && i == 0:
			return "0"
		}
	}
	return ""
}

// mutants returns every mutant of one source file, in file order. zeros
// are the package's constants that are their zero value (zeroConstants):
// a return of one is not zeroed.
func mutants(path string, src []byte, zeros map[string]string) ([]mutant, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	tf := fset.File(f.Pos())
	off := func(p token.Pos) int { return tf.Offset(p) }
	text := func(n ast.Node) string { return string(src[off(n.Pos()):off(n.End())]) }
	var out []mutant
	var body [2]int
	add := func(at token.Pos, start, end int, repl, op, desc string) {
		out = append(out, mutant{file: path, line: tf.Line(at), start: start, end: end, repl: repl, op: op, desc: desc, body: body})
	}
	negated := map[token.Token]token.Token{
		token.EQL: token.NEQ, token.NEQ: token.EQL,
		token.LSS: token.GEQ, token.GEQ: token.LSS,
		token.GTR: token.LEQ, token.LEQ: token.GTR,
		token.LAND: token.LOR, token.LOR: token.LAND,
	}
	deletions := func(list []ast.Stmt) {
		for _, st := range list {
			if deletable(st) {
				add(st.Pos(), off(st.Pos()), off(st.End()), "", "del", clip(text(st)))
			}
		}
	}
	for _, decl := range f.Decls {
		fn, ok := decl.(*ast.FuncDecl)
		if !ok || fn.Body == nil {
			continue
		}
		var visit func(results []ast.Expr) func(ast.Node) bool
		visit = func(results []ast.Expr) func(ast.Node) bool {
			return func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.FuncLit:
					// A closure's returns are of its own results.
					ast.Inspect(n.Body, visit(resultTypes(n.Type)))
					return false
				case *ast.BinaryExpr:
					if to, ok := negated[n.Op]; ok {
						op := "cmp"
						if n.Op == token.LAND || n.Op == token.LOR {
							op = "bool"
						}
						p := off(n.OpPos)
						add(n.OpPos, p, p+len(n.Op.String()), to.String(), op, fmt.Sprintf("%s → %s in %s", n.Op, to, clip(text(n))))
					}
				case *ast.IfStmt:
					add(n.Cond.Pos(), off(n.Cond.Pos()), off(n.Cond.End()), "!("+text(n.Cond)+")", "not", "if "+clip(text(n.Cond)))
				case *ast.ForStmt:
					if n.Cond != nil {
						add(n.Cond.Pos(), off(n.Cond.Pos()), off(n.Cond.End()), "!("+text(n.Cond)+")", "not", "for "+clip(text(n.Cond)))
					}
				case *ast.ReturnStmt:
					if len(n.Results) != len(results) {
						break
					}
					for k, r := range n.Results {
						zero := zeroOf(results[k])
						if zero == "" || text(r) == zero || zeros[text(r)] == zero {
							continue
						}
						add(r.Pos(), off(r.Pos()), off(r.End()), zero, "zero", fmt.Sprintf("return %s → %s", clip(text(r)), zero))
					}
				case *ast.BlockStmt:
					deletions(n.List)
				case *ast.CaseClause:
					deletions(n.Body)
				case *ast.CommClause:
					deletions(n.Body)
				}
				return true
			}
		}
		body = [2]int{tf.Line(fn.Body.Pos()), tf.Line(fn.Body.End())}
		ast.Inspect(fn.Body, visit(resultTypes(fn.Type)))
	}
	slices.SortStableFunc(out, func(a, b mutant) int { return a.start - b.start })
	return out, nil
}

// deletable reports whether deleting st leaves code that may compile and
// run differently: a call, an assignment to what exists, an increment.
func deletable(st ast.Stmt) bool {
	switch st := st.(type) {
	case *ast.ExprStmt:
		_, call := st.X.(*ast.CallExpr)
		return call && !isPanic(st.X)
	case *ast.AssignStmt:
		return st.Tok != token.DEFINE
	case *ast.IncDecStmt:
		return true
	}
	return false
}

// isPanic reports whether x is a call to panic, whose deletion only moves
// an impossible case.
func isPanic(x ast.Expr) bool {
	call := x.(*ast.CallExpr)
	id, ok := call.Fun.(*ast.Ident)
	return ok && id.Name == "panic"
}

// resultTypes returns a function's result types, one a value.
func resultTypes(ft *ast.FuncType) []ast.Expr {
	if ft.Results == nil {
		return nil
	}
	var out []ast.Expr
	for _, f := range ft.Results.List {
		n := max(1, len(f.Names))
		for range n {
			out = append(out, f.Type)
		}
	}
	return out
}

// zeroOf is the zero value of a type it can name from the syntax alone,
// or "".
func zeroOf(t ast.Expr) string {
	switch t := t.(type) {
	case *ast.Ident:
		switch t.Name {
		case "bool":
			return "false"
		case "string":
			return `""`
		case "error", "any":
			return "nil"
		case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64",
			"uintptr", "float32", "float64", "byte", "rune":
			return "0"
		}
	case *ast.StarExpr, *ast.MapType, *ast.ChanType, *ast.FuncType, *ast.InterfaceType:
		return "nil"
	case *ast.ArrayType:
		if t.Len == nil {
			return "nil"
		}
	}
	return ""
}

func clip(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 60 {
		return s[:57] + "..."
	}
	return s
}
