//go:build unix

package capped

import "syscall"

// openNonBlocking makes Open return at once on a FIFO without a writer;
// on a regular file it changes nothing.
const openNonBlocking = syscall.O_NONBLOCK
