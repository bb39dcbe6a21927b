package runner

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crystallize-dev/crystallize/internal/membudget"
	"github.com/crystallize-dev/crystallize/internal/stepvalue"
	"github.com/crystallize-dev/crystallize/internal/toolexec"
)

// hostileConstructs each allocate about a gigabyte in one step (or one
// built-in call) when nothing checks them, from values a few megabytes
// large.
var hostileConstructs = []struct{ name, body string }{
	{"list repetition", `x = [0] * 64000000`},
	{"string repetition", `x = "x" * 1000000000`},
	{"augmented repetition", "d = {\"k\": \"x\"}\n    d[\"k\"] *= 1000000000"},
	{"concatenation", "s = \"x\" * 30000000\n    x = s + s + s"},
	{"augmented concatenation", "a = [0] * 1900000\n    a += a + a"},
	{"range to list", `x = list(range(64000000))`},
	{"range to tuple", `x = tuple(range(64000000))`},
	{"zip", `x = zip(range(16000000), range(16000000))`},
	{"range to sorted", `x = sorted(range(64000000))`},
	{"enumerate", `x = enumerate(range(16000000))`},
	{"extend", "a = []\n    a.extend(range(64000000))"},
	{"elems to list", `x = list(("x" * 8000000).elems())`},
	{"join", "s = \"x\" * 1000000\n    x = \"\".join([s] * 1000)"},
	{"replace", `x = ("a" * 1000000).replace("a", "b" * 1000)`},
	{"format", `x = ("{0}" * 1000).format("x" * 1000000)`},
	{"percent", `x = ("%s" * 1000) % tuple(["x" * 1000000] * 1000)`},
	{"split", `x = ("," * 20000000).split(",")`},
	{"repr", "s = \"x\" * 1000000\n    x = repr([s] * 1000)"},
	{"json.encode", "s = \"x\" * 1000000\n    x = json.encode([s] * 1000)"},
	{"json.decode", `x = json.decode("[" + "{}," * 2000000 + "{}]")`},
	{"json.indent", `x = json.indent("[" + "1," * 1000000 + "1]", indent = " " * 1000)`},
	{"getattr", "s = \"x\" * 1000000\n    x = getattr(\"\", \"join\")([s] * 1000)"},
	{"unpacked arguments", "def f(*args):\n        return len(args)\n    x = f(*range(64000000))"},
	{"integer squaring", "x = 1 << 500\n    for i in range(40):\n        x = x * x"},
	{"return value", "s = \"x\" * 1000000\n    return [s] * 1000"},
}

// heapPeak polls the heap until stop is called and returns the highest
// growth it saw over its start.
func heapPeak() (stop func() uint64) {
	base := membudget.HeapBytes()
	var peak atomic.Uint64
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(100 * time.Microsecond)
		defer t.Stop()
		for {
			if now := membudget.HeapBytes(); now > base && now-base > peak.Load() {
				peak.Store(now - base)
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() uint64 {
		close(done)
		<-finished
		return peak.Load()
	}
}

// TestHostileAllocations: every construct that allocates by the size of
// its operands rather than the heap it already holds is refused before
// it allocates, so the run fails with ErrMemoryBudget and the heap never
// grows to twice the budget.
func TestHostileAllocations(t *testing.T) {
	const budget = 32 << 20
	for _, c := range hostileConstructs {
		t.Run(c.name, func(t *testing.T) {
			w := workflow(t, "def wf(ctx):\n    "+c.body+"\n")
			o := opts(t, nil)
			o.MaxMemory = budget
			runtime.GC() // the peak is of this run's heap, not the last one's garbage
			stop := heapPeak()
			_, err := Run(context.Background(), w, nil, o)
			peak := stop()
			if !errors.Is(err, membudget.ErrMemoryBudget) || !strings.Contains(err.Error(), "memory_budget") {
				t.Errorf("Run = %v, want ErrMemoryBudget", err)
			}
			if peak > 2*budget {
				t.Errorf("the heap grew by %d MiB, more than twice the %d MiB budget", peak>>20, budget>>20)
			}
			t.Logf("peak heap growth %d MiB: %v", peak>>20, err)
		})
	}
}

// TestGuardedSemantics: the guards change no result: operators, the
// in-place += of a list, methods taken as values, and errors of
// operands that do not combine.
func TestGuardedSemantics(t *testing.T) {
	src := `def wf(ctx):
    a = [1]
    b = a
    a += [2]
    s = "ab" * 2 + "%s-%d" % ("x", 3)
    s += "!"
    n = 6
    n *= 7
    d = {"k": "y"}
    d["k"] *= 3
    j = ",".join
    r = list(range(3)) + [x * 2 for x in range(3)]
    def f(*args, **kwargs):
        return len(args) + len(kwargs)
    return [b, s, n, d["k"], j(["p", "q"]), "a.b".split("."), "{} {}".format(1, 2), r, json.decode(json.encode({"z": [1]})), f(*[1, 2], **{"k": 3})]
`
	w := workflow(t, src)
	res, err := Run(context.Background(), w, nil, opts(t, nil))
	if err != nil {
		t.Fatal(err)
	}
	got := string(stepvalue.Canonical(res.Output))
	want := `[[1,2],"ababx-3!",42,"yyy","p,q",["a","b"],"1 2",[0,1,2,0,2,4],{"z":[1]},3]`
	if got != want {
		t.Errorf("output = %s\nwant     %s", got, want)
	}
	w = workflow(t, "def wf(ctx):\n    return \"a\" * \"b\"\n")
	if _, err := Run(context.Background(), w, nil, opts(t, nil)); err == nil || !strings.Contains(err.Error(), "unknown binary op: string * string") {
		t.Errorf("Run = %v, want Starlark's unknown binary op", err)
	}
}

// TestOwnRecordsNotCharged: a hundred thousand tool calls run under a
// budget far below what their records hold, and the workflow's own
// allocations are still charged after them.
func TestOwnRecordsNotCharged(t *testing.T) {
	if testing.Short() {
		t.Skip("100000 calls")
	}
	w := workflow(t, "def wf(ctx, big):\n    for i in range(100000):\n        ctx.tool(\"echo\", i = i)\n    return len(\"x\" * big)\n")
	o := opts(t, nil)
	o.Tools = map[string]toolexec.Tool{"echo": {Func: echo}}
	o.MaxMemory = 64 << 20
	res, err := Run(context.Background(), w, Params{"big": 1 << 20}, o)
	if err != nil || len(res.Receipts) != 100000 {
		t.Fatalf("Run = %d receipts, %v; want 100000 calls within the budget", len(res.Receipts), err)
	}
	o = opts(t, nil)
	o.Tools = map[string]toolexec.Tool{"echo": {Func: echo}}
	o.MaxMemory = 64 << 20
	if _, err := Run(context.Background(), w, Params{"big": 65 << 20}, o); !errors.Is(err, membudget.ErrMemoryBudget) {
		t.Errorf("Run after the calls = %v, want ErrMemoryBudget", err)
	}
}
