package runner

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/runconfig"
	"github.com/crystallize-dev/crystallize/internal/toolexec"
)

// rssConstructs are the hostile constructs at full size, run against the
// default budget (DefaultMaxMemory) by BenchmarkHostilePeakRSS. The last,
// records, is not hostile: it measures what the run's own records of many
// calls take, which the budget does not charge to the workflow.
var rssConstructs = []struct{ name, body string }{
	{"list repetition", `x = [0] * 1000000000`},
	{"string repetition", `x = "x" * 1000000000`},
	{"augmented repetition", "d = {\"k\": \"x\"}\n    d[\"k\"] *= 1000000000"},
	{"concatenation", "s = \"x\" * 200000000\n    x = s + s + s"},
	{"augmented concatenation", "a = [0] * 12000000\n    a += a + a"},
	{"range to list", `x = list(range(1000000000))`},
	{"range to tuple", `x = tuple(range(1000000000))`},
	{"range to sorted", `x = sorted(range(1000000000))`},
	{"enumerate", `x = enumerate(range(1000000000))`},
	{"zip", `x = zip(range(1000000000), range(1000000000))`},
	{"extend", "a = []\n    a.extend(range(1000000000))"},
	{"elems to list", `x = list(("x" * 100000000).elems())`},
	{"join", "s = \"x\" * 10000000\n    x = \"\".join([s] * 1000)"},
	{"replace", `x = ("a" * 10000000).replace("a", "b" * 1000)`},
	{"format", `x = ("{0}" * 1000).format("x" * 10000000)`},
	{"percent", `x = ("%s" * 1000) % tuple(["x" * 10000000] * 1000)`},
	{"split", `x = ("," * 200000000).split(",")`},
	{"repr", "s = \"x\" * 10000000\n    x = repr([s] * 1000)"},
	{"json.encode", "s = \"x\" * 10000000\n    x = json.encode([s] * 1000)"},
	{"json.decode", `x = json.decode("[" + "{}," * 20000000 + "{}]")`},
	{"json.indent", `x = json.indent("[" + "1," * 10000000 + "1]", indent = " " * 1000)`},
	{"unpacked arguments", "def f(*args):\n        return len(args)\n    x = f(*range(1000000000))"},
	{"integer squaring", "x = 1 << 500\n    for i in range(40):\n        x = x * x"},
	{"return value", "s = \"x\" * 10000000\n    return [s] * 1000"},
	{"records", "for i in range(100000):\n        ctx.tool(\"echo\", i = i)"},
}

// runHostile runs the rssConstructs entry name in this process, under an
// address-space limit so that a construct nothing checks fails rather than
// exhausting the machine, and prints the run's error and the process's
// peak resident set in KiB.
func runHostile(name string) int {
	limit := uint64(8 << 30)
	syscall.Setrlimit(syscall.RLIMIT_AS, &syscall.Rlimit{Cur: limit, Max: limit})
	for _, c := range rssConstructs {
		if c.name != name {
			continue
		}
		dir, err := os.MkdirTemp("", "hostile")
		if err != nil {
			fmt.Println(err)
			return 1
		}
		defer os.RemoveAll(dir)
		p := filepath.Join(dir, "w.star")
		os.WriteFile(p, []byte("def wf(ctx):\n    "+c.body+"\n"), 0o644)
		w, err := Load(p)
		if err != nil {
			fmt.Println(err)
			return 1
		}
		o := Options{Config: &runconfig.Config{Dir: dir}, StateDir: filepath.Join(dir, "state"), RunID: "run-hostile"}
		o.Tools = map[string]toolexec.Tool{"echo": {Func: echo}}
		_, err = Run(context.Background(), w, nil, o)
		fmt.Printf("%d\t%v\n", peakRSS(), err)
		return 0
	}
	fmt.Println("no construct", name)
	return 1
}

// peakRSS is the process's peak resident set (VmHWM) in KiB.
func peakRSS() int {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return -1
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			return n
		}
	}
	return -1
}

// BenchmarkHostilePeakRSS runs each hostile construct at full size in a
// process of its own against the default 256 MiB budget and reports the
// process's peak resident set; a hostile construct over 512 MiB fails. Run it with
// go test ./internal/runtime -run '^$' -bench HostilePeakRSS -benchtime 1x
func BenchmarkHostilePeakRSS(b *testing.B) {
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range rssConstructs {
		b.Run(strings.ReplaceAll(c.name, " ", "_"), func(b *testing.B) {
			for range b.N {
				cmd := exec.Command(exe)
				cmd.Env = append(os.Environ(), "RUNTIME_TEST_HELPER=hostile", "RUNTIME_TEST_HOSTILE="+c.name)
				out, err := cmd.CombinedOutput()
				kib, msg, _ := strings.Cut(strings.TrimSpace(string(out)), "\t")
				n, perr := strconv.Atoi(kib)
				if err != nil || perr != nil {
					b.Fatalf("%s: %v: %s", c.name, err, out)
				}
				b.ReportMetric(float64(n)/1024, "peak-RSS-MiB")
				b.Logf("%s: peak RSS %d MiB: %s", c.name, n/1024, msg)
				if n > 512<<10 && c.name != "records" {
					b.Errorf("%s: peak RSS %d MiB, over 512 MiB", c.name, n/1024)
				}
			}
		})
	}
}
