//go:build !unix

package proc

import "os/exec"

// Group does nothing where process groups are not available: only the
// process exec started is killed when cmd's context is cancelled.
func Group(cmd *exec.Cmd) {}

// EndGroup does nothing where process groups are not available.
func EndGroup(cmd *exec.Cmd) {}

// Run runs cmd.
func Run(cmd *exec.Cmd) error { return cmd.Run() }
