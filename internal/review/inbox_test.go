package review

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/registry"
	"github.com/crystallize-dev/crystallize/internal/store"
)

// fakeInbox records the answers it is given.
type fakeInbox struct {
	items   []store.InboxItem
	answers []registry.Answer
}

func (f *fakeInbox) Pending(context.Context) ([]store.InboxItem, error) { return f.items, nil }

func (f *fakeInbox) Answer(_ context.Context, id int64, a registry.Answer) (string, error) {
	if id != 7 {
		return "", errors.New("no such item")
	}
	f.answers = append(f.answers, a)
	return "Run r1 of wf: completed\n", nil
}

// TestInboxAnswers checks that the inbox page lists what runs wait for
// with one button per option, and that each button becomes the answer
// session inbox answer would be given, only with the token.
func TestInboxAnswers(t *testing.T) {
	in := &fakeInbox{items: []store.InboxItem{
		{ID: 7, SessionID: "s1", Type: "decision_needed", Step: 2, Text: "Which <auth>?", Options: []string{"JWT", `O"Auth`}},
		{ID: 8, SessionID: "s2", Type: "approval_required", Step: 1, Boundary: "deploy", Text: "Deploy?"},
	}}
	s, err := NewServer(Options{Inbox: in})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewUnstartedServer(nil)
	ts.Config.Handler = s.Handler(ts.Listener.Addr().String())
	ts.Start()
	defer ts.Close()
	resp, err := http.Get(ts.URL + "/inbox")
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	page := string(data)
	for _, want := range []string{
		`<p class="text">Which &lt;auth&gt;?</p>`,
		`<button type="submit" name="decide" value="JWT">JWT</button>`,
		`<button type="submit" name="decide" value="O&#34;Auth">O&#34;Auth</button>`,
		`<form method="post" action="/inbox/8" class="answer">`,
		`<button type="submit" name="answer" value="approve">Approve</button>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("inbox page lacks %s", want)
		}
	}
	for _, tt := range []struct {
		form url.Values
		want registry.Answer
	}{
		{url.Values{"decide": {`O"Auth`}, "reason": {"r"}}, registry.Answer{Decide: `O"Auth`, Reason: "r"}},
		{url.Values{"answer": {"approve"}}, registry.Answer{Approve: true}},
		{url.Values{"answer": {"reject"}, "reason": {"no"}}, registry.Answer{Reject: true, Reason: "no"}},
		{url.Values{"answer": {"dismiss"}}, registry.Answer{Dismiss: true}},
	} {
		in.answers = nil
		resp, body := post(t, ts.URL+"/inbox/7", tt.form, nil)
		if resp.StatusCode != http.StatusForbidden || len(in.answers) != 0 {
			t.Errorf("answer without the token = %d %q, answers %v; want 403 and none", resp.StatusCode, body, in.answers)
		}
		tt.form.Set("token", s.Token())
		resp, body = post(t, ts.URL+"/inbox/7", tt.form, nil)
		if resp.StatusCode != http.StatusOK || len(in.answers) != 1 || in.answers[0] != tt.want || !strings.Contains(body, "completed") {
			t.Errorf("answer %v = %d, answers %+v; want %+v and the run's output", tt.form, resp.StatusCode, in.answers, tt.want)
		}
	}
	resp, body := post(t, ts.URL+"/inbox/9", url.Values{"token": {s.Token()}, "answer": {"approve"}}, nil)
	if resp.StatusCode != http.StatusConflict || !strings.Contains(body, "#9: no such item") {
		t.Errorf("answer to an unknown item = %d, want 409 naming it", resp.StatusCode)
	}
}
