package capture

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// What the proxy keeps of an HTTP answer that is not the server's: a
// proxy's or load balancer's error page can be any size and carry markup
// or terminal escapes, and it is shown to the client, written to stderr
// and recorded in the trace.
const (
	// maxErrorBody bounds how much of an error answer's body is read,
	// to see whether it is a JSON-RPC message and to take its text from;
	// the rest is left unread.
	maxErrorBody = 64 << 10
	// maxBodyExcerpt bounds the text kept of such a body, in bytes.
	maxBodyExcerpt = 1024
	// maxUnreachable is how many requests in a row may get no HTTP answer
	// at all (a refused connection, a reset, a DNS failure) before the
	// relay ends: one is a call that failed, several in a row a server
	// that is gone.
	maxUnreachable = 3
)

// codeUpstreamHTTP is the JSON-RPC error code of the response the proxy
// makes for a call the server's endpoint did not answer with a JSON-RPC
// message. The error's data says what happened instead (upstreamFailure).
const codeUpstreamHTTP = jsonrpc.CodeInternalError

// exchangeKey carries an *exchange in the context of a write, so the HTTP
// client's transport can note what the endpoint answered to it.
type exchangeKey struct{}

// exchange is what the HTTP layer saw of the POST that carried one
// message. The SDK's connection reports a transient status or a refused
// connection as an error that names neither the status nor the body; this
// keeps both.
type exchange struct {
	call        jsonrpc.ID // the request written, when it is one (set before the write)
	mu          sync.Mutex
	status      int // 0: no HTTP answer
	contentType string
	foreign     bool   // the answer is not JSON-RPC by its status or media type
	body        []byte // of a foreign answer, at most maxErrorBody bytes
	bodyCut     bool   // the body was longer than body
	err         error  // the round trip's error, when there was no answer
}

// observe notes resp (or err) and, for an answer the SDK will not read as
// JSON-RPC, the start of its body, leaving resp readable from the start.
func (e *exchange) observe(resp *http.Response, err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if err != nil {
		e.status, e.err = 0, err
		return
	}
	e.status, e.err = resp.StatusCode, nil
	e.contentType = resp.Header.Get("Content-Type")
	e.foreign, e.body, e.bodyCut = false, nil, false
	ok := resp.StatusCode >= 200 && resp.StatusCode < 300
	if mt := mediaType(e.contentType); ok && (mt == "application/json" || mt == "text/event-stream") {
		return
	}
	e.foreign = true
	prefix, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody+1))
	resp.Body = readCloser{io.MultiReader(bytes.NewReader(prefix), resp.Body), resp.Body}
	if len(prefix) > maxErrorBody {
		prefix, e.bodyCut = prefix[:maxErrorBody], true
	}
	e.body = prefix
}

type readCloser struct {
	io.Reader
	io.Closer
}

// exchangeResult is a copy of an exchange, read once the write returned.
type exchangeResult struct {
	status      int
	contentType string
	foreign     bool
	body        []byte
	bodyCut     bool
	err         error
}

func (e *exchange) result() exchangeResult {
	e.mu.Lock()
	defer e.mu.Unlock()
	return exchangeResult{e.status, e.contentType, e.foreign, e.body, e.bodyCut, e.err}
}

// withExchange returns ctx carrying a new exchange.
func withExchange(ctx context.Context) (context.Context, *exchange) {
	e := &exchange{}
	return context.WithValue(ctx, exchangeKey{}, e), e
}

