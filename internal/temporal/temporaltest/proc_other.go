//go:build !linux

package temporaltest

import "syscall"

// dieWithParent is nil where the kernel cannot kill the server with its
// parent: a test that dies may leave it running.
func dieWithParent() *syscall.SysProcAttr { return nil }
