package runner

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/crystallize-dev/crystallize/internal/runconfig"
	"github.com/crystallize-dev/crystallize/internal/runstate"
	"github.com/crystallize-dev/crystallize/internal/toolexec"
)

const token = "ghp-s3cr3t-token-value-9876543210"

// httpConfig binds tool "gh.open_pr" to srv with binding hb.
func httpConfig(t *testing.T, hb runconfig.HTTPBinding, timeout string) *runconfig.Config {
	t.Helper()
	dir := t.TempDir()
	p := filepath.Join(dir, runconfig.ConfigFile)
	var b strings.Builder
	b.WriteString("[tools.\"gh.open_pr\"]\ncapability = \"github.write\"\n")
	if timeout != "" {
		b.WriteString("timeout = " + quoteTOML(timeout) + "\n")
	}
	b.WriteString("[tools.\"gh.open_pr\".http]\nmethod = " + quoteTOML(hb.Method) + "\nurl = " + quoteTOML(hb.URL) + "\n")
	if hb.Body != "" {
		b.WriteString("body = " + quoteTOML(hb.Body) + "\n")
	}
	if len(hb.Headers) > 0 {
		b.WriteString("[tools.\"gh.open_pr\".http.headers]\n")
		for _, k := range sortedKeys(hb.Headers) {
			b.WriteString(k + " = " + quoteTOML(hb.Headers[k]) + "\n")
		}
	}
	b.WriteString("[grants]\ncapabilities = [\"github.write\"]\n")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := runconfig.LoadConfig(p)
	if err != nil {
		t.Fatalf("LoadConfig:\n%s\n%v", b.String(), err)
	}
	return c
}

func quoteTOML(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

const prWorkflow = `# capabilities: github.write · secrets: none
def wf(ctx, repo, title, draft = False):
    r = ctx.tool("gh.open_pr", repo = repo, title = title, draft = draft, labels = ["deps"])
    return r
`

func tokenEnv(k string) string {
	if k == "GITHUB_TOKEN" {
		return token
	}
	return ""
}

// request is what the test server saw.
type request struct {
	Method, Path, RawQuery, Auth, ContentType string
	Body                                      any
}

func TestHTTPBinding(t *testing.T) {
	var got request
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got = request{Method: r.Method, Path: r.URL.EscapedPath(), RawQuery: r.URL.RawQuery, Auth: r.Header.Get("Authorization"), ContentType: r.Header.Get("Content-Type")}
		json.Unmarshal(body, &got.Body)
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		// A server that echoes the credential must not get it recorded.
		json.NewEncoder(w).Encode(map[string]any{"number": 7, "seen": r.Header.Get("Authorization")})
	}))
	defer srv.Close()
	cfg := httpConfig(t, runconfig.HTTPBinding{
		Method:  "post",
		URL:     srv.URL + "/repos/{repo}/pulls?draft={draft}",
		Headers: map[string]string{"Authorization": "Bearer {secret:GITHUB_TOKEN}"},
		Body:    "json",
	}, "5s")
	o := opts(t, cfg)
	o.Getenv = tokenEnv
	w := workflow(t, prWorkflow)
	res, err := Run(context.Background(), w, Params{"repo": "acme/pay ments", "title": "Bump x/net; $(rm -rf /)"}, o)
	if err != nil {
		t.Fatalf("Run = %v", err)
	}
	checkSessionLog(t, res)
	want := request{
		Method: "POST", Path: "/repos/acme%2Fpay%20ments/pulls", RawQuery: "draft=false",
		Auth: "Bearer " + token, ContentType: "application/json",
		Body: map[string]any{"title": "Bump x/net; $(rm -rf /)", "labels": []any{"deps"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("request (-want +got):\n%s", diff)
	}
	out := res.Output.(map[string]any)
	if out["number"] != json.Number("7") || out["seen"] != "Bearer [redacted:GITHUB_TOKEN]" {
		t.Errorf("output = %v, want the parsed JSON with the token replaced", out)
	}
	tr := readTrace(t, res)
	a := tr.Actions[0]
	if a.Kind != "external_api_call" {
		t.Errorf("kind = %s, want external_api_call", a.Kind)
	}
	if r := a.Metadata["request"]; r != "POST "+srv.URL+"/repos/acme%2Fpay%20ments/pulls?draft=false" {
		t.Errorf("recorded request = %v", r)
	}
	assertNoSecret(t, o.StateDir, token)
}

func TestHTTPResponses(t *testing.T) {
	tests := []struct {
		name    string
		handler http.HandlerFunc
		timeout string
		out     any
		err     string // a substring of the error; "" for success
	}{
		{
			name: "text",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/plain")
				io.WriteString(w, "merged\n")
			},
			out: "merged",
		},
		{
			name: "json without a json type",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/plain")
				io.WriteString(w, `{"ok":true}`)
			},
			out: map[string]any{"ok": true},
		},
		{
			name:    "empty",
			handler: func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) },
			out:     nil,
		},
		{
			name: "not found",
			handler: func(w http.ResponseWriter, r *http.Request) {
				http.Error(w, `{"message":"Not Found"}`, http.StatusNotFound)
			},
			err: "POST {url}/repos/acme/pulls?draft=false: status 404 Not Found: {\"message\":\"Not Found\"}",
		},
		{
			name:    "timeout",
			handler: hang,
			timeout: "50ms",
			err:     "POST {url}/repos/acme/pulls?draft=false timed out after 50ms",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(tt.handler)
			defer srv.Close()
			cfg := httpConfig(t, runconfig.HTTPBinding{Method: "POST", URL: srv.URL + "/repos/{repo}/pulls?draft={draft}"}, tt.timeout)
			res, err := Run(context.Background(), workflow(t, prWorkflow), Params{"repo": "acme", "title": "t"}, opts(t, cfg))
			if tt.err != "" {
				want := strings.ReplaceAll(tt.err, "{url}", srv.URL)
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Fatalf("Run = %v, want an error containing %q", err, want)
				}
				if res.Receipts[0].Status != ReceiptError {
					t.Errorf("receipt status = %s, want error", res.Receipts[0].Status)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.out, res.Output); diff != "" {
				t.Errorf("output (-want +got):\n%s", diff)
			}
		})
	}
}