// transientStatus is a status after which the same request may work
// again: the SDK's connection stays usable, so one call fails and the
// session goes on.
func transientStatus(code int) bool {
	switch code {
	case http.StatusTooManyRequests, http.StatusInternalServerError, http.StatusBadGateway,
		http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

// statusText is "503 Service Unavailable", or the bare code when it has
// no standard text.
func statusText(code int) string {
	if t := http.StatusText(code); t != "" {
		return fmt.Sprintf("%d %s", code, t)
	}
	return fmt.Sprint(code)
}

// upstreamFailure is a message's POST that got no JSON-RPC answer from
// the endpoint: an HTTP answer of someone else (a proxy's error page) or
// none at all. Its fields are the data of the JSON-RPC error the client
// gets for a call.
type upstreamFailure struct {
	Endpoint    string `json:"endpoint"`
	Message     string `json:"message"` // what was sent: `"tools/call"` request 3
	Status      int    `json:"status,omitempty"`
	ContentType string `json:"contentType,omitempty"`
	Body        string `json:"body,omitempty"` // bodyExcerpt of a foreign answer's body
	Error       string `json:"error,omitempty"`
}

func newUpstreamFailure(endpoint, what string, r exchangeResult) *upstreamFailure {
	f := &upstreamFailure{Endpoint: endpoint, Message: what, Status: r.status}
	if r.status == 0 {
		if r.err != nil {
			f.Error = r.err.Error()
		}
		return f
	}
	// A header is as much the gateway's as its body.
	if f.ContentType = sanitizeText(r.contentType, false); len(f.ContentType) > 100 {
		f.ContentType = strings.ToValidUTF8(f.ContentType[:100], "") + "…"
	}
	if r.foreign {
		f.Body = bodyExcerpt(r.body, r.contentType, r.bodyCut)
	}
	return f
}

// String says what happened in one line, with the body's excerpt.
func (f *upstreamFailure) String() string {
	if f.Status == 0 {
		return fmt.Sprintf("upstream %s did not answer %s: %s", f.Endpoint, f.Message, f.Error)
	}
	ct := ""
	if f.ContentType != "" {
		ct = " (" + f.ContentType + ")"
	}
	body := ""
	if f.Body != "" {
		body = ": " + f.Body
	}
	return fmt.Sprintf("upstream %s answered %s with %s%s%s", f.Endpoint, f.Message, statusText(f.Status), ct, body)
}

// rpcError is the error the client gets for the call.
func (f *upstreamFailure) rpcError() *jsonrpc.Error {
	data, _ := json.Marshal(map[string]any{upstreamDataKey: f})
	return &jsonrpc.Error{Code: codeUpstreamHTTP, Message: f.String(), Data: data}
}

// upstreamDataKey names the upstreamFailure in the data of an error the
// proxy made, so the recorder can tell it from the server's own errors.
const upstreamDataKey = "upstreamHTTP"

// proxyFailure is what an error the proxy made for a call says happened
// at the endpoint; nil for any other error (the server's own).
func proxyFailure(e *jsonrpc.Error) *upstreamFailure {
	if e == nil || e.Code != codeUpstreamHTTP || len(e.Data) == 0 {
		return nil
	}
	var data map[string]*upstreamFailure
	if json.Unmarshal(e.Data, &data) != nil {
		return nil
	}
	return data[upstreamDataKey]
}

// describe names a message for an error: `"tools/call" request 3`,
// `notification "notifications/cancelled"`, `response 7`.
func describe(msg jsonrpc.Message) string {
	switch m := msg.(type) {
	case *jsonrpc.Request:
		if m.ID.IsValid() {
			return fmt.Sprintf("%q request %v", m.Method, m.ID.Raw())
		}
		return fmt.Sprintf("notification %q", m.Method)
	case *jsonrpc.Response:
		return fmt.Sprintf("response %v", m.ID.Raw())
	}
	return fmt.Sprintf("%T", msg)
}

// bodyExcerpt is the text of an HTTP body that is not JSON-RPC, fit for a
// terminal, a JSON-RPC error and a trace: the text of an HTML page
// without its markup, scripts and styles, control characters and
// terminal escapes removed, whitespace collapsed, at most maxBodyExcerpt
// bytes, saying so when it was cut.
func bodyExcerpt(body []byte, contentType string, cut bool) string {
	if len(bytes.TrimSpace(body)) == 0 {
		if cut {
			return "(blank body, cut)"
		}
		return "(empty body)"
	}
	mt := mediaType(contentType)
	isHTML := mt == "text/html" || mt == "application/xhtml+xml" ||
		strings.HasPrefix(http.DetectContentType(body), "text/html")
	var text string
	if isHTML {
		text = sanitizeText(htmlText(body), true)
	} else {
		text = sanitizeText(string(body), false)
	}
	if len(text) > maxBodyExcerpt {
		n := maxBodyExcerpt
		for n > 0 && !utf8.RuneStart(text[n]) {
			n--
		}
		return strings.TrimSpace(text[:n]) + fmt.Sprintf(" … (cut at %d bytes)", maxBodyExcerpt)
	}
	if cut {
		return text + fmt.Sprintf(" … (body cut at %d bytes)", maxErrorBody)
	}
	if text == "" {
		return "(no text)"
	}
	return text
}

// htmlText is the text of an HTML document: tags become spaces, the
// content of script and style elements and comments is dropped, and
// character references are decoded.
func htmlText(body []byte) string {
	s := string(body)
	var b strings.Builder
	for len(s) > 0 {
		lt := strings.IndexByte(s, '<')
		if lt < 0 {
			b.WriteString(s)
			break
		}
		b.WriteString(s[:lt])
		b.WriteByte(' ')
		s = s[lt:]
		if strings.HasPrefix(s, "<!--") {
			end := strings.Index(s, "-->")
			if end < 0 {
				break
			}
			s = s[end+3:]
			continue
		}
		gt := strings.IndexByte(s, '>')
		if gt < 0 {
			break // an unfinished tag: nothing after it is text
		}
		tag := strings.ToLower(s[1:gt])
		s = s[gt+1:]
		for _, skip := range []string{"script", "style"} {
			if tag == skip || strings.HasPrefix(tag, skip+" ") {
				end := strings.Index(strings.ToLower(s), "</"+skip)
				if end < 0 {
					s = ""
				} else {
					s = s[end:]
				}
			}
		}
	}
	return html.UnescapeString(b.String())
}

// sanitizeText removes what must not reach a terminal: terminal escape
// sequences and control characters (replaced by spaces), invalid UTF-8
// (replaced by U+FFFD), and, from the text of HTML, angle brackets its
// character references produced. Runs of white space become one space.
func sanitizeText(s string, fromHTML bool) string {
	var b strings.Builder
	space := false
	put := func(r rune) {
		if unicode.IsSpace(r) || !unicode.IsPrint(r) || (fromHTML && (r == '<' || r == '>')) {
			space = b.Len() > 0
			return
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
	}
	for i := 0; i < len(s); {
		if s[i] == 0x1b { // ESC: skip the whole escape sequence
			i = skipEscape(s, i)
			space = b.Len() > 0
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		put(r)
	}
	return b.String()
}

// skipEscape returns the index after the terminal escape sequence that
// starts at s[i] (an ESC): a CSI sequence (ESC [ … final byte), an OSC or
// string sequence (ESC ] … BEL or ESC \), or ESC and one character.
func skipEscape(s string, i int) int {
	i++
	if i >= len(s) {
		return i
	}
	switch s[i] {
	case '[':
		for i++; i < len(s); i++ {
			if s[i] >= 0x40 && s[i] <= 0x7e {
				return i + 1
			}
		}
		return i
	case ']', 'P', '_', '^':
		for i++; i < len(s); i++ {
			if s[i] == 0x07 {
				return i + 1
			}
			if s[i] == 0x1b && i+1 < len(s) && s[i+1] == '\\' {
				return i + 2
			}
		}
		return i
	}
	return i + 1
}
