package web

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// needBrowser returns the Chromium to test with. Without one the test is
// skipped, unless CRYSTALLIZE_REQUIRE_BROWSER=1 (CI), where a missing
// browser fails it: a browser test that silently skips proves nothing.
func needBrowser(t *testing.T) string {
	t.Helper()
	exe, err := FindBrowser("")
	if err != nil {
		if os.Getenv("CRYSTALLIZE_REQUIRE_BROWSER") == "1" {
			t.Fatalf("CRYSTALLIZE_REQUIRE_BROWSER=1: %v", err)
		}
		t.Skipf("%v; set CRYSTALLIZE_REQUIRE_BROWSER=1 to make this a failure", err)
	}
	return exe
}

// app serves testdata/app, a slow page for the budgets and a page whose
// heading the test can change between runs.
func app(t *testing.T) (*httptest.Server, *atomic.Value) {
	t.Helper()
	heading := &atomic.Value{}
	heading.Store("Dashboard")
	mux := http.NewServeMux()
	mux.Handle("/", http.FileServer(http.Dir("testdata/app")))
	mux.HandleFunc("/slow.html", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Slow</title></head>
<body><h1>Gallery</h1><img src="/slow.png" alt="A large photo" width="600" height="300"></body></html>`)
	})
	mux.HandleFunc("/slow.png", func(w http.ResponseWriter, r *http.Request) {
		// Large enough to be the largest contentful paint: an upscaled
		// small image counts only at its own size.
		time.Sleep(700 * time.Millisecond)
		img := image.NewRGBA(image.Rect(0, 0, 600, 300))
		for i := range img.Pix {
			img.Pix[i] = byte(i)
		}
		w.Header().Set("Content-Type", "image/png")
		png.Encode(w, img)
	})
	mux.HandleFunc("/dashboard.html", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Dash</title>
<style>body{margin:0;font-family:sans-serif;background:#fff}h1{margin:20px;color:#123;font-size:40px}
.bar{margin:20px;width:300px;height:60px;background:#2a6}</style></head>
<body><h1>%s</h1><div class="bar"></div></body></html>`, heading.Load())
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv, heading
}

