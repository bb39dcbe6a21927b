package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestUsageExitCodes pins exit status 2 for the usage errors of the
// commands whose help promises it. The testscripts check the message
// but `! exec` accepts any non-zero status, so a usage error returned
// as a plain error (exit 1) would pass them.
func TestUsageExitCodes(t *testing.T) {
	tests := []struct {
		args []string
		want string // the whole of stderr
	}{
		{[]string{"import", "--out", "o"}, "crystallize: --from is required: the directory (or file) of session logs to import\n"},
		{[]string{"import", "--from", "f"}, "crystallize: --out is required: the directory to write the traces into\n"},
		{[]string{"import", "--from", "f", "--out", "f/traces"}, "crystallize: --out f/traces is inside --from f: the next import would read the traces back\n"},
		{[]string{"capture"}, "crystallize: capture needs a subcommand: crystallize capture mcp -- SERVER_COMMAND [ARGS...]\n"},
		{[]string{"capture", "mcp"}, "crystallize: capture mcp: no server; give its command after --, or --upstream URL\n"},
		{[]string{"capture", "mcp", "--upstream", "ftp://example.com/mcp"}, "crystallize: capture mcp: --upstream \"ftp://example.com/mcp\" is not an http or https URL\n"},
		{[]string{"serve"}, "crystallize: serve needs a subcommand: crystallize serve mcp\n"},
		{[]string{"serve", "mcp", "--json"}, "crystallize: --json goes with --list\n"},
		{[]string{"serve", "mcp", "--http", "nonsense"}, "crystallize: --http \"nonsense\": want host:port, such as 127.0.0.1:8931\n"},
		{[]string{"sessions", "show", "--next", "--prev"}, "crystallize: --next and --prev exclude each other\n"},
		{[]string{"sessions", "show"}, "crystallize: give a session (N or ID), or --next or --prev\n"},
		{[]string{"sessions", "show", "1", "--lines", "-1"}, "crystallize: --lines -1: want a count of lines, 0 or more\n"},
		{[]string{"synth", "derive"}, "crystallize: give one of --target and --all\n"},
		{[]string{"harness", "write"}, "crystallize: harness write: --kit is required\n"},
		{[]string{"harness", "judge", "calibrate", "suite"}, "crystallize: harness judge calibrate: --judge-url and --judge-model are required\n"},
		{[]string{"mine", "--from", "t", "--miner", "fuzzy"}, "crystallize: --miner must be auto, exact or gapped, got \"fuzzy\"\n"},
		{[]string{"mine", "--from", "t", "--passes", "3"}, "crystallize: --passes must be auto, 1 or 2, got \"3\"\n"},
		{[]string{"mine", "--from", "t", "--bundle", "b", "--bundles", "bs"}, "crystallize: --bundle and --bundles: pass one (--bundle writes the selected candidate's bundle, --bundles one for every safe candidate)\n"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			t.Chdir(t.TempDir())
			var stdout, stderr bytes.Buffer
			e := &env{stdout: &stdout, stderr: &stderr, getenv: fixedEnv}
			code := run(context.Background(), e, tt.args)
			if code != exitUsage || stderr.String() != tt.want {
				t.Errorf("crystallize %v: exit %d stderr %q, want exit 2 and %q", tt.args, code, stderr.String(), tt.want)
			}
		})
	}
}
