package install

// Merging a server into an agent's configuration, and taking it out,
// keeping everything else as it was: JSON objects keep their members'
// order and values byte for byte (only the indentation is rewritten), and
// a TOML table is appended as text.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"strings"

	"github.com/BurntSushi/toml"
)

// serverEntry is the stdio server install registers.
type serverEntry struct {
	Command string
	Args    []string
}

// json is the entry as the agent's JSON configuration holds it: Claude
// Code's entries name their transport.
func (s serverEntry) json(agent string) []byte {
	var v any = struct {
		Command string   `json:"command"`
		Args    []string `json:"args"`
	}{s.Command, s.Args}
	if agent == ClaudeCode {
		v = struct {
			Type    string   `json:"type"`
			Command string   `json:"command"`
			Args    []string `json:"args"`
		}{"stdio", s.Command, s.Args}
	}
	out, _ := json.Marshal(v)
	return out
}

const jsonServers = "mcpServers"

// member is one member of a JSON object, its value as written.
type member struct {
	key string
	val json.RawMessage
}

// members reads a JSON object's members in order.
func members(data []byte, what string) ([]member, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	t, err := dec.Token()
	if err != nil {
		return nil, fmt.Errorf("%s is not JSON: %w", what, err)
	}
	if t != json.Delim('{') {
		return nil, fmt.Errorf("%s is not a JSON object", what)
	}
	var out []member
	seen := map[string]bool{}
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("%s is not JSON: %w", what, err)
		}
		k := kt.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, fmt.Errorf("%s is not JSON: %w", what, err)
		}
		if seen[k] {
			return nil, fmt.Errorf("%s has the key %q twice", what, k)
		}
		seen[k] = true
		out = append(out, member{k, raw})
	}
	if _, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("%s is not JSON: %w", what, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%s has data after its object", what)
	}
	return out, nil
}

// object writes members as a compact JSON object.
func object(ms []member) []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range ms {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(m.key)
		b.Write(k)
		b.WriteByte(':')
		b.Write(m.val)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// indentOf guesses the indentation unit of a JSON file: the leading
// whitespace of its first indented line, two spaces when it has none.
func indentOf(data []byte) string {
	for _, line := range strings.Split(string(data), "\n")[1:] {
		if trimmed := strings.TrimLeft(line, " \t"); trimmed != "" && len(trimmed) < len(line) {
			return line[:len(line)-len(trimmed)]
		}
	}
	return "  "
}

func render(ms []member, indent string) []byte {
	var out bytes.Buffer
	json.Indent(&out, object(ms), "", indent)
	out.WriteByte('\n')
	return out.Bytes()
}

// addJSON returns conf with the server name added to "mcpServers", or
// nil when it is there already. A different server of the name is an
// error.
func addJSON(conf []byte, name string, entry []byte) ([]byte, error) {
	var top []member
	if len(bytes.TrimSpace(conf)) > 0 {
		var err error
		if top, err = members(conf, "the configuration"); err != nil {
			return nil, err
		}
	}
	i := -1
	for j, m := range top {
		if m.key == jsonServers {
			i = j
		}
	}
	var servers []member
	if i >= 0 {
		var err error
		if servers, err = members(top[i].val, jsonServers); err != nil {
			return nil, err
		}
	}
	for _, s := range servers {
		if s.key != name {
			continue
		}
		if sameJSON(s.val, entry) {
			return nil, nil
		}
		return nil, fmt.Errorf("%s already has a different MCP server named %q (%s); it is not overwritten: remove it, or uninstall what installed it, first", jsonServers, name, compact(s.val))
	}
	servers = append(servers, member{name, entry})
	if i >= 0 {
		top[i].val = object(servers)
	} else {
		top = append(top, member{jsonServers, object(servers)})
	}
	return render(top, indentOf(conf)), nil
}

// removeJSON returns conf without the server name, or nil when it has
// none.
func removeJSON(conf []byte, name string) ([]byte, error) {
	top, err := members(conf, "the configuration")
	if err != nil {
		return nil, err
	}
	for i, m := range top {
		if m.key != jsonServers {
			continue
		}
		servers, err := members(m.val, jsonServers)
		if err != nil {
			return nil, err
		}
		n := len(servers)
		servers = deleteMember(servers, name)
		if len(servers) == n {
			return nil, nil
		}
		top[i].val = object(servers)
		return render(top, indentOf(conf)), nil
	}
	return nil, nil
}

func deleteMember(ms []member, key string) []member {
	var out []member
	for _, m := range ms {
		if m.key != key {
			out = append(out, m)
		}
	}
	return out
}

func sameJSON(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

func compact(raw []byte) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

// tomlServers is the table of Codex's MCP servers.
const tomlServers = "mcp_servers"

// codexServer is an [mcp_servers.NAME] table as read back.
type codexServer = map[string]any

func tomlServer(conf []byte, name string) (codexServer, error) {
	var doc map[string]any
	if _, err := toml.Decode(string(conf), &doc); err != nil {
		return nil, fmt.Errorf("the configuration is not TOML: %w", err)
	}
	servers, ok := doc[tomlServers]
	if !ok {
		return nil, nil
	}
	table, ok := servers.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s is not a table", tomlServers)
	}
	s, ok := table[name]
	if !ok {
		return nil, nil
	}
	entry, ok := s.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s.%s is not a table", tomlServers, name)
	}
	return entry, nil
}

