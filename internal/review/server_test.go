package review

import (
	"bytes"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/crystallize-dev/crystallize/internal/bundle"
	"github.com/crystallize-dev/crystallize/internal/ledger"
)

// copyBundle copies testdata/<name> to a fresh directory, since a
// decision rewrites candidate.json.
func copyBundle(t testing.TB, name string) string {
	t.Helper()
	src := filepath.Join("testdata", name)
	dst := filepath.Join(t.TempDir(), name)
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// testServer serves the given bundles on an httptest server, deciding as
// approver, and returns its URL and the server.
func testServer(t *testing.T, approver string, dirs ...string) (*httptest.Server, *Server, string) {
	t.Helper()
	state := filepath.Join(t.TempDir(), "state")
	s, err := NewServer(Options{Bundles: dirs, Approver: approver, StateDir: state,
		Now: func() time.Time { return time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC) }})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewUnstartedServer(nil)
	ts.Start()
	ts.Config.Handler = s.Handler(ts.Listener.Addr().String())
	t.Cleanup(ts.Close)
	return ts, s, state
}

// noRedirect is a client that shows redirects instead of following them.
var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

func post(t *testing.T, u string, form url.Values, header map[string]string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, u, strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for k, v := range header {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, string(body)
}

func history(t *testing.T, dir string) []bundle.ApprovalRecord {
	t.Helper()
	b, err := bundle.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	return b.Manifest.Promotion.ApprovalHistory
}

// TestServerRefusesForeignRequests checks the defences of a local server
// that can approve: a request under a foreign Host (DNS rebinding) gets
// 421, a POST from another origin or site, or without the right token,
// gets 403, GET on the decision route changes nothing, and after all of
// them the approval history and the ledger are as they were.
func TestServerRefusesForeignRequests(t *testing.T) {
	dir := copyBundle(t, "pass")
	ts, s, state := testServer(t, "bob@example.com", dir)
	good := url.Values{"token": {s.Token()}, "decision": {"approve"}, "reason": {"read it"}}
	decide := ts.URL + "/b/0/decide"
	host := strings.TrimPrefix(ts.URL, "http://")
	tests := []struct {
		name   string
		form   url.Values
		header map[string]string
		want   int
	}{
		{"no token", url.Values{"decision": {"approve"}, "reason": {"x"}}, nil, http.StatusForbidden},
		{"wrong token", url.Values{"token": {strings.Repeat("0", 64)}, "decision": {"approve"}, "reason": {"x"}}, nil, http.StatusForbidden},
		{"cross-origin", good, map[string]string{"Origin": "http://evil.example"}, http.StatusForbidden},
		{"other port", good, map[string]string{"Origin": "http://127.0.0.1:1"}, http.StatusForbidden},
		{"null origin", good, map[string]string{"Origin": "null"}, http.StatusForbidden},
		{"cross-site fetch", good, map[string]string{"Sec-Fetch-Site": "cross-site"}, http.StatusForbidden},
		{"rebound host", good, map[string]string{"Host": "evil.example:" + ts.URL[strings.LastIndex(ts.URL, ":")+1:]}, http.StatusMisdirectedRequest},
		{"foreign host, same origin header", good, map[string]string{"Host": "attacker.test", "Origin": "http://attacker.test"}, http.StatusMisdirectedRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := post(t, decide, tt.form, tt.header)
			if resp.StatusCode != tt.want {
				t.Errorf("POST %s = %d %q, want %d", tt.name, resp.StatusCode, body, tt.want)
			}
		})
	}
	// GET never decides, and a foreign Host cannot read the page either.
	resp, err := http.Get(decide + "?" + good.Encode())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET /b/0/decide = %d, want 405", resp.StatusCode)
	}
	req, _ := http.NewRequest(http.MethodGet, ts.URL+"/b/0/", nil)
	req.Host = "evil.example"
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMisdirectedRequest {
		t.Errorf("GET with Host evil.example = %d, want 421", resp.StatusCode)
	}
	if h := history(t, dir); len(h) != 0 {
		t.Fatalf("approval history after refused requests = %+v, want none", h)
	}
	if _, err := os.Stat(filepath.Join(state, ledger.File)); !os.IsNotExist(err) {
		t.Errorf("ledger after refused requests: %v, want none", err)
	}

	// The same request from the page itself is recorded.
	resp, body := post(t, decide, good, map[string]string{"Origin": ts.URL, "Sec-Fetch-Site": "same-origin", "Host": host})
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("POST from the page = %d %s, want 303", resp.StatusCode, body)
	}
	h := history(t, dir)
	if len(h) != 1 || h[0].Actor != "bob@example.com" || h[0].Reason != "read it" || h[0].Decision != bundle.DecisionApproved {
		t.Errorf("approval history = %+v, want bob's approval", h)
	}
	if r := bundle.Ready(dir); !r.OK() {
		t.Errorf("bundle.Ready after the page's approval: %v", r.Err())
	}
	if _, err := os.Stat(filepath.Join(state, ledger.File)); err != nil {
		t.Errorf("ledger after approval: %v", err)
	}
}

