//go:build unix

package runner

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time the process has used, user and system: on a
// loaded machine it measures a benchmark's own work better than the
// wall clock does.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
