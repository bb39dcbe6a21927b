//go:build !unix

package harness

import "os/exec"

// setProcessGroup leaves the default: cancellation kills the process.
func setProcessGroup(cmd *exec.Cmd) {}
