package review

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/crystallize-dev/crystallize/internal/bundle"
	"github.com/crystallize-dev/crystallize/internal/registry"
	"github.com/crystallize-dev/crystallize/internal/runner"
	"github.com/crystallize-dev/crystallize/internal/store"
)

// Inbox is where the server finds what suspended runs wait for, and how
// it answers: Answer must have the effect crystallize session inbox
// answer has (registry.Check, then resuming the run or dismissing the
// item), and return what the resumed run printed.
type Inbox interface {
	Pending(ctx context.Context) ([]store.InboxItem, error)
	Answer(ctx context.Context, id int64, a registry.Answer) (string, error)
}

// Options configure a Server. The zero value of each field is its
// documented default.
type Options struct {
	// Bundles are the bundle directories the server shows, in order.
	Bundles []string
	// Approver is who decides; empty makes the form ask for a name.
	Approver string
	// StateDir is the state directory whose approval ledger records a
	// decision (ApproveBundle); default runner.DefaultStateDir.
	StateDir string
	// AllowSelfApproval lets a bundle's author approve it, as [approvals]
	// allow_self_approval does for crystallize approve.
	AllowSelfApproval bool
	// Inbox, when set, serves /inbox.
	Inbox Inbox
	// Now is the clock decisions are recorded with; default time.Now.
	Now func() time.Time
}

// Server serves the review pages of a set of bundles and the inbox.
type Server struct {
	opts  Options
	token string
	hosts map[string]bool
	// anyIPHost admits a Host that is an IP literal with the server's
	// port: a server bound to every interface is reached under its
	// addresses, and an IP literal cannot be rebound by DNS.
	anyIPHost bool
	port      string
}

// ErrDecision is returned (wrapped, with the reason) by Decide for a
// decision it refuses before recording anything.
var ErrDecision = errors.New("decision refused")

// Decide records a decision on the bundle in dir exactly as crystallize
// approve does (ApproveBundle: candidate.json's approval history
// and the state directory's ledger), after validating the bundle again:
// a bundle with a validation problem (a stale approval, a changed file)
// is refused with its codes, a blocked one by bundle.Approve with its
// reasons, an approval by the bundle's author unless allowed. A
// decision needs an actor and a reason.
func Decide(dir, stateDir string, a bundle.Approval) (*bundle.Manifest, error) {
	if strings.TrimSpace(a.Actor) == "" {
		return nil, fmt.Errorf("%w: no approver: say who decides", ErrDecision)
	}
	if strings.TrimSpace(a.Reason) == "" {
		return nil, fmt.Errorf("%w: no reason: a decision says why", ErrDecision)
	}
	if v := bundle.Validate(dir); !v.OK {
		return nil, fmt.Errorf("%w: %s does not validate: %s", ErrDecision, dir, problemCodes(v.Problems))
	}
	if stateDir == "" {
		stateDir = runner.DefaultStateDir
	}
	return ApproveBundle(dir, stateDir, a)
}

// Find lists the bundles among paths: a path that holds a candidate.json
// is a bundle, and a directory that does not is searched one level down
// (mine --bundles DIR writes DIR/<name>/), in name order. A path that is
// neither, or a directory with no bundle, is an error naming it.
func Find(paths []string) ([]string, error) {
	var out []string
	var errs []string
	for _, p := range paths {
		if isBundle(p) {
			out = append(out, p)
			continue
		}
		entries, err := os.ReadDir(p)
		if err != nil {
			errs = append(errs, fmt.Sprintf("%s: %v", p, err))
			continue
		}
		n := 0
		names := make([]string, 0, len(entries))
		for _, e := range entries {
			if e.IsDir() {
				names = append(names, e.Name())
			}
		}
		sort.Strings(names)
		for _, name := range names {
			if sub := filepath.Join(p, name); isBundle(sub) {
				out = append(out, sub)
				n++
			}
		}
		if n == 0 {
			errs = append(errs, fmt.Sprintf("%s: no %s in it or in its subdirectories", p, bundle.ManifestFile))
		}
	}
	if len(errs) > 0 {
		return nil, errors.New(strings.Join(errs, "\n"))
	}
	return out, nil
}

func isBundle(dir string) bool {
	st, err := os.Stat(filepath.Join(dir, bundle.ManifestFile))
	return err == nil && st.Mode().IsRegular()
}

// NewServer returns a server for opts with a fresh random token.
func NewServer(opts Options) (*Server, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, fmt.Errorf("making the review token: %w", err)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.StateDir == "" {
		opts.StateDir = runner.DefaultStateDir
	}
	return &Server{opts: opts, token: hex.EncodeToString(b[:])}, nil
}

