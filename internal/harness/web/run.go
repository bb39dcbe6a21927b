package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/crystallize-dev/crystallize/internal/atomicfile"
	"github.com/crystallize-dev/crystallize/internal/textdiff"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// ErrNoBrowser is returned by FindBrowser when no Chromium is installed.
var ErrNoBrowser = errors.New("no Chromium browser found (install the chromium package, or name one with --browser)")

// browserNames are the executables FindBrowser looks for on PATH.
var browserNames = []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome", "headless_shell"}

// FindBrowser returns the browser executable: exe when set, else the
// first of the usual Chromium names on PATH.
func FindBrowser(exe string) (string, error) {
	if exe != "" {
		p, err := exec.LookPath(exe)
		if err != nil {
			return "", fmt.Errorf("browser %s: %w", exe, ErrNoBrowser)
		}
		return p, nil
	}
	for _, n := range browserNames {
		if p, err := exec.LookPath(n); err == nil {
			return p, nil
		}
	}
	return "", ErrNoBrowser
}

// Status is a check's or a run's outcome.
type Status string

// Statuses. NotEvidence is a check that could not be made: it is never a
// pass, and whether it blocks is the caller's policy (CI mode does).
const (
	Passed      Status = "passed"
	Failed      Status = "failed"
	NotEvidence Status = "not_evidence"
)

// Check is one outcome of a scenario run.
type Check struct {
	// Step is the 1-based step, or 0 for the first page load.
	Step    int    `json:"step"`
	Kind    string `json:"kind"`
	Name    string `json:"name"`
	Status  Status `json:"status"`
	Message string `json:"message,omitempty"`
	// Violations are an audit's findings.
	Violations []Violation `json:"violations,omitempty"`
	// Evidence are files in the evidence directory that show the check:
	// the screen a semantic check read, a screenshot and its diff.
	Evidence []string `json:"evidence,omitempty"`
}

// Report is a scenario run. Status is Failed when a check failed, else
// NotEvidence when a check could not be made or none was made, else
// Passed.
type Report struct {
	Scenario string  `json:"scenario"`
	URL      string  `json:"url"`
	Status   Status  `json:"status"`
	Checks   []Check `json:"checks"`
	// Trace is the recording of the run in the evidence directory.
	Trace string `json:"trace,omitempty"`
}

// Recording is the trace of a run: every action with the screen after
// it, and what the page wrote to the console and failed to load.
type Recording struct {
	Scenario string `json:"scenario"`
	// Serve and Start are the scenario's serve and url, so a replay
	// opens the same page on whatever port serves it then; URL is where
	// it was opened this time.
	Serve  string  `json:"serve,omitempty"`
	Start  string  `json:"start"`
	URL    string  `json:"url"`
	Events []Event `json:"events"`
}

// Event is one step of a recording.
type Event struct {
	Step   int    `json:"step"`
	Action string `json:"action"`
	Detail string `json:"detail,omitempty"`
	// The action as a step replays it: the target of a click or type,
	// the typed text, the key, the URL of a navigate (as the scenario
	// gave it; empty for the first page).
	Target   *Target `json:"target,omitempty"`
	Text     string  `json:"text,omitempty"`
	Key      string  `json:"key,omitempty"`
	Navigate string  `json:"navigate,omitempty"`
	// Screen is the accessibility tree after the action (Screen.Text).
	Screen string `json:"screen,omitempty"`
	// Timing is the page load's measurement, for a load.
	Timing *Timing `json:"timing,omitempty"`
	// Errors are console errors, uncaught exceptions and failed requests
	// seen since the previous event: the page's stderr.
	Errors []string `json:"errors,omitempty"`
}

