package toon

import (
	"os"
	"path/filepath"
	"testing"
)

// addSeeds adds every file in testdata (and the spec's examples when
// present) with the given extension to the fuzz corpus.
func addSeeds(f *testing.F, ext string) {
	for _, pattern := range []string{filepath.Join("testdata", "*"+ext), filepath.Join(examplesDir, "*"+ext)} {
		files, _ := filepath.Glob(pattern)
		for _, file := range files {
			data, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(data)
		}
	}
}

// FuzzDecode checks that Decode never panics and that whatever it accepts,
// strictly or not, encodes to a document that decodes strictly to the
// same value and encodes again to the same bytes.
func FuzzDecode(f *testing.F) {
	addSeeds(f, ".toon")
	for _, s := range []string{"", "[]", "a: 1", "a:\n  b:\n    - x", "[2]: 1,2\n  - x", "k[1:]{a}:\n  x:", "\"a\\u00e9\"[1|]: \"|\""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, opts := range []DecodeOptions{{}, {NonStrict: true}} {
			v, err := Decode(data, opts)
			if err != nil {
				continue
			}
			out, err := Encode(v, EncodeOptions{})
			if err != nil {
				t.Fatalf("Encode(Decode(%q)) error: %v", data, err)
			}
			back, err := Decode(out, DecodeOptions{})
			if err != nil {
				t.Fatalf("Decode(%q) (encoded from %q) error: %v", out, data, err)
			}
			if !sameValue(v, back) {
				t.Fatalf("Decode(Encode(v)) != v for %q: encoded %q", data, out)
			}
			again, err := Encode(back, EncodeOptions{})
			if err != nil || string(again) != string(out) {
				t.Fatalf("Encode not stable for %q: %q then %q (%v)", data, out, again, err)
			}
		}
	})
}

// FuzzEncode checks that every JSON value round-trips through TOON with
// each delimiter and indentation.
func FuzzEncode(f *testing.F) {
	addSeeds(f, ".json")
	for _, s := range []string{`{}`, `[]`, `""`, `-0`, `[{"a":1},{"a":{"b":2}}]`, `{"x":{"a":1},"y":{"a":2}}`, `[[{"a":1}]]`, `{"a":"- x","#":"#"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := ReadJSON(data)
		if err != nil {
			return
		}
		for _, opts := range []EncodeOptions{{}, {Delimiter: Tab, Indent: 4}, {Delimiter: Pipe, DocumentDelimiter: Pipe}} {
			out, err := Encode(v, opts)
			if err != nil {
				t.Fatalf("Encode(%s, %+v) error: %v", data, opts, err)
			}
			back, err := Decode(out, DecodeOptions{Indent: opts.Indent})
			if err != nil {
				t.Fatalf("Decode(Encode(%s, %+v) = %q) error: %v", data, opts, out, err)
			}
			if !sameValue(v, back) {
				t.Fatalf("Decode(Encode(%s, %+v)) = %s, via %q", data, opts, mustJSON(t, back), out)
			}
		}
	})
}
