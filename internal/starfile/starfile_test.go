package starfile

import (
	"reflect"
	"strings"
	"testing"
)

const src = `# capabilities: exec:git, fs.read · secrets: GH_TOKEN · risk: low
def wf(ctx, branch, count = 1):
    step1 = ctx.tool("git.create_branch", branch = branch)
    out = ctx.exec("git.push", ["git", "push", "origin", "HEAD"])
    ctx.exec("git.push", ["git", "push", "origin", "HEAD"])
    ctx.exec("go.test", ["go", "test", "./..."])
    again = ctx.try_tool("git.create_branch", branch = step1["ref"]["name"])
    ctx.model("summarize", prompt = out["stdout"])
    ctx.agent("fix", tools = ["fs.read"], worker = "coder")
    return again["output"]
`

// TestParse: the signature, the literal names in order of first use, and
// the members read from results (not from ctx.try_tool, whose result is
// a wrapper).
func TestParse(t *testing.T) {
	f, err := Parse("wf.star", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	want := &File{
		Name: "wf", Params: []string{"branch", "count"}, Required: []bool{true, false},
		Tools: []string{"git.create_branch", "fs.read"}, Models: []string{"summarize"}, Workers: []string{"coder"},
		ResultKeys: map[string][][]string{"git.create_branch": {{"ref", "name"}}, "git.push": {{"stdout"}}},
	}
	if !reflect.DeepEqual(f, want) {
		t.Errorf("Parse = %+v, want %+v", f, want)
	}
	if _, err := Parse("l.star", []byte("load(\"x.star\", \"y\")\ndef wf(ctx):\n    pass\n")); err == nil || !strings.Contains(err.Error(), "load") {
		t.Errorf("Parse(load) = %v, want a refusal", err)
	}
}

// TestHeader: the declarations come from the leading comment block only.
func TestHeader(t *testing.T) {
	caps, secrets := Header([]byte(src))
	if !reflect.DeepEqual(caps, []string{"exec:git", "fs.read"}) || !reflect.DeepEqual(secrets, []string{"GH_TOKEN"}) {
		t.Errorf("Header = %q, %q", caps, secrets)
	}
	if caps, secrets := Header([]byte("def wf(ctx):\n    pass\n# capabilities: fs.write · secrets: none\n")); caps != nil || secrets != nil {
		t.Errorf("Header(no leading comment) = %q, %q, want none", caps, secrets)
	}
}

// TestExecSites: literal command lines once each, in source order.
func TestExecSites(t *testing.T) {
	want := []ExecSite{{"git.push", []string{"git", "push", "origin", "HEAD"}}, {"go.test", []string{"go", "test", "./..."}}}
	if got := ExecSites("wf.star", []byte(src)); !reflect.DeepEqual(got, want) {
		t.Errorf("ExecSites = %+v, want %+v", got, want)
	}
}
