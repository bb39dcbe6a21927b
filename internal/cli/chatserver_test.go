package cli

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// chatRequest is what a test's model server was asked: an
// OpenAI-compatible chat completion.
type chatRequest struct {
	Path, Authorization string
	Model               string
	Messages            []struct{ Role, Content string }
}

// Prompt is the content of the request's last message.
func (r *chatRequest) Prompt() string { return r.Messages[len(r.Messages)-1].Content }

// chatReply is the test server's answer: Status, when not 0 or 200, is
// an error status with Content as its body.
type chatReply struct {
	Model, Content           string
	PromptTokens, Completion int
	Status                   int
}

// chatServer is a local stand-in for an OpenAI-compatible model API,
// closed when the test ends. It answers POST …/chat/completions with at
// least one message through answer, and anything else with 400, failing
// the test.
func chatServer(t *testing.T, answer func(*chatRequest) chatReply) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req := &chatRequest{Path: r.URL.Path, Authorization: r.Header.Get("Authorization")}
		if err := json.NewDecoder(r.Body).Decode(req); err != nil || !strings.HasSuffix(r.URL.Path, "/chat/completions") || len(req.Messages) == 0 {
			t.Errorf("model request %s: %v", r.URL.Path, err)
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		rep := answer(req)
		if rep.Status != 0 && rep.Status != http.StatusOK {
			http.Error(w, rep.Content, rep.Status)
			return
		}
		json.NewEncoder(w).Encode(map[string]any{
			"model":   rep.Model,
			"choices": []any{map[string]any{"message": map[string]any{"role": "assistant", "content": rep.Content}, "finish_reason": "stop"}},
			"usage":   map[string]any{"prompt_tokens": rep.PromptTokens, "completion_tokens": rep.Completion},
		})
	}))
	t.Cleanup(srv.Close)
	return srv
}
