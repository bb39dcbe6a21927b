package trace

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The types below stand for the documents CheckNames guards: a manifest
// with a nested reference (workflow.path, workflow.sha256), a list of
// commands, a map of named entries, an optional pointer, an embedded
// struct whose fields are promoted, a field named by its Go name, a
// skipped field and a type that decodes itself.
type namesWorkflow struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
}

type namesCommand struct {
	ID      string `json:"id"`
	Kind    string `json:"kind"`
	Command string `json:"command"`
}

type namesBase struct {
	Schema string `json:"schema"`
}

type namesSelf struct{ v any }

func (s *namesSelf) UnmarshalJSON(b []byte) error { return json.Unmarshal(b, &s.v) }

type namesDoc struct {
	namesBase
	Workflow namesWorkflow            `json:"workflow"`
	Commands []namesCommand           `json:"commands"`
	Named    map[string]namesWorkflow `json:"named"`
	Optional *namesWorkflow           `json:"optional,omitempty"`
	Untagged string
	Hidden   string    `json:"-"`
	Self     namesSelf `json:"self"`
	Generic  any       `json:"generic"`
}

// TestCheckNames: a member whose name is not a field's name but equals
// one under case folding is refused at its line and path, wherever the
// struct is in the document; exact names, unknown names, map keys, the
// insides of generic values and of types that decode themselves are not.
func TestCheckNames(t *testing.T) {
	tests := []struct {
		name, doc string
		want      string // the errors, one a line; "" for none
	}{
		{"exact", `{"schema": "s", "workflow": {"path": "a", "sha256": "h"}, "commands": [{"id": "x", "command": "true"}], "Untagged": "u"}`, ""},
		{"unknown names are not the check's", `{"pathx": 1, "workflow": {"extra": 2}}`, ""},
		{"ascii case", "{\"workflow\": {\"path\": \"workflow.star\",\n \"Path\": \"fixtures/notes.star\"}}",
			`t.json:2: $.workflow.Path: key "Path" is not "path": names are case-sensitive`},
		{"long s folds to s", `{"workflow": {"sha256": "a", "ſha256": "b"}}`,
			`t.json:1: $.workflow["ſha256"]: key "\u017fha256" is not "sha256": names are case-sensitive`},
		{"kelvin sign folds to k", `{"commands": [{"\u212Aind": "x"}]}`,
			"t.json:1: $.commands[0][\"\u212Aind\"]: key \"\\u212aind\" is not \"kind\": names are case-sensitive"},
		{"dotless i does not fold to i", `{"commands": [{"\u0131d": "x"}]}`, ""},
		{"in a slice element", `{"commands": [{"id": "a", "command": "true"}, {"id": "b", "command": "true", "COMMAND": "rm -rf /"}]}`,
			`t.json:1: $.commands[1].COMMAND: key "COMMAND" is not "command": names are case-sensitive`},
		{"in a map value, not its key", `{"named": {"Key": {"Path": "x"}}}`,
			`t.json:1: $.named.Key.Path: key "Path" is not "path": names are case-sensitive`},
		{"through a pointer", `{"optional": {"SHA256": "x"}}`,
			`t.json:1: $.optional.SHA256: key "SHA256" is not "sha256": names are case-sensitive`},
		{"promoted from an embedded struct", `{"SCHEMA": "other"}`,
			`t.json:1: $.SCHEMA: key "SCHEMA" is not "schema": names are case-sensitive`},
		{"a field named by its Go name", `{"untagged": "u"}`,
			`t.json:1: $.untagged: key "untagged" is not "Untagged": names are case-sensitive`},
		{"the member itself folded", `{"Workflow": {"Path": "x"}}`,
			"t.json:1: $.Workflow: key \"Workflow\" is not \"workflow\": names are case-sensitive\n" +
				`t.json:1: $.Workflow.Path: key "Path" is not "path": names are case-sensitive`},
		{"a skipped field is no field", `{"hidden": "h", "Hidden": "h"}`, ""},
		{"a type that decodes itself", `{"self": {"Path": 1}, "generic": {"Path": 1, "path": 2}}`, ""},
		{"duplicates still", `{"workflow": {"path": "a", "path": "b"}}`, `t.json:1: $.workflow.path: duplicate key "path"`},
		{"a duplicate in a generic value", `{"generic": {"a": 1, "a": 2}}`, `t.json:1: $.generic.a: duplicate key "a"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := CheckNames([]byte(tt.doc), "t.json", 0, new(namesDoc))
			if diff := cmp.Diff(tt.want, errLines(got)); diff != "" {
				t.Errorf("CheckNames(%s) (-want +got):\n%s", tt.doc, diff)
			}
		})
	}
}

// TestCheckNamesMirrorsEncodingJSON: what CheckNames refuses is what
// encoding/json really folds onto a field, so the attack is real; and a
// document it accepts decodes as its exact names say.
func TestCheckNamesMirrorsEncodingJSON(t *testing.T) {
	var d namesDoc
	doc := `{"workflow": {"path": "workflow.star", "sha256": "aaa", "Path": "fixtures/notes.star", "ſha256": "bbb"}}`
	if err := json.Unmarshal([]byte(doc), &d); err != nil {
		t.Fatal(err)
	}
	if d.Workflow != (namesWorkflow{"fixtures/notes.star", "bbb"}) {
		t.Fatalf("encoding/json decoded %+v; the folding CheckNames guards against has changed", d.Workflow)
	}
	if errs := CheckNames([]byte(doc), "t.json", 0, &d); len(errs) != 2 {
		t.Errorf("CheckNames(%s) = %v, want 2 errors", doc, errs)
	}
	// The Kelvin sign is in k's fold set; the dotless i is in no one's.
	var c namesCommand
	if err := json.Unmarshal([]byte(`{"\u212Aind": "x", "\u0131d": "y"}`), &c); err != nil || c != (namesCommand{Kind: "x"}) {
		t.Fatalf("encoding/json decoded %+v (%v); the folding CheckNames guards against has changed", c, err)
	}
}

// TestCheckNamesLines: the line of a refusal in an indented
// document, as a manifest is written, and a JSON Lines record's start
// line.
func TestCheckNamesLines(t *testing.T) {
	doc := "{\n  \"workflow\": {\n    \"path\": \"a\",\n    \"sha256\": \"b\",\n    \"Path\": \"c\"\n  }\n}\n"
	if got, want := errLines(CheckNames([]byte(doc), "candidate.json", 0, new(namesDoc))), `candidate.json:5: $.workflow.Path: key "Path" is not "path": names are case-sensitive`; got != want {
		t.Errorf("CheckNames(indented) = %s, want %s", got, want)
	}
	if got, want := errLines(CheckNames([]byte(`{"Schema": "x"}`), "l.jsonl", 7, new(namesDoc))), `l.jsonl:7: $.Schema: key "Schema" is not "schema": names are case-sensitive`; got != want {
		t.Errorf("CheckNames(record on line 7) = %s, want %s", got, want)
	}
}

func errLines(errs ErrorList) string {
	var b strings.Builder
	for i, e := range errs {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(e.Error())
	}
	return b.String()
}

// FuzzCheckNames checks the promise CheckNames makes to decoders: a
// document it accepts decodes into the type exactly as its exact member
// names say, which is what decoding it with every member whose name is
// not byte-equal to a field's dropped gives.
func FuzzCheckNames(f *testing.F) {
	for _, s := range []string{
		`{"schema": "s", "workflow": {"path": "a", "sha256": "h"}, "commands": [{"id": "x", "command": "true"}], "Untagged": "u"}`,
		`{"workflow": {"path": "a", "Path": "b"}}`,
		`{"workflow": {"sha256": "a", "ſha256": "b"}}`,
		`{"commands": [{"command": "a", "COMMAND": "b"}], "named": {"k": {"PATH": "c"}}}`,
		`{"optional": {"sha256": "x"}, "SCHEMA": "y", "untagged": "z"}`,
		`{"self": {"Path": 1}, "generic": {"Path": 1}}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		var got namesDoc
		if json.Unmarshal([]byte(doc), &got) != nil || len(CheckNames([]byte(doc), "", 0, &got)) > 0 {
			return
		}
		var generic any
		dec := json.NewDecoder(strings.NewReader(doc))
		dec.UseNumber()
		if dec.Decode(&generic) != nil {
			return
		}
		exact, err := json.Marshal(keepExact(generic, reflect.TypeFor[namesDoc]()))
		if err != nil {
			t.Fatal(err)
		}
		var want namesDoc
		if err := json.Unmarshal(exact, &want); err != nil {
			t.Fatalf("decoding %s: %v", exact, err)
		}
		if !reflect.DeepEqual(want, got) {
			t.Errorf("CheckNames accepts %s, which decodes to %+v, not %+v as its exact names say", doc, got, want)
		}
	})
}

