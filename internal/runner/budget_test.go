package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crystallize-dev/crystallize/internal/membudget"
	"github.com/crystallize-dev/crystallize/internal/runconfig"
	"github.com/crystallize-dev/crystallize/internal/runrecord"
	"github.com/crystallize-dev/crystallize/internal/runstate"
	"github.com/crystallize-dev/crystallize/internal/stepvalue"
	"github.com/crystallize-dev/crystallize/internal/toolexec"
)

// TestMemoryBudget: doubling a string forty times is forty steps; the
// heap watch stops it with ErrMemoryBudget long before it is large.
func TestMemoryBudget(t *testing.T) {
	w := workflow(t, "def wf(ctx):\n    s = \"x\" * 1024\n    for i in range(40):\n        s = s + s\n    return len(s)\n")
	o := opts(t, nil)
	o.MaxMemory = 32 << 20
	start := time.Now()
	res, err := Run(context.Background(), w, nil, o)
	if !errors.Is(err, membudget.ErrMemoryBudget) || !strings.Contains(err.Error(), "memory_budget") {
		t.Fatalf("Run = %v, want ErrMemoryBudget", err)
	}
	if res.Status != runstate.StatusFailed {
		t.Errorf("status = %s, want %s", res.Status, runstate.StatusFailed)
	}
	t.Logf("stopped after %s", time.Since(start))
	// A workflow within its budget is not disturbed.
	w = workflow(t, "def wf(ctx):\n    s = \"x\" * 1024\n    for i in range(10):\n        s = s + s\n    return len(s)\n")
	if res, err := Run(context.Background(), w, nil, o); err != nil || fmt.Sprint(res.Output) != "1048576" {
		t.Errorf("Run within the budget = %v, %v; want 1048576", res.Output, err)
	}
}

// TestSizeLimits: fs.write and fs.read refuse files over MaxFileBytes, a
// tool call refuses arguments over MaxArgumentBytes, and run records cut
// long strings while the receipts digest the whole value.
func TestSizeLimits(t *testing.T) {
	root := t.TempDir()
	cfg := &runconfig.Config{Dir: root, Grants: runconfig.Grants{Capabilities: []string{"fs.read", "fs.write"}}}
	os.WriteFile(filepath.Join(root, "big.bin"), make([]byte, toolexec.MaxFileBytes+1), 0o644)
	tests := []struct {
		name, src string
		err       error
		code      string
	}{
		{"write", `ctx.tool("fs.write", path = "out.txt", content = "x" * (8 * 1024 * 1024 + 1))`, toolexec.ErrTooLarge, "file_too_large"},
		{"read", `ctx.tool("fs.read", path = "big.bin")`, toolexec.ErrTooLarge, "file_too_large"},
		{"arguments", `ctx.tool("echo", big = "x" * (17 * 1024 * 1024))`, toolexec.ErrTooLarge, "arguments_too_large"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := workflow(t, "# capabilities: fs.read, fs.write · secrets: none\ndef wf(ctx):\n    "+tt.src+"\n")
			o := opts(t, cfg)
			o.Tools = map[string]toolexec.Tool{"echo": {Func: echo}}
			_, err := Run(context.Background(), w, nil, o)
			if !errors.Is(err, tt.err) || !strings.Contains(err.Error(), tt.code) {
				t.Errorf("Run = %v, want %v with %s", err, tt.err, tt.code)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(root, "out.txt")); err == nil {
		t.Error("fs.write wrote the oversized file")
	}

	w := workflow(t, "def wf(ctx):\n    return len(ctx.tool(\"echo\", s = \"y\" * 200000)[\"s\"])\n")
	o := opts(t, nil)
	o.Tools = map[string]toolexec.Tool{"echo": {Func: echo}}
	res, err := Run(context.Background(), w, nil, o)
	if err != nil {
		t.Fatal(err)
	}
	if res.Receipts[0].ArgumentsSHA256 != stepvalue.Digest(map[string]any{"s": strings.Repeat("y", 200000)}) {
		t.Error("the receipt does not digest the whole argument")
	}
	for _, f := range []string{runstate.TraceFile, runstate.SessionFile} {
		data := readFile(t, filepath.Join(res.Dir, f))
		if len(data) > 2*runrecord.MaxString+20000 || !strings.Contains(data, "more bytes not recorded") {
			t.Errorf("%s is %d bytes; want the 200000-byte argument cut", f, len(data))
		}
	}
}
