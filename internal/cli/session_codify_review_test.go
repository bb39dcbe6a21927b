package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/crystallize-dev/crystallize/internal/bundle"
	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/codegen"
	"github.com/crystallize-dev/crystallize/internal/codify"
	"github.com/crystallize-dev/crystallize/internal/mine"
	"github.com/crystallize-dev/crystallize/internal/session"
)

// deploySession is the session of internal/session's tests: six tool
// calls, the third a recovery after an [!error] (fuzzy), the last behind
// a [!user] intervention (an approval).
const deploySession = "../session/testdata/learn/deploy.md"

// draftCandidate mines the session file name as session codify does and
// returns the selected candidate.
func draftCandidate(t *testing.T, name string) *candidate.Candidate {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	s, err := session.Parse(name, data)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := session.ToTrace(s, name)
	if err != nil {
		t.Fatal(err)
	}
	r, err := mine.Single(context.Background(), tr, mine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := r.Selected()
	if c == nil {
		t.Fatalf("no candidate for %s", name)
	}
	return c
}

func TestReviewSteps(t *testing.T) {
	c := draftCandidate(t, deploySession)
	if len(c.Steps) != 6 {
		t.Fatalf("deploy.md has %d steps, want 6", len(c.Steps))
	}
	tests := []struct {
		name    string
		answers string
		want    *codify.Review
		err     error
		// output holds what the prompts must have said.
		output []string
	}{
		{
			name:    "keep all",
			answers: "k\nkeep\n\nK\nk\nk\n",
			want:    &codify.Review{},
		},
		{
			name:    "drop",
			answers: "d\nk\ndrop\nk\nk\nk\n",
			want:    &codify.Review{Drop: []int{1, 3}},
		},
		{
			name:    "parameterize with and without a name",
			answers: "p arg2 target\nk\nk\nk\nk\nparam arg3\nk\nk\n",
			want:    &codify.Review{Params: []codify.ParamEdit{{Step: 1, Key: "arg2", Name: "target"}, {Step: 5, Key: "arg3", Name: "arg3"}}},
			output:  []string{"  arg2 = parameter target (was \"./cmd/billing\")\n"},
		},
		{
			name:    "a later name for the same argument wins",
			answers: "p arg2 x\np arg2 y\nk\nk\nk\nk\nk\nk\n",
			want:    &codify.Review{Params: []codify.ParamEdit{{Step: 1, Key: "arg2", Name: "y"}}},
		},
		{
			name:    "a name given twice is shared",
			answers: "k\np env environment\nk\np env environment\nk\nk\nk\nk\n",
			want:    &codify.Review{Params: []codify.ParamEdit{{Step: 2, Key: "env", Name: "environment"}, {Step: 3, Key: "env", Name: "environment"}}},
			output:  []string{"  env of step 3 takes the parameter environment, shared with the steps that already do\n"},
		},
		{
			name:    "a dropped step forgets its parameters",
			answers: "p arg2 target\nd\nk\nk\nk\nk\nk\n",
			want:    &codify.Review{Drop: []int{1}},
		},
		{
			name:    "bad answers are explained and asked again",
			answers: "x\np\np nope\np arg1 2bad\np arg1 a b\nk now\nd 2\nk\nk\nk\nk\nk\nk\n",
			want:    &codify.Review{},
			output: []string{
				"  unknown answer \"x\": k, d, p ARG NAME, q or ? for help\n",
				"  p takes the argument to make a parameter and, optionally, its name: p ARG NAME\n",
				"  step 1 has no argument \"nope\" (it has arg1, arg2)\n",
				"  \"2bad\" cannot name a parameter (try _2bad)\n",
				"  k takes no arguments\n",
				"  d takes no arguments\n",
			},
		},
		{
			name:    "a keyword cannot name a parameter",
			answers: "p arg1 for\nk\nk\nk\nk\nk\nk\n",
			want:    &codify.Review{},
			output:  []string{"  \"for\" cannot name a parameter (try for_)\n"},
		},
		{
			name:    "the last step standing cannot be dropped",
			answers: "d\nd\nd\nd\nd\nd\nk\n",
			want:    &codify.Review{Drop: []int{1, 2, 3, 4, 5}},
			output:  []string{"  every other step is dropped; keep this one, or q to stop\n"},
		},
		{
			name:    "help",
			answers: "?\nk\nk\nk\nk\nk\nk\n",
			want:    &codify.Review{},
			output:  []string{reviewHelp, "Step 6 of 6: tool_call kubectl (behind approval user_intervention)\n", "Step 3 of 6: tool_call migrate (fuzzy: stays a model call)\n"},
		},
		{name: "quit", answers: "k\nq\n", err: errReviewAborted},
		{name: "end of input", answers: "k\nk\n", err: errReviewAborted},
		{name: "end of input after a parameter", answers: "k\nk\nk\nk\nk\np arg1 verb", err: errReviewAborted},
		{name: "no input", answers: "", err: errReviewAborted},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			got, err := reviewSteps(context.Background(), strings.NewReader(tt.answers), &out, c)
			if !errors.Is(err, tt.err) {
				t.Fatalf("reviewSteps(%q) error = %v, want %v\n%s", tt.answers, err, tt.err, out.String())
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("reviewSteps(%q) (-want +got):\n%s\noutput:\n%s", tt.answers, diff, out.String())
			}
			for _, o := range tt.output {
				if !strings.Contains(out.String(), o) {
					t.Errorf("reviewSteps(%q) output lacks %q:\n%s", tt.answers, o, out.String())
				}
			}
		})
	}
}

