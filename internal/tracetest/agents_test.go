package tracetest

import (
	"bufio"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// The structs below are the documented shapes of each format, as far as
// an importer relies on them. Records are decoded into them and every
// field an importer needs is checked to be there, so a generator change
// that breaks a shape fails here, not in an importer's test.

type claudeLineT struct {
	Type          string          `json:"type"`
	Summary       *string         `json:"summary"`
	LeafUUID      string          `json:"leafUuid"`
	ParentUUID    *string         `json:"parentUuid"`
	IsSidechain   *bool           `json:"isSidechain"`
	SessionID     string          `json:"sessionId"`
	UUID          string          `json:"uuid"`
	Timestamp     string          `json:"timestamp"`
	Cwd           string          `json:"cwd"`
	GitBranch     string          `json:"gitBranch"`
	Message       *claudeMessageT `json:"message"`
	ToolUseResult json.RawMessage `json:"toolUseResult"`
}

type claudeMessageT struct {
	ID      string          `json:"id"`
	Role    string          `json:"role"`
	Model   string          `json:"model"`
	Content json.RawMessage `json:"content"`
	Usage   *struct {
		InputTokens  *int `json:"input_tokens"`
		OutputTokens *int `json:"output_tokens"`
	} `json:"usage"`
}

type claudeBlockT struct {
	Type      string          `json:"type"`
	Text      *string         `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   *string         `json:"content"`
	IsError   *bool           `json:"is_error"`
}

type codexLineT struct {
	Timestamp string          `json:"timestamp"`
	Type      string          `json:"type"`
	Payload   json.RawMessage `json:"payload"`
}

type codexPayloadT struct {
	Type      string          `json:"type"`
	ID        string          `json:"id"`
	Cwd       string          `json:"cwd"`
	Model     string          `json:"model"`
	Role      string          `json:"role"`
	Content   []codexText     `json:"content"`
	Name      string          `json:"name"`
	Arguments *string         `json:"arguments"`
	CallID    string          `json:"call_id"`
	Output    *string         `json:"output"`
	Input     *string         `json:"input"`
	Info      json.RawMessage `json:"info"`
}

type codexShellArgsT struct {
	Command []string `json:"command"`
	Workdir string   `json:"workdir"`
}

type codexShellOutputT struct {
	Output   *string `json:"output"`
	Metadata *struct {
		ExitCode        *int     `json:"exit_code"`
		DurationSeconds *float64 `json:"duration_seconds"`
	} `json:"metadata"`
}

type otelRequestT struct {
	ResourceSpans []struct {
		Resource struct {
			Attributes []otelAttrT `json:"attributes"`
		} `json:"resource"`
		ScopeSpans []struct {
			Scope struct {
				Name string `json:"name"`
			} `json:"scope"`
			Spans []otelSpanT `json:"spans"`
		} `json:"scopeSpans"`
	} `json:"resourceSpans"`
}

type otelSpanT struct {
	TraceID           string      `json:"traceId"`
	SpanID            string      `json:"spanId"`
	ParentSpanID      string      `json:"parentSpanId"`
	Name              string      `json:"name"`
	Kind              int         `json:"kind"`
	StartTimeUnixNano string      `json:"startTimeUnixNano"`
	EndTimeUnixNano   string      `json:"endTimeUnixNano"`
	Attributes        []otelAttrT `json:"attributes"`
	Status            struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"status"`
}

type otelAttrT struct {
	Key   string `json:"key"`
	Value struct {
		StringValue *string `json:"stringValue"`
		IntValue    *string `json:"intValue"`
		ArrayValue  *struct {
			Values []json.RawMessage `json:"values"`
		} `json:"arrayValue"`
	} `json:"value"`
}

// decodeJSON decodes one record into v. Fields v does not name are
// allowed: the formats have more than an importer needs.
func decodeJSON(data []byte, v any) error {
	return json.Unmarshal(data, v)
}

// sessionStats is what a format's files say about one session.
type sessionStats struct {
	calls, failed int
	// messages are the assistant message ids (Claude Code).
	messages map[string]bool
}

// readLines calls fn with every line of every file under dir.
func readLines(t *testing.T, dir string, fn func(rel string, line int, data []byte)) {
	t.Helper()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<26)
		n := 0
		for sc.Scan() {
			n++
			if !json.Valid(sc.Bytes()) {
				t.Errorf("%s:%d: not JSON", rel, n)
				continue
			}
			fn(filepath.ToSlash(rel), n, sc.Bytes())
		}
		return sc.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
}

