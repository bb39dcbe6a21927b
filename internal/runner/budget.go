package runner

import (
	"fmt"

	"github.com/crystallize-dev/crystallize/internal/stepvalue"
	"github.com/crystallize-dev/crystallize/internal/toolexec"
)

// Size limits.
//
// What a single call may carry is bounded where it enters or leaves the
// host: the arguments of a tool call (MaxArgumentBytes of canonical JSON),
// what fs.read reads and fs.write writes (MaxFileBytes), what a command
// binding prints (MaxFileBytes), and what a run records of any one string
// (runrecord.MaxString; the receipts' digests are of the whole values).

// MaxArgumentBytes bounds the canonical JSON of a tool call's arguments.
const MaxArgumentBytes = 16 << 20

// recordOverhead is what the records of one call hold besides its output
// and its lines in session.md: the action, the receipt, the journal entry,
// the phase and the maps and identifiers in them (measured at about 2.6
// KiB for a call of two short arguments).
const recordOverhead = 2560

// recordBytes is what the run's records hold of one call whose output is
// outJSON and whose session.md lines are lines. The journal keeps the
// output whole, for resume; the workflow holding it too costs no more.
func recordBytes(outJSON []byte, lines []string) uint64 {
	n := uint64(recordOverhead + len(outJSON))
	for _, l := range lines {
		n += uint64(len(l))
	}
	return n
}

// checkArgumentSize refuses a call whose arguments are over
// MaxArgumentBytes of canonical JSON.
func checkArgumentSize(name string, args map[string]any) error {
	var buf [512]byte
	if n := len(stepvalue.AppendCanonical(buf[:0], args)); n > MaxArgumentBytes {
		return fmt.Errorf("%w: arguments_too_large: the arguments of %s are %d bytes of JSON, more than %d", toolexec.ErrTooLarge, name, n, MaxArgumentBytes)
	}
	return nil
}