// TestHTTPQueryBody: a GET sends the arguments the URL does not take as
// query parameters.
func TestHTTPQueryBody(t *testing.T) {
	var query string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		query = r.URL.RawQuery
		io.WriteString(w, "[]")
	}))
	defer srv.Close()
	cfg := httpConfig(t, runconfig.HTTPBinding{URL: srv.URL + "/search/{repo}"}, "")
	if _, err := Run(context.Background(), workflow(t, prWorkflow), Params{"repo": "acme", "title": "a&b=c"}, opts(t, cfg)); err != nil {
		t.Fatal(err)
	}
	if want := "draft=false&labels=%5B%22deps%22%5D&title=a%26b%3Dc"; query != want {
		t.Errorf("query = %q, want %q", query, want)
	}
}

func TestHTTPCancel(t *testing.T) {
	started := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(started)
		hang(w, r)
	}))
	defer srv.Close()
	cfg := httpConfig(t, runconfig.HTTPBinding{Method: "POST", URL: srv.URL + "/{repo}"}, "")
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-started; cancel() }()
	begin := time.Now()
	res, err := Run(ctx, workflow(t, prWorkflow), Params{"repo": "acme", "title": "t"}, opts(t, cfg))
	if !errors.Is(err, ErrCancelled) || res.Status != runstate.StatusCancelled {
		t.Errorf("Run = %v (status %v), want ErrCancelled", err, res.Status)
	}
	if d := time.Since(begin); d > 5*time.Second {
		t.Errorf("cancelling took %s", d)
	}
}

// TestHTTPSecretUnset: a binding's secret that is not set stops the run
// before its first step.
func TestHTTPSecretUnset(t *testing.T) {
	hit := false
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hit = true }))
	defer srv.Close()
	cfg := httpConfig(t, runconfig.HTTPBinding{Method: "POST", URL: srv.URL, Headers: map[string]string{"Authorization": "token {secret:GITHUB_TOKEN}"}}, "")
	res, err := Run(context.Background(), workflow(t, prWorkflow), Params{"repo": "acme", "title": "t"}, opts(t, cfg))
	want := `secret unavailable: tools."gh.open_pr" names secret GITHUB_TOKEN, which is not set; set the environment variable GITHUB_TOKEN`
	if err == nil || err.Error() != want {
		t.Errorf("Run = %v, want %q", err, want)
	}
	if res != nil || hit {
		t.Errorf("the run started (%v, server hit %v)", res, hit)
	}
}