var (
	uuidRE  = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	hex32RE = regexp.MustCompile(`^[0-9a-f]{32}$`)
	hex16RE = regexp.MustCompile(`^[0-9a-f]{16}$`)
)

func checkStamp(t *testing.T, where, s string) {
	t.Helper()
	if _, err := time.Parse(time.RFC3339Nano, s); err != nil {
		t.Errorf("%s: timestamp %q: %v", where, s, err)
	}
}

// checkClaude checks every record of a Claude Code corpus and returns the
// tool calls per session id.
func checkClaude(t *testing.T, dir string) map[string]*sessionStats {
	stats := map[string]*sessionStats{}
	pending := map[string]bool{} // tool_use ids without a result yet
	lastUUID := map[string]string{}
	leaves := map[string]string{} // session → its summary's leafUuid
	readLines(t, dir, func(rel string, n int, data []byte) {
		where := fmt.Sprintf("%s:%d", rel, n)
		var l claudeLineT
		if err := decodeJSON(data, &l); err != nil {
			t.Errorf("%s: %v", where, err)
			return
		}
		file := strings.TrimSuffix(filepath.Base(rel), ".jsonl")
		if l.Type == "summary" {
			if l.Summary == nil || *l.Summary == "" || !uuidRE.MatchString(l.LeafUUID) {
				t.Errorf("%s: summary without text or leafUuid", where)
			}
			leaves[file] = l.LeafUUID
			return
		}
		if l.Type != "user" && l.Type != "assistant" {
			t.Errorf("%s: type %q", where, l.Type)
			return
		}
		st := stats[l.SessionID]
		if st == nil {
			st = &sessionStats{messages: map[string]bool{}}
			stats[l.SessionID] = st
		}
		if l.SessionID != file {
			t.Errorf("%s: sessionId %q in file of session %q", where, l.SessionID, file)
		}
		if !uuidRE.MatchString(l.UUID) || l.Cwd == "" || l.GitBranch == "" || l.IsSidechain == nil || l.Message == nil {
			t.Errorf("%s: missing uuid, cwd, gitBranch, isSidechain or message", where)
			return
		}
		checkStamp(t, where, l.Timestamp)
		switch prev := lastUUID[l.SessionID]; {
		case prev == "" && l.ParentUUID != nil:
			t.Errorf("%s: first record has parentUuid %q", where, *l.ParentUUID)
		case prev != "" && (l.ParentUUID == nil || *l.ParentUUID != prev):
			t.Errorf("%s: parentUuid is not the previous record's uuid %s", where, prev)
		}
		lastUUID[l.SessionID] = l.UUID
		if l.Message.Role != l.Type {
			t.Errorf("%s: message role %q in a %s record", where, l.Message.Role, l.Type)
		}
		var text string
		if json.Unmarshal(l.Message.Content, &text) == nil {
			if l.Type != "user" || text == "" {
				t.Errorf("%s: string content %q in a %s record", where, text, l.Type)
			}
			return
		}
		var blocks []claudeBlockT
		if err := json.Unmarshal(l.Message.Content, &blocks); err != nil || len(blocks) == 0 {
			t.Errorf("%s: $.message.content: not a list of blocks (%v)", where, err)
			return
		}
		if l.Type == "assistant" {
			if l.Message.Model == "" || l.Message.ID == "" || l.Message.Usage == nil || l.Message.Usage.InputTokens == nil || l.Message.Usage.OutputTokens == nil {
				t.Errorf("%s: assistant message without id, model or usage", where)
			}
			st.messages[l.Message.ID] = true
		}
		for i, b := range blocks {
			bw := fmt.Sprintf("%s: $.message.content[%d]", where, i)
			switch {
			case l.Type == "assistant" && b.Type == "text":
				if b.Text == nil {
					t.Errorf("%s: text block without text", bw)
				}
			case l.Type == "assistant" && b.Type == "tool_use":
				var input map[string]any
				if !strings.HasPrefix(b.ID, "toolu_") || b.Name == "" || json.Unmarshal(b.Input, &input) != nil {
					t.Errorf("%s: tool_use without id, name or object input", bw)
				}
				if b.Name == "Bash" {
					if c, ok := input["command"].(string); !ok || c == "" {
						t.Errorf("%s: Bash input without command", bw)
					}
				}
				if pending[b.ID] {
					t.Errorf("%s: tool_use id %s used twice", bw, b.ID)
				}
				pending[b.ID] = true
				st.calls++
			case l.Type == "user" && b.Type == "tool_result":
				if !pending[b.ToolUseID] || b.Content == nil || b.IsError == nil {
					t.Errorf("%s: tool_result without a pending tool_use_id, content or is_error", bw)
					continue
				}
				delete(pending, b.ToolUseID)
				if *b.IsError {
					st.failed++
				}
				if len(l.ToolUseResult) == 0 {
					t.Errorf("%s: tool result record without toolUseResult", where)
				}
			default:
				t.Errorf("%s: %s block in a %s record", bw, b.Type, l.Type)
			}
		}
	})
	if len(pending) > 0 {
		t.Errorf("%d tool_use blocks without a tool_result", len(pending))
	}
	if len(leaves) == 0 {
		t.Errorf("no session has a summary line")
	}
	for session, leaf := range leaves {
		if lastUUID[session] != leaf {
			t.Errorf("session %s: summary leafUuid %s is not its last record %s", session, leaf, lastUUID[session])
		}
	}
	return stats
}

