package cli

import (
	"bytes"
	"context"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/rogpeppe/go-internal/txtar"

	"github.com/crystallize-dev/crystallize/internal/bundle"
	"github.com/crystallize-dev/crystallize/internal/review"
	"github.com/crystallize-dev/crystallize/internal/store"
)

// The review page in a real browser: Debian's chromium, headless, driven
// by chromedp. Without chromium the tests skip, unless
// CRYSTALLIZE_REQUIRE_BROWSER=1 (CI), where they fail. Screenshots go to
// $CRYSTALLIZE_ARTIFACTS/review when it is set, else to the test's
// temporary directory, and the log names them.

// browser starts a headless chromium for t and returns its context.
func browser(t *testing.T) context.Context {
	t.Helper()
	path := "/usr/bin/chromium"
	if _, err := os.Stat(path); err != nil {
		p, lerr := exec.LookPath("chromium")
		if lerr != nil {
			if os.Getenv("CRYSTALLIZE_REQUIRE_BROWSER") == "1" {
				t.Fatalf("chromium not found (CRYSTALLIZE_REQUIRE_BROWSER=1): %v", lerr)
			}
			t.Skip("chromium not found; install it (apt-get install chromium) or set CRYSTALLIZE_REQUIRE_BROWSER=1 to make this a failure")
		}
		path = p
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 1000),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	// The first Run starts the browser; its context must not time out.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	tctx, tcancel := context.WithTimeout(ctx, 2*time.Minute)
	t.Cleanup(tcancel)
	return tctx
}

// screenshot saves a full-page screenshot as name.png among the test's
// artifacts.
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	dir := os.Getenv("CRYSTALLIZE_ARTIFACTS")
	if dir == "" {
		dir = t.TempDir()
	}
	dir = filepath.Join(dir, "review")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	file := filepath.Join(dir, name+".png")
	if err := os.WriteFile(file, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", file)
}

func eval[T any](t *testing.T, ctx context.Context, js string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	if err != nil {
		t.Fatalf("evaluating %s: %v", js, err)
	}
	return v
}

// serveReview serves dirs as crystallize review does, deciding as
// approver, with the inbox of the registry db.
func serveReview(t *testing.T, e *env, approver, db string, dirs ...string) string {
	t.Helper()
	s, err := review.NewServer(review.Options{Bundles: dirs, Approver: approver, StateDir: ".crystallize", Inbox: &cliInbox{e: e, db: db},
		Now: func() time.Time { return time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC) }})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewUnstartedServer(nil)
	ts.Config.Handler = s.Handler(ts.Listener.Addr().String())
	ts.Start()
	t.Cleanup(ts.Close)
	return ts.URL
}

