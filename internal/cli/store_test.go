package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/pipeline"
	"github.com/crystallize-dev/crystallize/internal/tracetest"
)

// mineStoreOutputs imports from into a fresh trace store, mines it with
// mine --store and returns every file mine wrote, its exit code and its
// stdout. out is the same directory minePasses writes to, emptied first,
// since the report records the paths it wrote.
func mineStoreOutputs(t *testing.T, out, from string, extra ...string) (map[string][]byte, int, string) {
	t.Helper()
	state := filepath.Join(t.TempDir(), "state")
	e, _, stderr := e2eEnv()
	if code := run(context.Background(), e, []string{"import", "--from", from, "--store", "--state-dir", state}); code != 0 {
		t.Fatalf("import --store: exit %d\n%s", code, stderr)
	}
	if err := os.RemoveAll(out); err != nil {
		t.Fatal(err)
	}
	e, stdout, stderr := e2eEnv()
	args := append([]string{"mine", "--store", "--state-dir", state,
		"--out", filepath.Join(out, "w.star"), "--out-dir", filepath.Join(out, "all"),
		"--report", filepath.Join(out, "report.json"), "--bundle", filepath.Join(out, "bundle")}, extra...)
	code := run(context.Background(), e, args)
	if code > 1 {
		t.Fatalf("mine --store: exit %d\n%s", code, stderr)
	}
	return readTree(t, out), code, stdout.String()
}

// TestMineStoreSameOutput checks that mine --store writes what mine --from
// writes on the imported directory, byte for byte (the report, every
// workflow, the bundle and the summary): on the examples, with and
// without a candidate, on generated corpora as files and as JSON Lines,
// and on agents' session logs, which the gapped miner mines whole.
func TestMineStoreSameOutput(t *testing.T) {
	corpora := sameOutputCorpora(t, 1, 5)
	agents := filepath.Join(t.TempDir(), "claude")
	ac := tracetest.GenerateAgents(tracetest.AgentConfig{Sessions: 40, Seed: 1})
	if err := ac.Write(agents, tracetest.AgentFormats[0]); err != nil {
		t.Fatal(err)
	}
	corpora = append(corpora, sameOutputCorpus{"agents", agents, nil})
	for _, c := range corpora {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			var from, stored mineRun
			from.files, from.code, from.stdout = minePasses(t, out, c.dir, pipeline.PassesTwo, c.extra...)
			stored.files, stored.code, stored.stdout = mineStoreOutputs(t, out, c.dir, c.extra...)
			sameOutput(t, "from --from", from, "from --store", stored)
		})
	}
}

// TestStoreExportRoundTrip checks that store export writes, byte for
// byte, the files import --out writes from the same directory, for traces
// and for agents' session logs.
func TestStoreExportRoundTrip(t *testing.T) {
	tmp := t.TempDir()
	agents := filepath.Join(tmp, "codex")
	ac := tracetest.GenerateAgents(tracetest.AgentConfig{Sessions: 12, Seed: 2})
	if err := ac.Write(agents, tracetest.AgentFormats[1]); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{"../../examples/traces", "../../examples/composition", agents} {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			work := t.TempDir()
			state, imported, exported := filepath.Join(work, "state"), filepath.Join(work, "imported"), filepath.Join(work, "exported")
			for _, args := range [][]string{
				{"import", "--from", dir, "--out", imported},
				{"import", "--from", dir, "--store", "--state-dir", state},
				{"store", "export", "--state-dir", state, "--out", exported},
			} {
				e, _, stderr := e2eEnv()
				if code := run(context.Background(), e, args); code != 0 {
					t.Fatalf("%v: exit %d\n%s", args, code, stderr)
				}
			}
			want, got := readTree(t, imported), readTree(t, exported)
			if len(want) == 0 {
				t.Fatal("import --out wrote nothing")
			}
			for name, b := range want {
				if !bytes.Equal(b, got[name]) {
					t.Errorf("%s: exported bytes differ from imported", name)
				}
			}
			if len(got) != len(want) {
				t.Errorf("exported %d files, import --out wrote %d", len(got), len(want))
			}
		})
	}
}
