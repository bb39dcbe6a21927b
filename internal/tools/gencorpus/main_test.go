package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/crystallize-dev/crystallize/internal/tracetest"
)

// runCmd runs the command in-process and returns its exit status, stdout
// and the first line of stderr.
func runCmd(args ...string) (int, string, string) {
	var stdout, stderr bytes.Buffer
	code := run(args, &stdout, &stderr)
	first, _, _ := strings.Cut(stderr.String(), "\n")
	return code, stdout.String(), first
}

func listDir(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func TestWriteDirAndManifest(t *testing.T) {
	tmp := t.TempDir()
	out := filepath.Join(tmp, "corpus")
	manifest := filepath.Join(tmp, "planted.json")
	code, stdout, stderr := runCmd("-traces", "30", "-seed", "7", "-procedures", "3", "-actions", "20", "-out", out, "-manifest", manifest)
	if code != 0 {
		t.Fatalf("exit status %d, stderr %q", code, stderr)
	}
	c := tracetest.Generate(tracetest.Config{Traces: 30, Seed: 7, Procedures: 3, Actions: 20})
	actions := 0
	for _, tr := range c.Traces {
		actions += len(tr.Actions)
	}
	want := fmt.Sprintf("wrote 30 traces, %d actions, 3 procedures planted 9 times (seed 7) to %s\n", actions, out)
	if stdout != want {
		t.Errorf("stdout = %q, want %q", stdout, want)
	}
	names := listDir(t, out)
	if len(names) != 30 || names[0] != "trace-000001.json" || names[29] != "trace-000030.json" {
		t.Errorf("files in DIR = %v, want trace-000001.json .. trace-000030.json", names)
	}
	data, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}
	var planted []tracetest.Planted
	if err := json.Unmarshal(data, &planted); err != nil {
		t.Fatalf("manifest: %v", err)
	}
	if diff := cmp.Diff(c.Planted, planted); diff != "" {
		t.Errorf("manifest (-want +got):\n%s", diff)
	}
}

func TestJSONL(t *testing.T) {
	out := filepath.Join(t.TempDir(), "corpus")
	if code, _, stderr := runCmd("-traces", "12", "-out", out, "-jsonl"); code != 0 {
		t.Fatalf("exit status %d, stderr %q", code, stderr)
	}
	if names := listDir(t, out); !slices.Equal(names, []string{"traces.jsonl"}) {
		t.Fatalf("files in DIR = %v, want [traces.jsonl]", names)
	}
	f, err := os.Open(filepath.Join(out, "traces.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	lines := 0
	for sc.Scan() {
		if !json.Valid(sc.Bytes()) {
			t.Errorf("line %d is not JSON", lines+1)
		}
		lines++
	}
	if lines != 12 {
		t.Errorf("traces.jsonl has %d lines, want 12", lines)
	}
}

func TestForce(t *testing.T) {
	tmp := t.TempDir()
	out := filepath.Join(tmp, "corpus")
	manifest := filepath.Join(tmp, "planted.json")
	if code, _, stderr := runCmd("-traces", "5", "-out", out, "-manifest", manifest); code != 0 {
		t.Fatalf("first run: exit status %d, stderr %q", code, stderr)
	}
	if err := os.WriteFile(filepath.Join(out, "README"), []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	code, _, stderr := runCmd("-traces", "3", "-out", out)
	if want := "gencorpus: " + out + " is not empty (use -force to write into it)"; code != 1 || stderr != want {
		t.Errorf("non-empty DIR: exit status %d, stderr %q; want 1, %q", code, stderr, want)
	}
	code, _, stderr = runCmd("-traces", "3", "-out", filepath.Join(tmp, "other"), "-manifest", manifest)
	if want := "gencorpus: " + manifest + " already exists (use -force to replace it)"; code != 1 || stderr != want {
		t.Errorf("existing manifest: exit status %d, stderr %q; want 1, %q", code, stderr, want)
	}

	// With -force, an earlier run's traces go, other files stay.
	if code, _, stderr := runCmd("-traces", "3", "-out", out, "-manifest", manifest, "-force"); code != 0 {
		t.Fatalf("-force: exit status %d, stderr %q", code, stderr)
	}
	want := []string{"README", "trace-000001.json", "trace-000002.json", "trace-000003.json"}
	if diff := cmp.Diff(want, listDir(t, out)); diff != "" {
		t.Errorf("files after -force (-want +got):\n%s", diff)
	}
}

func TestUsage(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "corpus")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-out", dir}, "-traces must be at least 1, got 0"},
		{[]string{"-traces", "x", "-out", dir}, `invalid value "x" for flag -traces: parse error`},
		{[]string{"-traces", "3"}, "-out is required"},
		{[]string{"-traces", "3", "-out", dir, "extra"}, `unexpected argument "extra"`},
		{[]string{"-traces", "3", "-out", dir, "-bogus"}, "flag provided but not defined: -bogus"},
		{[]string{"-traces", "3", "-out", dir, "-procedures", "0"}, "-procedures must be at least 1, got 0"},
		{[]string{"-traces", "3", "-out", dir, "-actions", "0"}, "-actions must be at least 1, got 0"},
		{[]string{"-traces", "3", "-out", dir, "-support", "1.5"}, "-support must be in (0, 1], got 1.5"},
		{[]string{"-traces", "3", "-out", dir, "-support", "0"}, "-support must be in (0, 1], got 0"},
		{[]string{"-traces", "3", "-out", dir, "-min-len", "0"}, "-min-len must be at least 1, got 0"},
		{[]string{"-traces", "3", "-out", dir, "-min-len", "5", "-max-len", "3"}, "-max-len (3) must not be below -min-len (5)"},
		{[]string{"-traces", "3", "-out", dir, "-noise", "0"}, "-noise must be at least 1, got 0"},
		{[]string{"-traces", "3", "-out", dir, "-fuzzy-every", "-1"}, "-fuzzy-every must not be negative, got -1"},
		{[]string{"-traces", "3", "-out", dir, "-manifest", filepath.Join(dir, "planted.json")},
			"-manifest " + filepath.Join(dir, "planted.json") + " is inside -out " + dir + ", where the miner would read it as a trace"},
	} {
		code, stdout, stderr := runCmd(tc.args...)
		if code != 2 || stdout != "" || stderr != "gencorpus: "+tc.want {
			t.Errorf("run(%q) = %d, stdout %q, stderr %q; want 2, stderr %q", tc.args, code, stdout, stderr, "gencorpus: "+tc.want)
		}
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("a usage error created DIR (stat: %v)", err)
	}

	code, stdout, _ := runCmd("-h")
	if code != 0 || !strings.HasPrefix(stdout, usageLine+"\n") || !strings.Contains(stdout, "-fuzzy-every N") {
		t.Errorf("run(-h) = %d, stdout %q; want 0 and the flag list", code, stdout)
	}
}

func TestWriteError(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCmd("-traces", "3", "-out", file)
	if want := "gencorpus: open " + file + ": not a directory"; code != 1 || stderr != want {
		t.Errorf("-out a file: exit status %d, stderr %q; want 1, %q", code, stderr, want)
	}
}