// unpack writes the files of the txtar script into the current directory.
func unpack(t *testing.T, script string, keep func(name string) bool) {
	t.Helper()
	a, err := txtar.ParseFile(script)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range a.Files {
		if !keep(f.Name) {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(f.Name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f.Name, f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestReviewBrowserApprove mines the docs procedure twice, once with a
// held-out trace whose receipt drifted and once with one that passes,
// and reviews both in Chromium: the graph, the matrix with the divergent
// receipts cell at its sha256 path, the refusal of the blocked bundle,
// and an approval through the button that crystallize validate then sees.
func TestReviewBrowserApprove(t *testing.T) {
	script, err := filepath.Abs("testdata/script/mine_drift.txtar")
	if err != nil {
		t.Fatal(err)
	}
	ctx := browser(t)
	t.Chdir(t.TempDir())
	unpack(t, script, func(string) bool { return true })
	e, stdout, stderr := e2eEnv()
	for _, held := range []string{"drift", "pass"} {
		run(context.Background(), e, []string{"mine", "--from", "runs", "--shadow-from", held, "--min-examples", "3", "--bundle", "bundles/" + held, "--author", "alice@example.com"})
	}
	dirs, err := review.Find([]string{"bundles"})
	if err != nil || len(dirs) != 2 {
		t.Fatalf("bundles: %v %v\n%s%s", dirs, err, stdout, stderr)
	}
	url := serveReview(t, e, "bob@example.com", store.DefaultPath, dirs...)

	// The drifted bundle.
	if err := chromedp.Do(ctx, chromedp.Navigate(url+"/b/0/"), chromedp.WaitVisible(chromedp.CSS("#matrix"))); err != nil {
		t.Fatal(err)
	}
	if n := eval[int](t, ctx, `document.querySelectorAll("svg.graph a.node").length`); n != 2 {
		t.Errorf("graph nodes = %d, want 2", n)
	}
	if desc := eval[string](t, ctx, `document.querySelector("svg.graph").getAttribute("role") + ": " + document.getElementById("graph-desc").textContent`); !strings.HasPrefix(desc, "img: 2 steps: 2 deterministic") {
		t.Errorf("graph text alternative = %q", desc)
	}
	if step := eval[string](t, ctx, `(function(){ document.querySelector("svg.graph a.node").focus(); return document.activeElement.getAttribute("data-step"); })()`); step != "1" {
		t.Errorf("keyboard focus on the first graph node: active element's step = %q, want 1", step)
	}
	first := eval[string](t, ctx, `document.querySelector("table.matrix tbody tr th").textContent`)
	cell := eval[string](t, ctx, `document.querySelector("table.matrix tbody tr td.cell.receipts.divergent summary").textContent`)
	if first != "docs_5" || !strings.Contains(cell, "/effect_receipts/0/sha256") {
		t.Errorf("first matrix row %q, its divergent receipts cell %q; want docs_5 marked at /effect_receipts/0/sha256", first, cell)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("table.matrix td.cell.receipts.divergent summary")), chromedp.WaitVisible(chromedp.CSS("table.matrix td.cell.receipts.divergent .detail"))); err != nil {
		t.Fatal(err)
	}
	if detail := eval[string](t, ctx, `document.querySelector("table.matrix td.cell.receipts.divergent .detail").innerText`); !strings.Contains(detail, `trace: "sha-site-other"`) || !strings.Contains(detail, `expected: "sha-site-stable"`) {
		t.Errorf("divergent cell's detail = %q, want both receipt hashes", detail)
	}
	screenshot(t, ctx, "drift")
	if refusal := eval[string](t, ctx, `document.getElementById("refusal").textContent + " disabled=" + document.getElementById("approve").disabled`); !strings.Contains(refusal, "promotion is blocked: candidate_rejected") || !strings.HasSuffix(refusal, "disabled=true") {
		t.Errorf("blocked bundle's decision form: %q", refusal)
	}

	// The passing bundle, approved through the button.
	if err := chromedp.Do(ctx, chromedp.Navigate(url+"/b/1/"), chromedp.WaitVisible(chromedp.CSS("#decide-form")),
		chromedp.SendKeys(chromedp.CSS("#reason"), "read the workflow and the matrix"),
		chromedp.Click(chromedp.CSS("#approve")),
		chromedp.WaitVisible(chromedp.CSS("table#approval-history"))); err != nil {
		t.Fatal(err)
	}
	if row := eval[string](t, ctx, `document.querySelector("table#approval-history tbody tr").innerText`); !strings.Contains(row, "bob@example.com") || !strings.Contains(row, "approved") || !strings.Contains(row, "read the workflow and the matrix") {
		t.Errorf("approval history row = %q", row)
	}
	if st := eval[string](t, ctx, `document.getElementById("status-value").textContent`); st != "ready" {
		t.Errorf("status after approval = %q, want ready", st)
	}
	screenshot(t, ctx, "approved")

	// Printed, the page keeps its content and drops its forms and
	// navigation.
	if _, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{Media: "print"}); err != nil {
		t.Fatal(err)
	}
	if v := eval[string](t, ctx, `[getComputedStyle(document.getElementById("decide")).display, getComputedStyle(document.getElementById("matrix")).display].join(",")`); v != "none,block" {
		t.Errorf("print media: decide and matrix display = %s, want none,block", v)
	}
	pdf, err := chromedp.Run(ctx, chromedp.PrintToPDF())
	if err != nil || !bytes.HasPrefix(pdf, []byte("%PDF")) {
		t.Errorf("printing the page: %v (%d bytes)", err, len(pdf))
	}
	if _, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{}); err != nil {
		t.Fatal(err)
	}
	stdout.Reset()
	if code := run(context.Background(), e, []string{"validate", dirs[1]}); code != exitOK || !strings.Contains(stdout.String(), "OK") {
		t.Errorf("crystallize validate after the page's approval: exit %d\n%s%s", code, stdout, stderr)
	}
	if r := bundle.Ready(dirs[1]); !r.OK() {
		t.Errorf("bundle.Ready after the page's approval: %v", r.Err())
	}
	if _, err := os.Stat(filepath.Join(".crystallize", "approvals.jsonl")); err != nil {
		t.Errorf("approval ledger: %v", err)
	}
}

// TestReviewBrowserHostile loads a bundle whose trace ids, step names and
// parameter values carry script tags, quotes and event handlers, served
// and exported: the flag their script would set stays unset, and the
// text shows as text.
func TestReviewBrowserHostile(t *testing.T) {
	src, err := filepath.Abs("../review/testdata/hostile")
	if err != nil {
		t.Fatal(err)
	}
	ctx := browser(t)
	t.Chdir(t.TempDir())
	if err := os.CopyFS("hostile", os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	e, _, _ := e2eEnv()
	url := serveReview(t, e, "bob@example.com", store.DefaultPath, "hostile")
	if err := chromedp.Do(ctx, chromedp.Navigate(url+"/b/0/"), chromedp.WaitVisible(chromedp.CSS("#matrix"))); err != nil {
		t.Fatal(err)
	}
	// Open every cell, so anything hidden in a detail is in the DOM and
	// laid out too.
	eval[bool](t, ctx, `(function(){ document.querySelectorAll("details").forEach(function(d){ d.open = true; }); return true; })()`)
	time.Sleep(200 * time.Millisecond)
	if v := eval[string](t, ctx, `String(window.__pwned)`); v != "undefined" {
		t.Errorf("window.__pwned = %s: a script from the bundle ran", v)
	}
	if n := eval[int](t, ctx, `document.querySelectorAll("img, script:not([src='/assets/review.js']), [onerror]").length`); n != 0 {
		t.Errorf("%d elements from the bundle's payloads are in the DOM", n)
	}
	if !eval[bool](t, ctx, `document.body.innerText.includes("<script>window.__pwned=1</script>")`) {
		t.Error("the step name's script tag is not shown as text")
	}
	screenshot(t, ctx, "hostile")

	e2, _, stderr := e2eEnv()
	if code := run(context.Background(), e2, []string{"review", "--static", "hostile.html", "hostile"}); code != exitOK {
		t.Fatalf("review --static: exit %d: %s", code, stderr)
	}
	abs, _ := filepath.Abs("hostile.html")
	if err := chromedp.Do(ctx, chromedp.Navigate("file://"+abs), chromedp.WaitVisible(chromedp.CSS("#matrix"))); err != nil {
		t.Fatal(err)
	}
	eval[bool](t, ctx, `(function(){ document.querySelectorAll("details").forEach(function(d){ d.open = true; }); return true; })()`)
	if v := eval[string](t, ctx, `String(window.__pwned) + " " + document.querySelectorAll("script, img, form").length`); v != "undefined 0" {
		t.Errorf("static page: window.__pwned and script/img/form elements = %s, want undefined 0", v)
	}
	// The inline style applies: the policy names it by hash.
	if bg := eval[string](t, ctx, `getComputedStyle(document.querySelector(".status")).fontWeight`); bg != "600" {
		t.Errorf("static page's style is not applied (font-weight %q); its hash in the policy does not match", bg)
	}
}

// TestReviewBrowserInbox suspends a run on a decision and answers it from
// the inbox page: the run resumes with the option chosen and completes,
// as with crystallize session inbox answer.
func TestReviewBrowserInbox(t *testing.T) {
	script, err := filepath.Abs("testdata/script/sessions_decision.txtar")
	if err != nil {
		t.Fatal(err)
	}
	// A bundle to list next to the inbox; the test does not decide on it.
	pass, err := filepath.Abs("../review/testdata/pass")
	if err != nil {
		t.Fatal(err)
	}
	ctx := browser(t)
	t.Chdir(t.TempDir())
	unpack(t, script, func(name string) bool { return name == "crystallize.toml" || name == "wf.star" })
	e, stdout, stderr := e2eEnv()
	if code := run(context.Background(), e, []string{"run", "wf.star", "--param", "service=api"}); code == exitOK || !strings.Contains(stdout.String(), "pending decision strategy") {
		t.Fatalf("run: exit %d, want a pending decision\n%s%s", code, stdout, stderr)
	}
	url := serveReview(t, e, "bob@example.com", store.DefaultPath, pass)
	if err := chromedp.Do(ctx, chromedp.Navigate(url+"/inbox"), chromedp.WaitVisible(chromedp.CSS("li.item"))); err != nil {
		t.Fatal(err)
	}
	if text := eval[string](t, ctx, `document.querySelector("li.item").innerText`); !strings.Contains(text, "[!decision_needed]") || !strings.Contains(text, "Which auth strategy?") {
		t.Errorf("inbox item = %q", text)
	}
	screenshot(t, ctx, "inbox")
	if err := chromedp.Do(ctx, chromedp.SendKeys(chromedp.CSS("li.item input.reason"), "sessions expire"),
		chromedp.Click(chromedp.CSS(`li.item button[value="OAuth"]`)),
		chromedp.WaitVisible(chromedp.CSS("pre.flash"))); err != nil {
		t.Fatal(err)
	}
	flash := eval[string](t, ctx, `document.querySelector("pre.flash").textContent`)
	if !strings.Contains(flash, "answered (decide OAuth)") || !strings.Contains(flash, ": completed") {
		t.Errorf("answer's result = %q, want the resumed run completed", flash)
	}
	// The decision is gone; the run's closing notification is new.
	if items := eval[string](t, ctx, `Array.from(document.querySelectorAll("li.item p.text")).map(function(p){ return p.textContent; }).join("|")`); items != "Implemented auth with OAuth" {
		t.Errorf("inbox after the answer = %q, want only the run's notification", items)
	}
	screenshot(t, ctx, "inbox-answered")
	marks, err := os.ReadFile("marks.txt")
	if err != nil || string(marks) != "prepared api\nimplemented OAuth\n" {
		t.Errorf("marks.txt = %q, %v; want the run resumed with OAuth", marks, err)
	}
	stdout.Reset()
	run(context.Background(), e, []string{"session", "inbox", "--all"})
	if !strings.Contains(stdout.String(), "→ decide OAuth") {
		t.Errorf("session inbox --all:\n%s", stdout)
	}
}
