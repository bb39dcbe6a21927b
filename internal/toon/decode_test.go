package toon

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDecodeJSON(t *testing.T) {
	tests := []struct {
		name, toon, want string
	}{
		// §5 root forms.
		{"empty document", "", `{}`},
		{"only comments and blanks", "# c\n\n  # d\n", `{}`},
		{"root primitive", "hello world", `"hello world"`},
		{"root number", "42", `42`},
		{"root malformed header is a primitive", "a[b", `"a[b"`},
		{"root empty array", "[]", `[]`},
		{"root legacy empty array", "[0]:", `[]`},
		{"root inline", "[3]: 1,a,\"b\"", `[1,"a","b"]`},
		{"root keyed", "[2:]{age,city}:\n  alice: 30,Berlin\n  bob: 25,Oslo", `{"alice":{"age":30,"city":"Berlin"},"bob":{"age":25,"city":"Oslo"}}`},
		{"CRLF and trailing newline", "a: 1\r\nb: x\r\n", `{"a":1,"b":"x"}`},
		// §4 tokens.
		{"numbers", "[9]: 1.5000,-1E+03,-0,05,-05,0.5,0e1,1.,.5", `[1.5,-1000,0,"05","-05",0.5,0,"1.",".5"]`},
		{"number-like strings", "[5]: +5,Infinity,NaN,0x10,1_000", `["+5","Infinity","NaN","0x10","1_000"]`},
		{"literals", "[4]: true,false,null,True", `[true,false,null,"True"]`},
		{"quoted stay strings", `[3]: "42","true","null"`, `["42","true","null"]`},
		{"escapes", `a: "\\ \" \n \r \t \u00e9 \u00E9 \ud7ff"`, "{\"a\":\"\\\\ \\\" \\n \\r \\t é é \ud7ff\"}"},
		{"unquoted value that encoders would quote", "key: -x\nk2: a:b", `{"key":"-x","k2":"a:b"}`},
		{"value spaces trimmed", "a:   x y  ", `{"a":"x y"}`},
		{"nbsp kept", "a: \u00a0x", `{"a":"\u00a0x"}`},
		// §7.4 keys.
		{"literal keys", "foo-bar: 1\n2key: 2\n\"a:b\": 3\nuser.name: 4", `{"foo-bar":1,"2key":2,"a:b":3,"user.name":4}`},
		{"prototype keys", "__proto__: 1\nconstructor:\n  prototype: 2", `{"__proto__":1,"constructor":{"prototype":2}}`},
		{"quoted key header", `"a:b"[2]: 1,2`, `{"a:b":[1,2]}`},
		{"colon before bracket is key-value", "a:b[2]: x", `{"a":"b[2]: x"}`},
		{"non-header falls through", "foo [2]: bar", `{"foo [2]":"bar"}`},
		// §8 objects.
		{"nested and empty", "a:\n  b:\n    c: 1\n  d:\ne: []", `{"a":{"b":{"c":1},"d":{}},"e":[]}`},
		{"dotted header key is literal", "data.meta.items[2]{id,name}:\n  1,a\n  2,b", `{"data.meta.items":[{"id":1,"name":"a"},{"id":2,"name":"b"}]}`},
		// §9 arrays.
		{"legacy empty field array", "a[0]:\nb[0|]:", `{"a":[],"b":[]}`},
		{"empty inline tokens", "a[3]: x,, ", `{"a":["x","",""]}`},
		{"arrays of arrays", "p[3]:\n  - [2]: 1,2\n  - []\n  - [0]:", `{"p":[[1,2],[],[]]}`},
		{"inner delimiter", "p[1|]:\n  - [2\t]: a|b\tc", `{"p":[["a|b","c"]]}`},
		{"tabular", "items[2]{sku,qty}:\n  A1,2\n  \"B,2\",1", `{"items":[{"sku":"A1","qty":2},{"sku":"B,2","qty":1}]}`},
		{"tabular rows with quoted colon", "links[2]{id,url}:\n  1,\"http://a:b\"\n  2,\"https://e.com?q=a:b\"", `{"links":[{"id":1,"url":"http://a:b"},{"id":2,"url":"https://e.com?q=a:b"}]}`},
		{"row with colon after delimiter", "r[1]{a,b}:\n  x,y:z", `{"r":[{"a":"x","b":"y:z"}]}`},
		{"nested field groups", "o[1]{id,c{n,k{x}},t}:\n  1,Ada,7,99", `{"o":[{"id":1,"c":{"n":"Ada","k":{"x":7}},"t":99}]}`},
		{"tab tabular", "i[1\t]{a\tb}:\n  x y\tp,q", `{"i":[{"a":"x y","b":"p,q"}]}`},
		{"delimiter scoping", "rows[1|]{id|value}:\n  1|a,b\nplain[2]: a|b,c", `{"rows":[{"id":1,"value":"a,b"}],"plain":["a|b","c"]}`},
		{"mixed list", "items[4]:\n  - 1\n  - a: 1\n    b: 2\n  - text\n  -", `{"items":[1,{"a":1,"b":2},"text",{}]}`},
		{"list item first field nested", "l[1]:\n  - u:\n      a: 1\n    b: 2", `{"l":[{"u":{"a":1},"b":2}]}`},
		{"list item tabular", "items[1]:\n  - users[2]{id,name}:\n      1,Ada\n      2,Bob\n    status: active", `{"items":[{"users":[{"id":1,"name":"Ada"},{"id":2,"name":"Bob"}],"status":"active"}]}`},
		{"list item keyed", "l[1]:\n  - m[2:]{a}:\n      x: 1\n      y: 2\n    s: 1", `{"l":[{"m":{"x":{"a":1},"y":{"a":2}},"s":1}]}`},
		{"list of lists of objects", "[1]:\n  - [2]:\n    - a: 1\n    - a: 2", `[[{"a":1},{"a":2}]]`},
		// §9.5 keyed.
		{"keyed", "users[2:]{age,city}:\n  alice: 30,Berlin\n  \"b:ob\": 25,Oslo", `{"users":{"alice":{"age":30,"city":"Berlin"},"b:ob":{"age":25,"city":"Oslo"}}}`},
		{"keyed zero", "k[0:]{f}:", `{"k":{}}`},
		{"keyed cell []", "k[1:]{f}:\n  alice: []", `{"k":{"alice":{"f":"[]"}}}`},
		{"keyed rows ignore colon-before-delimiter rule", "k[1:|]{a|b}:\n  x: p:q|r", `{"k":{"x":{"a":"p:q","b":"r"}}}`},
		// §5.1 comments and §12 blank lines.
		{"comments anywhere", "# head\nt[2]{a}:\n  # between rows\n  1\n    # deep comment\n  2\nx: \"#not\"\ny: a # b", `{"t":[{"a":1},{"a":2}],"x":"#not","y":"a # b"}`},
		{"blank before first row and after array", "t[1]{a}:\n\n  1\n\nb: 2", `{"t":[{"a":1}],"b":2}`},
		{"blank lines with spaces", "a: 1\n     \nb: 2", `{"a":1,"b":2}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DecodeJSON([]byte(tt.toon), DecodeOptions{})
			if err != nil {
				t.Fatalf("DecodeJSON(%q) error: %v", tt.toon, err)
			}
			if diff := cmp.Diff(canonJSON(t, tt.want), string(got)); diff != "" {
				t.Errorf("DecodeJSON(%q) (-want +got):\n%s", tt.toon, diff)
			}
		})
	}
}

// TestDecodeStrictErrors has one case per strict-mode rule of §14 (and
// the errors of §4 and §7 that hold in both modes), each with the exact
// line and message of the first error.
func TestDecodeStrictErrors(t *testing.T) {
	tests := []struct {
		name, toon string
		line       int
		msg        string
	}{
		// §14.1 counts and widths.
		{"inline count", "a: 1\ntags[5]: a,b,c", 2, "array declares 5 values, found 3"},
		{"list count", "items[3]:\n  - 1\n  - 2", 1, "array declares 3 items, found 2"},
		{"tabular count", "items[3]{id,name}:\n  1,Ada\n  2,Bob", 1, "array declares 3 rows, found 2"},
		{"tabular width", "items[2]{id,name}:\n  1,Ada\n  2", 3, "row has 1 values, header declares 2 fields"},
		{"nested group width", "o[1]{a,b{c,d}}:\n  1,2", 2, "row has 2 values, header declares 3 fields"},
		{"keyed count", "k[3:]{a}:\n  x: 1\n  y: 2", 1, "array declares 3 entries, found 2"},
		{"keyed width", "k[2:]{a,b}:\n  x: 1,2\n  y: 1", 3, "row has 1 values, header declares 2 fields"},
		{"keyed bare entry", "k[1:]{a}:\n  x:", 2, "row has 0 values, header declares 1 fields"},
		{"inner array count", "p[1]:\n  - [3]: 1,2", 2, "array declares 3 values, found 2"},
		{"comments are not rows", "t[2]{a}:\n  1\n  # 2", 1, "array declares 2 rows, found 1"},
		// §14.2 syntax.
		{"missing colon", "a: 1\nkey value", 2, "missing \":\" after key"},
		{"two root scalars", "hello\nworld", 1, "missing \":\" after key"},
		{"invalid escape", "name: \"bad\\xescape\"", 1, "invalid escape \\x"},
		{"unterminated", "a: \"abc", 1, "unterminated string"},
		{"short unicode escape", "a: \"\\u12\"", 1, "invalid escape: \\u needs four hex digits"},
		{"surrogate escape", "a: \"\\ud800\"", 1, "invalid escape \\ud800: surrogate code point"},
		{"text after quote", "a: \"x\"y", 1, "unexpected characters after closing quote"},
		{"delimiter mismatch", "a[2|]{x,y}:\n  1|2", 1, "header delimiter mismatch: fields must be separated by the bracket's delimiter"},
		{"delimiter mismatch pipe in comma", "a[2]{x|y}:\n  1,2", 1, "header delimiter mismatch: fields must be separated by the bracket's delimiter"},
		{"leading zero length", "a[03]: 1,2,3", 1, "array length 03 has a leading zero"},
		{"negative length", "a[-1]:", 1, "missing array length in header"},
		{"word length", "a[bar]: x", 1, "missing array length in header"},
		{"absent length", "a[]: x", 1, "missing array length in header"},
		{"keyed marker after delimiter", "a[2|:]{x}:", 1, "malformed bracket segment in header"},
		{"keyed marker with space", "a[2 :]{x}:", 1, "malformed bracket segment in header"},
		{"keyed marker with comma", "a[2:,]{x}:", 1, "malformed bracket segment in header"},
		{"keyed leading zero", "a[03:]{x}:", 1, "array length 03 has a leading zero"},
		{"keyed without fields", "a[2:]:", 1, "keyed header without a field list"},
		{"content before colon", "a[1][bar]:", 1, "unexpected content before \":\" in array header"},
		{"content after bracket", "a[2]extra:", 1, "unexpected content before \":\" in array header"},
		{"space before colon", "a[2] :", 1, "unexpected content before \":\" in array header"},
		{"missing header colon", "x: 1\na[2]", 2, "missing \":\" after array header"},
		{"empty fields", "a[1]{}:\n  1", 1, "empty field list in header"},
		{"empty nested fields", "a[1]{x,y{}}:\n  1", 1, "empty field list in header"},
		{"unmatched brace", "a[1]{x,y:\n  1", 1, "malformed field list in header"},
		{"unclosed brace", "b: 1\na[1]{x", 2, "unmatched \"{\" in header"},
		{"content after tabular header", "items[2]{a,b}: 1,2", 1, "unexpected content after tabular header"},
		{"keyless header in field position", "a: 1\n[2]: x,y", 2, "array header without a key is valid only at the document root or after a list item's \"- \""},
		{"keyless tabular list item", "l[1]:\n  - [2]{a}:\n      1\n      2", 2, "array header without a key is valid only at the document root"},
		{"keyless keyed nested", "a:\n  [2:]{f}:\n    x: 1\n    y: 2", 2, "array header without a key is valid only at the document root"},
		{"entry row without colon", "k[2:]{a}:\n  x: 1\n  y", 3, "entry row without \":\" after its key"},
		{"scalar in list scope", "l[1]:\n  x", 2, "expected list item \"- \""},
		{"scalar in object", "a:\n  b: 1\n  c", 3, "missing \":\" after key"},
		// §12 indentation and blank lines.
		{"odd indentation", "a:\n   b: 1", 2, "indentation of 3 spaces is not a multiple of 2"},
		{"list item odd indentation", "items[1]:\n   - value", 2, "indentation of 3 spaces is not a multiple of 2"},
		{"tab indentation", "a:\n\tb: 1", 2, "tab in indentation"},
		{"depth jump", "a:\n    b: 1", 2, "unexpected indentation: line is at depth 2, its scope's content is at depth 1"},
		{"over-indented under primitive", "a: 1\n  b: 2", 2, "unexpected indentation: line is at depth 1, its scope's content is at depth 0"},
		{"over-indented row", "t[2]{a}:\n  1\n    2", 3, "unexpected indentation: line is at depth 2, its scope's content is at depth 1"},
		{"blank line between rows", "t[2]{a}:\n  1\n\n  2", 3, "blank line inside array"},
		{"blank line between items", "l[2]:\n  - a: 1\n\n    b: 2\n  - 3", 3, "blank line inside array"},
		{"blank line in keyed rows", "k[2:]{a}:\n  x: 1\n\n  y: 2", 3, "blank line inside array"},
		{"blank line in inner array span", "l[1]:\n  - k[2]:\n      - 1\n\n      - 2", 4, "blank line inside array"},
		{"blank after inner array inside outer span", "l[2]:\n  - k[1]:\n      - 1\n\n  - 2", 4, "blank line inside array"},
		// §5 trailing content.
		{"after root inline array", "[2]: 1,2\nx: 1", 2, "unexpected content after the root array"},
		{"after root empty array", "[]\nx: 1", 2, "unexpected content after the root array"},
		{"after root tabular", "[1]{a}:\n  1\nb: 2", 3, "unexpected content after the root array"},
		{"after root keyed", "[1:]{a}:\n  x: 1\nb: 2", 3, "unexpected content after the root array"},
		{"indented first line", "  a: 1", 1, "first line is indented"},
		// §4 bytes.
		{"invalid UTF-8", "a: 1\nb: \xff", 2, "invalid UTF-8"},
		{"encoded surrogate", "a: \xed\xa0\x80", 1, "invalid UTF-8"},
		// §14.3 duplicates.
		{"duplicate key", "a: 1\nb: 2\na: 3", 3, "duplicate key \"a\""},
		{"duplicate field", "t[1]{a,a}:\n  1,2", 1, "duplicate field \"a\""},
		{"duplicate entry key", "k[2:]{a}:\n  x: 1\n  x: 2", 3, "duplicate key \"x\""},
		{"duplicate in list item object", "l[1]:\n  - a: 1\n    a: 2", 3, "duplicate key \"a\""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decode([]byte(tt.toon), DecodeOptions{})
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Decode(%q) error = %v, want line %d: %s", tt.toon, err, tt.line, tt.msg)
			}
			if e.Line != tt.line || e.Msg != tt.msg {
				t.Errorf("Decode(%q) first error = %v, want line %d: %s", tt.toon, e, tt.line, tt.msg)
			}
		})
	}
}

func TestDecodeErrorList(t *testing.T) {
	_, err := Decode([]byte("a[2]: 1\nb: 1\nb: \"\\q\"\nc[1]{x,y}:\n  1"), DecodeOptions{})
	var list ErrorList
	if !errors.As(err, &list) {
		t.Fatalf("Decode error = %v, want ErrorList", err)
	}
	var got []string
	for _, e := range list {
		got = append(got, e.Error())
	}
	want := []string{
		"line 1: array declares 2 values, found 1",
		"line 3: invalid escape \\q",
		"line 3: duplicate key \"b\"",
		"line 5: row has 1 values, header declares 2 fields",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Decode errors (-want +got):\n%s", diff)
	}
	if s := list.Error(); s != "line 1: array declares 2 values, found 1 (and 3 more errors)" {
		t.Errorf("ErrorList.Error() = %q", s)
	}
}

func TestDecodeNonStrict(t *testing.T) {
	tests := []struct {
		name, toon, want string
	}{
		{"counts ignored", "a[3]: 1,2\nl[2]:\n  - 1", `{"a":[1,2],"l":[1]}`},
		{"width filled and dropped", "t[2]{a,b}:\n  1\n  1,2,3", `{"t":[{"a":1,"b":null},{"a":1,"b":2}]}`},
		{"duplicates last wins", "a: 1\nb: 2\na: 3", `{"a":3,"b":2}`},
		{"floor depth", "a:\n   b: 1", `{"a":{"b":1}}`},
		{"tabs ignored", "a:\n\t  b: 1", `{"a":{"b":1}}`},
		{"blank in span", "t[2]{a}:\n  1\n\n  2", `{"t":[{"a":1},{"a":2}]}`},
		{"over-indented skipped", "a: 1\n    b: 2\nc: 3", `{"a":1,"c":3}`},
		{"malformed header as key-value", "a[03]: x", `{"a[03]":"x"}`},
		{"trailing content ignored", "[1]: x\ny: 1", `["x"]`},
		{"scalar line skipped", "a: 1\nstray\nb: 2", `{"a":1,"b":2}`},
		{"invalid UTF-8 replaced", "a: \xff", "{\"a\":\"\uFFFD\"}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DecodeJSON([]byte(tt.toon), DecodeOptions{NonStrict: true})
			if err != nil {
				t.Fatalf("DecodeJSON(%q, non-strict) error: %v", tt.toon, err)
			}
			if diff := cmp.Diff(canonJSON(t, tt.want), string(got)); diff != "" {
				t.Errorf("DecodeJSON(%q, non-strict) (-want +got):\n%s", tt.toon, diff)
			}
		})
	}
	// Escapes are checked in both modes (§7.1).
	if _, err := Decode([]byte(`a: "\x"`), DecodeOptions{NonStrict: true}); err == nil {
		t.Error("Decode(invalid escape, non-strict) = nil error, want one")
	}
}

func TestDecodeIndent(t *testing.T) {
	got, err := DecodeJSON([]byte("a:\n    b[1]:\n        - 1"), DecodeOptions{Indent: 4})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(canonJSON(t, `{"a":{"b":[1]}}`), string(got)); diff != "" {
		t.Errorf("DecodeJSON(indent 4) (-want +got):\n%s", diff)
	}
}

func TestReadJSONErrors(t *testing.T) {
	tests := []struct {
		in   string
		line int
	}{
		{"{\n\"a\": 1,\n}", 3},
		{"[1, 2", 1},
		{"{} {}", 1},
		{"", 1},
	}
	for _, tt := range tests {
		_, err := ReadJSON([]byte(tt.in))
		var e *Error
		if !errors.As(err, &e) || e.Line != tt.line {
			t.Errorf("ReadJSON(%q) error = %v, want one at line %d", tt.in, err, tt.line)
		}
	}
}