// checkCodex checks every record of a Codex corpus.
func checkCodex(t *testing.T, dir string) map[string]*sessionStats {
	stats := map[string]*sessionStats{}
	pending := map[string]string{} // call_id → tool name
	session := map[string]string{} // file → session id
	fileRE := regexp.MustCompile(`^\d{4}/\d{2}/\d{2}/rollout-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-(.{36})\.jsonl$`)
	readLines(t, dir, func(rel string, n int, data []byte) {
		where := fmt.Sprintf("%s:%d", rel, n)
		m := fileRE.FindStringSubmatch(rel)
		if m == nil {
			t.Errorf("%s: file name is not YYYY/MM/DD/rollout-<ts>-<uuid>.jsonl", rel)
			return
		}
		var l codexLineT
		var p codexPayloadT
		if err := decodeJSON(data, &l); err != nil || decodeJSON(l.Payload, &p) != nil {
			t.Errorf("%s: not {timestamp, type, payload object}", where)
			return
		}
		checkStamp(t, where, l.Timestamp)
		if n == 1 {
			if l.Type != "session_meta" || p.ID != m[1] || p.Cwd == "" {
				t.Errorf("%s: first record is %s with id %q, want session_meta with id %s and cwd", where, l.Type, p.ID, m[1])
			}
			session[rel] = p.ID
			stats[p.ID] = &sessionStats{}
			return
		}
		st := stats[session[rel]]
		switch l.Type {
		case "turn_context":
			if p.Model == "" || p.Cwd == "" {
				t.Errorf("%s: turn_context without model or cwd", where)
			}
		case "event_msg":
			if p.Type == "token_count" {
				var info struct {
					Total *codexUsage `json:"total_token_usage"`
					Last  *codexUsage `json:"last_token_usage"`
				}
				if json.Unmarshal(p.Info, &info) != nil || info.Total == nil || info.Last == nil || info.Last.InputTokens == 0 {
					t.Errorf("%s: token_count without total and last usage", where)
				}
			} else if p.Type != "user_message" {
				t.Errorf("%s: event_msg %q", where, p.Type)
			}
		case "response_item":
			switch p.Type {
			case "message":
				if len(p.Content) == 0 || (p.Role != "user" && p.Role != "assistant") {
					t.Errorf("%s: message without role or content", where)
				}
			case "function_call":
				if p.Arguments == nil || p.CallID == "" || pending[p.CallID] != "" {
					t.Errorf("%s: function_call without arguments or a new call_id", where)
					return
				}
				switch p.Name {
				case "shell":
					var args codexShellArgsT
					if json.Unmarshal([]byte(*p.Arguments), &args) != nil || len(args.Command) == 0 || args.Workdir == "" {
						t.Errorf("%s: shell arguments %q: want {command: [argv], workdir}", where, *p.Arguments)
					}
				case "update_plan":
					var args struct{ Plan []map[string]string }
					if json.Unmarshal([]byte(*p.Arguments), &args) != nil || len(args.Plan) == 0 {
						t.Errorf("%s: update_plan arguments %q", where, *p.Arguments)
					}
				default:
					t.Errorf("%s: function_call %q", where, p.Name)
				}
				pending[p.CallID] = p.Name
				st.calls++
			case "custom_tool_call":
				if p.Name != "apply_patch" || p.Input == nil || !strings.HasPrefix(*p.Input, "*** Begin Patch\n") || p.CallID == "" {
					t.Errorf("%s: custom_tool_call is not an apply_patch with a patch input", where)
				}
				pending[p.CallID] = p.Name
				st.calls++
			case "function_call_output", "custom_tool_call_output":
				name := pending[p.CallID]
				if name == "" || p.Output == nil {
					t.Errorf("%s: %s without a pending call_id or output", where, p.Type)
					return
				}
				delete(pending, p.CallID)
				if name == "update_plan" {
					return
				}
				var out codexShellOutputT
				if json.Unmarshal([]byte(*p.Output), &out) != nil || out.Output == nil || out.Metadata == nil || out.Metadata.ExitCode == nil || out.Metadata.DurationSeconds == nil {
					t.Errorf("%s: output %q: want {output, metadata: {exit_code, duration_seconds}}", where, *p.Output)
					return
				}
				if *out.Metadata.ExitCode != 0 {
					st.failed++
				}
			default:
				t.Errorf("%s: response_item %q", where, p.Type)
			}
		default:
			t.Errorf("%s: record type %q", where, l.Type)
		}
	})
	if len(pending) > 0 {
		t.Errorf("%d calls without output", len(pending))
	}
	return stats
}