// TestHTTPDryRun: a dry run records the request without sending it or
// resolving its secrets.
func TestHTTPDryRun(t *testing.T) {
	cfg := httpConfig(t, runconfig.HTTPBinding{Method: "POST", URL: "https://api.github.com/repos/{repo}/pulls", Headers: map[string]string{"Authorization": "Bearer {secret:GITHUB_TOKEN}"}}, "")
	o := opts(t, cfg)
	o.DryRun = true
	res, err := Run(context.Background(), workflow(t, prWorkflow), Params{"repo": "acme/x", "title": "t"}, o)
	if err != nil {
		t.Fatal(err)
	}
	if r := readTrace(t, res).Actions[0].Metadata["request"]; r != "POST https://api.github.com/repos/acme%2Fx/pulls" {
		t.Errorf("recorded request = %v", r)
	}
}

func TestHTTPConfigErrors(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, runconfig.ConfigFile)
	os.WriteFile(p, []byte(`[tools."a"]
http = { method = "FETCH", url = "ftp://x/{y}", body = "xml" }
[tools."b"]
http = { url = "https://api/{secret:TOKEN}" }
[tools."c"]
http = { url = "/relative" }
[tools."d"]
http = { url = "https://api", colour = "red" }
`), 0o644)
	_, err := runconfig.LoadConfig(p)
	if err == nil {
		t.Fatal("LoadConfig accepted bad http bindings")
	}
	for _, want := range []string{
		p + `: tools."a".http.method: unknown method "FETCH"; want one of GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS`,
		p + `: tools."a".http.url: "ftp://x/{y}" is not an absolute http or https URL`,
		p + `: tools."a".http.body: unknown body "xml"; want json, query or none`,
		p + `: tools."b".http.url: names secret TOKEN; URLs are recorded, so secrets go in headers`,
		p + `: tools."c".http.url: "/relative" is not an absolute http or https URL`,
		p + `: tools.d.http.colour: unknown key`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("LoadConfig error lacks %q:\n%v", want, err)
		}
	}
}

// hang answers nothing until the client goes away. It reads the body
// first: until it has, the server does not notice a closed connection.
func hang(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	select {
	case <-r.Context().Done():
	case <-time.After(10 * time.Second):
	}
}

// assertNoSecret fails when any file under dir contains value.
func assertNoSecret(t *testing.T, dir, value string) {
	t.Helper()
	files := 0
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		files++
		if b := readFile(t, p); strings.Contains(b, value) {
			t.Errorf("%s contains the secret value", p)
		}
		return nil
	})
	if files == 0 {
		t.Errorf("the run wrote no files under %s", dir)
	}
}

// TestHTTPDotSegment: a parameter that makes a "." or ".." segment of the
// URL path is refused before any request, and so is one that makes it
// once a server decodes the "/" (%2F) escaping keeps inside a segment:
// many servers and proxies decode it before routing. Inside a segment a
// dot is data.
func TestHTTPDotSegment(t *testing.T) {
	var paths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		paths = append(paths, r.URL.EscapedPath())
		w.Write([]byte(`{}`))
	}))
	defer srv.Close()
	cfg := httpConfig(t, runconfig.HTTPBinding{Method: "GET", URL: srv.URL + "/repos/acme/{repo}/pulls"}, "")
	w := workflow(t, "# capabilities: github.write · secrets: none\ndef wf(ctx, repo):\n    return ctx.tool(\"gh.open_pr\", repo = repo)\n")
	for _, tt := range []struct {
		repo string
		ok   bool
		path string
	}{
		{"..", false, ""},
		{".", false, ""},
		{"../../admin", false, ""},
		{"x/../../admin", false, ""},
		{"x/./y", false, ""},
		{`..\admin`, false, ""},
		{"feature/x", true, "/repos/acme/feature%2Fx/pulls"},
		{"a..b", true, "/repos/acme/a..b/pulls"},
		{"a/..b", true, "/repos/acme/a%2F..b/pulls"},
		{"%2e%2e", true, "/repos/acme/%252e%252e/pulls"},
	} {
		paths = nil
		_, err := Run(context.Background(), w, Params{"repo": tt.repo}, opts(t, cfg))
		switch {
		case !tt.ok && (!errors.Is(err, toolexec.ErrPathSegment) || !strings.Contains(err.Error(), "path_traversal") || len(paths) > 0):
			t.Errorf("repo %q: Run = %v, requests %q; want ErrPathSegment and no request", tt.repo, err, paths)
		case tt.ok && (err != nil || len(paths) != 1 || paths[0] != tt.path):
			t.Errorf("repo %q: Run = %v, requests %q; want %s", tt.repo, err, paths, tt.path)
		}
	}
}