// Token is the server's per-process token, which every state-changing
// request must carry (form field "token" or header X-Review-Token).
func (s *Server) Token() string { return s.token }

// IsLoopback reports whether addr (host:port) binds only the loopback
// interface: "localhost", 127.0.0.0/8 or ::1.
func IsLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Handler returns the server's handler for requests to the listener
// bound at addr (the address it actually listens on, with its port): the
// Host header of every request must name that address, or the loopback
// names of its port.
func (s *Server) Handler(addr string) http.Handler {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		host, port = addr, ""
	}
	s.port = port
	s.hosts = map[string]bool{addr: true}
	if ip := net.ParseIP(host); (ip != nil && ip.IsLoopback()) || host == "localhost" {
		for _, h := range []string{"localhost", "127.0.0.1", "[::1]"} {
			s.hosts[h+":"+port] = true
		}
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		s.anyIPHost = true
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.index)
	mux.HandleFunc("GET /assets/review.css", asset("text/css; charset=utf-8", pageCSS))
	mux.HandleFunc("GET /assets/review.js", asset("text/javascript; charset=utf-8", pageJS))
	mux.HandleFunc("GET /b/{n}/{$}", s.bundlePage)
	mux.HandleFunc("POST /b/{n}/decide", s.decide)
	mux.HandleFunc("GET /inbox", s.inbox)
	mux.HandleFunc("POST /inbox/{id}", s.answer)
	return s.guard(mux)
}

// guard applies the checks every request passes before it is routed:
// the Host must be the server's (421 otherwise, which is what a page
// served under another name after a DNS rebinding gets), every response
// carries the security headers, and a request that could change state
// (anything but GET and HEAD) must come from no other origin (403) and
// carry the token (403).
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", CSP)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		// same-origin, not no-referrer: under no-referrer a browser
		// sends "Origin: null" with the page's own form posts, which the
		// Origin check must refuse like any opaque origin.
		h.Set("Referrer-Policy", "same-origin")
		h.Set("Cache-Control", "no-store")
		if !s.hostAllowed(r.Host) {
			http.Error(w, "misdirected request: this server answers only to its own address", http.StatusMisdirectedRequest)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			if o := r.Header.Get("Origin"); o != "" && !s.originAllowed(o) {
				http.Error(w, "forbidden: cross-origin request", http.StatusForbidden)
				return
			}
			if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" && site != "none" {
				http.Error(w, "forbidden: cross-site request", http.StatusForbidden)
				return
			}
			tok := r.Header.Get("X-Review-Token")
			if tok == "" {
				if err := r.ParseForm(); err == nil {
					tok = r.PostForm.Get("token")
				}
			}
			if subtle.ConstantTimeCompare([]byte(tok), []byte(s.token)) != 1 {
				http.Error(w, "forbidden: missing or wrong token; reload the page", http.StatusForbidden)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

func (s *Server) hostAllowed(host string) bool {
	if s.hosts[host] {
		return true
	}
	if s.anyIPHost {
		h, p, err := net.SplitHostPort(host)
		return err == nil && p == s.port && net.ParseIP(h) != nil
	}
	return false
}

func (s *Server) originAllowed(origin string) bool {
	u, err := url.Parse(origin)
	if err != nil || u.Scheme != "http" || u.Path != "" {
		return false
	}
	return s.hostAllowed(u.Host)
}

func asset(ctype string, body []byte) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", ctype)
		w.Write(body)
	}
}

func (s *Server) view() view {
	v := view{Token: s.token, Approver: s.opts.Approver}
	if s.opts.Inbox != nil {
		if items, err := s.opts.Inbox.Pending(context.Background()); err == nil {
			v.Pending = len(items)
		}
	}
	return v
}