// attrMap returns a span's attributes, checking each has exactly one
// value.
func attrMap(t *testing.T, where string, attrs []otelAttrT) map[string]string {
	m := map[string]string{}
	for _, a := range attrs {
		v := a.Value
		switch {
		case v.StringValue != nil && v.IntValue == nil && v.ArrayValue == nil:
			m[a.Key] = *v.StringValue
		case v.IntValue != nil && v.StringValue == nil && v.ArrayValue == nil:
			if _, err := strconv.ParseInt(*v.IntValue, 10, 64); err != nil {
				t.Errorf("%s: %s: intValue %q is not a decimal string", where, a.Key, *v.IntValue)
			}
			m[a.Key] = *v.IntValue
		case v.ArrayValue != nil && v.StringValue == nil && v.IntValue == nil:
			m[a.Key] = "[array]"
		default:
			t.Errorf("%s: attribute %s has not exactly one value", where, a.Key)
		}
	}
	return m
}

// checkOTel checks every span of an OpenTelemetry corpus; sessions are
// keyed by trace id.
func checkOTel(t *testing.T, dir string) map[string]*sessionStats {
	stats := map[string]*sessionStats{}
	roots := map[string]string{} // traceId → root span id
	parents := map[string][]string{}
	callIDs := map[string]bool{}
	readLines(t, dir, func(rel string, n int, data []byte) {
		where := fmt.Sprintf("%s:%d", rel, n)
		var req otelRequestT
		if err := decodeJSON(data, &req); err != nil || len(req.ResourceSpans) == 0 {
			t.Errorf("%s: not an ExportTraceServiceRequest (%v)", where, err)
			return
		}
		for _, rs := range req.ResourceSpans {
			if attrMap(t, where, rs.Resource.Attributes)["service.name"] == "" {
				t.Errorf("%s: resource without service.name", where)
			}
			for _, ss := range rs.ScopeSpans {
				for k, sp := range ss.Spans {
					sw := fmt.Sprintf("%s: span %d", where, k)
					if !hex32RE.MatchString(sp.TraceID) || !hex16RE.MatchString(sp.SpanID) || (sp.ParentSpanID != "" && !hex16RE.MatchString(sp.ParentSpanID)) {
						t.Errorf("%s: ids are not lowercase hex of 16 and 8 bytes", sw)
					}
					start, err1 := strconv.ParseInt(sp.StartTimeUnixNano, 10, 64)
					end, err2 := strconv.ParseInt(sp.EndTimeUnixNano, 10, 64)
					if err1 != nil || err2 != nil || end < start {
						t.Errorf("%s: bad start/end times %q %q", sw, sp.StartTimeUnixNano, sp.EndTimeUnixNano)
					}
					attrs := attrMap(t, sw, sp.Attributes)
					st := stats[sp.TraceID]
					if st == nil {
						st = &sessionStats{}
						stats[sp.TraceID] = st
					}
					op := attrs["gen_ai.operation.name"]
					if !strings.HasPrefix(sp.Name, op+" ") {
						t.Errorf("%s: name %q does not start with the operation %q", sw, sp.Name, op)
					}
					switch op {
					case "invoke_agent":
						if sp.ParentSpanID != "" || roots[sp.TraceID] != "" {
							t.Errorf("%s: second or non-root invoke_agent span", sw)
						}
						roots[sp.TraceID] = sp.SpanID
						if !strings.Contains(attrs["gen_ai.input.messages"], `"role":"user"`) {
							t.Errorf("%s: invoke_agent without the user's input message", sw)
						}
					case "chat":
						if attrs["gen_ai.request.model"] == "" || attrs["gen_ai.usage.input_tokens"] == "" || attrs["gen_ai.usage.output_tokens"] == "" || sp.Kind != spanKindClient {
							t.Errorf("%s: chat span without model or usage, or not a client span", sw)
						}
					case "execute_tool":
						var args map[string]any
						id := attrs["gen_ai.tool.call.id"]
						if attrs["gen_ai.tool.name"] == "" || id == "" || callIDs[id] || json.Unmarshal([]byte(attrs["gen_ai.tool.call.arguments"]), &args) != nil {
							t.Errorf("%s: execute_tool without tool name, a new call id or JSON arguments", sw)
						}
						if _, ok := attrs["gen_ai.tool.call.result"]; !ok {
							t.Errorf("%s: execute_tool without result", sw)
						}
						if attrs["gen_ai.tool.name"] == "run_shell" && args["command"] == nil {
							t.Errorf("%s: run_shell without command", sw)
						}
						callIDs[id] = true
						st.calls++
						if sp.Status.Code == statusError {
							st.failed++
						}
					default:
						t.Errorf("%s: operation %q", sw, op)
					}
					if sp.ParentSpanID != "" {
						parents[sp.TraceID] = append(parents[sp.TraceID], sp.ParentSpanID)
					}
				}
			}
		}
	})
	for id, ps := range parents {
		for _, p := range ps {
			if p != roots[id] {
				t.Errorf("trace %s: span parent %s is not the invoke_agent span %s", id, p, roots[id])
			}
		}
	}
	return stats
}

