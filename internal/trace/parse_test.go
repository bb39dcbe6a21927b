package trace

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"
)

// parserCases are documents on which the parser and encoding/json must
// agree, valid and invalid, chosen at the edges of the grammar.
var parserCases = []string{
	`{}`, `[]`, `""`, `0`, `-0`, `1.5e+10`, `-12.0E-3`, `true`, `false`, `null`,
	` {"a" : [1, "x", null, true, {"b": {}}], "a": 2} `,
	`{"k": "tab\tnew\nline \"q\" \\ \/ \b\f\r \u00e9 \u00E9 \ud83d\ude00"}`,
	`"\ud83d"`, `"\ud83d\u0041"`, `"\ude00\ud83d"`, `"\ud83dx"`, `"\ud83d\ud83d\ude00"`,
	"\"h\xc3\xa9 \xff \xed\xa0\x80 \xef\xbf\xbd\"", "{\"\xff\": 1}",
	`"\u12"`, `"\ud83d\u12zz"`, `"\x"`, `"\'"`, "\"a\x01\"", "\"a\x7f\"",
	`01`, `-`, `1.`, `.5`, `1e`, `1e+`, `+1`, `0x10`, `1.5.3`, `--1`,
	`tru`, `truex`, `nul`, `[1,]`, `[,1]`, `{"a":1,}`, `{,}`, `{"a"}`, `{"a" 1}`, `{1:2}`,
	`[1 2]`, `{"a":1 "b":2}`, `{} {}`, `[] x`, ``, `   `, "\ufeff{}", `"unterminated`, `[`, `{"a":`,
	strings.Repeat("[", maxDepth) + strings.Repeat("]", maxDepth),
	strings.Repeat("[", maxDepth+1) + strings.Repeat("]", maxDepth+1),
}

// FuzzParser checks the parser against encoding/json, its reference: both
// accept the same documents, give deeply equal values for them, and Parse
// gives encoding/json's error for the others. One Parser parses every
// input twice, so that the second parse reads its strings from the tables.
func FuzzParser(f *testing.F) {
	for _, c := range parserCases {
		f.Add([]byte(c))
	}
	for _, dir := range []string{"testdata/valid", "testdata/invalid"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.json"))
		if err != nil {
			f.Fatal(err)
		}
		for _, file := range files {
			data, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(data)
		}
	}
	var p Parser
	f.Fuzz(func(t *testing.T, data []byte) {
		checkParser(t, &p, data)
	})
}

func checkParser(t *testing.T, p *Parser, data []byte) {
	t.Helper()
	want, wantErr := parseStd(data, "f.json", 0)
	for range 2 {
		got, ok := p.parse(data)
		if ok != (wantErr == nil) {
			t.Fatalf("parse(%q) ok = %v, encoding/json error = %v", data, ok, wantErr)
		}
		// reflect.DeepEqual, not cmp: it tells a nil slice or map from
		// an empty one, which the encoder does too.
		if ok && !reflect.DeepEqual(got, want) {
			t.Fatalf("parse(%q) = %#v, encoding/json gives %#v", data, got, want)
		}
		if ok && p.dup {
			// encoding/json keeps the last member; Parse refuses the
			// document, naming every duplicate.
			dups := Duplicates(data, "f.json", 0)
			if len(dups) == 0 {
				t.Fatalf("parse(%q) saw a duplicate member, Duplicates finds none", data)
			}
			if got, err := p.Parse(data, "f.json", 0); got != nil || fmt.Sprint(err) != fmt.Sprint(dups) {
				t.Fatalf("Parse(%q) = %#v, %v; want the duplicates %v", data, got, err, dups)
			}
			continue
		}
		if ok && len(Duplicates(data, "f.json", 0)) > 0 {
			t.Fatalf("Duplicates(%q) finds a duplicate the parser did not see", data)
		}
		got, err := p.Parse(data, "f.json", 0)
		if fmt.Sprint(err) != fmt.Sprint(wantErr) || !reflect.DeepEqual(got, want) {
			t.Fatalf("Parse(%q) = %#v, %v; want %#v, %v", data, got, err, want, wantErr)
		}
	}
}

func TestParser(t *testing.T) {
	var p Parser
	for _, c := range parserCases {
		checkParser(t, &p, []byte(c))
	}
}

