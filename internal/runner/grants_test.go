package runner

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestExecGrants(t *testing.T) {
	needed, missing, undeclared := ExecGrants([]ExecCommand{
		{Name: "git init", Capability: "exec:git", Declared: true, Granted: true},
		{Name: "git push", Capability: "git.write", Declared: true},
		{Name: "rm", Capability: "exec:rm"},
		{Name: "git checkout", Capability: "git.write", Declared: true},
		{Name: "gh", Capability: "exec:gh", Binding: "gh pr"},
	})
	if diff := cmp.Diff([]string{"exec:git", "exec:rm", "git.write"}, needed); diff != "" {
		t.Errorf("needed (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"git.write"}, missing); diff != "" {
		t.Errorf("missing (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"exec:rm"}, undeclared); diff != "" {
		t.Errorf("undeclared (-want +got):\n%s", diff)
	}
}