func checkFormat(t *testing.T, f AgentFormat, dir string) map[string]*sessionStats {
	switch f {
	case FormatClaude:
		return checkClaude(t, dir)
	case FormatCodex:
		return checkCodex(t, dir)
	default:
		return checkOTel(t, dir)
	}
}

// TestAgentFormats writes a corpus in every format, checks every record
// against the format's documented shape and checks that each session has
// the tool calls, and the failed ones, the manifest says.
func TestAgentFormats(t *testing.T) {
	c := GenerateAgents(AgentConfig{Sessions: 60, Seed: 3, Calls: 30})
	// Failed calls per session, from the neutral sessions.
	failed := map[string]int{}
	turns := map[string]int{}
	for i := range c.plans {
		s := c.build(i)
		turns[s.id] = len(s.turns)
		for _, tu := range s.turns {
			for _, call := range tu.calls {
				if call.failed() {
					failed[s.id]++
				}
			}
		}
	}
	for _, f := range AgentFormats {
		t.Run(string(f), func(t *testing.T) {
			dir := t.TempDir()
			if err := c.Write(dir, f); err != nil {
				t.Fatal(err)
			}
			var got []string
			filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					rel, _ := filepath.Rel(dir, p)
					got = append(got, filepath.ToSlash(rel))
				}
				return err
			})
			want := slices.Sorted(slices.Values(c.Files(f)))
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("files (-want +got):\n%s", diff)
			}

			stats := checkFormat(t, f, dir)
			if len(stats) != len(c.Manifest.Sessions) {
				t.Errorf("%d sessions in the files, want %d", len(stats), len(c.Manifest.Sessions))
			}
			for _, s := range c.Manifest.Sessions {
				st := stats[TraceID(f, s.ID)]
				if st == nil {
					t.Errorf("session %s (trace %s) not found", s.ID, TraceID(f, s.ID))
					continue
				}
				if st.calls != s.ToolCalls || st.failed != failed[s.ID] {
					t.Errorf("session %s: %d tool calls, %d failed; want %d, %d", s.ID, st.calls, st.failed, s.ToolCalls, failed[s.ID])
				}
				if f == FormatClaude && len(st.messages) != turns[s.ID] {
					t.Errorf("session %s: %d assistant messages, want one per model turn, %d", s.ID, len(st.messages), turns[s.ID])
				}
			}
		})
	}
}

