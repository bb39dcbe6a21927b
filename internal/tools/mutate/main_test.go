package main

import (
	"bytes"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const source = `package p

func Max(a, b int) int {
	if a < b {
		return b
	}
	return a
}

func Count(xs []int) (n int, ok bool) {
	for i := 0; i < len(xs); i++ {
		n++
	}
	f := func() string { return "x" }
	_ = f
	return n, n > 0 && xs != nil
}
`

// TestMutants lists the mutants of a small file: each kind where it
// applies, a closure's returns by the closure's own results, and nothing
// that could not compile (a := deleted, a value of a type it cannot name).
func TestMutants(t *testing.T) {
	ms, err := mutants("p.go", []byte(source), nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range ms {
		got = append(got, m.String())
	}
	want := []string{
		"p.go:4: not if a < b",
		"p.go:4: cmp < → >= in a < b",
		"p.go:5: zero return b → 0",
		"p.go:7: zero return a → 0",
		"p.go:11: not for i < len(xs)",
		"p.go:11: cmp < → >= in i < len(xs)",
		"p.go:12: del n++",
		"p.go:14: zero return \"x\" → \"\"",
		"p.go:15: del _ = f",
		"p.go:16: zero return n → 0",
		"p.go:16: zero return n > 0 && xs != nil → false",
		"p.go:16: cmp > → <= in n > 0",
		"p.go:16: bool && → || in n > 0 && xs != nil",
		"p.go:16: cmp != → == in xs != nil",
	}
	if !slices.Equal(got, want) {
		t.Errorf("mutants:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Each mutant changes the file where it says.
	for _, m := range ms {
		if m.op == "cmp" && !strings.HasPrefix(source[m.start:], strings.Fields(m.desc)[0]) {
			t.Errorf("%s: replaces %q", m, source[m.start:m.end])
		}
	}
}

// TestRun mutates a package whose test checks Max but not Count: the
// mutants of Max are killed, those of Count survive, and -min fails the
// run.
func TestRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test for every mutant")
	}
	dir := t.TempDir()
	files := map[string]string{
		"go.mod":      "module example.com/m\n\ngo 1.22\n",
		"p/p.go":      source,
		"p/p_test.go": "package p\n\nimport \"testing\"\n\nfunc TestMax(t *testing.T) {\n\tif Max(1, 2) != 2 || Max(3, 2) != 3 {\n\t\tt.Fatal(\"max\")\n\t}\n}\n",
	}
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(dir)
	t.Setenv("GOFLAGS", "-mod=mod")
	var out bytes.Buffer
	err := run([]string{"-v", "-min", "0.5", "./p"}, &out)
	if err != errLow {
		t.Errorf("run: %v, want %v", err, errLow)
	}
	text := out.String()
	for _, want := range []string{
		"example.com/m/p: 14 of 14 mutants: 4 killed, 10 survived (10 in functions no test enters), 0 not viable: score 28.6%",
		"survived (not entered) p.go:12: del n++",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "p.go:4") {
		t.Errorf("a mutant of Max survived:\n%s", text)
	}
	// The package is as it was.
	if b, _ := os.ReadFile(filepath.Join(dir, "p/p.go")); string(b) != source {
		t.Errorf("p.go changed:\n%s", b)
	}
}

// TestEntered checks that a mutant counts as reached when the tests ran
// any statement of its function, even where its own line is in no
// statement block (a case expression).
func TestEntered(t *testing.T) {
	covered := map[coverKey]bool{{"p.go", 5}: true}
	for _, tt := range []struct {
		m    mutant
		want bool
	}{
		{mutant{file: "/x/p.go", line: 6, body: [2]int{3, 8}}, true},
		{mutant{file: "/x/p.go", line: 5, body: [2]int{5, 5}}, true},
		{mutant{file: "/x/p.go", line: 11, body: [2]int{10, 12}}, false},
		{mutant{file: "/x/q.go", line: 6, body: [2]int{3, 8}}, false},
	} {
		if got := entered(covered, tt.m); got != tt.want {
			t.Errorf("entered(%s, body %v) = %v, want %v", tt.m.file, tt.m.body, got, tt.want)
		}
	}
}

// TestZeroConstants checks that a return of a constant whose value is
// already its type's zero (iota in a block's first spec, a literal 0, ""
// or false) is not zeroed, since that changes nothing, while a return of
// any other constant is.
func TestZeroConstants(t *testing.T) {
	const src = `package p

const (
	first uint8 = iota
	second
)

const none, some = "", "x"

const off = false

func F(k int) uint8 {
	if k == 0 {
		return first
	}
	return second
}

func G() string { return none }

func H() string { return some }

func I() bool { return off }
`
	zeros, err := zeroConstants(map[string][]byte{"p.go": []byte(src)})
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]string{"first": "0", "none": `""`, "off": "false"}; !maps.Equal(zeros, want) {
		t.Errorf("zeroConstants = %v, want %v", zeros, want)
	}
	ms, err := mutants("p.go", []byte(src), zeros)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range ms {
		if m.op == "zero" {
			got = append(got, m.String())
		}
	}
	want := []string{"p.go:16: zero return second → 0", `p.go:21: zero return some → ""`}
	if !slices.Equal(got, want) {
		t.Errorf("zero mutants:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
