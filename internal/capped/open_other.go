//go:build !unix

package capped

// openNonBlocking: see open_unix.go.
const openNonBlocking = 0
