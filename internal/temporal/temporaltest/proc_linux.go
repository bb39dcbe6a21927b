package temporaltest

import "syscall"

// dieWithParent has the kernel kill the server when the test exits.
func dieWithParent() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
