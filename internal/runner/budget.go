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
// (maxRecordedString; the receipts' digests are of the whole values).

const (
	// MaxArgumentBytes bounds the canonical JSON of a tool call's
	// arguments.
	MaxArgumentBytes = 16 << 20
	// maxRecordedString is the longest string a run record keeps whole;
	// a longer one is cut and says how much was cut.
	maxRecordedString = 64 << 10
)

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

// clipRecorded returns v with every string longer than maxRecordedString
// cut, for a run record; v is not changed. A value with no such string is
// returned as it is: what is recorded is the scrubber's copy, which
// nothing changes after.
func clipRecorded(v any) any {
	if !needsClip(v) {
		return v
	}
	switch v := v.(type) {
	case string:
		if len(v) > maxRecordedString {
			cut := maxRecordedString
			for cut > 0 && v[cut]&0xC0 == 0x80 { // not inside a UTF-8 sequence
				cut--
			}
			return fmt.Sprintf("%s…[%d more bytes not recorded]", v[:cut], len(v)-cut)
		}
		return v
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = clipRecorded(e)
		}
		return out
	case map[string]any:
		if v == nil {
			return v
		}
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = clipRecorded(e)
		}
		return out
	}
	return v
}

// needsClip reports whether v holds a string clipRecorded cuts.
func needsClip(v any) bool {
	switch v := v.(type) {
	case string:
		return len(v) > maxRecordedString
	case []any:
		for _, e := range v {
			if needsClip(e) {
				return true
			}
		}
	case map[string]any:
		for _, e := range v {
			if needsClip(e) {
				return true
			}
		}
	}
	return false
}
