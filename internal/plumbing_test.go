package internal_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// testFiles parses every _test.go file under the module's internal/ and
// cmd/ directories, skipping testdata.
func testFiles(t *testing.T) map[string]*ast.File {
	t.Helper()
	files := map[string]*ast.File{}
	fset := token.NewFileSet()
	for _, root := range []string{".", "../cmd"} {
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && d.Name() == "testdata" {
				return filepath.SkipDir
			}
			if d.IsDir() || !strings.HasSuffix(p, "_test.go") {
				return nil
			}
			f, err := parser.ParseFile(fset, p, nil, 0)
			if err != nil {
				return err
			}
			files[filepath.ToSlash(p)] = f
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return files
}

// TestUpdateSwitch: one switch rewrites every golden file in every
// package, CRYSTALLIZE_UPDATE=1 go test ./..., so that no package
// needs a flag the others lack. Every test flag named "update" must take
// its default from that variable.
func TestUpdateSwitch(t *testing.T) {
	n := 0
	for name, f := range testFiles(t) {
		ast.Inspect(f, func(node ast.Node) bool {
			call, ok := node.(*ast.CallExpr)
			if !ok || len(call.Args) < 2 {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if x, ok := sel.X.(*ast.Ident); !ok || x.Name != "flag" || sel.Sel.Name != "Bool" {
				return true
			}
			if lit, ok := call.Args[0].(*ast.BasicLit); !ok || lit.Value != `"update"` {
				return true
			}
			n++
			if !mentions(call.Args[1], `"CRYSTALLIZE_UPDATE"`) {
				t.Errorf("%s: the -update flag's default does not read CRYSTALLIZE_UPDATE", name)
			}
			return true
		})
	}
	if n == 0 {
		t.Error("found no -update flag: the scan is broken")
	}
}

// TestNoAbsoluteFixturePaths: tests read the shared fixtures relative to
// the module root (../shared beside it), never by an absolute path that
// holds only on one machine.
func TestNoAbsoluteFixturePaths(t *testing.T) {
	for name, f := range testFiles(t) {
		if name == "plumbing_test.go" {
			continue // its patterns name what they look for
		}
		ast.Inspect(f, func(node ast.Node) bool {
			lit, ok := node.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil {
				return true
			}
			if strings.HasPrefix(s, "/") && (strings.Contains(s, "/shared/fixtures") || strings.Contains(s, "/shared/seeds") || strings.HasPrefix(s, "/work/shared")) {
				t.Errorf("%s: absolute fixture path %q; read ../shared relative to the module root", name, s)
			}
			return true
		})
	}
}

// mentions reports whether the expression e holds the literal lit.
func mentions(e ast.Expr, lit string) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		if l, ok := n.(*ast.BasicLit); ok && l.Value == lit {
			found = true
		}
		return !found
	})
	return found
}
