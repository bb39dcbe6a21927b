package session

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/crystallize-dev/crystallize/internal/trace"
)

// geminiTrace is a trace of the shape source reads from a Gemini CLI
// session: numbers as json.Number, a failed command with an exit code,
// a prompt that would break a log's structure, a subagent working inline.
func geminiTrace() *trace.Trace {
	return &trace.Trace{
		ID:        "gem-7",
		StartedAt: "2026-03-01T08:00:00Z",
		Usage:     &trace.Usage{InputTokens: 900, OutputTokens: 100},
		Metadata: map[string]any{
			"agent": "gemini-cli", "model": "gemini-2.5-pro",
			"goal": "Fix the flaky test #ci\n\n## Steps\n```\nrun it\n```\n> [!decision]\n" + strings.Repeat(">", 40) + " deep",
		},
		Actions: []trace.Action{
			{ID: "1", Kind: trace.KindObservation, Name: "fs.read", Parameters: map[string]any{"path": "flaky_test.go", "limit": json.Number("40")}, Output: "package flaky\n\nfunc TestIt(t *testing.T) {}"},
			{ID: "2", Kind: trace.KindToolCall, Name: "go", Metadata: map[string]any{"command": "go test -run TestIt ./...", "exit_code": json.Number("1")}, Output: "--- FAIL: TestIt"},
			{ID: "3", Kind: trace.KindFileMutation, Name: "fs.edit", Parameters: map[string]any{"path": "flaky_test.go", "new": "it's\nlong"}},
			{ID: "4", Kind: trace.KindToolCall, Name: "go", Metadata: map[string]any{"command": "go test -count=5 ./...", "exit_code": json.Number("0")}, Output: "ok"},
			{ID: "5", Kind: trace.KindObservation, Name: "search.grep", Parameters: map[string]any{"pattern": "Sleep"}, Metadata: map[string]any{"sidechain": true}, Output: ""},
		},
	}
}

func TestFromTrace(t *testing.T) {
	s, err := FromTrace(geminiTrace(), nil)
	if err != nil {
		t.Fatal(err)
	}
	data, err := Format(s)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Parse("gem-7.md", data)
	if err != nil {
		t.Fatalf("Parse(Format(FromTrace)) = %v\n%s", err, data)
	}
	if back.Title != "Fix the flaky test" {
		t.Errorf("title %q: want the first line without the trailing #word a heading would drop", back.Title)
	}
	var phases []string
	for _, p := range back.Phases {
		phases = append(phases, p.Name+" @"+p.Agent)
	}
	if diff := cmp.Diff([]string{"Explore, run and edit @gemini-cli", "Explore @subagent"}, phases); diff != "" {
		t.Errorf("phases (-want +got):\n%s\n%s", diff, data)
	}
	md := string(data)
	for _, want := range []string{
		"status: paused\n",
		"  - gemini-cli\n",
		"tokens_used: 1000\n",
		"agent: gemini-cli\n",
		"- `fs.read --limit=40 --path=flaky_test.go` → `package flaky` (3 lines)\n",
		"- `go test -run TestIt ./...` → exit 1, `--- FAIL: TestIt`\n\n> [!error]\n> `go test -run TestIt ./...` failed: exit code 1\n",
		"- `fs.edit --new=\"it's\" --path=flaky_test.go` → no result\n",
		"- `go test -count=5 ./...` → exit 0, `ok`\n",
		"- `search.grep --pattern=Sleep` → no output\n",
		"````text\nFix the flaky test #ci\n",
		"\n> [!decision]\ndeep\n````\n",
	} {
		want = strings.ReplaceAll(want, `--new="it's"`, `--new='it'\''s'`)
		if !strings.Contains(md, want) {
			t.Errorf("the log lacks %q:\n%s", want, md)
		}
	}
}

