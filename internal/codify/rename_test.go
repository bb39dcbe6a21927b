package codify

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/codegen"
	"github.com/crystallize-dev/crystallize/internal/runtime"
	"github.com/crystallize-dev/crystallize/internal/session"
)

// bumpSources are three sessions that bump a module and commit with a
// message made of the module and the version, so that mining derives the
// message: message = "Bump " + module + " to " + version.
func bumpSources(t *testing.T) []Source {
	t.Helper()
	var sources []Source
	for i, mv := range [][2]string{{"golang.org/x/net", "v0.33.0"}, {"google.golang.org/grpc", "v1.70.0"}, {"github.com/spf13/cobra", "v1.9.1"}} {
		name := fmt.Sprintf("bump-%d.md", i+1)
		log := fmt.Sprintf("---\ntype: session\nsession_id: bump-%d\nstatus: completed\n---\n\n# Bump a module\n\n## Bump\n\n**Tool calls:**\n"+
			"- `go get %s@%s` → ok\n- `git commit -am \"Bump %s to %s\"` → ok\n", i+1, mv[0], mv[1], mv[0], mv[1])
		s, err := session.Parse(name, []byte(log))
		if err != nil {
			t.Fatal(err)
		}
		sources = append(sources, Source{File: name, Session: s})
	}
	return sources
}

// answer is a model that answers every request with reply applied to the
// workflow it was sent.
type answer func(src string) string

func (f answer) Complete(_ context.Context, req runtime.ModelRequest) (*runtime.ModelResponse, error) {
	_, src, _ := strings.Cut(req.Prompt, "without a markdown code fence.\n\n")
	return &runtime.ModelResponse{Output: f(src), Model: "fake"}, nil
}

// TestRefineRenamesDerivedRefs renames a parameter that a derived
// parameter's expression reads: the refinement is accepted, and the
// candidate's derived parameter reads the new name, so that the report
// and a regenerated workflow agree with the refined one.
func TestRefineRenamesDerivedRefs(t *testing.T) {
	ctx := context.Background()
	d, err := Run(ctx, bumpSources(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	sel := d.Report.Selected()
	if sel == nil || len(sel.DerivedParameters) != 1 {
		t.Fatalf("Run(bump sessions) = %+v, want one derived parameter", sel)
	}
	draft, err := codegen.Workflow(sel, codegen.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(draft), `message = "Bump " + module + " to " + version`) {
		t.Fatalf("the draft does not derive the message:\n%s", draft)
	}
	rename := strings.NewReplacer("(ctx, module, version)", "(ctx, module_path, version)",
		`"Bump " + module +`, `"Bump " + module_path +`, "module = module,", "module = module_path,")
	ref := &Refiner{key: "refine", name: "fake", model: answer(func(src string) string { return rename.Replace(src) })}
	rf, err := ref.Refine(ctx, draft, sel, codegen.Options{})
	if err != nil {
		t.Fatalf("Refine(module → module_path) = %v", err)
	}
	if rf.Renames["module"] != "module_path" {
		t.Errorf("Refine renames = %v, want module → module_path", rf.Renames)
	}
	dp := sel.DerivedParameters[0]
	if dp.Expression != `"Bump " + module_path + " to " + version` || strings.Join(dp.Refs, ",") != "module_path,version" {
		t.Errorf("derived parameter = %q reading %v, want the expression and refs renamed", dp.Expression, dp.Refs)
	}
	for _, ev := range dp.Evidence {
		if _, ok := ev.Inputs["module_path"]; !ok {
			t.Errorf("evidence inputs %v, want module_path", ev.Inputs)
		}
	}
	regen, err := codegen.Workflow(sel, codegen.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if renames, err := codegen.Equivalent(regen, rf.Src, codegen.FuncName(sel, codegen.Options{})); err != nil || len(renames) > 0 {
		t.Errorf("the regenerated workflow is not the refinement: %v, %v\n%s", renames, err, regen)
	}
}
