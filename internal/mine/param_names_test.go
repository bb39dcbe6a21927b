package mine

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestParamTableNames checks the names varying fields get as workflow
// parameters: one name for a key with the same values wherever it is
// passed, the key suffixed with its step for other values, numbered when
// that is taken too, and never a name of the form stepN, which the
// generated code keeps for step results.
func TestParamTableNames(t *testing.T) {
	tab := newParamTable()
	use := func(key, path string, step int, vals ...string) string {
		values := make([]any, len(vals))
		canon := make([]string, len(vals))
		for i, v := range vals {
			values[i], canon[i] = v, canonical(v)
		}
		return tab.use(key, path, step, values, canon)
	}
	got := []string{
		use("name", "steps[1].parameters.name", 1, "a", "b"),
		use("name", "steps[2].parameters.name", 2, "a", "b"),
		use("name", "steps[3].parameters.name", 3, "c", "d"),
		use("name_step3", "steps[3].parameters.name_step3", 3, "e", "f"),
		use("name", "steps[3].parameters.name", 3, "g", "h"),
		use("step2", "steps[4].parameters.step2", 4, "x", "y"),
		use("steps", "steps[4].parameters.steps", 4, "x", "z"),
		use("step", "steps[4].parameters.step", 4, "y", "z"),
	}
	want := []string{"name", "name", "name_step3", "name_step3_step3", "name_step3_2", "step2_", "steps", "step"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("parameter names (-want +got):\n%s", diff)
	}
	if ps := tab.list(); len(ps) != 7 || len(ps[0].SourcePaths) != 2 {
		t.Errorf("parameters %+v, want 7, the first passed at two paths", ps)
	}
}
