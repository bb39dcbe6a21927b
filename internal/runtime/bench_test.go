package runtime

import (
	"context"
	"fmt"
	"strings"
	"testing"
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

func noopTools() map[string]Tool {
	tools := map[string]Tool{}
	for i := range 5 {
		tools[fmt.Sprintf("t.step%d", i)] = Tool{Func: func(_ context.Context, args map[string]any) (any, error) {
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
