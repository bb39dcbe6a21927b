package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestGoldenSynthExample pins the output of the shipped bounded-synthesis
// example, run through the command in-process (its capsules run in this
// test binary, started again as "crystallize synth capsule-exec"). The
// seed's result {'total': [15], 'perm_pass': [True]} is in sum.txt.
func TestGoldenSynthExample(t *testing.T) {
	experiment, err := filepath.Abs("../../examples/synth/sum/experiment.toml")
	if err != nil {
		t.Fatal(err)
	}
	golden, err := filepath.Abs("testdata/golden/synth")
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())
	for name, args := range map[string][]string{
		"sum.txt":  {"synth", "run", experiment, "--out", "evidence"},
		"sum.json": {"synth", "run", experiment, "--out", "evidence", "--json"},
	} {
		code, stdout, stderr := runCLI(t, args...)
		if code != 0 {
			t.Fatalf("%s: exit %d\nstdout: %s\nstderr: %s", name, code, stdout, stderr)
		}
		path := filepath.Join(golden, name)
		if *update {
			if err := os.MkdirAll(golden, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(stdout), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test -update to create it)", err)
		}
		if !bytes.Equal(want, []byte(stdout)) {
			t.Errorf("%s differs from its golden file (-want +got):\n%s", name, cmp.Diff(string(want), stdout))
		}
	}
	if _, err := os.Stat(filepath.Join("evidence", "manifest.json")); err != nil {
		t.Errorf("no evidence manifest: %v", err)
	}
}

func TestSynthExitCodes(t *testing.T) {
	dir := t.TempDir()
	exp := func(name, code string) string {
		p := filepath.Join(dir, name)
		src := "[claim]\nid = \"x\"\ntext = \"order does not matter\"\n[[spec.properties]]\nname = \"perm\"\ntransform = \"permute_rows\"\nmetric = \"total\"\n" +
			"[code]\nsource = \"\"\"\n" + code + "\"\"\"\n[data]\nvalue = [1, 2, 3]\n[[hypotheses]]\nname = \"h\"\nverifier = \"metamorphic\"\n"
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name string
		args []string
		want int
	}{
		{"holds", []string{"synth", "run", exp("ok.toml", "def fit_and_eval(d):\n    return {'total': sum(d)}\n")}, exitOK},
		{"property fails", []string{"synth", "run", exp("first.toml", "def fit_and_eval(d):\n    return {'total': d[0]}\n")}, exitFailure},
		{"capsule stopped", []string{"synth", "run", exp("loop.toml", "def fit_and_eval(d):\n    while True:\n        pass\n")}, exitFailure},
		{"malformed", []string{"synth", "run", exp("bad.toml", "def fit_and_eval(d):\n    return {}\n\"\"\"\nbogus = \"\"\"\n")}, exitUsage},
		{"missing file", []string{"synth", "run", filepath.Join(dir, "none.toml")}, exitUsage},
		{"no argument", []string{"synth", "run"}, exitUsage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, append(tt.args, "--out", filepath.Join(dir, "ev"))...)
			if code != tt.want {
				t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tt.want, stdout, stderr)
			}
		})
	}
}
