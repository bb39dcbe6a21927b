package runner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/runconfig"
	"github.com/crystallize-dev/crystallize/internal/toolexec"
)

// workflow20 is a 20-step workflow in the shape codegen writes: each step
// a ctx.tool call whose arguments mix parameters, constants and fields
// of earlier results.
func workflow20() string {
	var b strings.Builder
	b.WriteString("def wf(ctx, repo, branch, version):\n    prev = {\"id\": \"start\"}\n")
	for i := range 20 {
		fmt.Fprintf(&b, "    r%d = ctx.tool(\"t.step%d\", repo = repo, branch = branch, version = version, n = %d, prev = prev[\"id\"])\n", i, i%5, i)
		fmt.Fprintf(&b, "    prev = r%d\n", i)
	}
	b.WriteString("    return prev\n")
	return b.String()
}

func noopTools() map[string]toolexec.Tool {
	tools := map[string]toolexec.Tool{}
	for i := range 5 {
		tools[fmt.Sprintf("t.step%d", i)] = toolexec.Tool{Func: func(_ context.Context, args map[string]any) (any, error) {
			return map[string]any{"id": args["n"], "ok": true}, nil
		}}
	}
	return tools
}

// BenchmarkWorkflow20 is the time to run a 20-step workflow against
// no-op in-process tools: "exec" is the interpreter with the host's
// checks and in-memory records (the target is under 5 ms), "run" adds
// loading nothing but writing trace.json and session.md.
func BenchmarkWorkflow20(b *testing.B) {
	w := workflow(b, workflow20())
	params := Params{"repo": "acme/payments", "branch": "deps/x", "version": "v1.2.3"}
	b.Run("exec", func(b *testing.B) {
		o := opts(b, nil)
		o.Tools = noopTools()
		o = o.withDefaults()
		for b.Loop() {
			h := newHost(context.Background(), w, o.Config, o)
			if _, err := h.exec(params); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/1000, "ms/workflow")
	})
	b.Run("run", func(b *testing.B) {
		o := opts(b, nil)
		o.Tools = noopTools()
		for b.Loop() {
			if _, err := Run(context.Background(), w, params, o); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/1000, "ms/workflow")
	})
}

// BenchmarkRunSteps is the end-to-end cost of a step: a workflow of 1,000
// tool calls run by Run as the cli runs it, its records written to a
// state directory, reported per step. "builtin" calls fs.read, whose own
// checks (the protected set, the workspace root) are part of its cost;
// "inproc" calls a no-op in-process tool, so that what remains is the
// interpreter, the host's checks and the recording. cpu-µs/step is the
// process's CPU time (garbage collection included) per step, which a
// loaded machine disturbs less than the wall clock.
func BenchmarkRunSteps(b *testing.B) {
	const steps = 1000
	root := b.TempDir()
	if err := os.WriteFile(filepath.Join(root, "in.txt"), []byte("hello\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	cfg := &runconfig.Config{Dir: root, Grants: runconfig.Grants{Capabilities: []string{"fs.read"}}}
	for _, bc := range []struct {
		name, call string
		tools      map[string]toolexec.Tool
	}{
		{"builtin", `ctx.tool("fs.read", path = "in.txt")`, nil},
		{"inproc", `ctx.tool("noop", i = i, name = "x")`, map[string]toolexec.Tool{"noop": {Func: func(context.Context, map[string]any) (any, error) { return map[string]any{"ok": true}, nil }}}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			w := workflow(b, fmt.Sprintf("# capabilities: fs.read · secrets: none\ndef wf(ctx):\n    for i in range(%d):\n        %s\n", steps, bc.call))
			state := b.TempDir()
			n := 0
			cpu := cpuTime()
			for b.Loop() {
				n++
				o := Options{Config: cfg, Tools: bc.tools, StateDir: state, RunID: fmt.Sprintf("run-%d", n)}
				if _, err := Run(context.Background(), w, nil, o); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*steps)/1000, "µs/step")
			b.ReportMetric(float64((cpuTime()-cpu).Nanoseconds())/float64(b.N*steps)/1000, "cpu-µs/step")
		})
	}
}
