package runconfig

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzLoadConfig feeds LoadConfig arbitrary files, seeded with the shipped
// example and small configs of every section. It must not panic; a config
// it refuses is refused with an error naming the file, and one it accepts
// has its directory set.
func FuzzLoadConfig(f *testing.F) {
	if data, err := os.ReadFile("../../examples/crystallize.toml"); err == nil {
		f.Add(data)
	}
	for _, s := range []string{
		"",
		"[workspace]\nroots = [\".\"]\n[grants]\ncapabilities = [\"fs.write\", \"exec:git\"]\n",
		"[tools.\"git.commit\"]\ncommand = [\"git\", \"commit\", \"-m\", \"{message}\"]\ntimeout = \"30s\"\n",
		"[tools.\"docs.*\"]\nmcp = \"docs\"\n[mcp.docs]\ncommand = [\"docs-server\"]\n",
		"[tools.api]\n[tools.api.http]\nmethod = \"GET\"\nurl = \"https://example.com/{id}\"\n",
		"[models.default]\nprovider = \"openai\"\nmodel = \"m\"\napi_key = \"KEY\"\n",
		"[normalize]\nobservations = [\"mcp__db__describe\"]\n[normalize.heads]\nterraform = 1\n",
		"[tools.x]\nbuiltin = \"fs.nope\"\n",
		"[[tools]]\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		file := filepath.Join(t.TempDir(), "crystallize.toml")
		if err := os.WriteFile(file, data, 0o600); err != nil {
			t.Fatal(err)
		}
		c, err := LoadConfig(file)
		if err != nil {
			if !strings.Contains(err.Error(), "crystallize.toml") && !strings.HasPrefix(err.Error(), "reading config") {
				t.Errorf("LoadConfig error does not name the file: %v", err)
			}
			return
		}
		if c.Dir == "" || c.File == "" {
			t.Errorf("accepted config without Dir/File: %+v", c)
		}
	})
}
