package capture

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// maxEventSize bounds the bytes of one server-sent event, as the SDK
// bounds its own (mcp.DefaultMaxEventSize).
const maxEventSize = 16 << 20

// errEventTooLarge is returned for an event longer than the bound.
var errEventTooLarge = errors.New("server-sent event too large")

// An event is one dispatched server-sent event.
type event struct {
	name  string // the event field; "" is "message"
	id    string // the id field, when hasID
	hasID bool
	data  []byte // the data fields joined by newlines
	retry int64  // the retry field in milliseconds, -1 when absent
}

// readEvents reads server-sent events from r as the HTML standard's
// event-stream parser does (lines end with CRLF, LF or CR; a leading
// byte order mark is skipped; a line starting with a colon is a comment;
// one space after the field's colon is dropped; an event is dispatched at
// an empty line and an unfinished one at the end is discarded), and calls
// fn for each event that carried a field. It returns fn's first error, the
// reader's error, errEventTooLarge, or nil at the end of r.
func readEvents(r io.Reader, max int, fn func(event) error) error {
	br := bufio.NewReader(r)
	var (
		ev      = event{retry: -1}
		seen    bool // ev carries a field
		data    bytes.Buffer
		hasData bool
		line    []byte
		size    int
		skipLF  bool // the last line ended with CR: a following LF is part of it
		first   = true
	)
	for {
		line = line[:0]
		var err error
		for {
			var b byte
			b, err = br.ReadByte()
			if err != nil {
				break
			}
			if skipLF {
				skipLF = false
				if b == '\n' {
					continue
				}
			}
			if b == '\n' {
				break
			}
			if b == '\r' {
				skipLF = true
				break
			}
			line = append(line, b)
			if size++; size > max {
				return fmt.Errorf("%w: more than %d bytes", errEventTooLarge, max)
			}
		}
		if err != nil {
			if err == io.EOF {
				return nil // a line without its end, and the event it is in, are discarded
			}
			return err
		}
		if first {
			line = bytes.TrimPrefix(line, []byte("\ufeff"))
			first = false
		}
		if len(line) == 0 {
			if seen {
				if hasData {
					ev.data = bytes.Clone(bytes.TrimSuffix(data.Bytes(), []byte("\n")))
				}
				if err := fn(ev); err != nil {
					return err
				}
			}
			ev, seen, hasData, size = event{retry: -1}, false, false, 0
			data.Reset()
			continue
		}
		if line[0] == ':' {
			continue
		}
		field, value := line, []byte(nil)
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			field, value = line[:i], line[i+1:]
			value = bytes.TrimPrefix(value, []byte(" "))
		}
		switch string(field) {
		case "event":
			ev.name, seen = string(value), true
		case "data":
			data.Write(value)
			data.WriteByte('\n')
			hasData, seen = true, true
		case "id":
			if bytes.IndexByte(value, 0) < 0 {
				ev.id, ev.hasID, seen = string(value), true, true
			}
		case "retry":
			if n := retryMillis(string(value)); n >= 0 {
				ev.retry, seen = n, true
			}
		}
	}
}
