package candidate

import "testing"

func TestParameterPath(t *testing.T) {
	for _, c := range []struct {
		step int
		key  string
	}{{1, "branch"}, {12, "repo_path"}, {3, "a.b"}, {2, "]"}} {
		path := ParameterPath(c.step, c.key)
		step, key, ok := ParseParameterPath(path)
		if !ok || step != c.step || key != c.key {
			t.Errorf("ParseParameterPath(%q) = %d, %q, %v; want %d, %q, true", path, step, key, ok, c.step, c.key)
		}
	}
	for _, bad := range []string{
		"", "steps[", "steps[1]", "steps[1].output.x", "steps[0].parameters.x",
		"steps[-1].parameters.x", "steps[01].parameters.x", "steps[+1].parameters.x",
		"steps[x].parameters.y", "step[1].parameters.x", "$.steps[1].parameters.x",
	} {
		if step, key, ok := ParseParameterPath(bad); ok {
			t.Errorf("ParseParameterPath(%q) = %d, %q, true; want false", bad, step, key)
		}
	}
}
