package runconfig

import (
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
	"time"
)

// DefaultMCPStartTimeout bounds starting an MCP server (connecting,
// initializing and listing its tools) when its entry sets no timeout.
// Calls are bounded by their binding's timeout, DefaultToolTimeout by
// default.
const DefaultMCPStartTimeout = time.Minute

// MCPServer is one [mcp.name] entry: an MCP server started over stdio from
// Command, or reached over streamable HTTP at URL (exactly one of them).
type MCPServer struct {
	// Command is the server's argv. Its elements may use {workspace};
	// a program containing a slash is relative to the config's
	// directory, like a command tool's.
	Command []string `toml:"command"`
	// Cwd is the server's working directory (default the first
	// workspace root), Env variables added to the runner's Options.Environ; both only
	// with Command.
	Cwd string            `toml:"cwd"`
	Env map[string]string `toml:"env"`
	// URL is the endpoint of a streamable HTTP server, such as
	// "http://127.0.0.1:8931/mcp".
	URL string `toml:"url"`
	// Timeout bounds starting the server and listing its tools (a
	// time.ParseDuration string); default DefaultMCPStartTimeout.
	Timeout string `toml:"timeout"`

	timeout time.Duration
}

// checkMCP validates the [mcp.*] entries and the tool bindings that name
// them; check calls it after the other bindings are checked.
func (c *Config) checkMCP(file string) []error {
	var errs []error
	bad := func(p, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s: %s", file, p, fmt.Sprintf(format, args...)))
	}
	for _, name := range slices.Sorted(maps.Keys(c.MCP)) {
		s := c.MCP[name]
		p := "mcp." + name
		switch {
		case len(s.Command) == 0 && s.URL == "":
			bad(p, "no server; set command (stdio) or url (streamable HTTP)")
		case len(s.Command) > 0 && s.URL != "":
			bad(p, "both command and url; set one")
		case s.URL != "":
			if u, err := url.Parse(s.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				bad(p+".url", "%q is not an http or https URL", s.URL)
			}
			if s.Cwd != "" || len(s.Env) > 0 {
				bad(p, "cwd and env apply only to a server started from a command")
			}
		case s.Command[0] == "":
			bad(p+".command[0]", "empty program")
		}
		s.timeout = DefaultMCPStartTimeout
		if s.Timeout != "" {
			d, err := time.ParseDuration(s.Timeout)
			if err != nil || d <= 0 {
				bad(p+".timeout", "%q is not a positive duration such as \"30s\"", s.Timeout)
			}
			s.timeout = d
		}
		c.MCP[name] = s
	}
	for _, name := range slices.Sorted(maps.Keys(c.Tools)) {
		b := c.Tools[name]
		p := fmt.Sprintf("tools.%q", name)
		if b.MCP == "" {
			if b.Tool != "" {
				bad(p+".tool", "names an MCP tool, but the binding sets no mcp server")
			}
			continue
		}
		if _, ok := c.MCP[b.MCP]; !ok {
			bad(p+".mcp", "unknown server %q; define it under [mcp.%s] (servers: %s)", b.MCP, b.MCP, namesOrNone(slices.Sorted(maps.Keys(c.MCP))))
		}
		if b.Cwd != "" || len(b.Env) > 0 {
			bad(p, "cwd and env of an MCP server go in its [mcp.%s] entry: one server process serves every binding", b.MCP)
		}
	}
	return errs
}

// namesOrNone lists names for a message, "none" when there are none.
func namesOrNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// ParsedTimeout is Timeout as LoadConfig parsed it
// (DefaultMCPStartTimeout when unset); 0 for an entry built in code.
func (s *MCPServer) ParsedTimeout() time.Duration { return s.timeout }
