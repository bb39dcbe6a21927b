package harness

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// databaseGate returns the content of the database kit's gate at path.
func databaseGate(t *testing.T, path string) string {
	t.Helper()
	for _, k := range Kits() {
		if k.ID != "database" {
			continue
		}
		for _, w := range k.Writes {
			if w.Path == path {
				return w.Content
			}
		}
	}
	t.Fatalf("the database kit writes no %s", path)
	return ""
}

// runGateScript runs the gate script in a repository holding files and returns
// its exit code and output.
func runGateScript(t *testing.T, script string, files map[string]string) (int, string) {
	t.Helper()
	dir := t.TempDir()
	for p, c := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("sh", "-c", script)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, string(out)
	case errors.As(err, &ee):
		return ee.ExitCode(), string(out)
	}
	t.Fatal(err)
	return -1, ""
}

const alembicEnv = "from alembic import context\n"

// TestDatabaseKitGates: the database kit's gates read SQL migrations and
// Alembic revisions alike; a destructive step needs its marker, two
// revisions of one parent block, and a repository with nothing they can
// read is not evidence (exit 77), never a pass.
func TestDatabaseKitGates(t *testing.T) {
	destructive := databaseGate(t, "gates/destructive-sql.sh")
	ordered := databaseGate(t, "gates/migrations-ordered.sh")
	for _, tc := range []struct {
		name   string
		script string
		files  map[string]string
		want   int
	}{
		{"sql drop without marker", destructive, map[string]string{"db/migrations/002_drop.sql": "DROP TABLE users;\n"}, 1},
		{"sql drop reviewed", destructive, map[string]string{"db/migrations/002_drop.sql": "-- destructive: reviewed\nDROP TABLE users;\n"}, 0},
		{"alembic drop without marker", destructive, map[string]string{
			"app/alembic/env.py":            alembicEnv,
			"app/alembic/versions/9c1_a.py": "revision = '9c1'\ndown_revision = None\ndef upgrade():\n    op.drop_column('user', 'email')\n",
		}, 1},
		{"alembic drop reviewed", destructive, map[string]string{
			"app/alembic/env.py":            alembicEnv,
			"app/alembic/versions/9c1_a.py": "# destructive: reviewed\nrevision = '9c1'\ndown_revision = None\ndef upgrade():\n    op.drop_column('user', 'email')\n",
		}, 0},
		{"nothing to read", destructive, map[string]string{"README.md": "# app\n"}, ExitNotEvidence},
		{"alembic two heads", ordered, map[string]string{
			"app/alembic/env.py":            alembicEnv,
			"app/alembic/versions/a1_x.py":  "revision = 'a1'\ndown_revision = '9c1'\n",
			"app/alembic/versions/b2_y.py":  "revision = \"b2\"\ndown_revision = \"9c1\"\n",
			"app/alembic/versions/9c1_z.py": "revision = '9c1'\ndown_revision = None\n",
		}, 1},
		{"alembic one head", ordered, map[string]string{
			"app/alembic/env.py":            alembicEnv,
			"app/alembic/versions/a1_x.py":  "revision = 'a1'\ndown_revision = '9c1'\n",
			"app/alembic/versions/9c1_z.py": "revision = '9c1'\ndown_revision = None\n",
		}, 0},
		{"sql duplicate versions", ordered, map[string]string{"migrations/001_a.sql": "", "migrations/001_b.sql": ""}, 1},
		{"no migration directory", ordered, map[string]string{"README.md": "# app\n"}, ExitNotEvidence},
	} {
		if code, out := runGateScript(t, tc.script, tc.files); code != tc.want {
			t.Errorf("%s: exit %d, want %d\n%s", tc.name, code, tc.want, out)
		}
	}
}