func (s *Server) write(w http.ResponseWriter, status int, name string, v view) {
	var buf bytes.Buffer
	if err := tmpl.ExecuteTemplate(&buf, name, v); err != nil {
		http.Error(w, "rendering the page: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

func (s *Server) index(w http.ResponseWriter, r *http.Request) {
	v := s.view()
	v.Title = "bundles"
	for i, dir := range s.opts.Bundles {
		p := &Page{Dir: dir, Name: filepath.Base(filepath.Clean(dir))}
		if b, err := bundle.Read(dir); err != nil {
			p.Err = err.Error()
		} else {
			p.Manifest = b.Manifest
			p.Status = bundle.Ready(dir).Status
		}
		v.Bundles = append(v.Bundles, listed{Index: i, Page: p})
	}
	s.write(w, http.StatusOK, "index", v)
}

// bundleAt returns the index and directory of the bundle {n}.
func (s *Server) bundleAt(r *http.Request) (int, string, bool) {
	n, err := strconv.Atoi(r.PathValue("n"))
	if err != nil || n < 0 || n >= len(s.opts.Bundles) {
		return 0, "", false
	}
	return n, s.opts.Bundles[n], true
}

func (s *Server) bundlePage(w http.ResponseWriter, r *http.Request) {
	n, dir, ok := s.bundleAt(r)
	if !ok {
		http.NotFound(w, r)
		return
	}
	s.renderBundle(w, r, http.StatusOK, n, dir, "")
}

func (s *Server) renderBundle(w http.ResponseWriter, r *http.Request, status, n int, dir, flash string) {
	p := Load(dir)
	if rows := r.URL.Query().Get("rows"); rows != "" && p.Manifest != nil {
		if k, err := strconv.Atoi(rows); err == nil {
			p.Matrix = matrixWindow(p.Manifest, p.Candidate, readFixtures(dir, p.Manifest), k, false)
		}
	}
	p.Previous = previousVersion(p, s.opts.Bundles)
	if p.Previous == nil {
		p.Previous = archivedVersion(p, s.opts.StateDir)
	}
	v := s.view()
	v.Page, v.Index, v.Title, v.Flash = p, n, p.Name, flash
	if p.Manifest != nil && !s.opts.AllowSelfApproval && bundle.IsAuthor(p.Manifest, s.opts.Approver) {
		v.SelfApproval = s.opts.Approver + " wrote this bundle: another person must approve it (you may reject it)"
	}
	s.write(w, status, "bundle", v)
}

// decide records the form's decision. A refused decision renders the
// page again with the reason and status 409; a recorded one redirects
// to the page (POST, then GET), which shows it in the history.
func (s *Server) decide(w http.ResponseWriter, r *http.Request) {
	n, dir, ok := s.bundleAt(r)
	if !ok {
		http.NotFound(w, r)
		return
	}
	actor := s.opts.Approver
	if actor == "" {
		actor = r.PostForm.Get("approver")
	}
	var reject bool
	switch r.PostForm.Get("decision") {
	case "approve":
	case "reject":
		reject = true
	default:
		http.Error(w, "bad request: decision must be approve or reject", http.StatusBadRequest)
		return
	}
	a := bundle.Approval{Actor: actor, Reason: r.PostForm.Get("reason"), Reject: reject,
		At: s.opts.Now().UTC().Format(time.RFC3339), AllowSelfApproval: s.opts.AllowSelfApproval}
	if _, err := Decide(dir, s.opts.StateDir, a); err != nil {
		s.renderBundle(w, r, http.StatusConflict, n, dir, "Refused: "+err.Error())
		return
	}
	http.Redirect(w, r, fmt.Sprintf("/b/%d/#status", n), http.StatusSeeOther)
}

func (s *Server) inbox(w http.ResponseWriter, r *http.Request) {
	s.renderInbox(w, http.StatusOK, "")
}

func (s *Server) renderInbox(w http.ResponseWriter, status int, flash string) {
	v := s.view()
	v.Title, v.Flash = "inbox", flash
	if s.opts.Inbox == nil {
		v.InboxErr = "no inbox: the server was started without a registry"
	} else if items, err := s.opts.Inbox.Pending(context.Background()); err != nil {
		v.InboxErr = err.Error()
	} else {
		v.Items = items
		v.Pending = len(items)
	}
	s.write(w, status, "inbox", v)
}

// answer answers an inbox item through the Inbox, with the form's
// option or approve/reject/dismiss and reason, and shows what the
// resumed run printed.
func (s *Server) answer(w http.ResponseWriter, r *http.Request) {
	if s.opts.Inbox == nil {
		http.NotFound(w, r)
		return
	}
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		http.NotFound(w, r)
		return
	}
	a := registry.Answer{Decide: r.PostForm.Get("decide"), Reason: r.PostForm.Get("reason")}
	switch r.PostForm.Get("answer") {
	case "approve":
		a.Approve = true
	case "reject":
		a.Reject = true
	case "dismiss":
		a.Dismiss = true
	}
	// A run resumed for the page finishes even if the browser goes away.
	out, err := s.opts.Inbox.Answer(context.WithoutCancel(r.Context()), id, a)
	if err != nil {
		s.renderInbox(w, http.StatusConflict, fmt.Sprintf("#%d: %v\n%s", id, err, out))
		return
	}
	s.renderInbox(w, http.StatusOK, fmt.Sprintf("#%d answered (%s).\n%s", id, a, out))
}
