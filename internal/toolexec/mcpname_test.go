package toolexec

import (
	"testing"

	"github.com/crystallize-dev/crystallize/internal/runconfig"
)

func TestMCPToolName(t *testing.T) {
	for _, tc := range []struct {
		pattern, tool, name, want string
	}{
		{"docs.*", "", "docs.search", "search"},
		{"docs.*", "find", "docs.search", "find"},
		{"docs.search", "", "docs.search", "docs.search"},
		{"docs.search", "search", "docs.search", "search"},
		{"*", "", "search", "search"},
		{"mcp__docs__*", "", "mcp__docs__search", "search"},
		{"docs.*", "", "docs.", "docs."},
	} {
		if got := MCPToolName(tc.pattern, &runconfig.ToolBinding{Tool: tc.tool}, tc.name); got != tc.want {
			t.Errorf("mcpToolName(%q, tool %q, %q) = %q, want %q", tc.pattern, tc.tool, tc.name, got, tc.want)
		}
	}
}
