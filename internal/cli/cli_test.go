package cli

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/crystallize-dev/crystallize/internal/harness/web"
)

// browserCondition is the [browser] condition of the scripts: a Chromium
// is installed. With CRYSTALLIZE_REQUIRE_BROWSER=1 (CI) a missing one is
// an error, so a script that needs it fails instead of skipping.
func browserCondition(cond string) (bool, error) {
	if cond != "browser" {
		return false, fmt.Errorf("unknown condition %q", cond)
	}
	if _, err := web.FindBrowser(""); err != nil {
		if os.Getenv("CRYSTALLIZE_REQUIRE_BROWSER") == "1" {
			return false, fmt.Errorf("CRYSTALLIZE_REQUIRE_BROWSER=1: %w", err)
		}
		return false, nil
	}
	return true, nil
}

var update = flag.Bool("update", os.Getenv("CRYSTALLIZE_UPDATE") != "", "rewrite golden files and testscript expectations (or set CRYSTALLIZE_UPDATE=1)")

// sourceDateEpoch pins generated_at in every test: 2026-01-01T00:00:00Z.
const sourceDateEpoch = "1767225600"

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"crystallize": func() { os.Exit(Main()) },
	})
}

// TestScripts runs the testscript scripts in testdata/script. Each script
// runs the real command in-process. $EXAMPLES is the repository's examples
// directory and $FIXTURES the shared conformance fixtures (may not exist).
func TestScripts(t *testing.T) {
	examples, err := filepath.Abs("../../examples")
	if err != nil {
		t.Fatal(err)
	}
	fixtures, err := filepath.Abs("../../../shared/fixtures")
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir:           "testdata/script",
		UpdateScripts: *update,
		Setup: func(e *testscript.Env) error {
			e.Setenv("SOURCE_DATE_EPOCH", sourceDateEpoch)
			e.Setenv("EXAMPLES", examples)
			e.Setenv("FIXTURES", fixtures)
			return nil
		},
		Condition: browserCondition,
	})
}
