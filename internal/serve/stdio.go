package serve

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// DefaultMaxMessage bounds one message of the stdio transport, as the
// SDK's own default does.
const DefaultMaxMessage = mcp.DefaultMaxLineLength

// StdioOptions configure RunStdio. The zero value is the default.
type StdioOptions struct {
	// MaxMessage bounds one line (one message) read; 0 means
	// DefaultMaxMessage. A longer line is discarded unread and answered
	// with an error.
	MaxMessage int
}

// JSON-RPC error codes the stdio transport answers with.
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
)

// RunStdio serves s over newline-delimited JSON-RPC, reading in and
// writing out (the process's stdin and stdout), until in ends or ctx is
// done.
//
// The SDK's stdio transport reads the stream with one JSON decoder and
// ends the session at the first line it cannot take: a line that is not
// JSON, a message with an object for an id, a batch under a protocol
// that has none, a line over its size limit. One bad line from a client
// (or from whatever else writes to the pipe) would stop every workflow
// the server hands out. RunStdio puts a line filter in front of the
// SDK's transport: each line is checked as the SDK will decode it, and
// one it would reject is answered with a JSON-RPC error, -32700 when it
// is not JSON and -32600 when it is not a request the server takes (its
// id, when it has a usable one, is the error's id; else null), and
// dropped; the SDK reads only the lines it can decode. Batches are
// answered -32600 too: the protocol no longer has them, and the SDK
// refuses them under the versions that do not. A line over MaxMessage is
// skipped to its end without being held in memory.
//
// When in ends, RunStdio still answers the requests it has read before it
// returns (the SDK would close the session at once and drop them), so
// that a client may write its requests and close its end: a request is
// done when its response is written or the client cancels it.
func (s *Server) RunStdio(ctx context.Context, in io.Reader, out io.Writer, opts StdioOptions) error {
	if opts.MaxMessage <= 0 {
		opts.MaxMessage = DefaultMaxMessage
	}
	w := &lockedWriter{w: out, pending: map[string]bool{}}
	w.idle = sync.NewCond(&w.mu)
	f := &lineFilter{ctx: ctx, in: bufio.NewReaderSize(in, 64<<10), out: w, max: opts.MaxMessage, log: s.opts.Log}
	err := s.srv.Run(ctx, &mcp.IOTransport{Reader: io.NopCloser(f), Writer: nopWriteCloser{w}, MaxLineLength: -1})
	if errors.Is(err, io.EOF) || errors.Is(err, context.Canceled) && ctx.Err() != nil {
		return nil
	}
	return err
}

// lockedWriter serializes the writes of the SDK's transport (one message
// per Write) and the filter's error answers, so that lines never
// interleave. It also keeps the requests read and not yet answered.
type lockedWriter struct {
	mu      sync.Mutex
	w       io.Writer
	pending map[string]bool // ids (as JSON) of requests not answered
	idle    *sync.Cond      // signalled when pending shrinks
}

// envelope is what the filter and the writer read of a message.
type envelope struct {
	ID     json.RawMessage `json:"id"`
	Method *string         `json:"method"`
	Params struct {
		RequestID json.RawMessage `json:"requestId"`
	} `json:"params"`
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	var m envelope
	answered := json.Unmarshal(p, &m) == nil && m.Method == nil && len(m.ID) > 0
	l.mu.Lock()
	defer l.mu.Unlock()
	if answered {
		delete(l.pending, string(m.ID))
		l.idle.Broadcast()
	}
	return l.w.Write(p)
}

// read notes a request or a cancellation the SDK is given.
func (l *lockedWriter) read(line []byte) {
	var m envelope
	if json.Unmarshal(line, &m) != nil || m.Method == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case *m.Method == "notifications/cancelled" && len(m.Params.RequestID) > 0:
		delete(l.pending, string(m.Params.RequestID))
		l.idle.Broadcast()
	case len(m.ID) > 0:
		l.pending[string(m.ID)] = true
	}
}

