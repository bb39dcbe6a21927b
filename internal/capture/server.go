package capture

import (
	"errors"
	"fmt"
	"io"
	"net/url"
	"os/exec"
	"path/filepath"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ErrNotHTTPURL is returned by NewHTTPUpstream for an endpoint that is not
// an absolute http or https URL with a host.
var ErrNotHTTPURL = errors.New("not an http or https URL")

// NewHTTPUpstream returns the transport to the streamable HTTP server at
// endpoint, and the name its sessions are recorded under when its
// initialize response names none (the URL's host). warn is told why the
// standalone stream could not be kept (HTTPUpstream.Warn). Only http and
// https are relayed: any other scheme would have the proxy open whatever
// the URL names.
func NewHTTPUpstream(endpoint string, warn func(string)) (*HTTPUpstream, string, error) {
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, "", fmt.Errorf("%q: %w", endpoint, ErrNotHTTPURL)
	}
	return &HTTPUpstream{Endpoint: endpoint, Warn: warn}, u.Hostname(), nil
}

// NewCommand returns the transport that starts the server argv[0] with
// the rest of argv as its arguments and speaks to it over stdio (a
// Command), and the name its sessions are recorded under when its
// initialize response names none (the command's base name). The server's
// stderr goes to stderr, so its own diagnostics reach the person who
// started the proxy; warn is told of the server's messages that could not
// be relayed (Command.Warn). argv must not be empty.
func NewCommand(argv []string, stderr io.Writer, warn func(string)) (mcp.Transport, string) {
	c := exec.Command(argv[0], argv[1:]...)
	c.Stderr = stderr
	return &Command{Cmd: c, Warn: warn}, filepath.Base(argv[0])
}