// commandParts splits the generator's own shell commands into their
// parts: && lists and | pipelines, with a leading cd dropped. It knows
// only what the generator writes (no quoted && or |).
func commandParts(command string) []string {
	var parts []string
	for _, p := range strings.Split(command, " && ") {
		for _, q := range strings.Split(p, " | ") {
			if !strings.HasPrefix(q, "cd ") {
				parts = append(parts, q)
			}
		}
	}
	return parts
}

// TestAgentManifest checks the manifest against the sessions: each
// planting's commands are in its session in order with the manifest's
// values, retries fail first, the other kinds of session hold no
// procedure.
func TestAgentManifest(t *testing.T) {
	cfg := AgentConfig{Sessions: 80, Seed: 11}
	c := GenerateAgents(cfg)
	m := c.Manifest
	if len(m.Procedures) < 3 || len(m.Sessions) != cfg.Sessions {
		t.Fatalf("%d procedures, %d sessions; want at least 3 and %d", len(m.Procedures), len(m.Sessions), cfg.Sessions)
	}
	index := map[string]int{}
	for i, s := range m.Sessions {
		index[s.ID] = i
		if !uuidRE.MatchString(s.ID) {
			t.Errorf("session id %q is not a UUID", s.ID)
		}
	}
	if len(index) != len(m.Sessions) {
		t.Errorf("session ids are not unique")
	}
	kinds := map[string]int{}
	totalCalls, withCalls := 0, 0
	for i, s := range m.Sessions {
		kinds[s.Kind]++
		if (s.Kind == SessionNoTools) != (s.ToolCalls == 0) {
			t.Errorf("session %d: kind %s with %d tool calls", i, s.Kind, s.ToolCalls)
		}
		if (s.Kind == SessionProcedure) != (len(s.Procedures) > 0) {
			t.Errorf("session %d: kind %s with procedures %v", i, s.Kind, s.Procedures)
		}
		if s.ToolCalls > 0 {
			totalCalls += s.ToolCalls
			withCalls++
		}
		if s.Goal == "" {
			t.Errorf("session %d has no goal", i)
		}
	}
	if kinds[SessionNoTools] != cfg.Sessions/20 || kinds[SessionExploration] == 0 || kinds[SessionProcedure] == 0 {
		t.Errorf("session kinds %v: want %d without tools and some of each other kind", kinds, cfg.Sessions/20)
	}
	if mean := float64(totalCalls) / float64(withCalls); mean < 0.8*DefaultAgentCalls || mean > 1.25*DefaultAgentCalls {
		t.Errorf("mean tool calls per session = %.1f, want about %d", mean, DefaultAgentCalls)
	}

	procHeads := map[string]bool{}
	for _, p := range m.Procedures {
		for _, st := range p.Steps {
			procHeads[st.Head] = true
		}
	}
	retried, compound := 0, 0
	for _, p := range m.Procedures {
		if want := max(MinSupport, int(float64(cfg.Sessions)*DefaultAgentSupport)); len(p.Plantings) != want {
			t.Errorf("%s planted %d times, want %d", p.Name, len(p.Plantings), want)
		}
		distinct := make([]map[string]bool, len(p.Steps))
		for n, pl := range p.Plantings {
			i, ok := index[pl.Session]
			if !ok {
				t.Fatalf("%s planting %d: unknown session %s", p.Name, n, pl.Session)
			}
			if !slices.Contains(m.Sessions[i].Procedures, p.Name) {
				t.Errorf("%s planting %d: session %s does not list it", p.Name, n, pl.Session)
			}
			if pl.Retried {
				retried++
			}
			if pl.Compound {
				compound++
			}
			var parts []agentCall
			for _, tu := range c.build(i).turns {
				for _, call := range tu.calls {
					if call.kind == callShell {
						for _, part := range commandParts(call.command) {
							parts = append(parts, agentCall{command: part, exit: call.exit})
						}
					}
				}
			}
			// Find the steps in order, each with its values.
			k := 0
			sawFailure := false
			for s, st := range p.Steps {
				if distinct[s] == nil {
					distinct[s] = map[string]bool{}
				}
				keys := slices.Sorted(func(yield func(string) bool) {
					for key := range pl.Values[s] {
						if !yield(key) {
							return
						}
					}
				})
				if !slices.Equal(keys, slices.Sorted(slices.Values(st.Varying))) {
					t.Errorf("%s planting %d step %d: values for %v, want %v", p.Name, n, s+1, keys, st.Varying)
				}
				var vals []string
				for _, key := range keys {
					vals = append(vals, pl.Values[s][key])
				}
				distinct[s][strings.Join(vals, "\x00")] = true
				found := false
				for ; k < len(parts); k++ {
					cmd := parts[k].command
					if cmd != st.Head && !strings.HasPrefix(cmd, st.Head+" ") {
						continue
					}
					if parts[k].exit != 0 {
						sawFailure = true
						continue
					}
					found = true
					for _, v := range vals {
						found = found && strings.Contains(cmd, v)
					}
					if found {
						k++
						break
					}
				}
				if !found {
					t.Errorf("%s planting %d in session %s: step %d %q with values %q not found in order", p.Name, n, pl.Session, s+1, st.Head, vals)
				}
			}
			if pl.Retried != sawFailure {
				t.Errorf("%s planting %d: retried = %v, but a failing step run seen = %v", p.Name, n, pl.Retried, sawFailure)
			}
		}
		for s, st := range p.Steps {
			if len(st.Varying) > 0 && len(distinct[s]) < 2 {
				t.Errorf("%s step %d (%s): values never vary", p.Name, s+1, st.Head)
			}
		}
	}
	if retried == 0 || compound == 0 {
		t.Errorf("%d retried and %d compound plantings, want some of each", retried, compound)
	}
	// Sessions without a procedure run none of its steps.
	for i, s := range m.Sessions {
		if s.Kind == SessionProcedure {
			continue
		}
		for _, tu := range c.build(i).turns {
			for _, call := range tu.calls {
				for _, part := range commandParts(call.command) {
					for h := range procHeads {
						if part == h || strings.HasPrefix(part, h+" ") {
							t.Errorf("%s session %s runs procedure step %q", s.Kind, s.ID, part)
						}
					}
				}
			}
		}
	}
}