func scenario(t *testing.T, text string) *Scenario {
	t.Helper()
	s, err := ParseScenario([]byte(text), "scenario.json")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func run(t *testing.T, s *Scenario, opts Options) *Report {
	t.Helper()
	if opts.EvidenceDir == "" {
		opts.EvidenceDir = t.TempDir()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rep, err := Run(ctx, s, opts)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func checksOf(rep *Report) string {
	var b strings.Builder
	for _, c := range rep.Checks {
		fmt.Fprintf(&b, "  step %d %s %s: %s %s %v\n", c.Step, c.Kind, c.Name, c.Status, c.Message, c.Violations)
	}
	return b.String()
}

// TestReplaySignIn replays a session (type, click, click a link,
// navigate) and checks the accessibility tree after each action, as a
// user of a screen reader would hear it.
func TestReplaySignIn(t *testing.T) {
	exe := needBrowser(t)
	srv, _ := app(t)
	s := scenario(t, `{"name":"sign-in","url":"`+srv.URL+`/index.html","steps":[
	  {"expect":[{"role":"heading","name":"Sign in"},{"role":"textbox","name":"Email"},{"role":"button","name":"Sign in"}]},
	  {"type":{"role":"textbox","name":"Email"},"text":"ada@example.com"},
	  {"expect":[{"role":"textbox","name":"Email","value":"ada@example.com"}]},
	  {"click":{"role":"button","name":"Sign in"}},
	  {"expect":[{"role":"heading","name":"Welcome, ada@example.com"}]},
	  {"absent":[{"role":"button","name":"Sign in"}]},
	  {"click":{"role":"link","name":"About us"}},
	  {"expect":[{"role":"heading","name":"About us"}]},
	  {"navigate":"/index.html"},
	  {"expect":[{"role":"heading","name":"Sign in"}]}
	]}`)
	ev := t.TempDir()
	rep := run(t, s, Options{Browser: exe, EvidenceDir: ev})
	if rep.Status != Passed {
		t.Fatalf("status %s, want passed:\n%s", rep.Status, checksOf(rep))
	}
	data, err := os.ReadFile(filepath.Join(ev, rep.Trace))
	if err != nil {
		t.Fatal(err)
	}
	var rec Recording
	if err := json.Unmarshal(data, &rec); err != nil {
		t.Fatal(err)
	}
	var actions []string
	for _, e := range rec.Events {
		actions = append(actions, e.Action)
	}
	if got, want := strings.Join(actions, ","), "navigate,type,click,click,navigate"; got != want {
		t.Errorf("recorded actions = %s, want %s", got, want)
	}
	// The screen after typing shows the value in the control; the screen
	// after the click shows the new heading and no form.
	if got := rec.Events[1].Screen; !strings.Contains(got, `textbox "Email" value="ada@example.com" required`) {
		t.Errorf("screen after typing lacks the typed value:\n%s", got)
	}
	if got := rec.Events[2].Screen; !strings.Contains(got, `heading "Welcome, ada@example.com" level=2`) || strings.Contains(got, `button "Sign in"`) {
		t.Errorf("screen after the click:\n%s", got)
	}

	// The same session with a wrong expectation fails, and the screen it
	// read is the evidence.
	s = scenario(t, `{"name":"sign-in","url":"`+srv.URL+`/index.html","steps":[
	  {"type":{"role":"textbox","name":"Email"},"text":"ada@example.com"},
	  {"click":{"role":"button","name":"Sign in"}},
	  {"expect":[{"role":"heading","name":"Welcome, bob@example.com"}],"timeoutMs":300},
	  {"click":{"role":"button","name":"Sign out"},"timeoutMs":300},
	  {"expect":[{"role":"heading","name":"Sign in"}]}
	]}`)
	ev = t.TempDir()
	rep = run(t, s, Options{Browser: exe, EvidenceDir: ev})
	if rep.Status != Failed {
		t.Fatalf("status %s, want failed:\n%s", rep.Status, checksOf(rep))
	}
	want := []struct {
		kind   string
		status Status
	}{{"expect", Failed}, {"click", Failed}, {"expect", NotEvidence}}
	if len(rep.Checks) != len(want) {
		t.Fatalf("checks:\n%s", checksOf(rep))
	}
	for i, w := range want {
		if c := rep.Checks[i]; c.Kind != w.kind || c.Status != w.status {
			t.Errorf("check %d = %s %s, want %s %s", i, c.Kind, c.Status, w.kind, w.status)
		}
	}
	if ev0 := rep.Checks[0].Evidence; len(ev0) != 1 {
		t.Fatalf("failed expectation has evidence %v, want the screen", ev0)
	} else if screen, err := os.ReadFile(filepath.Join(ev, ev0[0])); err != nil || !strings.Contains(string(screen), `heading "Welcome, ada@example.com"`) {
		t.Errorf("evidence screen %s: %v\n%s", ev0[0], err, screen)
	}
}

// TestAuditFindsViolations runs the accessibility rules on a page that
// breaks each of them and on one that breaks none.
func TestAuditFindsViolations(t *testing.T) {
	exe := needBrowser(t)
	srv, _ := app(t)
	rep := run(t, scenario(t, `{"name":"about","url":"`+srv.URL+`/about.html","steps":[{"audit":{}}]}`), Options{Browser: exe})
	if rep.Status != Failed || len(rep.Checks) != 1 {
		t.Fatalf("status %s, want failed:\n%s", rep.Status, checksOf(rep))
	}
	var got []string
	for _, v := range rep.Checks[0].Violations {
		got = append(got, v.Rule+" "+v.Element)
	}
	want := []string{
		`image-alt <img src="/team.png">`,
		`label <input type="text" id="q">`,
		`button-name <button>`,
		`color-contrast <p class="faint">`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("violations:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	rep = run(t, scenario(t, `{"name":"index","url":"`+srv.URL+`/index.html","steps":[{"audit":{}}]}`), Options{Browser: exe})
	if rep.Status != Passed {
		t.Errorf("audit of an accessible page: status %s:\n%s", rep.Status, checksOf(rep))
	}
}

// TestScreenshotDiffBlocks records a baseline in this run (so font
// rendering of this machine is the reference), sees the same page pass,
// then changes the page and sees the screenshot block with its diff
// image kept.
func TestScreenshotDiffBlocks(t *testing.T) {
	exe := needBrowser(t)
	srv, heading := app(t)
	s := scenario(t, `{"name":"dash","url":"`+srv.URL+`/dashboard.html","steps":[{"screenshot":"home"}]}`)
	baselines := t.TempDir()

	rep := run(t, s, Options{Browser: exe, BaselineDir: baselines})
	if rep.Status != NotEvidence || !strings.Contains(rep.Checks[0].Message, "no baseline") {
		t.Fatalf("without a baseline: %s:\n%s", rep.Status, checksOf(rep))
	}
	// A baseline that cannot be written is not reported as recorded.
	blocked := filepath.Join(t.TempDir(), "file")
	os.WriteFile(blocked, nil, 0o644)
	rep = run(t, s, Options{Browser: exe, BaselineDir: filepath.Join(blocked, "dir"), UpdateBaselines: true})
	if rep.Status != NotEvidence || !strings.Contains(rep.Checks[0].Message, "recording baseline: ") {
		t.Fatalf("unwritable baseline: %s:\n%s", rep.Status, checksOf(rep))
	}
	rep = run(t, s, Options{Browser: exe, BaselineDir: baselines, UpdateBaselines: true})
	if rep.Status != NotEvidence || !strings.Contains(rep.Checks[0].Message, "baseline recorded") {
		t.Fatalf("recording the baseline: %s:\n%s", rep.Status, checksOf(rep))
	}
	rep = run(t, s, Options{Browser: exe, BaselineDir: baselines})
	if rep.Status != Passed {
		t.Fatalf("same page against its baseline: %s:\n%s", rep.Status, checksOf(rep))
	}

	heading.Store("Dashboard (beta)")
	ev := t.TempDir()
	rep = run(t, s, Options{Browser: exe, BaselineDir: baselines, EvidenceDir: ev})
	if rep.Status != Failed {
		t.Fatalf("changed page: %s, want failed:\n%s", rep.Status, checksOf(rep))
	}
	c := rep.Checks[0]
	if len(c.Evidence) != 2 || c.Evidence[1] != "home.diff.png" {
		t.Fatalf("evidence %v, want the screenshot and home.diff.png", c.Evidence)
	}
	data, err := os.ReadFile(filepath.Join(ev, "home.diff.png"))
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	red := 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if r, g, bl, _ := img.At(x, y).RGBA(); r == 0xffff && g == 0 && bl == 0 {
				red++
			}
		}
	}
	if red == 0 {
		t.Errorf("diff image has no changed pixel marked")
	}
	t.Logf("%s; diff image %s", c.Message, filepath.Join(ev, "home.diff.png"))
}

// TestBudgetBlocks loads a page whose image takes 700ms: its load and
// largest contentful paint break a 300ms budget, and a generous budget
// passes on the same page.
func TestBudgetBlocks(t *testing.T) {
	exe := needBrowser(t)
	srv, _ := app(t)
	rep := run(t, scenario(t, `{"name":"slow","url":"`+srv.URL+`/slow.html","budgets":{"loadMs":300,"lcpMs":300},
	  "steps":[{"expect":[{"role":"image","name":"A large photo"}]}]}`), Options{Browser: exe})
	if rep.Status != Failed {
		t.Fatalf("status %s, want failed:\n%s", rep.Status, checksOf(rep))
	}
	for _, c := range rep.Checks[:2] {
		if c.Kind != "budget" || c.Status != Failed || !strings.Contains(c.Message, "over budget") {
			t.Errorf("check %s %s: %s %s, want a failed budget", c.Kind, c.Name, c.Status, c.Message)
		}
	}
	rep = run(t, scenario(t, `{"name":"slow","url":"`+srv.URL+`/slow.html","budgets":{"loadMs":20000,"lcpMs":20000,"domContentLoadedMs":20000},
	  "steps":[{"expect":[{"role":"heading","name":"Gallery"}]}]}`), Options{Browser: exe})
	if rep.Status != Passed {
		t.Fatalf("generous budget: status %s:\n%s", rep.Status, checksOf(rep))
	}
}

// TestNoBrowserIsNotEvidence: a scenario that could not run is never a
// pass.
func TestNoBrowserIsNotEvidence(t *testing.T) {
	s := scenario(t, `{"name":"x","url":"http://127.0.0.1:1/","steps":[{"audit":{}}]}`)
	rep := run(t, s, Options{Browser: filepath.Join(t.TempDir(), "no-such-chromium")})
	if rep.Status != NotEvidence || len(rep.Checks) != 1 || rep.Checks[0].Kind != "browser" {
		t.Fatalf("status %s, want not_evidence from the browser:\n%s", rep.Status, checksOf(rep))
	}
}

func TestParseScenarioErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"name":"a","url":"/x","steps":[{"audit":{}}]}`, `$.url: relative url "/x" needs serve`},
		{`{"name":"a","url":"file:///etc/passwd","steps":[{"audit":{}}]}`, `$.url: url scheme "file"`},
		{`{"name":"a","serve":"../up","url":"/","steps":[{"audit":{}}]}`, `$.serve: serve "../up" must be a directory inside the repository`},
		{`{"name":"A b","url":"http://x/","steps":[{"audit":{}}]}`, `$.name: name "A b"`},
		{`{"name":"a","url":"http://x/","steps":[]}`, `$.steps: no steps`},
		{`{"name":"a","url":"http://x/","steps":[{"click":{"role":"button"},"press":"Enter"}]}`, `$.steps[0]: a step has exactly one of`},
		{`{"name":"a","url":"http://x/","steps":[{"press":"F13"}]}`, `$.steps[0].press: unknown key "F13"`},
		{`{"name":"a","url":"http://x/","steps":[{"click":{}}]}`, `$.steps[0].click: a target needs a role or a name`},
		{`{"name":"a","url":"http://x/","steps":[{"audit":{"rules":["bogus"]}}]}`, `$.steps[0].audit.rules[0]: unknown rule "bogus"`},
		{`{"name":"a","url":"http://x/","steps":[{"screenshot":"s"},{"screenshot":"s"}]}`, `$.steps[1].screenshot: screenshot "s" is taken twice`},
		{`{"name":"a","url":"http://x/","steps":[{"screenshot":"s","policy":{"maxDiffRatio":2}}]}`, `$.steps[0].policy.maxDiffRatio: maxDiffRatio 2 outside 0..1`},
		{`{"name":"a","url":"http://x/","steps":[{"audit":{}}],"extra":1}`, `unknown field`},
	} {
		_, err := ParseScenario([]byte(tc.in), "s.json")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseScenario(%s) = %v, want %q", tc.in, err, tc.want)
		}
	}
}

func TestComparePNG(t *testing.T) {
	a, _ := os.ReadFile("testdata/app/team.png")
	d, err := ComparePNG(a, a, DefaultTolerance)
	if err != nil || d.Differing != 0 || d.SizeChanged {
		t.Fatalf("ComparePNG(same) = %+v, %v, want no difference", d, err)
	}
	img, _ := png.Decode(bytes.NewReader(a))
	// A pixel off by less than the tolerance is rendering noise; one off
	// by more is a change.
	rgba := toRGBA(img)
	rgba.Pix[0] += 10
	rgba.Pix[4*41] = 255 - rgba.Pix[4*41]
	var buf bytes.Buffer
	png.Encode(&buf, rgba)
	d, err = ComparePNG(a, buf.Bytes(), DefaultTolerance)
	if err != nil || d.Differing != 1 {
		t.Fatalf("ComparePNG(one changed pixel) = %+v, %v, want 1 differing", d, err)
	}
}

func toRGBA(img image.Image) *image.RGBA {
	b := img.Bounds()
	out := image.NewRGBA(b)
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			out.Set(x, y, img.At(x, y))
		}
	}
	return out
}

// TestReplayRecording records a session, replays the recording against
// the same app (every screen matches) and against a changed app, where
// the replay fails at the first screen that differs and keeps the diff.
func TestReplayRecording(t *testing.T) {
	exe := needBrowser(t)
	s := scenario(t, `{"name":"sign-in","serve":"testdata/app","url":"/index.html","steps":[
	  {"type":{"role":"textbox","name":"Email"},"text":"ada@example.com"},
	  {"press":"Enter"},
	  {"click":{"role":"link","name":"About us"}},
	  {"navigate":"/index.html"}
	]}`)
	ev := t.TempDir()
	rep := run(t, s, Options{Root: ".", Browser: exe, EvidenceDir: ev})
	// A session without a check is not evidence: it only records.
	if rep.Status != NotEvidence || len(rep.Checks) != 0 {
		t.Fatalf("recording run: status %s, want not_evidence with no check:\n%s", rep.Status, checksOf(rep))
	}
	rec, err := LoadRecording(filepath.Join(ev, "trace.json"))
	if err != nil {
		t.Fatal(err)
	}
	replay, err := Replay(rec)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(replay.Steps), 9; got != want {
		t.Fatalf("replay has %d steps, want %d (4 actions, 5 screens)", got, want)
	}
	rep = run(t, replay, Options{Root: ".", Browser: exe})
	if rep.Status != Passed || len(rep.Checks) != 5 {
		t.Fatalf("replay against the same app: status %s:\n%s", rep.Status, checksOf(rep))
	}

	// The same app greeting differently.
	changed := t.TempDir()
	for _, f := range []string{"index.html", "about.html", "team.png"} {
		data, err := os.ReadFile(filepath.Join("testdata/app", f))
		if err != nil {
			t.Fatal(err)
		}
		data = bytes.ReplaceAll(data, []byte("'Welcome, '"), []byte("'Hello, '"))
		os.MkdirAll(filepath.Join(changed, "testdata/app"), 0o755)
		if err := os.WriteFile(filepath.Join(changed, "testdata/app", f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ev = t.TempDir()
	rep = run(t, replay, Options{Root: changed, Browser: exe, EvidenceDir: ev, StepTimeout: 500 * time.Millisecond})
	if rep.Status != Failed {
		t.Fatalf("replay against a changed app: status %s, want failed:\n%s", rep.Status, checksOf(rep))
	}
	var failed *Check
	for i := range rep.Checks {
		if rep.Checks[i].Status == Failed {
			failed = &rep.Checks[i]
			break
		}
	}
	if failed.Step != 5 || !strings.Contains(failed.Message, `-    - heading "Welcome, ada@example.com" level=2`) ||
		!strings.Contains(failed.Message, `+    - heading "Hello, ada@example.com" level=2`) {
		t.Errorf("first failed check: step %d %s", failed.Step, failed.Message)
	}
	if len(failed.Evidence) != 1 {
		t.Fatalf("evidence %v, want the screen diff", failed.Evidence)
	}
	if _, err := os.Stat(filepath.Join(ev, failed.Evidence[0])); err != nil {
		t.Error(err)
	}
}

// TestStaticHandlerServesOnlyThePage: the served directory's files are
// served; dotfiles (.git, .env, the tool's state) and symbolic links out
// of the directory are not, though the port is open to every local user.
func TestStaticHandlerServesOnlyThePage(t *testing.T) {
	dir := t.TempDir()
	outside := t.TempDir()
	for name, body := range map[string]string{
		"site/index.html":             "<h1>page</h1>",
		"site/.env":                   "API_KEY=secret",
		"site/.git/config":            "[remote]",
		"site/.crystallize/state.db":  "ledger",
		"site/assets/app.js":          "1",
		filepath.Join(outside, "key"): "secret",
	} {
		p := name
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, name)
		}
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(outside, filepath.Join(dir, "site/escape")); err != nil {
		t.Fatal(err)
	}
	h, err := staticHandler(filepath.Join(dir, "site"))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	for path, want := range map[string]int{
		"/index.html": 200, "/assets/app.js": 200,
		"/.env": 404, "/.git/config": 404, "/.crystallize/state.db": 404, "/assets/../.env": 404,
		"/escape/key": 0, // anything but the file: os.Root refuses the link
	} {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		body := new(bytes.Buffer)
		body.ReadFrom(resp.Body)
		resp.Body.Close()
		if strings.Contains(body.String(), "secret") || strings.Contains(body.String(), "ledger") || strings.Contains(body.String(), "[remote]") {
			t.Errorf("GET %s served %q", path, body)
		}
		if want != 0 && resp.StatusCode != want {
			t.Errorf("GET %s = %d, want %d", path, resp.StatusCode, want)
		}
	}
}
