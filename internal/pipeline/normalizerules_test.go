package pipeline

import (
	"errors"
	"os"
	"reflect"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/normalize"
	"github.com/crystallize-dev/crystallize/internal/runconfig"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

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

// TestNormalizeSectionKeys holds the configuration's copy of the
// [normalize] section to the keys normalize.Config documents: the
// conversion in NormalizeRules checks the fields' names and types, not
// their toml tags, and a key spelled differently would be reported as
// unknown in crystallize.toml, or read into nothing.
func TestNormalizeSectionKeys(t *testing.T) {
	section, config := reflect.TypeFor[runconfig.NormalizeSection](), reflect.TypeFor[normalize.Config]()
	if section.NumField() != config.NumField() {
		t.Fatalf("runconfig.NormalizeSection has %d fields, normalize.Config %d", section.NumField(), config.NumField())
	}
	for i := range section.NumField() {
		s, c := section.Field(i), config.Field(i)
		if s.Name != c.Name || s.Tag.Get("toml") != c.Tag.Get("toml") {
			t.Errorf("field %d: runconfig.NormalizeSection has %s `toml:%q`, normalize.Config %s `toml:%q`", i, s.Name, s.Tag.Get("toml"), c.Name, c.Tag.Get("toml"))
		}
	}
}