// TestAgentDeterministic checks that a seed gives the same bytes in every
// format, and another seed other bytes.
func TestAgentDeterministic(t *testing.T) {
	cfg := AgentConfig{Sessions: 25, Seed: 9, Calls: 20}
	for _, f := range AgentFormats {
		t.Run(string(f), func(t *testing.T) {
			read := func(cfg AgentConfig) (map[string][]byte, AgentManifest) {
				dir := t.TempDir()
				c := GenerateAgents(cfg)
				if err := c.Write(dir, f); err != nil {
					t.Fatal(err)
				}
				files := map[string][]byte{}
				for _, p := range c.Files(f) {
					data, err := os.ReadFile(filepath.Join(dir, p))
					if err != nil {
						t.Fatal(err)
					}
					files[p] = data
				}
				return files, c.Manifest
			}
			a, ma := read(cfg)
			b, mb := read(cfg)
			if diff := cmp.Diff(ma, mb); diff != "" {
				t.Errorf("manifest differs for one seed (-first +second):\n%s", diff)
			}
			if !cmp.Equal(a, b) {
				t.Errorf("files differ for one seed")
			}
			other := cfg
			other.Seed++
			if c, _ := read(other); cmp.Equal(a, c) {
				t.Errorf("seeds %d and %d give the same files", cfg.Seed, other.Seed)
			}
		})
	}
}

