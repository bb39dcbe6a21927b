//go:build !unix

package runtime

// openNonBlocking: see openflag_unix.go.
const openNonBlocking = 0
