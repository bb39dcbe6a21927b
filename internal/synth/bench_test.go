package synth

import (
	"context"
	"os/exec"
	"testing"
)

const benchSource = "def fit_and_eval(data):\n    return {'total': sum(data), 'n': len(data)}\n"

func benchInput() []any {
	in := make([]any, 100)
	for i := range in {
		in[i] = int64(i)
	}
	return in
}

func reportRate(b *testing.B, execs int) {
	b.ReportMetric(float64(execs)/b.Elapsed().Seconds(), "execs/s")
}

// BenchmarkCapsuleExec is one execution of a small function inside an
// already started capsule process: what every execution after the first
// costs in a batch.
func BenchmarkCapsuleExec(b *testing.B) {
	c := &Capsule{Name: "bench.star", Source: benchSource}
	prog, err := c.Compile(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	in := benchInput()
	for b.Loop() {
		if _, err := prog.Exec(context.Background(), in); err != nil {
			b.Fatal(err)
		}
	}
	reportRate(b, b.N)
}

// BenchmarkSandboxBatch is a whole sandboxed batch of 100 executions, the
// process start included, as an experiment runs them.
func BenchmarkSandboxBatch(b *testing.B) {
	sb := testSandbox(b)
	c := &Capsule{Name: "bench.star", Source: benchSource}
	inputs := make([]any, 100)
	for i := range inputs {
		inputs[i] = benchInput()
	}
	for b.Loop() {
		if _, err := sb.Run(context.Background(), c, inputs); err != nil {
			b.Fatal(err)
		}
	}
	reportRate(b, b.N*len(inputs))
}

// BenchmarkSandboxSingle starts one sandboxed process per execution, the
// worst case.
func BenchmarkSandboxSingle(b *testing.B) {
	sb := testSandbox(b)
	c := &Capsule{Name: "bench.star", Source: benchSource}
	inputs := []any{benchInput()}
	for b.Loop() {
		if _, err := sb.Run(context.Background(), c, inputs); err != nil {
			b.Fatal(err)
		}
	}
	reportRate(b, b.N)
}

// BenchmarkPythonSubprocess is the baseline: one python3 -c process per
// execution of the same function, as a harness that sandboxes each call
// in a fresh interpreter does.
func BenchmarkPythonSubprocess(b *testing.B) {
	py, err := exec.LookPath("python3")
	if err != nil {
		b.Skip("python3 is not installed; the baseline cannot be measured here")
	}
	prog := "def fit_and_eval(data):\n    return {'total': sum(data), 'n': len(data)}\nprint(fit_and_eval(list(range(100))))\n"
	for b.Loop() {
		if out, err := exec.Command(py, "-c", prog).Output(); err != nil || len(out) == 0 {
			b.Fatalf("python3: %v", err)
		}
	}
	reportRate(b, b.N)
}
