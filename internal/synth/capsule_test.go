package synth

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// capsuleCommand is the argv[0] under which the test binary serves as the
// capsule process.
const capsuleCommand = "synth-capsule"

func TestMain(m *testing.M) {
	if filepath.Base(os.Args[0]) == capsuleCommand {
		if err := Serve(os.Stdin, os.Stdout); err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func testSandbox(t testing.TB) *Sandbox {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// A generous wall clock: on a loaded machine the default allowance
	// (a few seconds) could stop a capsule before the CPU-time limit a
	// test is about, and the test would see capsule.wall_clock.
	return &Sandbox{Path: exe, Args: []string{capsuleCommand}, WallClock: time.Minute}
}

func TestHostileCapsules(t *testing.T) {
	if raceEnabled {
		t.Skip("a race-instrumented capsule process cannot run under the address-space limit; run without -race")
	}
	small := Resources{TimeS: 1, MemMB: 64, OutputKB: 4}
	tests := []struct {
		name    string
		src     string
		imports []string
		code    string
		limit   string // a substring of the error's Limit, when a limit stops it
	}{
		{"infinite loop", "def fit_and_eval(data):\n    while True:\n        pass\n", nil, CodeSteps, "time_s = 1"},
		{"loop over a huge range", "def fit_and_eval(data):\n    n = 0\n    for i in range(1 << 62):\n        n += i\n    return {'n': n}\n", nil, CodeSteps, "time_s = 1"},
		{"unbounded allocation", "def fit_and_eval(data):\n    l = []\n    for i in range(1 << 40):\n        l.append('x' * 100000 + str(i))\n    return {}\n", nil, CodeMemory, "mem_mb = 64"},
		{"one huge allocation", "def fit_and_eval(data):\n    s = 'x' * (1 << 29)\n    return {'n': len(s)}\n", nil, CodeMemory, "mem_mb = 64"},
		{"deep recursion", "def f(n):\n    return f(n + 1)\n\ndef fit_and_eval(data):\n    return {'n': f(0)}\n", nil, CodeRecursion, "recursion"},
		{"mutual recursion", "def f(n):\n    return g(n)\n\ndef g(n):\n    return f(n)\n\ndef fit_and_eval(data):\n    return {'n': f(0)}\n", nil, CodeRecursion, "recursion"},
		{"load of an unlisted module", "load('math', 'sqrt')\n\ndef fit_and_eval(data):\n    return {'r': sqrt(4)}\n", nil, CodeImport, "allowed_imports"},
		{"load of an unknown module", "load('os', 'system')\n\ndef fit_and_eval(data):\n    return {}\n", []string{"os"}, CodeImport, "allowed_imports"},
		{"entrypoint missing", "def other(data):\n    return {}\n", nil, CodeEntrypoint, ""},
		{"entrypoint not a function", "fit_and_eval = 42\n", nil, CodeEntrypoint, ""},
		{"entrypoint without parameters", "def fit_and_eval():\n    return {}\n", nil, CodeEntrypoint, ""},
		{"return not a mapping", "def fit_and_eval(data):\n    return [1, 2]\n", nil, CodeResult, ""},
		{"return of a nested value", "def fit_and_eval(data):\n    return {'x': [1]}\n", nil, CodeResult, ""},
		{"stdout flood", "def fit_and_eval(data):\n    for i in range(1 << 30):\n        print('flood' * 100)\n    return {}\n", nil, CodeOutput, "output_kb = 4"},
		{"syntax error", "def fit_and_eval(data)\n    return {}\n", nil, CodeSyntax, ""},
		{"undefined name", "def fit_and_eval(data):\n    return {'x': open('/etc/passwd')}\n", nil, CodeSyntax, ""},
		{"fail", "def fit_and_eval(data):\n    fail('no')\n", nil, CodeRuntime, ""},
	}
	sb := testSandbox(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &Capsule{Name: "hostile.star", Source: tt.src, AllowedImports: tt.imports, Resources: small}
			cwd, _ := os.Getwd()
			before, _ := os.ReadDir(cwd)
			start := time.Now()
			_, err := sb.Run(context.Background(), c, []any{[]any{int64(1), int64(2)}})
			var ce *CapsuleError
			if !errors.As(err, &ce) {
				t.Fatalf("Run = %v, want a *CapsuleError with code %s", err, tt.code)
			}
			if ce.Code != tt.code || ce.Capsule != "hostile.star" || !strings.Contains(ce.Limit, tt.limit) {
				t.Errorf("Run error = %+v, want code %s, capsule hostile.star, limit containing %q", ce, tt.code, tt.limit)
			}
			if d := time.Since(start); d > 20*time.Second {
				t.Errorf("stopping the capsule took %s", d)
			}
			after, _ := os.ReadDir(cwd)
			if len(after) != len(before) {
				t.Errorf("the capsule changed the working directory: %d entries before, %d after", len(before), len(after))
			}
		})
	}
}

func TestSandboxRuns(t *testing.T) {
	sb := testSandbox(t)
	c := &Capsule{Name: "sum.star", Source: "load('stats', 'mean')\n\ndef fit_and_eval(data):\n    print('rows', len(data))\n    return {'total': sum(data), 'mean': mean(data), 'ok': True, 'name': 'x'}\n", AllowedImports: []string{"stats"}}
	res, err := sb.Run(context.Background(), c, []any{[]any{int64(1), int64(2), int64(3)}, []any{1.5, 2.5}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 2 {
		t.Fatalf("Run gave %d results, want 2", len(res))
	}
	want := []Metrics{{"total": int64(6), "mean": 2.0, "ok": true, "name": "x"}, {"total": 4.0, "mean": 2.0, "ok": true, "name": "x"}}
	for i, r := range res {
		for k, v := range want[i] {
			if r.Metrics[k] != v {
				t.Errorf("result %d: %s = %#v, want %#v", i, k, r.Metrics[k], v)
			}
		}
	}
	if res[0].Output != "rows 3\n" {
		t.Errorf("output = %q, want %q", res[0].Output, "rows 3\n")
	}
	t.Logf("isolation: %s", sb.Isolation())
}

func TestSandboxWallClock(t *testing.T) {
	sb := testSandbox(t)
	sb.WallClock = 300 * time.Millisecond
	c := &Capsule{Name: "slow.star", Source: "def fit_and_eval(data):\n    while True:\n        pass\n", Resources: Resources{TimeS: 30}}
	_, err := sb.Run(context.Background(), c, []any{nil})
	var ce *CapsuleError
	if !errors.As(err, &ce) || ce.Code != CodeWallClock {
		t.Fatalf("Run = %v, want %s", err, CodeWallClock)
	}
}

// Cancelling the caller's context stops an execution in this process.
func TestExecCancelled(t *testing.T) {
	c := &Capsule{Name: "spin.star", Source: "def fit_and_eval(data):\n    while True:\n        pass\n", Resources: Resources{TimeS: 3600}}
	prog, err := c.Compile(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err = prog.Exec(ctx, nil)
	var ce *CapsuleError
	if !errors.As(err, &ce) || ce.Code != CodeCancelled {
		t.Fatalf("Exec = %v, want %s", err, CodeCancelled)
	}
}
