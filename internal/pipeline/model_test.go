package pipeline

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/runconfig"
)

// TestConfigModel answers prompts from a local OpenAI-compatible server
// named by [models.coder]: plain text comes back as it is, an answer
// that decodes as JSON comes back as its JSON text, and a key the
// configuration does not name, or no configuration, is refused by name.
func TestConfigModel(t *testing.T) {
	answer := "def f():\n    return 1\n"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/chat/completions" {
			http.NotFound(w, r)
			return
		}
		json.NewEncoder(w).Encode(map[string]any{
			"model":   "local-coder-1",
			"choices": []any{map[string]any{"message": map[string]any{"content": answer}, "finish_reason": "stop"}},
			"usage":   map[string]any{"prompt_tokens": 12, "completion_tokens": 3},
		})
	}))
	defer srv.Close()
	file := filepath.Join(t.TempDir(), runconfig.ConfigFile)
	if err := os.WriteFile(file, []byte("[models.coder]\nprovider = \"openai\"\nbase_url = \""+srv.URL+"\"\nmodel = \"local-coder-1\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := runconfig.LoadConfig(file)
	if err != nil {
		t.Fatal(err)
	}
	m := &ConfigModel{Config: cfg, Getenv: func(string) string { return "" }}
	ctx := context.Background()
	a, err := m.Complete(ctx, "coder", "write f")
	if err != nil {
		t.Fatal(err)
	}
	if a.Text != answer || a.Model != "local-coder-1" || a.InputTokens != 12 || a.OutputTokens != 3 {
		t.Errorf("Complete = %+v", a)
	}
	answer = `{"total": 15}`
	if a, err := m.Complete(ctx, "coder", "write f"); err != nil || a.Text != `{"total":15}` {
		t.Errorf("Complete of a JSON answer = %+v, %v; want its JSON text", a, err)
	}
	if _, err := m.Complete(ctx, "other", "p"); err == nil || !strings.Contains(err.Error(), "no [models.other] in "+file) {
		t.Errorf("Complete(other) = %v; want the missing entry named", err)
	}
	if _, err := (&ConfigModel{}).Complete(ctx, "coder", "p"); err == nil || !strings.Contains(err.Error(), "no configuration") {
		t.Errorf("Complete without a configuration = %v", err)
	}
}
