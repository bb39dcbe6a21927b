package bundle

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzReadManifest feeds arbitrary bytes to Read and Validate as
// candidate.json, next to the files of a real bundle: neither may panic,
// and Validate must fail whenever Read does.
func FuzzReadManifest(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/manifest/*.json")
	for _, p := range seeds {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"schema": "` + Schema + `", "schema_version": 1, "promotion": {"sample_count": 1e300}}`))
	f.Add([]byte(`{"schema": "` + Schema + `", "schema_version": 1, "fixtures": [{"path": "../../etc/passwd"}], "skill": {"path": "/x"}}`))
	f.Add([]byte(`[]`))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(filepath.Join(dir, ManifestFile), data, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Read(dir)
		v := Validate(dir)
		if err != nil && v.OK {
			t.Errorf("Read failed (%v) but Validate is OK", err)
		}
		if len(v.Checks) != len(checkNames) {
			t.Errorf("Validate checks = %v, want %d", v.Checks, len(checkNames))
		}
	})
}
