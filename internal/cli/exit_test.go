package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// runCLI runs the command line in-process with a pinned SOURCE_DATE_EPOCH
// and returns the exit code, stdout and stderr.
func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	e := &env{stdout: &stdout, stderr: &stderr, getenv: func(k string) string {
		if k == "SOURCE_DATE_EPOCH" {
			return sourceDateEpoch
		}
		return ""
	}}
	code := run(context.Background(), e, args)
	return code, stdout.String(), stderr.String()
}

func TestExitCodes(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good")
	bad := filepath.Join(dir, "bad")
	none := filepath.Join(dir, "none")
	for _, d := range []string{good, bad, none} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	step := `{"kind":"tool_call","name":"%s","parameters":{"v":"%d"}}`
	for i := range 3 {
		writeTrace(t, filepath.Join(good, "t"+string(rune('a'+i))+".json"),
			`{"id":"t`+string(rune('a'+i))+`","actions":[`+sprintf(step, "x", i)+`,`+sprintf(step, "y", i)+`]}`)
		writeTrace(t, filepath.Join(none, "t"+string(rune('a'+i))+".json"),
			`{"id":"t`+string(rune('a'+i))+`","actions":[`+sprintf(step, "x"+string(rune('a'+i)), i)+`]}`)
	}
	writeTrace(t, filepath.Join(bad, "a.json"), `{"id":"a","actions":"nope"}`)

	tests := []struct {
		name string
		args []string
		want int
	}{
		{"safe candidate", []string{"mine", "--from", good}, 0},
		{"legacy root form", []string{"--from", good}, 0},
		{"no candidate", []string{"mine", "--from", none}, 1},
		{"invalid input", []string{"mine", "--from", bad}, 1},
		{"missing dir", []string{"mine", "--from", filepath.Join(dir, "missing")}, 1},
		{"missing --from", []string{"mine"}, 2},
		{"min examples 1", []string{"mine", "--from", good, "--min-examples", "1"}, 2},
		{"unknown flag", []string{"mine", "--from", good, "--nope"}, 2},
		{"bad flag value", []string{"mine", "--from", good, "--max-candidates", "x"}, 2},
		{"unknown command", []string{"nope"}, 2},
		{"extra argument", []string{"version", "extra"}, 2},
		{"version", []string{"version"}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, stdout, stderr := runCLI(t, tt.args...)
			if got != tt.want {
				t.Errorf("crystallize %v = exit %d, want %d\nstdout: %s\nstderr: %s", tt.args, got, tt.want, stdout, stderr)
			}
		})
	}
}

func writeTrace(t *testing.T, path, body string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func sprintf(format string, args ...any) string { return fmt.Sprintf(format, args...) }
