package crystallize_test

import (
	"os"
	"strings"
	"testing"

	"github.com/crystallize-dev/crystallize"
)

// TestCompositionTraceRefusesWhatLoadRefuses checks that a composition
// report handed over in memory is held to the rules of one read from a
// file: a member written twice would let a reviewer read one value while
// the other is used, and anything but an object is no report.
func TestCompositionTraceRefusesWhatLoadRefuses(t *testing.T) {
	good, err := os.ReadFile("examples/composition/runs/01-release-readiness.json")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := crystallize.CompositionTrace(good, "report.json"); err != nil {
		t.Fatal(err)
	}
	twice := strings.Replace(string(good), `"id": "comp-run-0001",`, `"id": "comp-run-0001", "id": "comp-run-other",`, 1)
	if twice == string(good) {
		t.Fatal("the example report has no run id to write twice")
	}
	for _, tc := range []struct{ name, report, want string }{
		{"duplicate key", twice, `report.json:3: $.run.id: duplicate key "id"`},
		{"null", `null`, "report.json: $: expected object, got null"},
		{"array", `[]`, "report.json: $: expected object, got array"},
		{"not JSON", `{"run":`, "report.json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr, err := crystallize.CompositionTrace([]byte(tc.report), "report.json")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("CompositionTrace = %+v, %v; want an error containing %q", tr, err, tc.want)
			}
		})
	}
}
