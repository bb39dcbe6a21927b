package capture

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strconv"
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
	// tooLarge says the event had more than the bound's bytes: its
	// fields were dropped as they came, and only its end was seen.
	tooLarge bool
}

// readEvents reads server-sent events from r as the HTML standard's
// event-stream parser does (lines end with CRLF, LF or CR; a leading
// byte order mark is skipped; a line starting with a colon is a comment;
// one space after the field's colon is dropped; an event is dispatched at
// an empty line and an unfinished one at the end is discarded), and calls
// fn for each event that carried a field. An event of more than max bytes
// is read to its end without being kept and handed to fn with only
// tooLarge set: fn decides whether that ends the stream (returning
// errEventTooLarge) or skips the event. It returns fn's first error, the
// reader's error, or nil at the end of r.
func readEvents(r io.Reader, max int, fn func(event) error) error {
	br := bufio.NewReader(r)
	var (
		ev      = event{retry: -1}
		seen    bool // ev carries a field
		data    bytes.Buffer
		hasData bool
		line    []byte
		lineLen int // bytes of the line read, kept or not
		size    int
		over    bool // the current event has more than max bytes
		skipLF  bool // the last line ended with CR: a following LF is part of it
		first   = true
	)
	for {
		line, lineLen = line[:0], 0
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
			lineLen++
			if size++; size > max {
				over = true
			}
			if !over {
				line = append(line, b)
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
		if over {
			if lineLen > 0 {
				continue // a line of an oversized event: dropped
			}
			if err := fn(event{retry: -1, tooLarge: true}); err != nil {
				return err
			}
			ev, seen, hasData, size, over = event{retry: -1}, false, false, 0, false
			data.Reset()
			continue
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

// appendEvent appends ev to b in the event-stream format: its fields, one
// data line per line of its data, and the empty line that dispatches it.
func appendEvent(b []byte, ev event) []byte {
	if ev.name != "" {
		b = append(append(append(b, "event: "...), ev.name...), '\n')
	}
	if ev.hasID {
		b = append(append(append(b, "id: "...), ev.id...), '\n')
	}
	if ev.retry >= 0 {
		b = append(strconv.AppendInt(append(b, "retry: "...), ev.retry, 10), '\n')
	}
	if ev.data != nil {
		for line := range bytes.SplitSeq(ev.data, []byte("\n")) {
			b = append(append(append(b, "data: "...), line...), '\n')
		}
	}
	return append(b, '\n')
}
