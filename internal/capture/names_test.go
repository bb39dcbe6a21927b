package capture

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// TestNamesRedacted: a token in a name the server or the client chose
// (the tool's name, its title, the server's and the client's names and
// the server's version) reaches the trace no more than a token in an
// argument: every place the name is copied to (the action's name, its
// side effect's target, its capability, the metadata) holds the
// redaction instead.
func TestNamesRedacted(t *testing.T) {
	// Assembled, so that no file holds a token-shaped string.
	gh := "gh" + "p_Zq7Lm2Xv9Kp4Rt8Wn3Yb6Hc1Jd5Fs0Ga2Ue4"
	sl := "xox" + "b-12345678901-10987654321-Pq9Rs8Tu7Vw6Xy5Za4Bc3De2"
	h := "4f9a8c7e6d5b4a3928171605f4e3d2c1"
	do := "dop_" + "v1_" + h + h
	tool := "deploy_" + gh
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	rec := NewRecorder(Options{Out: t.TempDir(), ID: "s", Server: "host-" + sl, Now: func() time.Time { return now }})
	mk := func(n int64) jsonrpc.ID {
		id, _ := jsonrpc.MakeID(float64(n))
		return id
	}
	req := func(id int64, method string, params any) *jsonrpc.Request {
		p, _ := json.Marshal(params)
		return &jsonrpc.Request{ID: mk(id), Method: method, Params: p}
	}
	resp := func(id int64, result any) *jsonrpc.Response {
		r, _ := json.Marshal(result)
		return &jsonrpc.Response{ID: mk(id), Result: r}
	}
	rec.Observe(FromClient, req(1, "initialize", map[string]any{"clientInfo": map[string]any{"name": "client-" + gh}}))
	rec.Observe(FromServer, resp(1, map[string]any{"protocolVersion": "2025-06-18",
		"serverInfo": map[string]any{"name": "srv-" + sl, "version": "1.0+" + do}}))
	rec.Observe(FromClient, req(2, "tools/list", map[string]any{}))
	rec.Observe(FromServer, resp(2, map[string]any{"tools": []any{map[string]any{"name": tool,
		"annotations": map[string]any{"title": "Deploy with " + do, "destructiveHint": false}}}}))
	rec.Observe(FromClient, req(3, "tools/call", map[string]any{"name": tool, "arguments": map[string]any{"env": "prod"}}))
	rec.Observe(FromServer, resp(3, map[string]any{"content": []any{map[string]any{"type": "text", "text": "ok"}}}))
	// A call whose arguments cannot be read is a problem the trace
	// names, with the tool.
	rec.Observe(FromClient, &jsonrpc.Request{ID: mk(4), Method: "tools/call",
		Params: json.RawMessage(`{"name":"` + tool + `","arguments":{"a":1}}x`)})
	if err := rec.Flush(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(rec.File())
	if err != nil {
		t.Fatal(err)
	}
	for _, tok := range []string{gh, sl, do, gh[4:], sl[5:], h} {
		if strings.Contains(string(data), tok) {
			t.Errorf("the trace holds a token of a name:\n%s", data)
			break
		}
	}
	for _, want := range []string{`"name": "deploy_[redacted:github]"`, `"target": "srv-[redacted:slack]/deploy_[redacted:github]"`,
		`"mcp:srv-[redacted:slack]"`, `"client": "client-[redacted:github]"`, `"title": "Deploy with [redacted:digitalocean]"`} {
		if !strings.Contains(string(data), want) {
			t.Errorf("the trace lacks %s:\n%s", want, data)
		}
	}
	// The annotations of the redacted name are still found for its call.
	if !strings.Contains(string(data), `"mutation": "additive"`) {
		t.Errorf("the call lost its tool's annotations:\n%s", data)
	}
}