// TestServerHeaders checks the policy every response carries: no inline
// script, frames refused.
func TestServerHeaders(t *testing.T) {
	ts, _, _ := testServer(t, "", copyBundle(t, "pass"))
	for _, path := range []string{"/", "/b/0/", "/assets/review.js", "/inbox"} {
		resp, err := http.Get(ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		csp := resp.Header.Get("Content-Security-Policy")
		if !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe-inline") || !strings.Contains(csp, "frame-ancestors 'none'") {
			t.Errorf("GET %s: Content-Security-Policy = %q", path, csp)
		}
		if resp.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("GET %s: no nosniff", path)
		}
	}
}

// TestDecideRefusals checks the decisions the page refuses, with the
// reason on the page and nothing recorded: a blocked bundle, an approval
// by the bundle's author, a decision without a reason.
func TestDecideRefusals(t *testing.T) {
	drift, pass, tampered := copyBundle(t, "drift"), copyBundle(t, "pass"), copyBundle(t, "pass")
	// A fixture changed after the bundle was written: approve alone
	// checks only the workflow's bytes; the page validates first.
	fx := filepath.Join(tampered, "fixtures", "docs_4.json")
	data, err := os.ReadFile(fx)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(fx, bytes.Replace(data, []byte("2.0.4"), []byte("2.0.9"), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, approver, bundle, reason string
		dir                            string
		want                           string
	}{
		{"blocked", "bob@example.com", "0", "fine", drift, "promotion is blocked: candidate_rejected"},
		{"author", "alice@example.com", "1", "mine", pass, "the author of a bundle cannot approve it"},
		{"no reason", "bob@example.com", "1", "  ", pass, "no reason"},
		{"tampered fixture", "bob@example.com", "2", "fine", tampered, "does not validate: fixture_hash"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts, s, _ := testServer(t, tt.approver, drift, pass, tampered)
			resp, body := post(t, ts.URL+"/b/"+tt.bundle+"/decide", url.Values{"token": {s.Token()}, "decision": {"approve"}, "reason": {tt.reason}}, nil)
			if resp.StatusCode != http.StatusConflict || !strings.Contains(body, tt.want) {
				t.Errorf("POST = %d, body lacks %q", resp.StatusCode, tt.want)
			}
			if h := history(t, tt.dir); len(h) != 0 {
				t.Errorf("history = %+v, want none", h)
			}
		})
	}
	// The author's page says so before they try.
	ts, _, _ := testServer(t, "alice@example.com", pass)
	resp, err := http.Get(ts.URL + "/b/0/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !regexp.MustCompile(`id="self-approval"[^>]*>alice@example.com wrote this bundle`).Match(body) ||
		!regexp.MustCompile(`value="approve" id="approve" disabled>`).Match(body) {
		t.Errorf("the author's page does not say they cannot approve it")
	}

	// The blocked bundle's page says so before anyone tries.
	ts, _, _ = testServer(t, "bob@example.com", drift)
	resp, err = http.Get(ts.URL + "/b/0/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if !regexp.MustCompile(`id="refusal"[^>]*>A decision would be refused: promotion is blocked: candidate_rejected`).Match(body) ||
		!regexp.MustCompile(`<button type="submit" name="decision" value="approve" id="approve" disabled>`).Match(body) {
		t.Errorf("blocked bundle's page does not show the refusal and a disabled Approve")
	}
}

// TestPageDrift checks the page model of a bundle whose held-out trace
// drifted: the failing trace comes first, its receipts cell is divergent
// at the oracle's JSON path, and its steps matched.
func TestPageDrift(t *testing.T) {
	p := Load(copyBundle(t, "drift"))
	if p.Err != "" {
		t.Fatal(p.Err)
	}
	if p.Status != bundle.StatusBlocked {
		t.Errorf("status = %s, want blocked", p.Status)
	}
	if len(p.Graph.Nodes) != 2 || p.Graph.Nodes[0].Class != ClassDeterministic {
		t.Errorf("graph nodes = %+v", p.Graph.Nodes)
	}
	m := p.Matrix
	if m.Total != 4 || m.Failing != 1 || len(m.Rows) != 4 {
		t.Fatalf("matrix total %d failing %d rows %d, want 4 1 4", m.Total, m.Failing, len(m.Rows))
	}
	r := m.Rows[0]
	if r.TraceID != "docs_5" || r.Role != "heldout" || r.Status != "fail" || r.FirstPath != "/effect_receipts/0/sha256" {
		t.Errorf("first row = %s %s %s %q, want the drifted held-out docs_5 at /effect_receipts/0/sha256", r.TraceID, r.Role, r.Status, r.FirstPath)
	}
	if r.Receipts.State != CellDivergent || r.Receipts.Path != "/effect_receipts/0/sha256" || r.Receipts.Left != `"sha-site-other"` || r.Receipts.Right != `"sha-site-stable"` {
		t.Errorf("receipts cell = %+v", r.Receipts)
	}
	for _, c := range r.Cells {
		if c.State != CellMatched || !strings.Contains(c.Action, `"name": "`) || c.Expected == "" {
			t.Errorf("step cell %s = %s, action %q; want matched with the action and the expectation", c.ID, c.State, c.Action)
		}
	}
	for _, r := range m.Rows[1:] {
		if r.Receipts.State != CellMatched {
			t.Errorf("row %s receipts = %s, want matched", r.TraceID, r.Receipts.State)
		}
	}
	var buf bytes.Buffer
	if err := renderPage(&buf, view{Page: p, Token: "t"}); err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`<td class="cell receipts divergent"><details[^>]*><summary title="divergent at /effect_receipts/0/sha256"`).Match(buf.Bytes()) {
		t.Error("rendered page lacks the divergent receipts cell with its path")
	}
}

// TestHostileRendersInert checks that what a hostile bundle carries in
// trace ids, step names and parameter values reaches the page only as
// text: no script element, event handler or attribute break-out of its
// own. The browser test checks the same in Chromium.
func TestHostileRendersInert(t *testing.T) {
	p := Load(copyBundle(t, "hostile"))
	if p.Err != "" {
		t.Fatal(p.Err)
	}
	var buf bytes.Buffer
	if err := renderPage(&buf, view{Page: p, Token: "t"}); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	if !strings.Contains(page, "pwned") {
		t.Fatal("the hostile values are not on the page at all; the test would prove nothing")
	}
	// The payloads are `<script>…`, `"'><img src=x onerror="…">` and
	// `</script><script>…`: escaped, their brackets and quotes are
	// entities, so none of these appears.
	for _, bad := range []string{"<script>window", "<img", `onerror="`, "</script><script>"} {
		if strings.Contains(page, bad) {
			i := strings.Index(page, bad)
			t.Errorf("page holds %q unescaped: …%s…", bad, page[max(0, i-80):min(len(page), i+80)])
		}
	}
	if n := strings.Count(page, "<script"); n != 1 {
		t.Errorf("page has %d script elements, want 1 (the embedded review.js)", n)
	}
	var st bytes.Buffer
	if err := WriteStatic(&st, LoadStatic(copyBundle(t, "hostile"), "")); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(st.String(), "<script") || strings.Contains(st.String(), `onerror="`) || strings.Contains(st.String(), "<img") {
		t.Error("static page holds a script or a handler")
	}
}

// TestStatic checks the static export: the key sections, no form, no
// script, and a policy that names its one inline style by hash.
func TestStatic(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteStatic(&buf, LoadStatic(copyBundle(t, "drift"), "")); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	for _, want := range []string{`id="graph"`, `id="matrix"`, `id="parameters"`, `id="source"`, `id="checks"`, `id="savings"`, "/effect_receipts/0/sha256"} {
		if !strings.Contains(page, want) {
			t.Errorf("static page lacks %q", want)
		}
	}
	meta := regexp.MustCompile(`<meta http-equiv="Content-Security-Policy" content="([^"]*)">`).FindStringSubmatch(page)
	if meta == nil || html.UnescapeString(meta[1]) != staticCSP() || !strings.Contains(staticCSP(), "style-src 'sha256-") {
		t.Errorf("static page's policy = %q, want %q", meta, staticCSP())
	}
	for _, bad := range []string{"<form", "<script", "/assets/", `name="token"`} {
		if strings.Contains(page, bad) {
			t.Errorf("static page holds %q", bad)
		}
	}
	if !strings.Contains(page, "<style>"+string(pageCSS)+"</style>") {
		t.Error("static page's style is not the embedded stylesheet byte for byte, so its hash in the policy would not match")
	}
}

// TestFind checks bundle discovery: a bundle, a directory of bundles,
// and a directory without one, which is an error naming it.
func TestFind(t *testing.T) {
	root := t.TempDir()
	for _, n := range []string{"b", "a"} {
		if err := os.MkdirAll(filepath.Join(root, "set", n), 0o755); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(root, "set", n, bundle.ManifestFile), []byte("{}"), 0o644)
	}
	os.MkdirAll(filepath.Join(root, "empty"), 0o755)
	got, err := Find([]string{filepath.Join(root, "set"), filepath.Join(root, "set", "b")})
	want := []string{filepath.Join(root, "set", "a"), filepath.Join(root, "set", "b"), filepath.Join(root, "set", "b")}
	if err != nil || strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("Find = %v, %v; want %v", got, err, want)
	}
	if _, err := Find([]string{filepath.Join(root, "empty")}); err == nil || !strings.Contains(err.Error(), "empty: no candidate.json") {
		t.Errorf("Find(empty) = %v, want an error naming it", err)
	}
}

