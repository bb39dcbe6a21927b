package runconfig

import (
	"os"
	"testing"
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