// Options configures Run.
type Options struct {
	// Root is the repository root: Serve and the baselines are under it.
	Root string
	// EvidenceDir receives the trace, screenshots, diff images and the
	// screens of failed checks. It is created.
	EvidenceDir string
	// BaselineDir holds the scenario's screenshot baselines; "" is
	// Root/harness/web/baselines/<scenario name>.
	BaselineDir string
	// UpdateBaselines records each screenshot as its new baseline. A
	// recorded baseline is not evidence: nothing was compared.
	UpdateBaselines bool
	// Browser is the Chromium executable; "" finds one (FindBrowser).
	Browser string
	// StepTimeout bounds how long a step waits for its target or its
	// expectation; 0 is 5 seconds. A step's timeoutMs overrides it.
	StepTimeout time.Duration
	// ServerTimeout bounds the wait for the first page of a server the
	// scenario does not serve itself (a dev server the gate started);
	// 0 is 60 seconds.
	ServerTimeout time.Duration
}

// BaselinesDir is where a scenario's baselines are, under the root.
const BaselinesDir = "harness/web/baselines"

// Run runs the scenario in a fresh headless Chromium and writes its
// evidence. The error is for a run that could not take place (no
// evidence directory); a browser that is missing or fails to start
// gives a report whose status is NotEvidence.
func Run(ctx context.Context, s *Scenario, opts Options) (*Report, error) {
	if opts.EvidenceDir == "" {
		return nil, errors.New("web scenario: no evidence directory")
	}
	if err := os.MkdirAll(opts.EvidenceDir, 0o755); err != nil {
		return nil, fmt.Errorf("evidence directory: %w", err)
	}
	if opts.BaselineDir == "" {
		opts.BaselineDir = filepath.Join(opts.Root, filepath.FromSlash(BaselinesDir), s.Name)
	}
	if opts.StepTimeout == 0 {
		opts.StepTimeout = 5 * time.Second
	}
	r := &runner{s: s, opts: opts, rep: &Report{Scenario: s.Name, Checks: []Check{}}, rec: &Recording{Scenario: s.Name, Serve: s.Serve, Start: s.URL}}
	r.run(ctx)
	r.rep.Status = r.status()
	r.rec.URL = r.rep.URL
	data, _ := json.MarshalIndent(r.rec, "", "  ")
	if err := atomicfile.Write(filepath.Join(opts.EvidenceDir, "trace.json"), append(data, '\n'), 0o644); err != nil {
		return nil, fmt.Errorf("writing trace: %w", err)
	}
	r.rep.Trace = "trace.json"
	return r.rep, nil
}

type runner struct {
	s    *Scenario
	opts Options
	rep  *Report
	rec  *Recording
	base *url.URL

	mu     sync.Mutex
	errors []string
}

func (r *runner) add(c Check) { r.rep.Checks = append(r.rep.Checks, c) }

func (r *runner) status() Status {
	st := Passed
	if len(r.rep.Checks) == 0 {
		st = NotEvidence
	}
	for _, c := range r.rep.Checks {
		switch c.Status {
		case Failed:
			return Failed
		case NotEvidence:
			st = NotEvidence
		}
	}
	return st
}

// pageErrors takes the errors the page reported since the last call.
func (r *runner) pageErrors() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.errors
	r.errors = nil
	return e
}

func (r *runner) listen(ev any) {
	var msg string
	switch ev := ev.(type) {
	case *runtime.EventExceptionThrown:
		d := ev.ExceptionDetails
		msg = "uncaught: " + d.Text
		if d.Exception != nil && d.Exception.Description != "" {
			msg = "uncaught: " + strings.SplitN(d.Exception.Description, "\n", 2)[0]
		}
	case *runtime.EventConsoleAPICalled:
		if ev.Type != runtime.ConsoleAPICalledTypeError {
			return
		}
		var parts []string
		for _, a := range ev.Args {
			if len(a.Value) > 0 {
				parts = append(parts, strings.Trim(string(a.Value), `"`))
			} else {
				parts = append(parts, a.Description)
			}
		}
		msg = "console.error: " + strings.Join(parts, " ")
	case *network.EventLoadingFailed:
		if ev.Canceled {
			return
		}
		msg = "request failed: " + ev.ErrorText
	case *network.EventResponseReceived:
		if ev.Response == nil || ev.Response.Status < 400 {
			return
		}
		msg = fmt.Sprintf("HTTP %d %s", ev.Response.Status, ev.Response.URL)
	default:
		return
	}
	r.mu.Lock()
	r.errors = append(r.errors, msg)
	r.mu.Unlock()
}