// keepExact returns v without the members that do not name a field of
// the struct they decode into byte for byte, following t as CheckNames
// does.
func keepExact(v any, t reflect.Type) any {
	t = decodedType(t)
	switch v := v.(type) {
	case map[string]any:
		if t == nil {
			return v
		}
		out := map[string]any{}
		for k, e := range v {
			switch t.Kind() {
			case reflect.Map:
				out[k] = keepExact(e, t.Elem())
			case reflect.Struct:
				if ft, ok := jsonFields(t)[k]; ok {
					out[k] = keepExact(e, ft)
				}
			}
		}
		return out
	case []any:
		if t == nil || t.Kind() != reflect.Slice && t.Kind() != reflect.Array {
			return v
		}
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = keepExact(e, t.Elem())
		}
		return out
	}
	return v
}

// BenchmarkCheckNames measures the check on a report-sized document: a
// thousand commands in a struct-typed list, the shape of the largest
// documents it guards (report.json).
func BenchmarkCheckNames(b *testing.B) {
	var doc strings.Builder
	doc.WriteString(`{"schema": "s", "workflow": {"path": "workflow.star", "sha256": "h"}, "commands": [`)
	for i := range 1000 {
		if i > 0 {
			doc.WriteString(", ")
		}
		doc.WriteString(`{"id": "c", "kind": "tool_call", "command": "go test ./..."}`)
	}
	doc.WriteString(`], "generic": {"a": [1, 2, 3], "b": {"c": "d"}}}`)
	data := []byte(doc.String())
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if errs := CheckNames(data, "r.json", 0, new(namesDoc)); len(errs) > 0 {
			b.Fatal(errs)
		}
	}
}