// TestParserShares checks that the strings and numbers of one document
// are shared with the next, that long ones are not, and that nothing else
// is: maps and slices are each document's own.
func TestParserShares(t *testing.T) {
	var p Parser
	long := strings.Repeat("x", maxInternLen+1)
	doc := []byte(`{"kind": "tool_call", "n": 42, "long": "` + long + `", "m": {}, "a": [1]}`)
	first, err := p.Parse(doc, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	second, err := p.Parse(doc, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	a, b := first.(map[string]any), second.(map[string]any)
	if !cmp.Equal(a, b) {
		t.Fatalf("two parses differ:\n%s", cmp.Diff(a, b))
	}
	for key, want := range map[string]bool{"kind": true, "n": true, "long": false} {
		if got := sameBox(a[key], b[key]); got != want {
			t.Errorf("value of %q shared = %v, want %v", key, got, want)
		}
	}
	if unsafe.StringData(storedKey(a, "kind")) != unsafe.StringData(storedKey(b, "kind")) {
		t.Error("member name not shared")
	}
	if reflect.ValueOf(a["m"]).UnsafePointer() == reflect.ValueOf(b["m"]).UnsafePointer() {
		t.Error("two parses share a map")
	}
	if unsafe.SliceData(a["a"].([]any)) == unsafe.SliceData(b["a"].([]any)) {
		t.Error("two parses share a slice")
	}
}

// sameBox reports whether a and b are one boxed value, not two equal
// ones: whether their data words point to the same place.
func sameBox(a, b any) bool {
	return (*[2]unsafe.Pointer)(unsafe.Pointer(&a))[1] == (*[2]unsafe.Pointer)(unsafe.Pointer(&b))[1]
}

// storedKey returns the key of m equal to k as m stores it.
func storedKey(m map[string]any, k string) string {
	for key := range m {
		if key == k {
			return key
		}
	}
	return ""
}

// TestParserTableBound checks that a table which reaches maxInterned is
// emptied instead of growing.
func TestParserTableBound(t *testing.T) {
	var p Parser
	for i := range maxInterned + 10 {
		if _, err := p.Parse(fmt.Appendf(nil, `"s%d"`, i), "", 0); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(p.strs); n != 10 {
		t.Errorf("table has %d entries after %d distinct strings, want 10", n, maxInterned+10)
	}
}

// TestDuplicates: a member name that comes twice in one object is refused
// with the line and JSON path of the second, every one of them; the same
// name in different objects is not a duplicate.
func TestDuplicates(t *testing.T) {
	tests := []struct {
		doc  string
		want string // the error, "" for none
	}{
		{`{"a": 1, "b": 2}`, ""},
		{`{"a": {"x": 1}, "b": {"x": 2}}`, ""},
		{`[{"x": 1}, {"x": 2}]`, ""},
		{`{"a": 1, "a": 2}`, `t.json:1: $.a: duplicate key "a"`},
		{"{\n  \"actions\": [\n    {\"name\": \"git.push\",\n     \"name\": \"git.status\"}\n  ]\n}", `t.json:4: $.actions[0].name: duplicate key "name"`},
		{`{"x": [1, [2, {"k k": 1, "k k": 2}]]}`, `t.json:1: $.x[1][1]["k k"]: duplicate key "k k"`},
		{`{"a": 1, "a": 2, "b": {"c": 1, "c": 2}}`, "t.json:1: $.a: duplicate key \"a\"\nt.json:1: $.b.c: duplicate key \"c\""},
		{`{"a": 1, "\u0061": 2}`, `t.json:1: $.a: duplicate key "a"`},
	}
	for _, tt := range tests {
		_, err := ParseJSON([]byte(tt.doc), "t.json", 0)
		if fmt.Sprint(err) != fmt.Sprint(tt.want) && !(err == nil && tt.want == "") {
			t.Errorf("ParseJSON(%s) = %v, want %s", tt.doc, err, tt.want)
		}
	}
	// A JSON Lines record starting on line 7 reports line 7.
	if _, err := ParseJSON([]byte(`{"id": "a", "id": "b"}`), "t.jsonl", 7); fmt.Sprint(err) != `t.jsonl:7: $.id: duplicate key "id"` {
		t.Errorf("ParseJSON(record on line 7) = %v", err)
	}
}

// TestIsNumber checks the JSON number grammar on strings, as the parser
// reads numbers in documents.
func TestIsNumber(t *testing.T) {
	for _, s := range []string{"0", "-0", "7", "-12", "3.25", "1e5", "1E+5", "2.5e-3", "10"} {
		if !IsNumber(s) {
			t.Errorf("IsNumber(%q) = false, want true", s)
		}
	}
	for _, s := range []string{"", "-", "01", "+1", "1.", ".5", "1e", "1e+", "0x10", "1_000", " 1", "1 ", "NaN", "Infinity", "1.5.2", "--1"} {
		if IsNumber(s) {
			t.Errorf("IsNumber(%q) = true, want false", s)
		}
	}
}
