package cli

import (
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/crystallize-dev/crystallize/internal/temporal/temporaltest"
)

// TestTemporalScripts runs the scripts in testdata/temporal against a
// Temporal server (temporaltest: skipped without one, failed without one
// when CRYSTALLIZE_REQUIRE_TEMPORAL=1). $TEMPORAL is its address and
// $QUEUE a task queue of the script's own, so scripts running at once do
// not take each other's runs.
func TestTemporalScripts(t *testing.T) {
	addr := temporaltest.Address(t)
	examples, err := filepath.Abs("../../examples")
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir:           "testdata/temporal",
		UpdateScripts: *update,
		Setup: func(e *testscript.Env) error {
			e.Setenv("SOURCE_DATE_EPOCH", sourceDateEpoch)
			e.Setenv("EXAMPLES", examples)
			e.Setenv("TEMPORAL", addr)
			e.Setenv("QUEUE", "q-"+filepath.Base(filepath.Dir(e.WorkDir))+"-"+filepath.Base(e.WorkDir))
			return nil
		},
	})
}
