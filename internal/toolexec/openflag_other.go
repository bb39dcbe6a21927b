//go:build !unix

package toolexec

// openNonBlocking: see openflag_unix.go.
const openNonBlocking = 0
