package internal_test

import (
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", os.Getenv("CRYSTALLIZE_UPDATE") != "", "rewrite the package diagram in docs/architecture.md (or set CRYSTALLIZE_UPDATE=1)")

// Markers around the generated package diagram in docs/architecture.md.
const (
	diagramStart = "<!-- package graph: generated from internal/deps_test.go by go test ./internal -update -->"
	diagramEnd   = "<!-- end of package graph -->"
)

// TestArchitectureDiagram checks that the package diagram of
// docs/architecture.md draws exactly the import graph allowed above: an
// arrow for every allowed import and no other, so the picture a newcomer
// reads first cannot drift from the rule the build enforces. With -update
// it rewrites the diagram.
func TestArchitectureDiagram(t *testing.T) {
	file := filepath.Join("..", "docs", "architecture.md")
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	start, end := strings.Index(doc, diagramStart), strings.Index(doc, diagramEnd)
	if start < 0 || end < start {
		t.Fatalf("%s: no package diagram between %q and %q", file, diagramStart, diagramEnd)
	}
	got := doc[start+len(diagramStart) : end]
	want := "\n" + diagram() + "\n"
	if got == want {
		return
	}
	if *update {
		if err := os.WriteFile(file, []byte(doc[:start+len(diagramStart)]+want+doc[end:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s: the package diagram differs from the import graph in deps_test.go; run go test ./internal -update\n--- want\n%s\n--- got\n%s", file, want, got)
}

// diagram draws allowed as a mermaid flowchart: an arrow from each
// package to each one it may import, in sorted order, one line a package
// (mermaid's "a --> b & c"), so that the map stays short as packages are
// added. internal/cli may import every package, which would be an arrow
// to each; the diagram says so once instead.
func diagram() string {
	var b strings.Builder
	b.WriteString("```mermaid\nflowchart LR\n")
	pkgs := make([]string, 0, len(allowed))
	for p := range allowed {
		pkgs = append(pkgs, p)
	}
	slices.Sort(pkgs)
	for _, p := range pkgs {
		deps := slices.Sorted(slices.Values(allowed[p]))
		if slices.Contains(deps, "*") {
			b.WriteString("  " + node(p) + " ==> every[\"every package\"]\n")
			continue
		}
		if len(deps) == 0 {
			b.WriteString("  " + node(p) + "\n")
		}
		if len(deps) > 0 {
			targets := make([]string, len(deps))
			for i, d := range deps {
				targets[i] = node(d)
			}
			b.WriteString("  " + node(p) + " --> " + strings.Join(targets, " & ") + "\n")
		}
	}
	b.WriteString("```")
	return b.String()
}

// node is a package's mermaid node: its path without "internal/" as the
// label, and as the id with "/" made "_". The module root, whose path is
// ".", is drawn as the library interface it is.
func node(pkg string) string {
	if pkg == "." {
		return `api["crystallize (module root, public API)"]`
	}
	name := strings.TrimPrefix(pkg, "internal/")
	id := strings.ReplaceAll(name, "/", "_")
	if id == name {
		return id
	}
	return id + "[\"" + name + "\"]"
}
