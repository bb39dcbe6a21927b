package session

import (
	"errors"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestToTrace(t *testing.T) {
	data, err := os.ReadFile("testdata/learn/deploy.md")
	if err != nil {
		t.Fatal(err)
	}
	s, err := Parse("deploy.md", data)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := ToTrace(s, "deploy.md")
	if err != nil {
		t.Fatal(err)
	}
	type step struct {
		Name     string
		Params   map[string]any
		Phase    any
		Fuzzy    bool
		Approval bool
	}
	var got []step
	for _, a := range tr.Actions {
		got = append(got, step{a.Name, a.Parameters, a.Metadata["phase"], a.Fuzzy != nil && *a.Fuzzy, a.Approval != nil && a.Approval.Required})
	}
	want := []step{
		{"go", map[string]any{"arg1": "build", "arg2": "./cmd/billing"}, "build", false, false},
		{"migrate", map[string]any{"arg1": "up", "env": "prod"}, "migrate", false, false},
		// The call after the [!error] is the recovery: fuzzy.
		{"migrate", map[string]any{"arg1": "unlock", "env": "prod"}, "migrate", true, false},
		{"migrate", map[string]any{"arg1": "up", "env": "prod"}, "migrate", false, false},
		{"kubectl", map[string]any{"arg1": "rollout", "arg2": "restart", "arg3": "deploy/billing"}, "release", false, false},
		// The call after the [!user] is an approval boundary.
		{"kubectl", map[string]any{"arg1": "set", "arg2": "image", "arg3": "deploy/billing", "arg4": "billing=billing:v2"}, "release", false, true},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ToTrace(deploy.md) (-want +got):\n%s", diff)
	}
	if tr.ID != "deploy-fix" || tr.Metadata["goal"] != "Deploy the billing service" {
		t.Errorf("ToTrace(deploy.md) id, goal = %q, %v", tr.ID, tr.Metadata["goal"])
	}

	empty := &Session{Meta: Meta{SessionID: "x", Status: "active"}, Phases: []Phase{{Name: "Think"}}}
	if _, err := ToTrace(empty, "x.md"); !errors.Is(err, ErrNoToolCalls) {
		t.Errorf("ToTrace(no calls) = %v, want ErrNoToolCalls", err)
	}
}

func TestSplitArgs(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"a  b\tc", []string{"a", "b", "c"}},
		{`'a b' "c \"d\"" e\ f`, []string{"a b", `c "d"`, "e f"}},
		{`x'y'z ""`, []string{"xyz", ""}},
		{`'open`, []string{"open"}},
	} {
		if got := SplitArgs(tc.in); !cmp.Equal(tc.want, got) {
			t.Errorf("SplitArgs(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