// TestIsLoopback pins which addresses count as loopback.
func TestIsLoopback(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:0": true, "localhost:8080": true, "[::1]:1": true, "127.1.2.3:9": true,
		"0.0.0.0:80": false, ":80": false, "192.168.1.2:80": false, "example.com:80": false, "bogus": false,
	} {
		if got := IsLoopback(addr); got != want {
			t.Errorf("IsLoopback(%q) = %v, want %v", addr, got, want)
		}
	}
}

// TestPreviousVersion checks the diff against the last approved version
// of the same workflow among the bundles shown: an approved bundle of the
// workflow is found, its changed lines are marked, and a bundle that is
// not approved, or has the same bytes, is no previous version.
func TestPreviousVersion(t *testing.T) {
	old, cur := copyBundle(t, "pass"), copyBundle(t, "pass")
	wf := filepath.Join(cur, bundle.WorkflowFile)
	src, err := os.ReadFile(wf)
	if err != nil {
		t.Fatal(err)
	}
	changed := bytes.Replace(src, []byte(`bucket = "docs-prod"`), []byte(`bucket = "docs-staging"`), 1)
	if bytes.Equal(changed, src) {
		t.Fatal("the workflow has no docs-prod bucket to change")
	}
	if err := os.WriteFile(wf, changed, 0o644); err != nil {
		t.Fatal(err)
	}
	if p := Load(cur); previousVersion(p, []string{old, cur}) != nil {
		t.Error("a bundle that is not approved counts as the previous version")
	}
	if _, err := bundle.Approve(old, bundle.Approval{Actor: "bob@example.com", At: "2026-11-28T12:00:00Z"}); err != nil {
		t.Fatal(err)
	}
	p := Load(cur)
	prev := previousVersion(p, []string{old, cur})
	if prev == nil {
		t.Fatal("no previous version found")
	}
	var add, del []string
	for _, l := range prev.Diff {
		switch l.Class {
		case "add":
			add = append(add, l.Text)
		case "del":
			del = append(del, l.Text)
		}
	}
	if len(add) != 1 || !strings.Contains(add[0], "docs-staging") || len(del) != 1 || !strings.Contains(del[0], "docs-prod") {
		t.Errorf("diff adds %q and deletes %q; want the bucket changed", add, del)
	}
	// The server's page shows it.
	ts, _, _ := testServer(t, "bob@example.com", old, cur)
	resp, err := http.Get(ts.URL + "/b/1/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !regexp.MustCompile(`<h3>Changes since the last approved version</h3><p>approved in [^<]*/pass`).Match(body) ||
		!regexp.MustCompile(`<span class="add">&#43; +ctx.tool\(&#34;site.upload&#34;, bucket = &#34;docs-staging&#34;`).Match(body) {
		i := bytes.Index(body, []byte("Changes since"))
		t.Errorf("page lacks the diff against the approved version: %s", body[max(0, i):min(len(body), i+900)])
	}
	if p := Load(old); previousVersion(p, []string{old, copyBundle(t, "pass")}) != nil {
		t.Error("the same bytes count as a previous version")
	}
}

// TestSymlinkedFilesNotShown is the attack of a bundle whose workflow
// path and a fixture run through a symlink to a file outside it (the
// reviewer's private file): the page and the static export show neither
// the file's content, and validation's symlink problem is on the page.
func TestSymlinkedFilesNotShown(t *testing.T) {
	dir := copyBundle(t, "pass")
	outside := filepath.Join(t.TempDir(), "private")
	if err := os.MkdirAll(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	secret := "def private_notes(ctx):\n    # PRIVATE-CONTENT-7f3a\n    return {}\n"
	if err := os.WriteFile(filepath.Join(outside, bundle.WorkflowFile), []byte(secret), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "docs_1.json"), []byte(`{"version":1,"id":"docs_1","actions":[{"id":"a","kind":"tool_call","name":"PRIVATE-CONTENT-7f3a"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	// The workflow through a linked directory, the fixtures directory a
	// link.
	if err := os.Symlink(outside, filepath.Join(dir, "wf")); err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(filepath.Join(dir, "fixtures"))
	if err := os.Symlink(outside, filepath.Join(dir, "fixtures")); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, bundle.ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	data = bytes.Replace(data, []byte(`"path": "workflow.star"`), []byte(`"path": "wf/workflow.star"`), 1)
	if err := os.WriteFile(filepath.Join(dir, bundle.ManifestFile), data, 0o644); err != nil {
		t.Fatal(err)
	}
	var page bytes.Buffer
	if err := renderPage(&page, view{Page: Load(dir), Token: "t"}); err != nil {
		t.Fatal(err)
	}
	var st bytes.Buffer
	if err := WriteStatic(&st, LoadStatic(dir, "")); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"page": page.String(), "static": st.String()} {
		if strings.Contains(out, "PRIVATE-CONTENT-7f3a") {
			t.Errorf("%s shows the content of a file outside the bundle", name)
		}
		if !strings.Contains(out, "<code>symlink</code>") {
			t.Errorf("%s does not show validation's symlink problem", name)
		}
	}
}
