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

// walkFiles returns the files under dir, relative and slash-separated.
func walkFiles(t *testing.T, dir string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			files = append(files, filepath.ToSlash(rel))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(files)
	return files
}

func TestAgentFormats(t *testing.T) {
	for _, f := range tracetest.AgentFormats {
		t.Run(string(f), func(t *testing.T) {
			tmp := t.TempDir()
			out := filepath.Join(tmp, "sessions")
			manifest := filepath.Join(tmp, "planted.json")
			code, stdout, stderr := runCmd("-format", string(f), "-sessions", "12", "-seed", "3", "-calls", "20", "-out", out, "-manifest", manifest)
			if code != 0 {
				t.Fatalf("exit status %d, stderr %q", code, stderr)
			}
			c := tracetest.GenerateAgents(tracetest.AgentConfig{Sessions: 12, Seed: 3, Calls: 20})
			calls := 0
			for _, s := range c.Manifest.Sessions {
				calls += s.ToolCalls
			}
			want := fmt.Sprintf("wrote 12 %s sessions, %d tool calls, 3 procedures planted 9 times (seed 3) to %s\n", f, calls, out)
			if stdout != want {
				t.Errorf("stdout = %q, want %q", stdout, want)
			}
			if diff := cmp.Diff(slices.Sorted(slices.Values(c.Files(f))), walkFiles(t, out)); diff != "" {
				t.Errorf("files in DIR (-want +got):\n%s", diff)
			}
			data, err := os.ReadFile(manifest)
			if err != nil {
				t.Fatal(err)
			}
			var got tracetest.AgentManifest
			if err := json.Unmarshal(data, &got); err != nil {
				t.Fatalf("manifest: %v", err)
			}
			if diff := cmp.Diff(c.Manifest, got); diff != "" {
				t.Errorf("manifest (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAgentSupportDefault(t *testing.T) {
	// -support defaults to the agent default, not the trace one, and an
	// explicit value is used.
	for _, tc := range []struct {
		args []string
		cfg  tracetest.AgentConfig
	}{
		{nil, tracetest.AgentConfig{Sessions: 40, Seed: 1}},
		{[]string{"-support", "0.5"}, tracetest.AgentConfig{Sessions: 40, Seed: 1, Support: 0.5}},
	} {
		manifest := filepath.Join(t.TempDir(), "m.json")
		args := append([]string{"-format", "codex", "-sessions", "40", "-out", filepath.Join(t.TempDir(), "out"), "-manifest", manifest}, tc.args...)
		if code, _, stderr := runCmd(args...); code != 0 {
			t.Fatalf("run(%q): exit status %d, stderr %q", args, code, stderr)
		}
		data, err := os.ReadFile(manifest)
		if err != nil {
			t.Fatal(err)
		}
		var got tracetest.AgentManifest
		if err := json.Unmarshal(data, &got); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tracetest.GenerateAgents(tc.cfg).Manifest, got); diff != "" {
			t.Errorf("run(%q) manifest (-want +got):\n%s", args, diff)
		}
	}
}

func TestAgentForce(t *testing.T) {
	out := filepath.Join(t.TempDir(), "sessions")
	if code, _, stderr := runCmd("-format", "claude", "-sessions", "20", "-out", out); code != 0 {
		t.Fatalf("first run: exit status %d, stderr %q", code, stderr)
	}
	if err := os.WriteFile(filepath.Join(out, "README"), []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(out, "keep"), 0o755); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runCmd("-format", "claude", "-sessions", "2", "-out", out); code != 1 || stderr != "gencorpus: "+out+" is not empty (use -force to write into it)" {
		t.Errorf("non-empty DIR: exit status %d, stderr %q", code, stderr)
	}
	if code, _, stderr := runCmd("-format", "claude", "-sessions", "2", "-out", out, "-force"); code != 0 {
		t.Fatalf("-force: exit status %d, stderr %q", code, stderr)
	}
	want := append([]string{"README"}, tracetest.GenerateAgents(tracetest.AgentConfig{Sessions: 2, Seed: 1}).Files(tracetest.FormatClaude)...)
	slices.Sort(want)
	if diff := cmp.Diff(want, walkFiles(t, out)); diff != "" {
		t.Errorf("files after -force (-want +got):\n%s", diff)
	}
	// Project directories left empty are gone; an empty directory of the
	// user's stays.
	entries, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, e := range entries {
		if e.IsDir() {
			dirs = append(dirs, e.Name())
			if e.Name() != "keep" && len(listDir(t, filepath.Join(out, e.Name()))) == 0 {
				t.Errorf("empty directory %s left behind", e.Name())
			}
		}
	}
	if !slices.Contains(dirs, "keep") {
		t.Errorf("-force removed the user's empty directory keep")
	}
}

func TestAgentUsage(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sessions")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-format", "jsonl", "-sessions", "3", "-out", dir}, `-format must be trace, claude, codex or otel, got "jsonl"`},
		{[]string{"-format", "claude", "-out", dir}, "-sessions must be at least 1, got 0"},
		{[]string{"-format", "codex", "-sessions", "3"}, "-out is required"},
		{[]string{"-format", "otel", "-sessions", "3", "-out", dir, "-calls", "0"}, "-calls must be at least 1, got 0"},
		{[]string{"-format", "otel", "-sessions", "3", "-out", dir, "-support", "2"}, "-support must be in (0, 1], got 2"},
		{[]string{"-format", "claude", "-sessions", "3", "-out", dir, "-traces", "3"}, "-traces applies to -format trace only"},
		{[]string{"-format", "claude", "-sessions", "3", "-out", dir, "-jsonl"}, "-jsonl applies to -format trace only"},
		{[]string{"-format", "codex", "-sessions", "3", "-out", dir, "x"}, `unexpected argument "x"`},
		{[]string{"-traces", "3", "-out", dir, "-sessions", "3"}, "-sessions applies to -format claude, codex or otel, not trace"},
		{[]string{"-format", "trace", "-traces", "3", "-out", dir, "-calls", "3"}, "-calls applies to -format claude, codex or otel, not trace"},
		{[]string{"-format", "claude", "-sessions", "3", "-out", dir, "-manifest", filepath.Join(dir, "m.json")},
			"-manifest " + filepath.Join(dir, "m.json") + " is inside -out " + dir + ", where the miner would read it as a trace"},
	} {
		code, stdout, stderr := runCmd(tc.args...)
		if code != 2 || stdout != "" || stderr != "gencorpus: "+tc.want {
			t.Errorf("run(%q) = %d, stdout %q, stderr %q; want 2, stderr %q", tc.args, code, stdout, stderr, "gencorpus: "+tc.want)
		}
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("a usage error created DIR (stat: %v)", err)
	}
}
