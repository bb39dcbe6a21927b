package toolexec

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/crystallize-dev/crystallize/internal/runconfig"
	"github.com/crystallize-dev/crystallize/internal/stepvalue"
)

// maxHTTPResponse bounds what a response body may be.
const maxHTTPResponse = 32 << 20

// Request is a call's request, expanded.
type Request struct {
	Method, URL string
	header      http.Header
	body        []byte // nil for none
}

// ExpandHTTP builds the request of a call: the URL with its parameters
// escaped, the headers with their secrets, and the remaining arguments as
// the body or query.
func (h *Executor) ExpandHTTP(hb *runconfig.HTTPBinding, args map[string]any) (*Request, error) {
	used := map[string]bool{}
	base, query, hasQuery := strings.Cut(hb.URL, "?")
	var errs []error
	u, err := h.expandWith(base, args, url.PathEscape, used)
	errs = append(errs, err)
	if err == nil {
		errs = append(errs, dotSegments(hb.URL, u))
	}
	if hasQuery {
		q, err := h.expandWith(query, args, url.QueryEscape, used)
		errs = append(errs, err)
		u += "?" + q
	}
	req := &Request{Method: hb.RequestMethod(), header: http.Header{}}
	for _, k := range slices.Sorted(maps.Keys(hb.Headers)) {
		v, err := h.expandWith(hb.Headers[k], args, nil, used)
		errs = append(errs, err)
		req.header.Set(k, v)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	rest := map[string]any{}
	for k, v := range args {
		if !used[k] {
			rest[k] = v
		}
	}
	switch hb.BodyKind() {
	case runconfig.BodyJSON:
		req.body = stepvalue.Canonical(rest)
		if req.header.Get("Content-Type") == "" {
			req.header.Set("Content-Type", "application/json")
		}
	case runconfig.BodyQuery:
		if len(rest) > 0 {
			q := url.Values{}
			for _, k := range slices.Sorted(maps.Keys(rest)) {
				q.Set(k, stepvalue.ArgString(rest[k]))
			}
			sep := "?"
			if strings.Contains(u, "?") {
				sep = "&"
			}
			u += sep + q.Encode()
		}
	}
	if req.header.Get("Accept") == "" {
		req.header.Set("Accept", "application/json")
	}
	req.URL = u
	return req, nil
}

// ErrPathSegment is returned for an http call whose parameters make a
// "." or ".." segment of the URL's path.
var ErrPathSegment = errors.New("parameter makes a dot segment of the URL path")

// dotSegments refuses an expanded URL path with a "." or ".." segment.
// Escaping keeps a parameter inside its segment ("/" becomes %2F), but a
// parameter that is ".." (or two that together make one) is a whole
// segment that every client and server resolves: "/repos/{owner}/{repo}"
// with repo ".." would reach /repos/. Nor is %2F enough on its own: many
// servers and proxies decode it before routing, so repo "../../admin",
// sent as ..%2F..%2Fadmin, would reach /admin there. Each segment is
// therefore also looked at decoded, split at "/" and at "\" (which some
// servers take for one), and refused when a piece is "." or "..". A
// template's own literal dot segments are its author's and pass.
func dotSegments(tmpl, expanded string) error {
	u, err := url.Parse(expanded)
	if err != nil {
		return nil // the request fails on it with a clearer message
	}
	literal := strings.Split(tmpl, "/")
	for _, seg := range strings.Split(u.EscapedPath(), "/") {
		if slices.Contains(literal, seg) {
			continue
		}
		pieces := []string{seg}
		if dec, err := url.PathUnescape(seg); err == nil && dec != seg {
			pieces = strings.FieldsFunc(dec, func(r rune) bool { return r == '/' || r == '\\' })
		}
		pieces = append(pieces, strings.Split(seg, "\\")...)
		for _, p := range pieces {
			if p != "." && p != ".." {
				continue
			}
			if p != seg {
				return fmt.Errorf("%w: path_traversal: %s has a segment %s that a server decoding it reads as a %q segment, which the template %s does not have; a parameter must stay inside its segment", ErrPathSegment, expanded, seg, p, tmpl)
			}
			return fmt.Errorf("%w: path_traversal: %s has a %q segment that the template %s does not; a parameter must stay inside its segment", ErrPathSegment, expanded, seg, tmpl)
		}
	}
	return nil
}

// httpCall runs an http binding.
func (h *Executor) httpCall(t *runconfig.ToolBinding, args map[string]any) (any, *Request, error) {
	r, err := h.ExpandHTTP(t.HTTP, args)
	if err != nil {
		return nil, nil, err
	}
	timeout := t.ParsedTimeout()
	if timeout == 0 {
		timeout = runconfig.DefaultToolTimeout
	}
	ctx, cancel := context.WithTimeout(h.ctx, timeout)
	defer cancel()
	var body io.Reader
	if r.body != nil {
		body = bytes.NewReader(r.body)
	}
	req, err := http.NewRequestWithContext(ctx, r.Method, r.URL, body)
	if err != nil {
		return nil, r, err
	}
	req.Header = r.header
	client := h.httpClient
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		switch {
		case h.ctx.Err() != nil:
			return nil, r, h.ctx.Err()
		case ctx.Err() == context.DeadlineExceeded:
			return nil, r, fmt.Errorf("%s %s timed out after %s", r.Method, r.URL, timeout)
		}
		// The client's error quotes the URL; say it once.
		if uerr := (*url.Error)(nil); errors.As(err, &uerr) {
			err = uerr.Err
		}
		return nil, r, fmt.Errorf("%s %s: %w", r.Method, r.URL, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxHTTPResponse+1))
	if err != nil {
		return nil, r, fmt.Errorf("%s %s: reading the response: %w", r.Method, r.URL, err)
	}
	if len(data) > maxHTTPResponse {
		return nil, r, fmt.Errorf("%s %s: the response is larger than %d bytes", r.Method, r.URL, maxHTTPResponse)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		msg := strings.TrimSpace(string(data))
		if len(msg) > maxStderr {
			msg = msg[:maxStderr] + "…"
		}
		if msg != "" {
			return nil, r, fmt.Errorf("%s %s: status %s: %s", r.Method, r.URL, resp.Status, msg)
		}
		return nil, r, fmt.Errorf("%s %s: status %s", r.Method, r.URL, resp.Status)
	}
	return parseResponse(resp.Header.Get("Content-Type"), data), r, nil
}

// parseResponse returns a response body as a JSON value when its content
// type is JSON (application/json or any +json type) or, whatever the
// type says, it is valid JSON; else as text. An empty body is None.
func parseResponse(contentType string, data []byte) any {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil
	}
	mt, _, _ := mime.ParseMediaType(contentType)
	if mt == "application/json" || strings.HasSuffix(mt, "+json") {
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err == nil {
			return v
		}
	}
	return stepvalue.ParseOutput(data)
}
