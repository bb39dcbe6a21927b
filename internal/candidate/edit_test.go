package candidate

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// editCandidate has two steps: a literal and a parameter in the first, a
// literal in the second.
func editCandidate() *Candidate {
	return &Candidate{
		Parameters: []Parameter{{Name: "pkg", Key: "arg2", SourcePaths: []string{"steps[1].parameters.arg2"}, Examples: []any{"./a"}, Type: "string", Required: true}},
		Constants:  []Constant{{Step: 1, Path: "parameters.arg1", Value: "build"}, {Step: 2, Path: "parameters.branch", Value: "main"}},
		Steps: []Step{
			{Index: 1, Name: "go", ParameterRefs: []string{"pkg"}, Arguments: []Argument{
				{Key: "arg1", Kind: ArgConstant, Value: "build"},
				{Key: "arg2", Kind: ArgParameter, Parameter: "pkg"},
			}},
			{Index: 2, Name: "git", Arguments: []Argument{{Key: "branch", Kind: ArgConstant, Value: "main"}}},
		},
	}
}

func TestParameterize(t *testing.T) {
	c := editCandidate()
	if err := c.Parameterize(2, "branch", "branch"); err != nil {
		t.Fatal(err)
	}
	if err := c.Parameterize(1, "arg1", "verb"); err != nil {
		t.Fatal(err)
	}
	want := []Parameter{
		{Name: "pkg", Key: "arg2", SourcePaths: []string{"steps[1].parameters.arg2"}, Examples: []any{"./a"}, Type: "string", Required: true},
		{Name: "branch", Key: "branch", SourcePaths: []string{"steps[2].parameters.branch"}, Examples: []any{"main"}, Type: "string", Required: true},
		{Name: "verb", Key: "arg1", SourcePaths: []string{"steps[1].parameters.arg1"}, Examples: []any{"build"}, Type: "string", Required: true},
	}
	if diff := cmp.Diff(want, c.Parameters); diff != "" {
		t.Errorf("Parameterize parameters (-want +got):\n%s", diff)
	}
	if len(c.Constants) != 0 {
		t.Errorf("Parameterize left constants %+v", c.Constants)
	}
	if got := c.Steps[1].Arguments[0]; got != (Argument{Key: "branch", Kind: ArgParameter, Parameter: "branch"}) {
		t.Errorf("Parameterize argument = %+v", got)
	}

	// SortParameters puts verb (step 1, argument 0) first.
	c.SortParameters()
	var names []string
	for _, p := range c.Parameters {
		names = append(names, p.Name)
	}
	if diff := cmp.Diff([]string{"verb", "pkg", "branch"}, names); diff != "" {
		t.Errorf("SortParameters order (-want +got):\n%s", diff)
	}
}

func TestParameterizeShared(t *testing.T) {
	c := editCandidate()
	c.Steps[1].Arguments[0].Value = 7
	if err := c.Parameterize(2, "branch", "pkg"); err != nil {
		t.Fatal(err)
	}
	p := c.Parameters[0]
	if len(c.Parameters) != 1 || p.Type != "mixed" || len(p.SourcePaths) != 2 || len(p.Examples) != 2 {
		t.Errorf("Parameterize(shared name) = %+v, want one mixed parameter with two sources and examples", c.Parameters)
	}
}

func TestParameterizeErrors(t *testing.T) {
	for _, tt := range []struct {
		step      int
		key, want string
	}{
		{0, "arg1", "no step 0"},
		{3, "arg1", "no step 3"},
		{1, "arg2", `step 1 has no literal argument "arg2"`},
		{1, "nope", `step 1 has no literal argument "nope"`},
	} {
		err := editCandidate().Parameterize(tt.step, tt.key, "x")
		if err == nil || err.Error() != tt.want {
			t.Errorf("Parameterize(%d, %s) = %v, want %s", tt.step, tt.key, err, tt.want)
		}
	}
}

func TestRenameParameters(t *testing.T) {
	orig := editCandidate()
	c := *orig
	c.RenameParameters(map[string]string{"pkg": "package_dir"})
	if c.Parameters[0].Name != "package_dir" || c.Steps[0].Arguments[1].Parameter != "package_dir" || c.Steps[0].ParameterRefs[0] != "package_dir" {
		t.Errorf("RenameParameters = %+v", c)
	}
	if orig.Parameters[0].Name != "pkg" || orig.Steps[0].Arguments[1].Parameter != "pkg" || orig.Steps[0].ParameterRefs[0] != "pkg" {
		t.Errorf("RenameParameters changed the candidate it was copied from: %+v", orig)
	}
}