// TestReviewStepsCancelled: SIGINT (a cancelled context) stops a review
// waiting for an answer that does not come.
func TestReviewStepsCancelled(t *testing.T) {
	c := draftCandidate(t, deploySession)
	pr, pw := io.Pipe()
	defer pw.Close()
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		pw.Write([]byte("k\n")) // step 1; step 2 waits
		cancel()
	}()
	var out bytes.Buffer
	_, err := reviewSteps(ctx, pr, &out, c)
	if !errors.Is(err, errReviewAborted) || !errors.Is(err, context.Canceled) {
		t.Errorf("reviewSteps(cancelled) = %v, want %v and %v", err, errReviewAborted, context.Canceled)
	}
}

// codifyInteractive runs session codify --interactive on files with the
// given answers, writing into dir, and returns what it printed and its
// error.
func codifyInteractive(t *testing.T, dir, answers string, files ...string) (string, error) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	e := &env{stdout: &stdout, stderr: &stderr, getenv: func(k string) string {
		if k == "SOURCE_DATE_EPOCH" {
			return sourceDateEpoch
		}
		return ""
	}}
	f := &codifyFlags{
		out: filepath.Join(dir, "wf.star"), report: filepath.Join(dir, "report.json"), bundle: filepath.Join(dir, "bundle"),
		config: filepath.Join(dir, "none.toml"), interactive: true,
	}
	if err := os.WriteFile(f.config, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	err := runCodify(context.Background(), e, f, files, strings.NewReader(answers))
	return stdout.String() + stderr.String(), err
}