func (s serverEntry) sameAs(e codexServer) bool {
	if len(e) != 2 || e["command"] != s.Command {
		return false
	}
	args, ok := e["args"].([]any)
	if !ok || len(args) != len(s.Args) {
		return false
	}
	for i, a := range args {
		if a != s.Args[i] {
			return false
		}
	}
	return true
}

// inlineServers finds mcp_servers written as an inline table.
var inlineServers = regexp.MustCompile(`(?m)^[ \t]*"?mcp_servers"?[ \t]*=`)

// tomlTable is the text of the server's table as install writes it.
func tomlTable(name string, s serverEntry) string {
	q := func(v string) string {
		// A JSON string is a TOML basic string: the same escapes.
		out, _ := json.Marshal(v)
		return string(out)
	}
	var args []string
	for _, a := range s.Args {
		args = append(args, q(a))
	}
	return fmt.Sprintf("[%s.%s]\ncommand = %s\nargs = [%s]\n", tomlServers, name, q(s.Command), strings.Join(args, ", "))
}

// addTOML returns conf with the table of the server appended, or nil
// when the same server is there already.
func addTOML(conf []byte, name string, s serverEntry) ([]byte, error) {
	cur, err := tomlServer(conf, name)
	if err != nil {
		return nil, err
	}
	if cur != nil {
		if s.sameAs(cur) {
			return nil, nil
		}
		return nil, fmt.Errorf("%s already has a different MCP server named %q; it is not overwritten: remove it, or uninstall what installed it, first", tomlServers, name)
	}
	// A table cannot extend an inline table; the TOML reader here lets it
	// pass, Codex's does not.
	if inlineServers.Match(conf) {
		return nil, errors.New("mcp_servers is an inline table, which a table cannot be added to; add it by hand:\n" + tomlTable(name, s))
	}
	var b strings.Builder
	b.Write(conf)
	if len(conf) > 0 {
		if !bytes.HasSuffix(conf, []byte("\n")) {
			b.WriteString("\n")
		}
		b.WriteString("\n")
	}
	b.WriteString(tomlTable(name, s))
	out := []byte(b.String())
	got, err := tomlServer(out, name)
	if err != nil || got == nil || !s.sameAs(got) {
		return nil, errors.New("the server cannot be appended to it as a table (is mcp_servers an inline table?); add it by hand:\n" + tomlTable(name, s))
	}
	return out, nil
}

// removeTOML returns conf without the server's table, when its header
// is on a line of its own; nil when there is no such table.
func removeTOML(conf []byte, name string) ([]byte, error) {
	lines := strings.SplitAfter(string(conf), "\n")
	header := "[" + tomlServers + "." + name + "]"
	start := -1
	for i, l := range lines {
		if strings.TrimSpace(l) == header {
			start = i
			break
		}
	}
	if start < 0 {
		return nil, nil
	}
	end := start + 1
	for end < len(lines) && !strings.HasPrefix(strings.TrimSpace(lines[end]), "[") {
		end++
	}
	// The blank line install put before the table goes with it.
	if start > 0 && strings.TrimSpace(lines[start-1]) == "" {
		start--
	}
	out := []byte(strings.Join(append(lines[:start:start], lines[end:]...), ""))
	if _, err := tomlServer(out, name); err != nil {
		return nil, err
	}
	return out, nil
}
