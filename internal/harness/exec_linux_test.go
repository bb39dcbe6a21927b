package harness

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestGateBackgroundKilled: a process a gate leaves running in the
// background is killed when the gate returns, not left to outlive the
// harness run.
func TestGateBackgroundKilled(t *testing.T) {
	dir := t.TempDir()
	var out bytes.Buffer
	code, timedOut, _ := execute(context.Background(), dir, []string{"sh", "-c", "sleep 300 >/dev/null 2>&1 & echo $! > bg.pid"}, os.Environ(), 30*time.Second, &out)
	if code != 0 || timedOut {
		t.Fatalf("execute = exit %d, timed out %v: %s", code, timedOut, &out)
	}
	data, err := os.ReadFile(filepath.Join(dir, "bg.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	// Killed, it is gone or a zombie nobody has reaped yet.
	deadline := time.Now().Add(5 * time.Second)
	for {
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return
		}
		s := string(stat)
		if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) && s[i+2] == 'Z' {
			return
		}
		if time.Now().After(deadline) {
			syscallKill(pid)
			t.Fatalf("the gate's background process %d still runs after the gate returned", pid)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func syscallKill(pid int) {
	if p, err := os.FindProcess(pid); err == nil {
		p.Kill()
	}
}
