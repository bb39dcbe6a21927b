package runner

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/runconfig"
	"github.com/crystallize-dev/crystallize/internal/runstate"
	"github.com/crystallize-dev/crystallize/internal/session"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// TestRecordFromCandidate checks that a run whose bindings declare only
// a command records each step as the candidate describes it (kind,
// capabilities, side effects with the parameterized target filled in),
// needs the capabilities the candidate says the step uses, and that a
// binding that declares them itself wins.
func TestRecordFromCandidate(t *testing.T) {
	const src = `# capabilities: fs.write, notes.write · secrets: none
def wf(ctx, file):
    ctx.tool("notes.append", path = file, text = "hello")
    return {"status": "ok"}
`
	cand := &candidate.Candidate{Steps: []candidate.Step{{
		Index: 1, Kind: trace.KindFileMutation, Name: "notes.append", Capabilities: []string{"fs.write"},
		SideEffects: []trace.SideEffect{{Kind: "file_write", Target: "{path}", Capability: "fs.write", Metadata: map[string]any{"target_parameter": "path"}}},
	}}}
	plain := runconfig.ToolBinding{Command: []string{os.Args[0], "{path}", "{text}"}, Env: map[string]string{"RUNTIME_TEST_HELPER": "argv"}}
	run := func(b runconfig.ToolBinding, grants []string) (*Result, error) {
		w := workflow(t, src)
		w.Candidate = cand
		o := opts(t, &runconfig.Config{Tools: map[string]runconfig.ToolBinding{"notes.append": b}, Grants: runconfig.Grants{Capabilities: grants}})
		return Run(context.Background(), w, Params{"file": "notes.md"}, o)
	}

	res, err := run(plain, []string{"fs.write"})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	a := readTrace(t, res).Actions[0]
	wantEffects := []trace.SideEffect{{Kind: "file_write", Target: "notes.md", Capability: "fs.write"}}
	if a.Kind != trace.KindFileMutation || !cmp.Equal(a.Capabilities, []string{"fs.write"}) || !cmp.Equal(a.SideEffects, wantEffects) {
		t.Errorf("recorded kind %s, capabilities %v, side effects %+v; want file_mutation, [fs.write], %+v", a.Kind, a.Capabilities, a.SideEffects, wantEffects)
	}
	if got := res.Receipts[0].SideEffects; !cmp.Equal(got, wantEffects) {
		t.Errorf("receipt side effects %+v, want %+v", got, wantEffects)
	}

	// The candidate says the step writes files: without fs.write granted,
	// the call is refused before it runs.
	if _, err := run(plain, nil); !errors.Is(err, ErrCapability) {
		t.Errorf("run without fs.write granted = %v, want ErrCapability", err)
	}

	// A binding that declares its kind, capability and side effects is
	// recorded as it says.
	own := plain
	own.Kind, own.Capability = "tool_call", "notes.write"
	own.SideEffects = []runconfig.SideEffect{{Kind: "append", Target: "journal", Capability: "notes.write"}}
	res, err = run(own, []string{"notes.write"})
	if err != nil {
		t.Fatalf("run with a declaring binding: %v", err)
	}
	a = readTrace(t, res).Actions[0]
	if a.Kind != trace.KindToolCall || !cmp.Equal(a.Capabilities, []string{"notes.write"}) || len(a.SideEffects) != 1 || a.SideEffects[0].Target != "journal" {
		t.Errorf("recorded kind %s, capabilities %v, side effects %+v; want the binding's", a.Kind, a.Capabilities, a.SideEffects)
	}
}

// checkSessionLog checks that the run's session.md is what session.Parse
// reads without a problem, and that writing what it read gives the same
// bytes: crystallize session resume reads exactly what the run wrote.
func checkSessionLog(t *testing.T, res *Result) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(res.Dir, runstate.SessionFile))
	if err != nil {
		t.Fatal(err)
	}
	s, err := session.Parse(runstate.SessionFile, data)
	if err != nil {
		t.Fatalf("session.md does not parse: %v\n%s", err, data)
	}
	again, err := session.Format(s)
	if err != nil {
		t.Fatalf("session.md parses but does not write back: %v", err)
	}
	if diff := cmp.Diff(string(data), string(again)); diff != "" {
		t.Errorf("session.md is not in the canonical form session.Write writes (-run +rewritten):\n%s", diff)
	}
}
