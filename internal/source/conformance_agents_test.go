package source

import (
	"bufio"
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/trace"
)

// realAgentsDir holds session logs that people published, as their
// agents wrote them: Claude Code project directories and a Codex home.
// They are read in place, never copied into the project.
const realAgentsDir = "../../../shared/fixtures/real-agents"

// TestConformanceRealAgents imports each folder of real logs as a user
// would, without SkipInvalid, and checks what a user would: every file is
// read, every tool call the logs hold (counted here independently of the
// adapters, by its id) is an action of exactly one trace, and no session
// that repeats another is counted as its own support.
func TestConformanceRealAgents(t *testing.T) {
	if _, err := os.Stat(realAgentsDir); err != nil {
		if os.Getenv("CRYSTALLIZE_REQUIRE_CONFORMANCE") == "1" {
			t.Fatalf("real agent logs %s are required (CRYSTALLIZE_REQUIRE_CONFORMANCE=1): %v", realAgentsDir, err)
		}
		t.Skipf("real agent logs %s not found; set CRYSTALLIZE_REQUIRE_CONFORMANCE=1 to require them", realAgentsDir)
	}
	dirs, err := os.ReadDir(realAgentsDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) < 4 {
		t.Fatalf("%s holds %d folders, want the 4 of the corpus", realAgentsDir, len(dirs))
	}
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		dir := filepath.Join(realAgentsDir, d.Name())
		t.Run(d.Name(), func(t *testing.T) {
			res, err := Load(context.Background(), dir, Options{})
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			calls, searches := countCalls(t, dir)
			if len(calls) == 0 {
				t.Fatal("no tool call found in the logs: the count is broken")
			}
			// A call becomes one action, or several with ids
			// "<call id>.N" (a shell command of several heads).
			owner := map[string]string{}
			gotSearches := 0
			for _, tr := range res.Traces {
				for _, a := range tr.Actions {
					id := a.ID
					if strings.HasPrefix(id, "web_search_call@") {
						gotSearches++
						continue
					}
					if _, ok := calls[id]; !ok {
						if i := strings.LastIndexByte(id, '.'); i > 0 {
							id = id[:i]
						}
					}
					if _, ok := calls[id]; !ok {
						t.Errorf("trace %s: action %s is no tool call of the logs", tr.ID, a.ID)
						continue
					}
					if first, dup := owner[id]; dup && first != tr.ID {
						t.Errorf("call %s counted in two traces: %s and %s", id, first, tr.ID)
					}
					owner[id] = tr.ID
				}
			}
			for id, where := range calls {
				if _, ok := owner[id]; !ok {
					t.Errorf("%s: call %s is not imported", where, id)
				}
			}
			if gotSearches != searches {
				t.Errorf("web searches: %d imported, %d in the logs", gotSearches, searches)
			}
			// Every copy note names a session that was imported.
			ids := map[string]bool{}
			for _, tr := range res.Traces {
				ids[tr.ID] = true
			}
			for _, n := range res.Notes {
				if (n.Code == NoteCopy || n.Code == NoteRepeats) && !ids[n.Detail] {
					t.Errorf("%s: copy of %s, which is not imported", n.Path, n.Detail)
				}
			}
			prompts := checkPromptLogs(t, res.Traces)
			t.Logf("%d traces, %d distinct tool calls, %d notes, %d sessions without calls, %d prompts", len(res.Traces), len(calls), len(res.Notes), len(res.SkippedSessions), prompts)
		})
	}
}

// notTyped are starts of user turns that the agent, the IDE or a
// background task wrote: a prompt log that holds one describes a
// procedure with words nobody typed.
var notTyped = []string{"<ide_", "<task-notification>", "<bash-", "<command-", "<local-command", "<system-reminder>",
	"This session is being continued from a previous conversation", "Context: This summary will be shown"}

// checkPromptLogs checks each trace's prompt log: in time order, with
// nothing the person did not type, and starting with the goal. It returns
// the number of prompts.
func checkPromptLogs(t *testing.T, traces []*trace.Trace) int {
	n := 0
	for _, tr := range traces {
		list, _ := tr.Metadata[trace.MetaPrompts].([]any)
		prev := ""
		for i, v := range list {
			p := v.(map[string]any)
			ts, text := p["timestamp"].(string), p["text"].(string)
			if ts < prev {
				t.Errorf("trace %s: prompt %d at %s comes before the one at %s", tr.ID, i, ts, prev)
			}
			prev = ts
			if text == "Warmup" {
				t.Errorf("trace %s: prompt %d is Claude Code's warmup", tr.ID, i)
			}
			for _, s := range notTyped {
				if strings.HasPrefix(text, s) {
					t.Errorf("trace %s: prompt %d starts with %q, which no person typed", tr.ID, i, s)
				}
			}
			n++
		}
		if goal, _ := tr.Metadata["goal"].(string); goal != "" && len(list) > 0 {
			first := list[0].(map[string]any)["text"].(string)
			if !strings.HasPrefix(goal, strings.TrimSuffix(first, "…")) {
				t.Errorf("trace %s: goal %.60q is not the first prompt %.60q", tr.ID, goal, first)
			}
		}
	}
	return n
}

// codexCallTypes are the response items of a Codex rollout that are tool
// calls.
var codexCallTypes = regexp.MustCompile(`^(function_call|custom_tool_call|local_shell_call|web_search_call)$`)

// countCalls returns the distinct tool-call ids of the session logs
// under dir, each with the first place it was met, and the number of
// web searches without an id. It reads the logs with encoding/json,
// record by record, knowing only where each agent writes its calls.
func countCalls(t *testing.T, dir string) (map[string]string, int) {
	calls := map[string]string{}
	searches := 0
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".jsonl") {
			return err
		}
		fh, err := os.Open(p)
		if err != nil {
			return err
		}
		defer fh.Close()
		sc := bufio.NewScanner(fh)
		sc.Buffer(nil, 64<<20)
		for n := 1; sc.Scan(); n++ {
			var rec struct {
				Type    string `json:"type"`
				Message struct {
					Content json.RawMessage `json:"content"`
				} `json:"message"`
				Payload struct {
					Type   string `json:"type"`
					CallID string `json:"call_id"`
					ID     string `json:"id"`
				} `json:"payload"`
			}
			if json.Unmarshal(sc.Bytes(), &rec) != nil {
				continue
			}
			where := p + ":" + itoa(n)
			switch {
			case rec.Type == "response_item" && codexCallTypes.MatchString(rec.Payload.Type):
				id := rec.Payload.CallID
				if id == "" {
					id = rec.Payload.ID
				}
				if id == "" {
					searches++
					continue
				}
				if _, ok := calls[id]; !ok {
					calls[id] = where
				}
			case rec.Type == "assistant":
				var blocks []struct {
					Type string `json:"type"`
					ID   string `json:"id"`
				}
				if json.Unmarshal(rec.Message.Content, &blocks) != nil {
					continue
				}
				for _, b := range blocks {
					if b.Type == "tool_use" {
						if _, ok := calls[b.ID]; !ok {
							calls[b.ID] = where
						}
					}
				}
			}
		}
		return sc.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	return calls, searches
}
