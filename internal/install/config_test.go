package install

import (
	"strings"
	"testing"
)

// TestAddJSONKeepsOrder: members keep their order and values as written
// (a number stays 1.50), the indentation of the file is kept, and the
// server goes last.
func TestAddJSONKeepsOrder(t *testing.T) {
	conf := "{\n    \"z\": 1.50,\n    \"mcpServers\": {\"b\": {}, \"a\": {}},\n    \"a\": \"\\u00e9<\"\n}\n"
	out, err := addJSON([]byte(conf), "new", []byte(`{"command":"c"}`))
	if err != nil {
		t.Fatal(err)
	}
	want := "{\n    \"z\": 1.50,\n    \"mcpServers\": {\n        \"b\": {},\n        \"a\": {},\n        \"new\": {\n            \"command\": \"c\"\n        }\n    },\n    \"a\": \"\\u00e9<\"\n}\n"
	if string(out) != want {
		t.Errorf("addJSON =\n%s\nwant\n%s", out, want)
	}
	back, err := removeJSON(out, "new")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(back), "\"b\": {},\n        \"a\": {}\n    }") || strings.Contains(string(back), "new") {
		t.Errorf("removeJSON =\n%s", back)
	}
}

func TestAddJSONRefuses(t *testing.T) {
	for _, tc := range []struct{ conf, want string }{
		{`[1]`, "not a JSON object"},
		{`{"a": 1} {}`, "data after its object"},
		{`{"mcpServers": []}`, "mcpServers is not a JSON object"},
		{`{"mcpServers": {}, "mcpServers": {}}`, `key "mcpServers" twice`},
		{`{"mcpServers": {"new": {"command": "other"}}}`, `different MCP server named "new"`},
	} {
		_, err := addJSON([]byte(tc.conf), "new", []byte(`{"command":"c"}`))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("addJSON(%s) = %v, want an error with %q", tc.conf, err, tc.want)
		}
	}
}

// TestTOML: the table is appended as text and taken out as text, and a
// configuration where it cannot be appended (mcp_servers written inline)
// is refused with the table to add by hand.
func TestTOML(t *testing.T) {
	s := serverEntry{Command: "/bin/cz", Args: []string{"serve", "mcp", "--bundles", "/b \"q\""}}
	conf := "model = \"o4\" # keep\n[mcp_servers.other]\ncommand = \"x\""
	out, err := addTOML([]byte(conf), "crystallize-x", s)
	if err != nil {
		t.Fatal(err)
	}
	want := conf + "\n\n[mcp_servers.crystallize-x]\ncommand = \"/bin/cz\"\nargs = [\"serve\", \"mcp\", \"--bundles\", \"/b \\\"q\\\"\"]\n"
	if string(out) != want {
		t.Errorf("addTOML =\n%s\nwant\n%s", out, want)
	}
	if again, err := addTOML(out, "crystallize-x", s); again != nil || err != nil {
		t.Errorf("addTOML again = %q, %v; want nothing to do", again, err)
	}
	back, err := removeTOML(out, "crystallize-x")
	if err != nil || string(back) != conf+"\n" {
		t.Errorf("removeTOML = %q, %v", back, err)
	}
	if _, err := addTOML([]byte("mcp_servers = { other = { command = \"x\" } }\n"), "crystallize-x", s); err == nil || !strings.Contains(err.Error(), "add it by hand") {
		t.Errorf("inline mcp_servers: %v", err)
	}
	if _, err := addTOML([]byte("[mcp_servers.crystallize-x]\ncommand = \"/bin/cz\"\nargs = []\n"), "crystallize-x", s); err == nil || !strings.Contains(err.Error(), "different MCP server") {
		t.Errorf("same name, other args: %v", err)
	}
}
