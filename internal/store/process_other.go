//go:build !linux

package store

// processStart cannot be read here without a platform API: an import is
// recorded with its process id alone, and a live process that reused the
// id keeps it running until that process ends.
func processStart(int) string { return "" }
