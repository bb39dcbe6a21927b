package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crystallize-dev/crystallize/internal/registry"
	"github.com/crystallize-dev/crystallize/internal/store"
)

type apiClient struct {
	t     *testing.T
	url   string
	token string
}

func (c apiClient) do(method, path, body string) (int, map[string]any) {
	c.t.Helper()
	req, err := http.NewRequest(method, c.url+path, strings.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		c.t.Fatalf("%s %s: %d %q: %v", method, path, res.StatusCode, raw, err)
	}
	return res.StatusCode, out
}

// TestAgentsAPI: the session tools' operations over HTTP, on the same
// registry; a session is live by its calls and turns stale StaleAfter
// after the last one.
func TestAgentsAPI(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	var mu sync.Mutex
	t0 := time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)
	now := func() time.Time { mu.Lock(); defer mu.Unlock(); return t0 }
	advance := func(d time.Duration) { mu.Lock(); defer mu.Unlock(); t0 = t0.Add(d) }
	opts := registry.Options{Now: now, Interval: 5 * time.Millisecond, StaleAfter: time.Minute}
	agents := registry.NewAgents(dir, opts)
	defer agents.Close()
	srv := httptest.NewServer(AgentsAPI(agents, "s3cret"))
	defer srv.Close()
	c := apiClient{t: t, url: srv.URL, token: "s3cret"}
	db, err := store.Open(ctx, filepath.Join(dir, registry.DBFile))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	line := func() string {
		t.Helper()
		l, err := registry.Status(ctx, db, opts)
		if err != nil {
			t.Fatal(err)
		}
		return l.String()
	}

	code, reg := c.do("POST", "/v1/sessions", `{"agent":"ci-bot","model":"llama3","branch":"main"}`)
	id, _ := reg["session_id"].(string)
	if code != http.StatusCreated || !registry.IsAgentSession(id) {
		t.Fatalf("register = %d %v", code, reg)
	}
	if got, want := line(), "[1] main/ci-bot  |  0  /sessions"; got != want {
		t.Errorf("status line = %q, want %q", got, want)
	}
	// An agent that registers and calls no more is not kept live.
	advance(2 * time.Minute)
	time.Sleep(30 * time.Millisecond)
	if got, want := line(), "no active sessions  |  0  /sessions"; got != want {
		t.Errorf("status line StaleAfter after the registration = %q, want %q", got, want)
	}
	code, ask := c.do("POST", "/v1/sessions/"+id+"/questions", `{"question":"Ship it?","options":["yes","no"]}`)
	if code != http.StatusCreated || ask["state"] != "pending" {
		t.Fatalf("ask = %d %v", code, ask)
	}
	item := int64(ask["item"].(float64))
	it, err := db.Item(ctx, item)
	if err != nil {
		t.Fatal(err)
	}
	if err := registry.AnswerQuestion(ctx, db, it, registry.Answer{Decide: "yes", By: "ana"}, opts); err != nil {
		t.Fatal(err)
	}
	code, got := c.do("GET", fmt.Sprintf("/v1/sessions/%s/questions/%d", id, item), "")
	if code != http.StatusOK || got["state"] != "answered" || got["option"] != "yes" || got["by"] != "ana" {
		t.Errorf("check = %d %v, want yes by ana", code, got)
	}

	// Without a call for StaleAfter the session is stale, and a call
	// brings it back.
	advance(2 * time.Minute)
	time.Sleep(30 * time.Millisecond)
	if got, want := line(), "no active sessions  |  0  /sessions"; got != want {
		t.Errorf("status line after StaleAfter without a call = %q, want %q", got, want)
	}
	c.do("GET", fmt.Sprintf("/v1/sessions/%s/questions/%d", id, item), "")
	if got, want := line(), "[1] main/ci-bot  |  0  /sessions"; got != want {
		t.Errorf("status line after a call = %q, want %q", got, want)
	}

	code, end := c.do("POST", "/v1/sessions/"+id+"/end", `{"status":"completed"}`)
	if code != http.StatusOK || end["status"] != "completed" {
		t.Errorf("end = %d %v", code, end)
	}
	if got, want := line(), "no active sessions  |  0  /sessions"; got != want {
		t.Errorf("status line after end = %q, want %q", got, want)
	}
}

// TestAgentsAPIRefusals: no token, a wrong one, a body too big, unknown
// fields and what the session tools refuse are refused here too, and
// nothing reaches the registry.
func TestAgentsAPIRefusals(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	agents := registry.NewAgents(dir, registry.Options{})
	defer agents.Close()
	srv := httptest.NewServer(AgentsAPI(agents, "s3cret"))
	defer srv.Close()
	for _, tc := range []struct {
		token, method, path, body string
		code                      int
		want                      string
	}{
		{"", "POST", "/v1/sessions", `{"agent":"a"}`, 401, "missing or wrong token"},
		{"guess", "POST", "/v1/sessions", `{"agent":"a"}`, 401, "missing or wrong token"},
		{"s3cret", "POST", "/v1/sessions", `{"agent":"a","admin":true}`, 400, `unknown field "admin"`},
		{"s3cret", "POST", "/v1/sessions", `{"agent":"a"}{}`, 400, "more than one JSON value"},
		{"s3cret", "POST", "/v1/sessions", `{"agent":"` + strings.Repeat("a", MaxAPIBody) + `"}`, 413, "body over 65536 bytes"},
		{"s3cret", "POST", "/v1/sessions", `{"agent":"\u001b"}`, 400, "name: empty"},
		{"s3cret", "POST", "/v1/sessions/agent-0000000000000000/questions", `{"question":"?","options":["a","b"]}`, 400, "no such session"},
		{"s3cret", "GET", "/v1/sessions/20260101T090000Z-0123456789ab/questions/1", "", 400, "not an agent session id"},
		{"s3cret", "GET", "/v1/sessions/agent-0000000000000000/questions/x", "", 400, `item "x"`},
	} {
		code, out := apiClient{t: t, url: srv.URL, token: tc.token}.do(tc.method, tc.path, tc.body)
		if msg, _ := out["error"].(string); code != tc.code || !strings.Contains(msg, tc.want) {
			t.Errorf("%s %s (token %q): %d %q, want %d %q", tc.method, tc.path, tc.token, code, msg, tc.code, tc.want)
		}
	}
	db, err := store.Open(ctx, filepath.Join(dir, registry.DBFile))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if list, _ := db.LiveSessions(ctx); len(list) != 0 {
		t.Errorf("registry = %+v, want nothing from refused requests", list)
	}
	if AgentsAPI(agents, "") == nil {
		t.Fatal("no handler")
	}
	// An empty token admits nobody.
	empty := httptest.NewServer(AgentsAPI(agents, ""))
	defer empty.Close()
	if code, _ := (apiClient{t: t, url: empty.URL}).do("POST", "/v1/sessions", `{"agent":"a"}`); code != 401 {
		t.Errorf("a server without a token answered %d, want 401", code)
	}
}
