package runner

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/plan"
	"github.com/crystallize-dev/crystallize/internal/runconfig"
)

// TestPreflight checks the report of a workflow whose command is not
// granted, then granted: the command, the grants, and a verdict that
// holds only the grant error.
func TestPreflight(t *testing.T) {
	w := workflow(t, showWorkflow)
	dir := execWorkspace(t)
	r, err := Preflight(context.Background(), w, &runconfig.Config{Dir: dir}, nil, os.Environ())
	if err != nil {
		t.Fatal(err)
	}
	if !r.Bound() || len(r.Unbound) != 0 {
		t.Errorf("Bound = %v, unbound %v; a workflow of ctx.exec alone binds nothing", r.Bound(), r.Unbound)
	}
	if diff := cmp.Diff([]string{"exec:show"}, r.MissingGrants); diff != "" {
		t.Errorf("missing grants (-want +got):\n%s", diff)
	}
	var ge *GrantError
	if !errors.As(r.Err(), &ge) {
		t.Errorf("Err = %v, want a *GrantError", r.Err())
	}
	b, err := candidate.EncodeJSON(r)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"commands"`, `"grants"`, `"missing_grants"`, `"option_positions"`, `"tools": []`, `"unbound": []`, `"undeclared"`, `"workflow": "wf"`} {
		if !strings.Contains(string(b), key) {
			t.Errorf("JSON lacks %s:\n%s", key, b)
		}
	}

	r, err = Preflight(context.Background(), w, &runconfig.Config{Dir: dir, Grants: runconfig.Grants{Capabilities: []string{"exec:show"}}}, nil, os.Environ())
	if err != nil || r.Err() != nil || len(r.MissingGrants) != 0 || len(r.Commands) != 1 {
		t.Errorf("granted: %+v, %v, verdict %v; want one command and no error", r, err, r.Err())
	}
}

// TestInprocTools checks that a plan's verify tool is bound, behind its
// capability, so that Preflight finds a lowered plan's workflow bound.
func TestInprocTools(t *testing.T) {
	tools := InprocTools(&runconfig.Config{Dir: t.TempDir()}, os.Environ())
	v, ok := tools[plan.VerifyTool]
	if !ok || v.Func == nil || len(v.Capabilities) != 1 || v.Capabilities[0] != plan.VerifyCapability {
		t.Fatalf("InprocTools = %+v; want %s behind %s", tools, plan.VerifyTool, plan.VerifyCapability)
	}
}
