package capture

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// DefaultMaxMessage bounds one message the server writes on stdout, as
// the SDK's stdio transport bounds it.
const DefaultMaxMessage = mcp.DefaultMaxLineLength

// terminateAfter is how long Close waits for the server to exit after
// closing its stdin, and again after SIGTERM, before it kills it (the
// protocol's shutdown sequence, as the SDK's CommandTransport runs it).
const terminateAfter = 5 * time.Second

// Command is the transport to an MCP server started as a subprocess that
// speaks newline-delimited JSON-RPC on its stdin and stdout.
//
// It differs from the SDK's CommandTransport in one way: a message of the
// server that cannot be relayed does not end the session. The SDK's
// transport reads the server's stdout with one JSON decoder and fails for
// good at the first message over its size limit, nested deeper than the
// decoder goes, or otherwise not JSON-RPC, and the relay ends with it,
// taking the client's whole session down for one tool's oversized answer.
// Command reads the stdout line by line instead, without holding more of
// a line than MaxMessage, and hands the SDK's connection only the lines
// it can decode. A line it cannot is answered where it belongs: a response
// becomes a JSON-RPC error response with the same id, which the client
// gets (and the trace records) in its place; a request the server made
// gets a JSON-RPC error written back to the server; anything else, with
// no id to answer, is dropped and named through Warn. The id is found by
// a scan of the line as it streams past, so a message of any size or
// depth costs no more memory than MaxMessage.
type Command struct {
	Cmd *exec.Cmd
	// MaxMessage bounds a message from the server; 0 means
	// DefaultMaxMessage.
	MaxMessage int
	// Warn is told of each message dropped; nil discards.
	Warn func(string)
}

// Connect implements mcp.Transport: it starts the server.
func (t *Command) Connect(ctx context.Context) (mcp.Connection, error) {
	stdout, err := t.Cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stdin, err := t.Cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	if err := t.Cmd.Start(); err != nil {
		return nil, err
	}
	max := t.MaxMessage
	if max <= 0 {
		max = DefaultMaxMessage
	}
	in := &serverInput{w: stdin, cmd: t.Cmd}
	f := &messageFilter{in: bufio.NewReaderSize(stdout, 64<<10), max: max, server: in, warn: t.Warn}
	// The SDK's connection decodes what the filter passes; the filter
	// bounds lines, so the connection needs no bound of its own.
	return (&mcp.IOTransport{Reader: io.NopCloser(f), Writer: in, MaxLineLength: -1}).Connect(ctx)
}

// serverInput is the server's stdin: the SDK's connection and the filter's
// answers to the server's requests write whole lines to it, one at a
// time. Closing it shuts the server down.
type serverInput struct {
	mu  sync.Mutex
	w   io.WriteCloser
	cmd *exec.Cmd
}

func (s *serverInput) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// Close closes the server's stdin and waits for it to exit, sending
// SIGTERM, then SIGKILL, when it does not.
func (s *serverInput) Close() error {
	if err := s.w.Close(); err != nil {
		return fmt.Errorf("closing the server's stdin: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- s.cmd.Wait() }()
	wait := func() (error, bool) {
		select {
		case err := <-exited:
			return err, true
		case <-time.After(terminateAfter):
			return nil, false
		}
	}
	if err, ok := wait(); ok {
		return err
	}
	if s.cmd.Process.Signal(syscall.SIGTERM) == nil {
		if err, ok := wait(); ok {
			return err
		}
	}
	if err := s.cmd.Process.Kill(); err != nil {
		return err
	}
	if err, ok := wait(); ok {
		return err
	}
	return errors.New("the server does not exit")
}

// messageFilter is what the SDK's connection reads of the server's
// stdout: its lines that decode as a JSON-RPC message, and in place of a
// response that does not, an error response with its id.
type messageFilter struct {
	in     *bufio.Reader
	max    int
	server io.Writer
	warn   func(string)
	line   []byte // the line being read, reused
	rest   []byte // what the SDK's connection has not read of the line handed over
	err    error  // the error that ended the input, returned once rest is read
}

func (f *messageFilter) Read(p []byte) (int, error) {
	for len(f.rest) == 0 {
		if f.err != nil {
			return 0, f.err
		}
		f.rest, f.err = f.next()
	}
	n := copy(p, f.rest)
	f.rest = f.rest[n:]
	return n, nil
}

// next reads one line and returns what to hand over for it (nothing for
// a blank line or a message dropped).
func (f *messageFilter) next() ([]byte, error) {
	var scan idScanner
	f.line = f.line[:0]
	size, tooLong := 0, false
	var err error
	for {
		var chunk []byte
		chunk, err = f.in.ReadSlice('\n')
		scan.write(chunk)
		size += len(chunk)
		if !tooLong && size > f.max+2 { // +2: the line's end, \r\n
			tooLong = true
			f.line = f.line[:0]
		}
		if !tooLong {
			f.line = append(f.line, chunk...)
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			break
		}
	}
	var why string
	switch line := trimSpace(f.line); {
	case tooLong:
		why = fmt.Sprintf("it is larger than %d bytes", f.max)
	case len(line) == 0:
		return nil, err
	case !json.Valid(line):
		why = "it is not JSON (or is nested deeper than a decoder goes)"
	default:
		if _, derr := jsonrpc.DecodeMessage(line); derr != nil {
			why = "it is not a JSON-RPC 2.0 message"
		} else {
			return append(line, '\n'), err
		}
	}
	return f.unrelayable(&scan, size, why), err
}

// unrelayable answers a message of the server that cannot be relayed, and
// returns what to hand the SDK's connection in its place.
func (f *messageFilter) unrelayable(scan *idScanner, size int, why string) []byte {
	id, ok := scan.id()
	switch {
	case ok && !scan.method:
		// A response: the client's request gets an error instead.
		msg := fmt.Sprintf("capture: the server's response (%d bytes) could not be relayed: %s", size, why)
		return errorLine(id, msg)
	case ok:
		// A request of the server's: the server gets the error.
		f.server.Write(errorLine(id, "capture: the request could not be relayed to the client: "+why))
		f.warnf("a request of the server (%d bytes) was not relayed: %s", size, why)
	default:
		f.warnf("a message of the server (%d bytes) without an id was not relayed: %s", size, why)
	}
	return nil
}

func (f *messageFilter) warnf(format string, args ...any) {
	if f.warn != nil {
		f.warn(fmt.Sprintf(format, args...))
	}
}

// codeUnrelayable is the JSON-RPC error code of a message the proxy could
// not relay: an internal error, as the client sees it.
const codeUnrelayable = -32603

// errorLine is a JSON-RPC error response with the id id (its JSON), and
// its newline.
func errorLine(id json.RawMessage, msg string) []byte {
	data, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{"2.0", id, struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}{codeUnrelayable, msg}})
	return append(data, '\n')
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t' || b[0] == '\r' || b[0] == '\n') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t' || b[len(b)-1] == '\r' || b[len(b)-1] == '\n') {
		b = b[:len(b)-1]
	}
	return b
}