func (r *runner) run(ctx context.Context) {
	start, err := r.startURL()
	if err != nil {
		r.add(Check{Kind: "open", Name: r.s.URL, Status: NotEvidence, Message: err.Error()})
		return
	}
	if r.s.Serve != "" {
		srv, err := serveDir(filepath.Join(r.opts.Root, filepath.FromSlash(r.s.Serve)))
		if err != nil {
			r.add(Check{Kind: "open", Name: r.s.URL, Status: NotEvidence, Message: err.Error()})
			return
		}
		defer srv.Close()
		base, _ := url.Parse("http://" + srv.Addr + "/")
		start = base.ResolveReference(start)
	}
	r.base = start
	r.rep.URL = start.String()
	exe, err := FindBrowser(r.opts.Browser)
	if err != nil {
		r.add(Check{Kind: "browser", Name: "chromium", Status: NotEvidence, Message: err.Error()})
		return
	}
	if r.s.Serve == "" {
		if err := waitServer(ctx, start.String(), r.opts.ServerTimeout); err != nil {
			r.add(Check{Kind: "navigate", Name: start.String(), Status: Failed, Message: err.Error()})
			return
		}
	}
	ctx, stop, err := launch(ctx, exe, r.viewport())
	if err != nil {
		r.add(Check{Kind: "browser", Name: exe, Status: NotEvidence, Message: err.Error()})
		return
	}
	defer stop()
	if err := chromedp.Listen(ctx, r.listen); err != nil {
		r.add(Check{Kind: "browser", Name: exe, Status: NotEvidence, Message: err.Error()})
		return
	}
	if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
		r.add(Check{Kind: "browser", Name: exe, Status: NotEvidence, Message: err.Error()})
		return
	}
	if !r.load(ctx, 0, start.String(), "") {
		return
	}
	for i, st := range r.s.Steps {
		if !r.step(ctx, i+1, st) {
			// An action that could not be done leaves the rest of the
			// session meaningless; its failure is the evidence.
			for j := i + 1; j < len(r.s.Steps); j++ {
				r.add(Check{Step: j + 1, Kind: r.s.Steps[j].action, Status: NotEvidence, Message: fmt.Sprintf("not run: step %d failed", i+1)})
			}
			return
		}
	}
}

func (r *runner) viewport() Viewport {
	if r.s.Viewport != nil {
		return *r.s.Viewport
	}
	return DefaultViewport
}

// startURL is the scenario's first page before a served directory's
// address is known.
func (r *runner) startURL() (*url.URL, error) {
	u, err := url.Parse(r.s.URL)
	if err != nil {
		return nil, err
	}
	return u, nil
}

