package harness

import (
	"strings"
	"testing"
)

func TestParseManifestErrors(t *testing.T) {
	tests := []struct {
		name, in string
		want     []string
	}{
		{"trailing document", `{"schema": "x"}` + "\n{}", []string{"m.json:2:1: invalid JSON: unexpected data after top-level value"}},
		{"syntax", "{\n  \"schema\": ,\n}", []string{"m.json:2:13: invalid JSON: "}},
		{"every problem", `{"schema": "x", "commands": [{"id": "A", "command": " ", "phase": "pre_commit"}, {"id": "a", "command": "true", "phase": "p", "timeoutSeconds": -1}], "files": [{"path": "../x", "sha256": "ab"}, {"path": "y", "sha256": "` + strings.Repeat("z", 64) + `"}]}`, []string{
			`m.json: $.schema: schema "x", want`,
			`m.json: $.commands[0].id: id "A" is not lowercase`,
			"m.json: $.commands[0].command: empty command",
			"m.json: $.commands[1].timeoutSeconds: negative timeout -1",
			`m.json: $.files[0].path: path "../x" is not clean or leaves the repository`,
			"m.json: $.files[0].sha256: not a hex sha256",
			"m.json: $.files[1].sha256: not a hex sha256",
		}},
		// encoding/json would take "Command" for "command" and run it
		// instead of the gate the reviewer read.
		{"case-folded names", "{\"schema\": \"sf.harness.v1\", \"owner\": \"crystallize\",\n \"commands\": [{\"id\": \"a\", \"command\": \"true\", \"phase\": \"p\",\n  \"Command\": \"rm -rf .\"}], \"\u017fchema\": \"sf.harness.v1\"}", []string{
			`m.json:3: $.commands[0].Command: key "Command" is not "command": names are case-sensitive`,
			`m.json:3: $["ſchema"]: key "\u017fchema" is not "schema": names are case-sensitive`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := ParseManifest([]byte(tt.in), "m.json")
			if err == nil {
				t.Fatalf("ParseManifest accepted %q: %+v", tt.in, m)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("ParseManifest error lacks %q:\n%v", w, err)
				}
			}
		})
	}
}
