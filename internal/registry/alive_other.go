//go:build !unix

package registry

// processAlive cannot ask the system here without a platform API; the
// heartbeat alone decides staleness (Options.StaleAfter).
func processAlive(pid int) bool { return pid > 0 }