// waitServer waits until u answers an HTTP request, whatever its
// status: a dev server started with the gate takes seconds to listen.
func waitServer(ctx context.Context, u string, timeout time.Duration) error {
	if timeout == 0 {
		timeout = 60 * time.Second
	}
	deadline := time.Now().Add(timeout)
	client := &http.Client{Timeout: 5 * time.Second}
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			return err
		}
		resp, err := client.Do(req)
		if err == nil {
			resp.Body.Close()
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("no answer from %s after %s: %v", u, timeout, err)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// serveDir serves dir over HTTP on a loopback port.
type server struct {
	Addr string
	srv  *http.Server
}

func (s *server) Close() { s.srv.Close() }

func serveDir(dir string) (*server, error) {
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("serve %s: not a directory", dir)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("serve %s: %w", dir, err)
	}
	h, err := staticHandler(dir)
	if err != nil {
		ln.Close()
		return nil, fmt.Errorf("serve %s: %w", dir, err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	return &server{Addr: ln.Addr().String(), srv: srv}, nil
}

// staticHandler serves the files of dir and nothing else: the port is
// open to every local user while the scenario runs, so a symbolic link
// that leads out of dir is not followed (os.Root refuses it) and no
// path with a segment starting with "." is served: .git, .env and the
// tool's own .crystallize state stay unread.
func staticHandler(dir string) (http.Handler, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	files := http.FileServerFS(root.FS())
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		for _, seg := range strings.Split(req.URL.Path, "/") {
			if strings.HasPrefix(seg, ".") {
				http.NotFound(w, req)
				return
			}
		}
		files.ServeHTTP(w, req)
	}), nil
}

