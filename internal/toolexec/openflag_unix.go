//go:build unix

package toolexec

import "syscall"

// openNonBlocking is added to the flags fs.read opens a file with. On a
// regular file it changes nothing; a FIFO swapped in after the check
// opens without waiting for a writer, and is then refused. It also spares
// the os package making the descriptor non-blocking for its poller and
// back (four system calls per file).
const openNonBlocking = syscall.O_NONBLOCK
