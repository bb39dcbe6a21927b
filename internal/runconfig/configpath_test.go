package runconfig

import (
	"errors"
	"os"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/normalize"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

func TestConfigPath(t *testing.T) {
	t.Chdir(t.TempDir())
	if got := ConfigPath(""); got != "" {
		t.Errorf("ConfigPath with no %s = %q, want none", ConfigFile, got)
	}
	if got := ConfigPath("other.toml"); got != "other.toml" {
		t.Errorf("ConfigPath(other.toml) = %q", got)
	}
	if err := os.WriteFile(ConfigFile, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if got := ConfigPath(""); got != ConfigFile {
		t.Errorf("ConfigPath with %s there = %q", ConfigFile, got)
	}
}

// TestNormalizeRules reads the [normalize] section of the configuration:
// none gives the default table, an extension changes how a tool call is
// read, and a bad entry names the file and its key path.
func TestNormalizeRules(t *testing.T) {
	t.Chdir(t.TempDir())
	call := normalize.Call{ID: "t1", Tool: "mcp__db__vacuum", Args: map[string]any{"table": "orders"}}
	plain, err := NormalizeRules("")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile("extend.toml", []byte("[normalize]\nobservations = [\"mcp__db__vacuum\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	extended, err := NormalizeRules("extend.toml")
	if err != nil {
		t.Fatal(err)
	}
	if a, b := plain.Actions(call), extended.Actions(call); len(a) != 1 || len(b) != 1 || a[0].Kind == b[0].Kind {
		t.Errorf("actions %+v and %+v; want the extension to read the call as an observation", a, b)
	}
	if err := os.WriteFile("bad.toml", []byte("[normalize]\nobservations = [\"\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = NormalizeRules("bad.toml")
	var list trace.ErrorList
	if !errors.As(err, &list) || list[0].File != "bad.toml" || list[0].Path != "normalize.observations[0]" {
		t.Errorf("NormalizeRules(bad) = %v; want the entry named in bad.toml", err)
	}
}
