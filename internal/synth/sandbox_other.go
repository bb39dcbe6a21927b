//go:build !linux

package synth

import (
	"os"
	"os/exec"
	"syscall"
)

// On systems other than Linux the capsule process gets no rlimits and no
// network namespace: the Starlark step budget, the output cap and the
// wall-clock kill still hold, memory is not bounded.
const netnsSupported = false

func sysProcAttr(bool) *syscall.SysProcAttr { return nil }

func killGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	return cmd.Process.Kill()
}

func cpuKilled(*os.ProcessState, float64) bool { return false }

func applyLimits(Resources, int) error { return nil }
