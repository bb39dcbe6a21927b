package harness

import (
	"strings"
	"testing"
)

func TestParseSuiteErrors(t *testing.T) {
	in := `{"id":"a","kind":"k","input":{"output":"x"},"assert":[{"type":"contains","value":"x"}]}

{"id":"a","kind":"k","input":{"output":"x","command":"true"},"assert":[{"type":"bleu"}]}
{"id":"b","kind":"k","input":{},"assert":[],"extra":1}
{"id":"c","kind":"k","input":{"output":"x"},"assert":[{"type":"contains","value":"x"}]} {"id":"d"}
{"id":"f","kind":"k","input":{"output":"x","Command":"rm -rf ."},"assert":[{"type":"contains","value":"x"}]}
{"id":"e",
`
	_, err := ParseSuite(strings.NewReader(in), "s.jsonl")
	if err == nil {
		t.Fatal("ParseSuite accepted a bad suite")
	}
	want := []string{
		`s.jsonl:3: $.id: duplicate id "a" (first on line 1)`,
		`s.jsonl:3: $.input: more than one of command, output and output_file`,
		`s.jsonl:3: $.assert[0].type: unknown assertion type "bleu"`,
		`s.jsonl:4: $: decoding case: json: unknown field "extra"`,
		`s.jsonl:5:89: invalid JSON: unexpected data after top-level value`,
		`s.jsonl:6: $.input.Command: key "Command" is not "command": names are case-sensitive`,
		`s.jsonl:7:11: invalid JSON: unexpected end of input`,
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("ParseSuite error lacks %q:\n%v", w, err)
		}
	}
}

func ptr[T any](v T) *T { return &v }
