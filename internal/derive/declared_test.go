package derive

import "testing"

// TestSubstitute: a run's declared values are read wherever they stand
// as whole tokens, the longest first, and nothing else is guessed.
func TestSubstitute(t *testing.T) {
	values := map[string]string{
		"current_version":       "2.3.4",
		"next_version":          "2.4.0",
		"target_release_branch": "release/v2.4.0",
		"base_branch":           "main",
		"bump":                  "minor",
		"latest_tag":            "v2.3.4",
	}
	tests := []struct {
		in, want string // want "" when nothing is substituted
	}{
		{"2.4.0", `next_version`},
		{"git checkout -b release/v2.4.0", `"git checkout -b " + target_release_branch`},
		{`git commit -m "Release v2.4.0"`, `"git commit -m \"Release v" + next_version + "\""`},
		{"git tag v2.4.0", `"git tag v" + next_version`},
		{"gh pr create --base main --head release/v2.4.0", `"gh pr create --base " + base_branch + " --head " + target_release_branch`},
		{"git log v2.3.4..HEAD", `"git log " + latest_tag + "..HEAD"`},
		{"## 2.4.0 (minor)", `"## " + next_version + " (" + bump + ")"`},
		{"Release 2.4.0.", `"Release " + next_version + "."`},
		{"CHANGELOG.md", ""},
		{"12.4.0 and 2.4.01 and 2.4.0.1 and 1.2.4.0", ""},
		{"domain minority mainline", ""},
		{"", ""},
	}
	for _, tc := range tests {
		e, ok := Substitute(tc.in, values)
		got := ""
		if ok {
			got = e.String()
			if v, ok := e.Eval(values); !ok || v != tc.in {
				t.Errorf("Substitute(%q) = %s, which evaluates to %q, %v", tc.in, got, v, ok)
			}
			if _, err := Parse(got); err != nil {
				t.Errorf("Parse(Substitute(%q)) = %v", tc.in, err)
			}
		}
		if got != tc.want {
			t.Errorf("Substitute(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

// TestSubstituteTies: of two parameters with the same value the first by
// name is read, whatever the map order; a one-character value is never
// read.
func TestSubstituteTies(t *testing.T) {
	for range 20 {
		e, ok := Substitute("on main", map[string]string{"starting_branch": "main", "base_branch": "main", "x": "n"})
		if !ok || e.String() != `"on " + base_branch` {
			t.Fatalf("Substitute = %v, %v, want \"on \" + base_branch", e, ok)
		}
	}
}
