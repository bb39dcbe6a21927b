package runner

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/runconfig"
	"github.com/crystallize-dev/crystallize/internal/runstate"
	"github.com/crystallize-dev/crystallize/internal/session"
	"github.com/crystallize-dev/crystallize/internal/toolexec"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// TestSessionBuiltFromBlocks runs workflows that write every kind of
// phase a run logs (tool calls with side effects, notes after the call,
// errors, refusals, logs and notifications, decisions and approvals,
// pending or not) and checks that session.md built from the phases'
// blocks is taken, and is byte for byte the log read back from their
// markdown, which is how it was written before blocks were kept.
func TestSessionBuiltFromBlocks(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "in.txt"), []byte("hello `x`\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tools := map[string]toolexec.Tool{
		"ok": {Func: echo, SideEffects: []trace.SideEffect{{Kind: "file_write", Target: "out.txt"}, {Kind: "http", Target: ""}}},
		"bad": {Func: func(context.Context, map[string]any) (any, error) {
			return nil, errors.New("boom:\n  second line `with` ticks")
		}},
		"noop": {Func: func(context.Context, map[string]any) (any, error) { return nil, nil }},
	}
	for _, tc := range []struct {
		name, body string
		dryRun     bool
		// notBuilt: a log holds what the format refuses as prose,
		// so session.md is read from the markdown.
		notBuilt bool
	}{
		{"calls", `ctx.tool("ok", a = 1, b = "x y")
    ctx.tool("noop")
    ctx.tool("fs.read", path = "in.txt")
    ctx.try_tool("bad")`, false, false},
		{"failed", `ctx.tool("ok", a = "` + "``" + `")
    ctx.tool("bad", s = "x")`, false, false},
		{"logs", `ctx.log("plain note")
    ctx.log("- a list item")
    ctx.tool("ok")
    ctx.log("after the call\n\n1. numbered")
    ctx.notify("done:\n\n  indented  \nlast", complete = True)
    ctx.notify("info")`, false, false},
		{"heading logged", `ctx.tool("ok")
    ctx.log("## not a phase")`, false, true},
		{"refused", `ctx.tool("fs.write", path = "x.txt", content = "x")`, false, false},
		{"decision", `ctx.request_decision("Which one?", ["a", "b"], name = "pick")
    ctx.approve("deploy", "Ship it?")`, true, false},
		{"pending approval", `ctx.tool("ok")
    ctx.request_approval("Ship it?")`, false, false},
		{"pending decision", `ctx.request_decision("Which one?", ["a", "b"], name = "pick")`, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := workflow(t, "# capabilities: fs.read · secrets: none\ndef wf(ctx):\n    "+tc.body+"\n")
			cfg := &runconfig.Config{Dir: root, Grants: runconfig.Grants{Capabilities: []string{"fs.read"}}}
			o := Options{Config: cfg, Tools: tools, StateDir: t.TempDir(), RunID: "run-test", DryRun: tc.dryRun}.withDefaults()
			h := newHost(context.Background(), w, cfg, o)
			h.res.Started = o.Now()
			if _, err := h.run(nil); err != nil {
				t.Logf("run: %v", err)
			}
			rec := h.recordData()
			built, ok := rec.FromBlocks()
			parsed, err := rec.FromMarkdown()
			if ok == tc.notBuilt {
				t.Fatalf("built from blocks = %v, want %v:\n%s", ok, !tc.notBuilt, parsed)
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.notBuilt {
				built = parsed
			}
			if string(built) != string(parsed) {
				t.Fatalf("built from blocks:\n%s\nread from markdown:\n%s", built, parsed)
			}
			written, err := os.ReadFile(filepath.Join(h.res.Dir, runstate.SessionFile))
			if err != nil {
				t.Fatal(err)
			}
			if string(written) != string(built) {
				t.Fatalf("session.md is not the log built from blocks:\n%s", written)
			}
			if _, err := session.Parse(runstate.SessionFile, written); err != nil {
				t.Fatalf("session.md does not parse: %v", err)
			}
		})
	}
}