// drain waits until every request read is answered, or ctx is done.
func (l *lockedWriter) drain(ctx context.Context) {
	stop := context.AfterFunc(ctx, func() {
		l.mu.Lock()
		l.idle.Broadcast()
		l.mu.Unlock()
	})
	defer stop()
	l.mu.Lock()
	defer l.mu.Unlock()
	for len(l.pending) > 0 && ctx.Err() == nil {
		l.idle.Wait()
	}
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// lineFilter is the reader the SDK's transport reads: the lines of in that
// decode as one JSON-RPC message, each with its newline. Every other line
// is answered on out and left out.
type lineFilter struct {
	ctx  context.Context
	in   *bufio.Reader
	out  *lockedWriter
	max  int
	log  io.Writer
	line []byte // the line being read, reused
	rest []byte // what of the current good line the SDK has not read
	err  error  // the error that ended in, returned once rest is read
}

func (f *lineFilter) Read(p []byte) (int, error) {
	for len(f.rest) == 0 {
		if f.err != nil {
			if errors.Is(f.err, io.EOF) {
				f.out.drain(f.ctx)
			}
			return 0, f.err
		}
		line, tooLong, err := f.next()
		f.err = err
		switch {
		case tooLong:
			f.reject(nil, codeInvalidRequest, fmt.Sprintf("message larger than %d bytes", f.max))
		case len(line) == 0:
		default:
			if id, code, why := check(line); code != 0 {
				f.reject(id, code, why)
				continue
			}
			f.out.read(line)
			f.rest = append(line, '\n')
		}
	}
	n := copy(p, f.rest)
	f.rest = f.rest[n:]
	return n, nil
}

// next reads the next line, without its end and surrounding blanks. A
// line longer than f.max is read to its end and dropped: tooLong.
func (f *lineFilter) next() (line []byte, tooLong bool, err error) {
	f.line = f.line[:0]
	for {
		chunk, err := f.in.ReadSlice('\n')
		if !tooLong {
			if len(f.line)+len(chunk) > f.max+2 { // +2: the line's end, \r\n
				tooLong = true
				f.line = f.line[:0]
			} else {
				f.line = append(f.line, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if tooLong {
			return nil, true, err
		}
		return bytes.TrimSpace(f.line), false, err
	}
}

// check returns the JSON-RPC error a line gets instead of being served,
// or code 0 when the SDK can decode it: -32700 when it is not one JSON
// value, -32600 when it is a batch or not a message (an object for an
// id, a number for a method). id is the line's id when it has one the
// answer can carry.
func check(line []byte) (id any, code int, why string) {
	if !json.Valid(line) {
		return nil, codeParseError, "parse error: not one JSON value"
	}
	if line[0] == '[' {
		return nil, codeInvalidRequest, "invalid request: batches are not supported"
	}
	if _, err := jsonrpc.DecodeMessage(line); err != nil {
		var m struct {
			ID any `json:"id"`
		}
		if json.Unmarshal(line, &m) == nil {
			switch m.ID.(type) {
			case string, float64:
				id = m.ID
			}
		}
		return id, codeInvalidRequest, "invalid request: not a JSON-RPC 2.0 message this server can read"
	}
	return nil, 0, ""
}

// reject answers a line the server does not serve, and says so in the
// log. The answer never repeats the line: it may hold anything.
func (f *lineFilter) reject(id any, code int, why string) {
	resp := struct {
		JSONRPC string `json:"jsonrpc"`
		ID      any    `json:"id"`
		Error   struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{JSONRPC: "2.0", ID: id}
	resp.Error.Code, resp.Error.Message = code, why
	data, _ := json.Marshal(resp)
	f.out.Write(append(data, '\n'))
	if f.log != nil {
		fmt.Fprintf(f.log, "serve: answered a line with error %d: %s\n", code, why)
	}
}