// TestCodifyInteractive drops the fuzzy recovery step and makes two
// literals parameters, and checks that the workflow, the report and the
// bundle all say so.
func TestCodifyInteractive(t *testing.T) {
	dir := t.TempDir()
	//             1 go build         2   3 (fuzzy)  4  5  6 kubectl set
	answers := "p args target\nk\nk\nd\nk\nk\np args image\nk\n"
	out, err := codifyInteractive(t, dir, answers, deploySession)
	if err != nil {
		t.Fatalf("codify --interactive: %v\n%s", err, out)
	}

	src, err := os.ReadFile(filepath.Join(dir, "wf.star"))
	if err != nil {
		t.Fatal(err)
	}
	if err := codegen.Check("wf.star", src, "deploy_the_billing_service"); err != nil {
		t.Errorf("the reviewed workflow fails the check: %v", err)
	}
	for _, want := range []string{
		"def deploy_the_billing_service(ctx, target, image):\n",
		`ctx.exec("go build", ["go", "build", "{args...}"], args = target)`,
		`ctx.exec("kubectl set", ["kubectl", "set", "{args...}"], args = image)`,
		"# step 5 · tool_call kubectl set · capabilities exec:kubectl · approval user_intervention (required)\n",
	} {
		if !strings.Contains(string(src), want) {
			t.Errorf("wf.star lacks %q:\n%s", want, src)
		}
	}
	for _, gone := range []string{"unlock", "ctx.model(", "step 6"} {
		if strings.Contains(string(src), gone) {
			t.Errorf("wf.star still has %q of the dropped step:\n%s", gone, src)
		}
	}

	var report candidate.Report
	data, err := os.ReadFile(filepath.Join(dir, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &report); err != nil {
		t.Fatal(err)
	}
	sel := report.Selected()
	if sel == nil {
		t.Fatalf("report.json selects no candidate:\n%s", data)
	}
	type param struct {
		Name, Key, Type string
		Paths           []string
		Examples        []any
	}
	var params []param
	for _, p := range sel.Parameters {
		params = append(params, param{p.Name, p.Key, p.Type, p.SourcePaths, p.Examples})
	}
	wantParams := []param{
		{"target", "args", "array", []string{"steps[1].parameters.args"}, []any{[]any{"./cmd/billing"}}},
		{"image", "args", "array", []string{"steps[5].parameters.args"}, []any{[]any{"image", "deploy/billing", "billing=billing:v2"}}},
	}
	if diff := cmp.Diff(wantParams, params); diff != "" {
		t.Errorf("report parameters (-want +got):\n%s", diff)
	}
	var names []string
	for _, st := range sel.Steps {
		names = append(names, st.Name)
	}
	if diff := cmp.Diff([]string{"go build", "migrate", "migrate", "kubectl rollout restart", "kubectl set"}, names); diff != "" {
		t.Errorf("report steps (-want +got):\n%s", diff)
	}
	for _, k := range sel.Constants {
		if k.Step == 1 && k.Path == "parameters.args" || k.Step == 5 && k.Path == "parameters.args" {
			t.Errorf("report keeps constant %+v that became a parameter", k)
		}
	}
	if len(sel.Examples) != 1 || len(sel.Examples[0].ActionIDs) != 5 || sel.Shadow == nil || !sel.Shadow.Pass {
		t.Errorf("report candidate examples %+v, shadow %+v; want 5 actions replaying", sel.Examples, sel.Shadow)
	}
	if !hasWarning(report.Warnings, codify.CodeReviewed, "dropped step 3 migrate; made args of step 1 go build the parameter target; made args of step 6 kubectl set the parameter image") {
		t.Errorf("report warnings %+v lack the review", report.Warnings)
	}

	v := bundle.Validate(filepath.Join(dir, "bundle"))
	if len(v.Problems) > 0 {
		t.Errorf("bundle problems: %+v", v.Problems)
	}
	bsrc, err := os.ReadFile(filepath.Join(dir, "bundle", bundle.WorkflowFile))
	if err != nil || !bytes.Equal(bsrc, src) {
		t.Errorf("bundle workflow differs from --out (%v)", err)
	}
}

func hasWarning(ws []candidate.Problem, code, text string) bool {
	for _, w := range ws {
		if w.Code == code && strings.Contains(w.Message, text) {
			return true
		}
	}
	return false
}

// TestCodifyInteractiveAborted: a review cut short writes nothing.
func TestCodifyInteractiveAborted(t *testing.T) {
	for _, answers := range []string{"k\nd\nq\n", "k\nd\n"} {
		dir := t.TempDir()
		out, err := codifyInteractive(t, dir, answers, deploySession)
		if !errors.Is(err, errReviewAborted) {
			t.Errorf("codify --interactive with %q = %v, want %v\n%s", answers, err, errReviewAborted, out)
		}
		for _, name := range []string{"wf.star", "report.json", "bundle"} {
			if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
				t.Errorf("codify --interactive with %q wrote %s", answers, name)
			}
		}
	}
}

// TestCodifyInteractiveSeveral reviews a candidate mined from several
// sessions: dropping a step mines them again, a mined parameter can be
// renamed, and a literal made a parameter.
func TestCodifyInteractiveSeveral(t *testing.T) {
	dir := t.TempDir()
	a := writeSession(t, dir, "a", "./cmd/a", "main")
	b := writeSession(t, dir, "b", "./cmd/b", "main")
	// Step 1 go build ARGS (a parameter), 2 go vet ./... , 3 git push origin main.
	out, err := codifyInteractive(t, dir, "p args packages\nk\nd\np branch\nk\n", a, b)
	if err != nil {
		t.Fatalf("codify --interactive: %v\n%s", err, out)
	}
	src, err := os.ReadFile(filepath.Join(dir, "wf.star"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"def build_and_publish(ctx, packages, branch):\n",
		`ctx.exec("go build", ["go", "build", "{args...}"], args = packages)`,
		"        branch = branch,\n        remote = \"origin\",\n",
	} {
		if !strings.Contains(string(src), want) {
			t.Errorf("wf.star lacks %q:\n%s", want, src)
		}
	}
	if strings.Contains(string(src), "vet") {
		t.Errorf("wf.star keeps the dropped step:\n%s", src)
	}
	if want := "  the parameter args is renamed packages in every step that reads it\n"; !strings.Contains(out, want) {
		t.Errorf("the review did not say %q:\n%s", want, out)
	}
	if v := bundle.Validate(filepath.Join(dir, "bundle")); len(v.Problems) > 0 {
		t.Errorf("bundle problems: %+v", v.Problems)
	}
}

// writeSession writes a session that builds pkg, vets and pushes branch.
func writeSession(t *testing.T, dir, id, pkg, branch string) string {
	t.Helper()
	name := filepath.Join(dir, id+".md")
	body := "---\ntype: session\nsession_id: build-" + id + "\nstatus: completed\n---\n\n# Build and publish\n\n## Build\n\n**Tool calls:**\n" +
		"- `go build " + pkg + "` → ok\n- `go vet ./...` → ok\n- `git push origin " + branch + "` → pushed\n"
	if err := os.WriteFile(name, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return name
}
