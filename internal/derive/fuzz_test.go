package derive

import "testing"

// A derived expression always reproduces every example it was found on,
// and Parse reads back what it prints.
func FuzzParameter(f *testing.F) {
	f.Add("golang.org/x/text", "v0.14.0", "deps/text-v0.14.0", "github.com/a/b", "v1.0.0", "deps/b-v1.0.0", "x/cli", "v2.0.0", "deps/cli-v2.0.0")
	f.Add("A-b", "x", "a_b", "C-d", "y", "c_d", "E-f", "z", "e_f")
	f.Fuzz(func(t *testing.T, a1, b1, t1, a2, b2, t2, a3, b3, t3 string) {
		ex := []map[string]string{{"a": a1, "b": b1, "t": t1}, {"a": a2, "b": b2, "t": t2}, {"a": a3, "b": b3, "t": t3}}
		e, ok := Parameter(ex, "t")
		if !ok {
			return
		}
		for i, x := range ex {
			if got, ok := e.Eval(x); !ok || got != x["t"] {
				t.Errorf("example %d: %s = %q, want %q", i, e, got, x["t"])
			}
		}
		back, err := Parse(e.String())
		if err != nil {
			t.Fatalf("Parse(%s): %v", e, err)
		}
		if back.String() != e.String() {
			t.Errorf("Parse(%s) = %s", e, back)
		}
	})
}

// Parse reads expressions from report.json, which anyone may edit: it
// must refuse what it cannot read rather than panic, and whatever it
// accepts must evaluate without panicking and print back to itself.
func FuzzParse(f *testing.F) {
	f.Add(`a.split("/")[-1] + "-" + b.lower()`)
	f.Add(`a.split("")[99999999999999999999]`)
	f.Add(`a.replace("", "x").upper()`)
	f.Add(`"\x`)
	f.Add(`a.split("/")[`)
	f.Fuzz(func(t *testing.T, src string) {
		e, err := Parse(src)
		if err != nil {
			return
		}
		e.Eval(map[string]string{"a": "x/y-z", "b": "Q"})
		e.Eval(map[string]string{})
		back, err := Parse(e.String())
		if err != nil {
			t.Fatalf("Parse(%q) = %s, which does not parse: %v", src, e, err)
		}
		if back.String() != e.String() {
			t.Errorf("Parse(%q) = %s, read back as %s", src, e, back)
		}
	})
}

// Substitute's expression reproduces the value it read, reads only the
// parameters it was given, and Parse reads back what it prints, whatever
// the value and the parameters' values (quotes, backslashes, overlapping
// values, invalid UTF-8).
func FuzzSubstitute(f *testing.F) {
	f.Add(`git commit -m "Release v1.2.3"`, "1.2.3", "release/v1.2.3", "main")
	f.Add("1.2.3.4 1.2.34 v1.2.3", "1.2.3", "2.3", "v1")
	f.Add("\\\"x\xff", "\\", "\"x", "\xff")
	f.Fuzz(func(t *testing.T, s, a, b, c string) {
		values := map[string]string{"a": a, "b": b, "c": c}
		e, ok := Substitute(s, values)
		if !ok {
			return
		}
		if got, ok := e.Eval(values); !ok || got != s {
			t.Errorf("Substitute(%q) = %s = %q", s, e, got)
		}
		for _, r := range Refs(e) {
			if _, ok := values[r]; !ok {
				t.Errorf("Substitute(%q) = %s reads %s", s, e, r)
			}
		}
		back, err := Parse(e.String())
		if err != nil {
			t.Fatalf("Parse(%s): %v", e, err)
		}
		if got, ok := back.Eval(values); !ok || got != s {
			t.Errorf("Parse(%s) evaluates to %q, want %q", e, got, s)
		}
	})
}
