package synth

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
)

const netnsSupported = true

// sysProcAttr puts the capsule process in its own process group (so the
// wall-clock kill takes everything it started), kills it if the parent
// dies, and, when isolate is set, in new user and network namespaces: the
// process sees only a loopback interface that is down.
func sysProcAttr(isolate bool) *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if isolate {
		uid, gid := os.Getuid(), os.Getgid()
		a.Cloneflags = syscall.CLONE_NEWUSER | syscall.CLONE_NEWNET
		a.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
		a.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
	}
	return a
}

func killGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	// A negative pid signals the process group.
	if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); err != nil {
		return cmd.Process.Kill()
	}
	return nil
}

// cpuKilled reports whether the kernel ended the process for its CPU
// limit: RLIMIT_CPU sends SIGXCPU at the soft limit (which the Go runtime
// ignores) and SIGKILL at the hard one.
func cpuKilled(state *os.ProcessState, limit float64) bool {
	ws, ok := state.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() {
		return false
	}
	if sig := ws.Signal(); sig != syscall.SIGKILL && sig != syscall.SIGXCPU {
		return false
	}
	used := (state.UserTime() + state.SystemTime()).Seconds()
	return used >= limit-0.5
}

// arenaSlack is address space allowed beyond mem_mb: the Go runtime
// reserves heap address space in 64 MiB arenas (plus small mappings for
// thread stacks and metadata), so a limit of exactly mem_mb could refuse
// the runtime's first reservation while the heap is far below mem_mb.
// The Go memory limit, set to mem_mb, keeps the heap itself near mem_mb.
const arenaSlack = 80 << 20

// applyLimits puts the running process under r for a batch of runs
// executions. RLIMIT_AS is the address space the process already has plus
// mem_mb and arenaSlack, because a Go process reserves address space
// before it runs any capsule code; the limit bounds what the capsule can
// make it add.
func applyLimits(r Resources, runs int) error {
	runtime.GOMAXPROCS(1)
	vm, err := virtualSize()
	if err != nil {
		return err
	}
	mem := uint64(r.MemMB) << 20
	debug.SetMemoryLimit(int64(mem))
	cpu := uint64(cpuLimit(r, runs))
	for _, l := range []struct {
		res       int
		cur, max  uint64
		component string
	}{
		{syscall.RLIMIT_AS, vm + mem + arenaSlack, vm + mem + arenaSlack, "RLIMIT_AS"},
		{syscall.RLIMIT_CPU, cpu, cpu + 1, "RLIMIT_CPU"},
		{syscall.RLIMIT_FSIZE, 0, 0, "RLIMIT_FSIZE"},
		{syscall.RLIMIT_CORE, 0, 0, "RLIMIT_CORE"},
	} {
		if err := syscall.Setrlimit(l.res, &syscall.Rlimit{Cur: l.cur, Max: l.max}); err != nil {
			return fmt.Errorf("%s: %w", l.component, err)
		}
	}
	return nil
}

// virtualSize reads the process's address space size (VmSize) in bytes.
func virtualSize() (uint64, error) {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, err
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmSize:"); ok {
			kb, err := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("reading VmSize: %w", err)
			}
			return kb << 10, nil
		}
	}
	return 0, fmt.Errorf("no VmSize in /proc/self/status")
}