func TestAgentWriteErrors(t *testing.T) {
	c := GenerateAgents(AgentConfig{Sessions: 2, Seed: 1})
	if err := c.Write(t.TempDir(), "jsonl"); err == nil || err.Error() != `unknown agent format "jsonl" (want claude, codex or otel)` {
		t.Errorf("Write(jsonl) = %v, want an unknown format error", err)
	}
	// A file where a directory must go.
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "2026"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := c.Write(dir, FormatCodex); err == nil || !strings.HasPrefix(err.Error(), "writing codex sessions: ") {
		t.Errorf("Write into a blocked directory = %v, want a writing error", err)
	}
}

func TestTraceID(t *testing.T) {
	id := "0682ba85-ec77-475f-9003-d16ddd87814e"
	for f, want := range map[AgentFormat]string{FormatClaude: id, FormatCodex: id, FormatOTel: "0682ba85ec77475f9003d16ddd87814e"} {
		if got := TraceID(f, id); got != want {
			t.Errorf("TraceID(%s, %s) = %s, want %s", f, id, got, want)
		}
	}
	if _, err := hex.DecodeString(TraceID(FormatOTel, id)); err != nil {
		t.Error(err)
	}
}

func TestModLast(t *testing.T) {
	for in, want := range map[string]string{"golang.org/x/net": "net", "github.com/jackc/pgx/v5": "pgx", "go.uber.org/zap": "zap"} {
		if got := modLast(in); got != want {
			t.Errorf("modLast(%q) = %q, want %q", in, got, want)
		}
	}
}

func BenchmarkWriteClaude(b *testing.B) {
	c := GenerateAgents(AgentConfig{Sessions: 200, Seed: 1})
	dir := b.TempDir()
	for b.Loop() {
		if err := c.Write(dir, FormatClaude); err != nil {
			b.Fatal(err)
		}
	}
}

// TestAgentTiny checks corpora smaller than a procedure's minimum support:
// every session that calls tools gets every procedure, and none fails.
func TestAgentTiny(t *testing.T) {
	for n := range 4 {
		c := GenerateAgents(AgentConfig{Sessions: n, Seed: 5, Calls: 5})
		if len(c.Manifest.Sessions) != n {
			t.Errorf("Sessions %d: %d sessions", n, len(c.Manifest.Sessions))
		}
		for _, p := range c.Manifest.Procedures {
			if len(p.Plantings) != n {
				t.Errorf("Sessions %d: %s planted %d times, want in every session", n, p.Name, len(p.Plantings))
			}
		}
		for _, f := range AgentFormats {
			if err := c.Write(t.TempDir(), f); err != nil {
				t.Errorf("Sessions %d: Write(%s) = %v", n, f, err)
			}
		}
	}
}
