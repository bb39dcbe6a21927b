package codify

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/codegen"
	"github.com/crystallize-dev/crystallize/internal/model"
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

func (f answer) Complete(_ context.Context, req model.Request) (*model.Response, error) {
	_, src, _ := strings.Cut(req.Prompt, "without a markdown code fence.\n\n")
	return &model.Response{Output: f(src), Model: "fake"}, nil
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

// TestApplyRenamesMinedParameter renames, in a review, a parameter mined
// from several sessions that a derived parameter reads: every step and
// the derived expression read the new name, and the workflow passes the
// check.
func TestApplyRenamesMinedParameter(t *testing.T) {
	ctx := context.Background()
	d, err := Run(ctx, bumpSources(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	sel := d.Report.Selected()
	for _, tc := range []struct{ key, name, want string }{
		{"module", "", "module is already the parameter module; give it another name to rename it"},
		{"module", "version", "version is already a parameter: renaming module to it would make two parameters one"},
		{"message", "version", "version is already a parameter: renaming message to it would make two parameters one"},
	} {
		step := 0
		if tc.key == "message" {
			step = 1
		}
		if _, err := NewParamEdit(sel, step, tc.key, tc.name); err == nil || err.Error() != tc.want {
			t.Errorf("NewParamEdit(%s, %q) = %v, want %q", tc.key, tc.name, err, tc.want)
		}
	}
	rename, err := NewParamEdit(sel, 0, "module", "module_path")
	if err != nil || rename != (ParamEdit{Step: 1, Key: "module", Name: "module_path", From: "module"}) {
		t.Fatalf("NewParamEdit(module module_path) = %+v, %v", rename, err)
	}
	derived, err := NewParamEdit(sel, 1, "message", "commit_message")
	if err != nil || derived.From != "message" {
		t.Fatalf("NewParamEdit(message commit_message) = %+v, %v", derived, err)
	}
	got, err := Apply(ctx, d, &Review{Params: []ParamEdit{rename, derived}})
	if err != nil {
		t.Fatalf("Apply(rename module, message) = %v", err)
	}
	gsel := got.Report.Selected()
	var names []string
	for _, p := range gsel.Parameters {
		names = append(names, p.Name)
	}
	if strings.Join(names, ",") != "module_path,version" {
		t.Errorf("parameters = %v, want module_path, version", names)
	}
	src, err := codegen.Workflow(gsel, codegen.Options{})
	if err != nil {
		t.Fatalf("the reviewed candidate does not generate: %v", err)
	}
	for _, want := range []string{
		"def bump_a_module(ctx, module_path, version):",
		`commit_message = "Bump " + module_path + " to " + version`,
		"module = module_path,",
		"message = commit_message",
	} {
		if !strings.Contains(string(src), want) {
			t.Errorf("workflow lacks %q:\n%s", want, src)
		}
	}
	if err := codegen.Check("wf.star", src, "bump_a_module"); err != nil {
		t.Errorf("the reviewed workflow fails the check: %v", err)
	}
	if w := got.Report.Warnings[len(got.Report.Warnings)-1]; !strings.HasSuffix(w.Message, "renamed the parameter module of step 1 go get to module_path; renamed the parameter message of step 2 git commit to commit_message") {
		t.Errorf("review warning = %q", w.Message)
	}
}