// idScanner finds, in a JSON object written to it in pieces, the value of
// its top-level "id" member (a string or a number) and whether it has a
// top-level "method", without keeping the object: it follows only the
// nesting depth, strings and their escapes, and the top level's keys. A
// value nested any deeper costs nothing but the count.
type idScanner struct {
	depth    int
	inString bool
	escape   bool
	key      []byte // the top-level string being read, while it may be a key
	keying   bool   // at the top level, the next string is a key
	member   string // the top-level key whose value follows
	value    []byte // the top-level id value being read
	idValue  []byte
	method   bool
	bad      bool
}

func (s *idScanner) write(p []byte) {
	for _, c := range p {
		s.byte(c)
	}
}

func (s *idScanner) byte(c byte) {
	if s.bad {
		return
	}
	if s.inString {
		if s.depth == 1 && (s.keying || s.member == "id") {
			if len(s.key) < 64 {
				s.key = append(s.key, c)
			}
		}
		switch {
		case s.escape:
			s.escape = false
		case c == '\\':
			s.escape = true
		case c == '"':
			s.inString = false
			if s.depth == 1 {
				s.endString()
			}
		}
		return
	}
	switch c {
	case '"':
		s.inString = true
		if s.depth == 1 {
			s.key = append(s.key[:0], '"')
		}
	case '{', '[':
		if s.depth == 0 && c == '{' {
			s.keying = true
		}
		s.depth++
	case '}', ']':
		if s.depth == 1 {
			s.endValue()
		}
		s.depth--
	case ':':
		if s.depth == 1 {
			s.keying = false
		}
	case ',':
		if s.depth == 1 {
			s.endValue()
			s.keying = true
		}
	default:
		if s.depth == 1 && s.member == "id" && len(s.value) < 64 && c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			s.value = append(s.value, c)
		}
	}
}

// endString ends a top-level string: a key, or the id's value.
func (s *idScanner) endString() {
	if s.keying {
		var k string
		if json.Unmarshal(s.key, &k) == nil {
			s.member = k
			if k == "method" {
				s.method = true
			}
		}
		return
	}
	if s.member == "id" {
		s.value = append(s.value[:0], s.key...)
	}
}

// endValue ends a top-level member.
func (s *idScanner) endValue() {
	if s.member == "id" && len(s.value) > 0 {
		s.idValue = append([]byte(nil), s.value...)
	}
	s.member, s.value = "", s.value[:0]
}

// id returns the id found, when it is one a response can carry.
func (s *idScanner) id() (json.RawMessage, bool) {
	if len(s.idValue) == 0 {
		return nil, false
	}
	var v any
	if json.Unmarshal(s.idValue, &v) != nil {
		return nil, false
	}
	switch v.(type) {
	case string, float64:
		return json.RawMessage(s.idValue), true
	}
	return nil, false
}