// launch starts a headless Chromium with a fresh profile and returns a
// tab's context. The flags keep the browser from reaching the network on
// its own (updates, sync, QUIC probes) and make rendering repeatable: a
// fixed scale factor, sRGB, no scrollbars and no font hinting.
func launch(ctx context.Context, exe string, vp Viewport) (context.Context, func(), error) {
	tmp := browserTemp()
	profile, err := os.MkdirTemp(tmp, "crystallize-chromium-")
	if err != nil {
		return nil, nil, fmt.Errorf("browser profile: %w", err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe),
		chromedp.UserDataDir(profile),
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("font-render-hinting", "none"),
		chromedp.Flag("force-device-scale-factor", "1"),
		chromedp.WindowSize(int(vp.Width), int(vp.Height)),
		chromedp.Env("TMPDIR="+tmp),
	)
	if os.Geteuid() == 0 {
		// Chromium refuses to sandbox itself as root.
		opts = append(opts, chromedp.NoSandbox)
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	tctx, cancelTab := chromedp.NewContext(actx)
	stop := func() {
		cancelTab()
		cancelAlloc()
		os.RemoveAll(profile)
	}
	if err := chromedp.Do(tctx, chromedp.EmulateViewport(vp.Width, vp.Height)); err != nil {
		stop()
		return nil, nil, fmt.Errorf("starting %s: %w", exe, err)
	}
	return tctx, stop, nil
}

// maxSocketDir bounds the temporary directory Chromium gets: its
// singleton socket is TMPDIR/.org.chromium.Chromium.XXXXXX/SingletonSocket,
// and a Unix socket path longer than 107 bytes makes the browser exit at
// start with nothing but "chrome failed to start" to show for it.
const maxSocketDir = 60

// browserTemp is the temporary directory for the browser: the usual one,
// or /tmp when that is too long for Chromium's socket.
func browserTemp() string {
	tmp := os.TempDir()
	if len(tmp) <= maxSocketDir {
		return tmp
	}
	if st, err := os.Stat("/tmp"); err == nil && st.IsDir() {
		return "/tmp"
	}
	return tmp
}

// load navigates to u, records the screen and checks the budgets.
func (r *runner) load(ctx context.Context, step int, u, given string) bool {
	nctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	err := chromedp.Do(nctx, chromedp.Navigate(u))
	cancel()
	if err != nil {
		r.add(Check{Step: step, Kind: "navigate", Name: u, Status: Failed, Message: err.Error()})
		r.rec.Events = append(r.rec.Events, Event{Step: step, Action: "navigate", Detail: u, Navigate: given, Errors: r.pageErrors()})
		return false
	}
	ev := Event{Step: step, Action: "navigate", Detail: u, Navigate: given}
	t, terr := measure(ctx)
	if terr == nil {
		ev.Timing = t
	}
	if b := r.s.Budgets; b != nil {
		measured := t
		if measured == nil {
			measured = &Timing{}
		}
		for _, c := range b.checks(measured) {
			ch := Check{Step: step, Kind: "budget", Name: c.name}
			switch {
			case terr != nil:
				ch.Status, ch.Message = NotEvidence, terr.Error()
			case c.value <= 0:
				ch.Status, ch.Message = NotEvidence, fmt.Sprintf("the browser reported no %s for %s", c.name, u)
			case c.value > c.budget:
				ch.Status, ch.Message = Failed, fmt.Sprintf("%s %.0f %s over budget %.0f %s on %s", c.name, c.value, c.unit, c.budget, c.unit, u)
			default:
				ch.Status, ch.Message = Passed, fmt.Sprintf("%s %.0f %s within budget %.0f %s", c.name, c.value, c.unit, c.budget, c.unit)
			}
			r.add(ch)
		}
	}
	scr, err := snapshot(ctx)
	if err != nil {
		r.add(Check{Step: step, Kind: "navigate", Name: u, Status: NotEvidence, Message: err.Error()})
		return false
	}
	ev.Screen = scr.Text()
	ev.Errors = r.pageErrors()
	r.rec.Events = append(r.rec.Events, ev)
	return true
}

func (r *runner) timeout(st Step) time.Duration {
	if st.TimeoutMS > 0 {
		return time.Duration(st.TimeoutMS) * time.Millisecond
	}
	return r.opts.StepTimeout
}

// step runs one step; false stops the session.
func (r *runner) step(ctx context.Context, i int, st Step) bool {
	switch st.action {
	case "navigate":
		u, err := r.base.Parse(st.Navigate)
		if err != nil {
			r.add(Check{Step: i, Kind: "navigate", Name: st.Navigate, Status: Failed, Message: err.Error()})
			return false
		}
		return r.load(ctx, i, u.String(), st.Navigate)
	case "click", "type":
		t := st.Click
		if st.action == "type" {
			t = st.Type
		}
		n, scr, err := r.waitFor(ctx, *t, r.timeout(st))
		if err == nil {
			err = r.act(ctx, st, n)
		}
		if err != nil {
			ev := r.evidenceScreen(i, scr)
			r.add(Check{Step: i, Kind: st.action, Name: t.String(), Status: Failed, Message: err.Error(), Evidence: ev})
			r.rec.Events = append(r.rec.Events, Event{Step: i, Action: st.action, Detail: t.String(), Target: t, Text: st.Text, Errors: r.pageErrors()})
			return false
		}
		return r.record(ctx, Event{Step: i, Action: st.action, Detail: t.String(), Target: t, Text: st.Text})
	case "press":
		if err := chromedp.Do(ctx, chromedp.KeyEvent(keyOf[st.Press])); err != nil {
			r.add(Check{Step: i, Kind: "press", Name: st.Press, Status: Failed, Message: err.Error()})
			return false
		}
		return r.record(ctx, Event{Step: i, Action: "press", Detail: st.Press, Key: st.Press})
	case "expect", "absent":
		r.expect(ctx, i, st)
		return true
	case "screen":
		r.screen(ctx, i, st)
		return true
	case "audit":
		scr, err := snapshot(ctx)
		var list []Violation
		if err == nil {
			list, err = audit(ctx, scr, st.Audit.Rules)
		}
		c := Check{Step: i, Kind: "audit", Name: strings.Join(orAll(st.Audit.Rules), ","), Violations: list}
		switch {
		case err != nil:
			c.Status, c.Message = NotEvidence, err.Error()
		case len(list) > 0:
			c.Status, c.Message = Failed, fmt.Sprintf("%d accessibility violations", len(list))
			c.Evidence = r.evidenceScreen(i, scr)
		default:
			c.Status, c.Message = Passed, "no violation of "+strings.Join(orAll(st.Audit.Rules), ", ")
		}
		r.add(c)
		return true
	case "screenshot":
		r.add(r.screenshot(ctx, i, st))
		return true
	}
	return false
}

func orAll(rules []string) []string {
	if len(rules) == 0 {
		return Rules
	}
	return rules
}

var keyOf = map[string]string{"Enter": kb.Enter, "Tab": kb.Tab, "Escape": kb.Escape, "Backspace": kb.Backspace, "Delete": kb.Delete,
	"Space": " ", "ArrowUp": kb.ArrowUp, "ArrowDown": kb.ArrowDown, "ArrowLeft": kb.ArrowLeft, "ArrowRight": kb.ArrowRight,
	"Home": kb.Home, "End": kb.End, "PageUp": kb.PageUp, "PageDown": kb.PageDown}

// record appends an action's event with the screen after it. A page
// that navigates as the result of the action (a form submit) is given
// the time to load before the screen is read.
func (r *runner) record(ctx context.Context, ev Event) bool {
	waitSettled(ctx)
	if scr, err := snapshot(ctx); err == nil {
		ev.Screen = scr.Text()
	}
	ev.Errors = r.pageErrors()
	r.rec.Events = append(r.rec.Events, ev)
	return true
}

// waitSettled waits, briefly, for the document to be complete again.
func waitSettled(ctx context.Context) {
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		state, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.readyState`))
		if err == nil && state == "complete" {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitFor polls the screen until t names exactly one node, as a user
// waits for the page to show what they are about to use.
func (r *runner) waitFor(ctx context.Context, t Target, timeout time.Duration) (*node, *Screen, error) {
	deadline := time.Now().Add(timeout)
	for {
		scr, err := snapshot(ctx)
		if err != nil {
			return nil, nil, err
		}
		n, err := scr.pick(t)
		if err == nil || time.Now().After(deadline) {
			return n, scr, err
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// act dispatches the step's input events at n.
func (r *runner) act(ctx context.Context, st Step, n *node) error {
	if n.Backend == 0 {
		return fmt.Errorf("%s has no element to act on", n.Role)
	}
	if st.action == "type" {
		if _, err := chromedp.Call(ctx, dom.Focus, dom.FocusParams{BackendNodeID: n.Backend}); err != nil {
			return fmt.Errorf("focusing %s %q: %w", n.Role, n.Name, err)
		}
		return chromedp.Do(ctx, chromedp.KeyEvent(st.Text))
	}
	if _, err := chromedp.Call(ctx, dom.ScrollIntoViewIfNeeded, dom.ScrollIntoViewIfNeededParams{BackendNodeID: n.Backend}); err != nil {
		return fmt.Errorf("scrolling to %s %q: %w", n.Role, n.Name, err)
	}
	box, err := chromedp.Call(ctx, dom.GetBoxModel, dom.GetBoxModelParams{BackendNodeID: n.Backend})
	if err != nil || box.Model == nil || len(box.Model.Content) < 8 {
		return fmt.Errorf("%s %q is not rendered: %v", n.Role, n.Name, err)
	}
	q := box.Model.Content
	x, y := (q[0]+q[2]+q[4]+q[6])/4, (q[1]+q[3]+q[5]+q[7])/4
	return chromedp.Do(ctx, chromedp.MouseClickXY(x, y))
}

// expect checks an expect or absent step, polling until it holds or
// the timeout.
func (r *runner) expect(ctx context.Context, i int, st Step) {
	list, want := st.Expect, true
	if st.action == "absent" {
		list, want = st.Absent, false
	}
	var names []string
	for _, t := range list {
		names = append(names, t.String())
	}
	c := Check{Step: i, Kind: st.action, Name: strings.Join(names, "; ")}
	deadline := time.Now().Add(r.timeout(st))
	for {
		scr, err := snapshot(ctx)
		if err != nil {
			c.Status, c.Message = NotEvidence, err.Error()
			break
		}
		var missing []string
		for _, t := range list {
			if (len(scr.find(t)) > 0) != want {
				missing = append(missing, t.String())
			}
		}
		if len(missing) == 0 {
			c.Status = Passed
			break
		}
		if time.Now().After(deadline) {
			verb := "not on the screen"
			if !want {
				verb = "still on the screen"
			}
			c.Status, c.Message = Failed, strings.Join(missing, "; ")+": "+verb
			c.Evidence = r.evidenceScreen(i, scr)
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	r.add(c)
}

// screen checks a screen step: the whole screen, line for line, polling
// until it matches or the timeout; a mismatch keeps the diff.
func (r *runner) screen(ctx context.Context, i int, st Step) {
	c := Check{Step: i, Kind: "screen", Name: "screen"}
	deadline := time.Now().Add(r.timeout(st))
	for {
		scr, err := snapshot(ctx)
		if err != nil {
			c.Status, c.Message = NotEvidence, err.Error()
			break
		}
		got := scr.Text()
		if got == st.Screen {
			c.Status = Passed
			break
		}
		if time.Now().After(deadline) {
			diff := textdiff.Unified("recorded", "replayed", []byte(st.Screen), []byte(got))
			name := fmt.Sprintf("step-%02d.screen.diff", i)
			c.Status, c.Message = Failed, "the screen differs from the recording:\n"+firstChanges(diff, 6)
			if os.WriteFile(filepath.Join(r.opts.EvidenceDir, name), []byte(diff), 0o644) == nil {
				c.Evidence = []string{name}
			}
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	r.add(c)
}

// firstChanges are the first n changed lines of a unified diff.
func firstChanges(diff string, n int) string {
	var out []string
	for _, l := range strings.Split(diff, "\n") {
		if (strings.HasPrefix(l, "-") || strings.HasPrefix(l, "+")) && !strings.HasPrefix(l, "---") && !strings.HasPrefix(l, "+++") {
			out = append(out, l)
			if len(out) == n {
				break
			}
		}
	}
	return strings.Join(out, "\n")
}

// Replay is the scenario that replays a recording: its actions in order,
// each followed by a screen step that expects the screen the recording
// saw after it. A replay that passes is the same session, as a user of
// a screen reader would hear it; one that fails shows where it diverged.
func Replay(rec *Recording) (*Scenario, error) {
	if len(rec.Events) == 0 || rec.Events[0].Navigate != "" {
		return nil, errors.New("recording: no first page load")
	}
	s := &Scenario{Name: rec.Scenario, Serve: rec.Serve, URL: rec.Start}
	for i, ev := range rec.Events {
		var st Step
		switch {
		case i == 0:
		case ev.Action == "navigate" && ev.Navigate != "":
			st.Navigate = ev.Navigate
		case ev.Action == "click" && ev.Target != nil:
			st.Click = ev.Target
		case ev.Action == "type" && ev.Target != nil:
			st.Type, st.Text = ev.Target, ev.Text
		case ev.Action == "press" && ev.Key != "":
			st.Press = ev.Key
		default:
			return nil, fmt.Errorf("recording: events[%d]: %s cannot be replayed", i, ev.Action)
		}
		if i > 0 {
			s.Steps = append(s.Steps, st)
		}
		if ev.Screen == "" {
			return nil, fmt.Errorf("recording: events[%d]: no screen after %s; a failed run is not a recording", i, ev.Action)
		}
		s.Steps = append(s.Steps, Step{Screen: ev.Screen})
	}
	// The steps are checked as a scenario file's would be.
	data, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	return ParseScenario(data, "recording")
}

// LoadRecording reads a trace.json.
func LoadRecording(file string) (*Recording, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	if _, err := trace.ParseJSON(data, file, 1); err != nil {
		return nil, err
	}
	var rec Recording
	if err := json.Unmarshal(data, &rec); err != nil {
		return nil, fmt.Errorf("%s: decoding recording: %w", file, err)
	}
	return &rec, nil
}

// evidenceScreen writes the screen a failed check read and returns its
// name in the evidence directory.
func (r *runner) evidenceScreen(i int, scr *Screen) []string {
	if scr == nil {
		return nil
	}
	name := fmt.Sprintf("step-%02d.screen.txt", i)
	if err := os.WriteFile(filepath.Join(r.opts.EvidenceDir, name), []byte(scr.Text()), 0o644); err != nil {
		return nil
	}
	return []string{name}
}

// freezeCSS stops what would make two screenshots of one page differ:
// the caret's blink, animations and transitions.
const freezeCSS = `(() => {
  if (document.getElementById('crystallize-freeze')) return true;
  const s = document.createElement('style');
  s.id = 'crystallize-freeze';
  s.textContent = '*, *::before, *::after { caret-color: transparent !important; animation: none !important; transition: none !important; }';
  (document.head || document.documentElement).appendChild(s);
  return true;
})()`

func (r *runner) screenshot(ctx context.Context, i int, st Step) Check {
	c := Check{Step: i, Kind: "screenshot", Name: st.Screenshot}
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](freezeCSS)); err != nil {
		c.Status, c.Message = NotEvidence, err.Error()
		return c
	}
	shot, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		c.Status, c.Message = NotEvidence, "capturing: "+err.Error()
		return c
	}
	actualName := st.Screenshot + ".actual.png"
	if err := os.WriteFile(filepath.Join(r.opts.EvidenceDir, actualName), shot, 0o644); err != nil {
		c.Status, c.Message = NotEvidence, err.Error()
		return c
	}
	c.Evidence = []string{actualName}
	basePath := filepath.Join(r.opts.BaselineDir, st.Screenshot+".png")
	if r.opts.UpdateBaselines {
		err = os.MkdirAll(r.opts.BaselineDir, 0o755)
		if err == nil {
			err = atomicfile.Write(basePath, shot, 0o644)
		}
		if err != nil {
			c.Status, c.Message = NotEvidence, "recording baseline: "+err.Error()
			return c
		}
		c.Status, c.Message = NotEvidence, "baseline recorded at "+basePath+"; nothing compared"
		return c
	}
	base, err := os.ReadFile(basePath)
	if err != nil {
		c.Status, c.Message = NotEvidence, fmt.Sprintf("no baseline %s: review %s and record it with --update-baselines", basePath, actualName)
		return c
	}
	pol := PixelPolicy{}
	if st.Policy != nil {
		pol = *st.Policy
	}
	tol, maxRatio := pol.Tolerance, DefaultMaxDiffRatio
	if tol == 0 {
		tol = DefaultTolerance
	}
	if pol.MaxDiffRatio != nil {
		maxRatio = *pol.MaxDiffRatio
	}
	d, err := ComparePNG(base, shot, tol)
	if err != nil {
		c.Status, c.Message = NotEvidence, err.Error()
		return c
	}
	diffName := st.Screenshot + ".diff.png"
	if err := os.WriteFile(filepath.Join(r.opts.EvidenceDir, diffName), d.Image, 0o644); err != nil {
		c.Status, c.Message = NotEvidence, err.Error()
		return c
	}
	c.Evidence = append(c.Evidence, diffName)
	switch {
	case d.SizeChanged:
		c.Status, c.Message = Failed, fmt.Sprintf("size changed: screenshot %dx%d differs from the baseline's", d.Width, d.Height)
	case d.Ratio > maxRatio:
		c.Status, c.Message = Failed, fmt.Sprintf("%d pixels (%.3f%%) differ beyond tolerance %d; policy allows %.3f%%", d.Differing, 100*d.Ratio, tol, 100*maxRatio)
	default:
		c.Status, c.Message = Passed, fmt.Sprintf("%d pixels (%.3f%%) differ; policy allows %.3f%%", d.Differing, 100*d.Ratio, 100*maxRatio)
	}
	return c
}