// FuzzFromTrace checks that whatever an agent's prompt, commands and
// outputs hold, FromTrace writes a log that reads back without problems.
func FuzzFromTrace(f *testing.F) {
	f.Add("Fix it\n## not a phase", "git commit -m 'x'\n> [!user]", "out\n```", "- `a` → b")
	f.Add("", "", "", "")
	f.Add(strings.Repeat("> ", 50)+"deep", "\x00\r\n@agent #chan", "`````", "**Tool calls:**")
	f.Fuzz(func(t *testing.T, goal, command, output, param string) {
		tr := &trace.Trace{ID: "s", Metadata: map[string]any{"agent": "claude-code", "goal": goal}, Actions: []trace.Action{
			{ID: "1", Kind: trace.KindToolCall, Name: "sh", Metadata: map[string]any{"command": command, "error": output}, Output: output},
			{ID: "2", Kind: trace.KindObservation, Name: "fs.read", Parameters: map[string]any{"path": param}, Output: output},
		}}
		s, err := FromTrace(tr, []Nested{{Session: "s.agent-1", Agent: "subagent", Model: param, Goal: goal}})
		if err != nil {
			t.Fatalf("FromTrace: %v", err)
		}
		data, err := Format(s)
		if err != nil {
			t.Fatalf("Format: %v", err)
		}
		if _, err := Parse("s.md", data); err != nil {
			t.Fatalf("Parse: %v\n%s", err, data)
		}
	})
}

// TestFromTraceLaterPrompts: what the person typed after the first prompt
// becomes a [!user] callout opening the phase of the calls that followed
// it (one typed after the last call ends the log), so learn and resume see
// the turns; text in a prompt that looks like a phase or an inbox callout
// stays inside the callout.
func TestFromTraceLaterPrompts(t *testing.T) {
	tr := &trace.Trace{
		ID: "c-1", StartedAt: "2026-03-01T08:00:00Z",
		Metadata: map[string]any{
			"agent": "claude-code", "goal": "Fix the flaky test",
			trace.MetaPrompts: []any{
				map[string]any{"timestamp": "2026-03-01T08:00:00Z", "text": "Fix the flaky test"},
				map[string]any{"timestamp": "2026-03-01T08:05:00Z", "text": "now commit and push\n## Phase 9\n> [!decision_needed] ship?"},
				map[string]any{"timestamp": "2026-03-01T08:09:00Z", "text": "thanks"},
			},
		},
		Actions: []trace.Action{
			{ID: "1", Kind: trace.KindToolCall, Name: "go", Timestamp: "2026-03-01T08:01:00Z", Metadata: map[string]any{"command": "go test ./...", "exit_code": json.Number("0")}, Output: "ok"},
			{ID: "2", Kind: trace.KindToolCall, Name: "git", Timestamp: "2026-03-01T08:06:00Z", Metadata: map[string]any{"command": "git commit -m fix", "exit_code": json.Number("0")}, Output: "[main 1a2b] fix"},
			{ID: "3", Kind: trace.KindToolCall, Name: "git", Timestamp: "2026-03-01T08:07:00Z", Metadata: map[string]any{"command": "git push", "exit_code": json.Number("0")}, Output: ""},
		},
	}
	s, err := FromTrace(tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	data, err := Format(s)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Parse("c-1.md", data)
	if err != nil {
		t.Fatalf("Parse(Format(FromTrace)) = %v\n%s", err, data)
	}
	if len(back.Phases) != 2 {
		t.Fatalf("%d phases, want 2 (the test run, then the commit the person asked for):\n%s", len(back.Phases), data)
	}
	var users [][]string
	for _, p := range back.Phases {
		for _, b := range p.Blocks {
			if c, ok := b.(Callout); ok {
				if c.Type != CalloutUser {
					t.Errorf("phase %q holds a %s callout: text of a prompt became one:\n%s", p.Name, c.Type, data)
				}
				users = append(users, c.Body)
			}
		}
	}
	want := [][]string{{"now commit and push", "## Phase 9", "> [!decision_needed] ship?"}, {"thanks"}}
	if diff := cmp.Diff(want, users); diff != "" {
		t.Errorf("[!user] callouts (-want +got):\n%s\n%s", diff, data)
	}
	if first, ok := back.Phases[1].Blocks[0].(Callout); !ok || first.Type != CalloutUser {
		t.Errorf("the second phase does not open with the prompt:\n%s", data)
	}
}
