//go:build unix

package proc

import (
	"os/exec"
	"syscall"
)

// Group makes cmd start in a process group of its own, and cancelling
// its context kill the whole group: a command's children (a script's
// pipeline, a server it starts) die with it instead of only the process
// exec started.
func Group(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}

// EndGroup kills what is left of the process group cmd was started in
// (Group) once cmd has returned: a process the command left running in
// the background ("server &") would otherwise outlive the call, its
// timeout and the run. The group's id is the id of cmd's process, which
// the system does not give to another process while the group has a
// member; when none is left, nothing is killed (ESRCH).
func EndGroup(cmd *exec.Cmd) {
	if cmd.Process == nil || cmd.SysProcAttr == nil || !cmd.SysProcAttr.Setpgid {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
}

// Run runs cmd in a process group of its own (Group) and kills what is
// left of the group when it returns (EndGroup).
func Run(cmd *exec.Cmd) error {
	Group(cmd)
	defer EndGroup(cmd)
	return cmd.Run()
}
