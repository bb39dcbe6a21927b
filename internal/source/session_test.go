package source

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/crystallize-dev/crystallize/internal/normalize"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// readRecords parses a session file of testdata the way the loader does.
func readRecords(t testing.TB, path string) []Record {
	t.Helper()
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	var recs []Record
	sc := bufio.NewScanner(fh)
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := append([]byte(nil), sc.Bytes()...)
		if strings.TrimSpace(string(line)) == "" {
			continue
		}
		v, err := trace.ParseJSON(line, path, n)
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, Record{Line: n, Doc: v.(map[string]any), Raw: line})
	}
	return recs
}

// recorder collects the calls a decoder hands to the normalizer and
// answers with the default table's actions.
type recorder struct{ calls []normalize.Call }

func (r *recorder) actions(c normalize.Call) []trace.Action {
	r.calls = append(r.calls, c)
	return normalize.Default().Actions(c)
}

func (r *recorder) call(t *testing.T, id string) normalize.Call {
	t.Helper()
	for _, c := range r.calls {
		if c.ID == id {
			return c
		}
	}
	t.Fatalf("no call %s", id)
	return normalize.Call{}
}

// callIDs returns the ids of the calls the actions of tr came from: a
// normalizer may split one call into several actions <id>, <id>.2, …
func callIDs(tr *trace.Trace) []string {
	var ids []string
	for _, a := range tr.Actions {
		id := a.ID
		if base, n, ok := strings.Cut(id, "."); ok && n != "" && strings.Trim(n, "0123456789") == "" {
			id = base
		}
		if len(ids) == 0 || ids[len(ids)-1] != id {
			ids = append(ids, id)
		}
	}
	return ids
}

func tools(calls []normalize.Call) []string {
	var out []string
	for _, c := range calls {
		out = append(out, c.Tool)
	}
	return out
}

func ids(calls []normalize.Call) []string {
	var out []string
	for _, c := range calls {
		out = append(out, c.ID)
	}
	return out
}

// costSum adds up the costs of calls.
func costSum(calls []normalize.Call) trace.Cost {
	var s trace.Cost
	for _, c := range calls {
		if c.Cost != nil {
			s.ModelCalls += c.Cost.ModelCalls
			s.InputTokens += c.Cost.InputTokens
			s.OutputTokens += c.Cost.OutputTokens
		}
	}
	return s
}

func loadAgents(t *testing.T, dir string) *Result {
	t.Helper()
	res, err := Load(context.Background(), filepath.Join("testdata", "agents", dir), Options{})
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return res
}

func traceIDs(res *Result) []string {
	var out []string
	for _, tr := range res.Traces {
		out = append(out, tr.ID)
	}
	return out
}

// TestLoadAgentDirectories loads each agent's testdata through Load: every
// session with a tool call is one trace, in file order and then session
// order, with exactly one call per tool call and no problem; the session
// without one is listed as skipped.
func TestLoadAgentDirectories(t *testing.T) {
	tests := []struct {
		dir     string
		traces  []string
		calls   []int
		origins []string
		skipped []SkippedSession
	}{
		{
			dir: "claude",
			traces: []string{
				"3a7c9b2e-1d4f-4c6a-8e0b-5f2d1c3b4a59",
				"9e21f0a8-6c3d-4b7e-9a1f-2d4c6e8b0a13",
				"5b0c6e0e-2f7d-4a51-9d0e-6c1f8a3b2d10",
				"5b0c6e0e-2f7d-4a51-9d0e-6c1f8a3b2d10.agent-a1b2c3d4",
			},
			calls: []int{3, 2, 11, 2},
			origins: []string{
				"-home-dev-api/3a7c9b2e-1d4f-4c6a-8e0b-5f2d1c3b4a59.jsonl:1",
				"-home-dev-api/3a7c9b2e-1d4f-4c6a-8e0b-5f2d1c3b4a59.jsonl:9",
				"-home-dev-shop/5b0c6e0e-2f7d-4a51-9d0e-6c1f8a3b2d10.jsonl:3",
				"-home-dev-shop/agent-a1b2c3d4.jsonl:1",
			},
			skipped: []SkippedSession{{
				Path: filepath.Join("testdata", "agents", "claude", "-home-dev-api", "0d9e4c1a-7b2f-4e8d-a6c5-3f1b2e9d8c70.jsonl"), Format: "claude-code",
				ID: "0d9e4c1a-7b2f-4e8d-a6c5-3f1b2e9d8c70", Line: 1, Reason: ReasonNoToolCalls,
				Message: "claude code session 0d9e4c1a-7b2f-4e8d-a6c5-3f1b2e9d8c70 has no tool call in its 2 records",
			}},
		},
		{
			dir: "codex",
			traces: []string{
				"c0ffee00-1111-4222-8333-944455556666",
				"019a4b2c-7d1e-7f30-9a8b-2c4d6e8f0a1b",
				"019a5077-3e2f-7a10-8c9d-0e1f2a3b4c5d",
			},
			calls: []int{1, 8, 2},
			origins: []string{
				"2025/05/20/rollout-2025-05-20T14-03-11-c0ffee00-1111-4222-8333-944455556666.jsonl:1",
				"2025/11/03/rollout-2025-11-03T09-12-44-019a4b2c-7d1e-7f30-9a8b-2c4d6e8f0a1b.jsonl:1",
				"2025/11/04/rollout-2025-11-04T10-02-11-019a5077-3e2f-7a10-8c9d-0e1f2a3b4c5d.jsonl:1",
			},
			skipped: []SkippedSession{{
				Path: filepath.Join("testdata", "agents", "codex", "2025", "11", "04", "rollout-2025-11-04T11-40-05-019a50a1-9b8c-7d6e-8f5a-4b3c2d1e0f9a.jsonl"), Format: "codex",
				ID: "019a50a1-9b8c-7d6e-8f5a-4b3c2d1e0f9a", Line: 1, Reason: ReasonNoToolCalls,
				Message: "codex session 019a50a1-9b8c-7d6e-8f5a-4b3c2d1e0f9a has no tool call in its 6 records",
			}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.dir, func(t *testing.T) {
			res := loadAgents(t, tt.dir)
			if diff := cmp.Diff(tt.traces, traceIDs(res)); diff != "" {
				t.Errorf("trace ids (-want +got):\n%s", diff)
			}
			var calls []int
			var origins []string
			hashes := map[string]bool{}
			for _, tr := range res.Traces {
				calls = append(calls, len(callIDs(tr)))
				origins = append(origins, tr.Source)
				if !strings.HasPrefix(tr.SourceHash, "sha256:") || hashes[tr.SourceHash] {
					t.Errorf("%s: source hash %q missing or shared", tr.ID, tr.SourceHash)
				}
				hashes[tr.SourceHash] = true
				if tr.Metadata["agent"] != map[string]string{"claude": "claude-code", "codex": "codex"}[tt.dir] {
					t.Errorf("%s: metadata.agent = %v", tr.ID, tr.Metadata["agent"])
				}
			}
			if diff := cmp.Diff(tt.calls, calls); diff != "" {
				t.Errorf("calls per trace (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.origins, origins); diff != "" {
				t.Errorf("origins (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.skipped, res.SkippedSessions); diff != "" {
				t.Errorf("skipped sessions (-want +got):\n%s", diff)
			}
			if len(res.Skipped) != 0 {
				t.Errorf("Skipped = %v, want none", res.Skipped)
			}
		})
	}
}

// TestLoadAgentsWithTraces mixes session logs and crystallization traces in
// one directory: each file is read by its own format.
func TestLoadAgentsWithTraces(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join("testdata", "agents", "codex", "2025", "11", "04", "rollout-2025-11-04T10-02-11-019a5077-3e2f-7a10-8c9d-0e1f2a3b4c5d.jsonl")
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	writeTree(t, dir, map[string]string{
		"a/rollout.jsonl": string(data),
		"b/traces.jsonl":  `{"id":"t1","actions":[{"id":"a","kind":"tool_call","name":"x"}]}` + "\n" + `{"id":"t2","actions":[]}` + "\n",
	})
	res, err := Load(context.Background(), dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"019a5077-3e2f-7a10-8c9d-0e1f2a3b4c5d", "t1", "t2"}, traceIDs(res)); diff != "" {
		t.Errorf("trace ids (-want +got):\n%s", diff)
	}
}

// TestLoadSessionStreamed loads a session log larger than a chunk, which
// the loader would otherwise spread over workers line by line.
func TestLoadSessionStreamed(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString(`{"timestamp":"2025-11-03T09:00:00Z","type":"session_meta","payload":{"id":"big","cwd":"/w"}}` + "\n")
	pad := strings.Repeat("x", 1000)
	n := 0
	for b.Len() < 2*chunkBytes {
		n++
		id := "call_" + strings.Repeat("0", 3) + itoa(n)
		b.WriteString(`{"timestamp":"2025-11-03T09:00:01Z","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"ls\"]}","call_id":"` + id + `"}}` + "\n")
		b.WriteString(`{"timestamp":"2025-11-03T09:00:02Z","type":"response_item","payload":{"type":"function_call_output","call_id":"` + id + `","output":"` + pad + `"}}` + "\n")
	}
	writeTree(t, dir, map[string]string{"rollout-big.jsonl": b.String()})
	res, err := Load(context.Background(), dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Traces) != 1 || len(callIDs(res.Traces[0])) != n {
		t.Fatalf("got %d traces, want 1 with %d calls", len(res.Traces), n)
	}
}

func itoa(n int) string { return trace.Origin{Line: n}.String() }

// TestLoadSessionErrors checks that problems in session logs are reported
// at their file, line and JSON path, every one of them, and that
// SkipInvalid keeps the good sessions of a file whose other session is bad.
func TestLoadSessionErrors(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"claude/s.jsonl": `{"type":"user","sessionId":"good","timestamp":"2025-10-14T09:00:00Z","message":{"role":"user","content":"go"}}
{"type":"assistant","sessionId":"good","timestamp":"2025-10-14T09:00:01Z","message":{"id":"m1","role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"ls"}}]}}
{"type":"assistant","sessionId":"bad","timestamp":"2025-10-14T09:00:02Z","message":{"id":"m2","role":"assistant","content":[{"type":"tool_use","name":"Bash","input":{}}]}}
not json
[1]
`,
	})
	// The line that is not JSON is passed over (see
	// TestLoadSessionInvalidLine); the others are errors.
	_, err := Load(context.Background(), dir, Options{})
	want := strings.Join([]string{
		filepath.Join(dir, "claude/s.jsonl") + ":3: $.message.content[0].id: missing required field",
		filepath.Join(dir, "claude/s.jsonl") + ":5: $: expected object, got array",
	}, "\n")
	if err == nil || err.Error() != want {
		t.Fatalf("Load error =\n%v\nwant\n%s", err, want)
	}
	res, err := Load(context.Background(), dir, Options{SkipInvalid: true})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"good"}, traceIDs(res)); diff != "" {
		t.Errorf("trace ids (-want +got):\n%s", diff)
	}
	var lines []int
	for _, s := range res.Skipped {
		lines = append(lines, s.Line)
	}
	if diff := cmp.Diff([]int{3, 4, 5}, lines); diff != "" {
		t.Errorf("skipped lines (-want +got):\n%s", diff)
	}
}

// TestLoadSessionDuplicateID: the same session log in two files (a copy,
// a backup) is one trace, with a note naming the copy; two different
// sessions under one id are an error at the second.
func TestLoadSessionDuplicateID(t *testing.T) {
	dir := t.TempDir()
	s := `{"type":"user","sessionId":"s1","message":{"role":"user","content":"go"}}
{"type":"assistant","sessionId":"s1","message":{"id":"m1","role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"ls"}}]}}
`
	writeTree(t, dir, map[string]string{"a.jsonl": s, "backup/a.jsonl": s})
	res, err := Load(context.Background(), dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"s1"}, traceIDs(res)); diff != "" {
		t.Errorf("trace ids (-want +got):\n%s", diff)
	}
	wantNote := []Note{{Path: filepath.Join(dir, "backup/a.jsonl"), Line: 1, Format: "claude-code", Code: NoteCopy, Detail: "s1", ID: "s1",
		Message: "session s1 is a copy of the one in " + filepath.Join(dir, "a.jsonl") + ":1, read once"}}
	if diff := cmp.Diff(wantNote, res.Notes); diff != "" {
		t.Errorf("notes (-want +got):\n%s", diff)
	}

	other := strings.Replace(s, `"command":"ls"`, `"command":"rm -r build"`, 1)
	writeTree(t, dir, map[string]string{"b.jsonl": other})
	_, err = Load(context.Background(), dir, Options{})
	want := filepath.Join(dir, "b.jsonl") + `:1: $.id: duplicate trace id "s1" (first in ` + filepath.Join(dir, "a.jsonl") + `:1)`
	if err == nil || err.Error() != want {
		t.Fatalf("Load error = %v, want %s", err, want)
	}
}

// TestLoadSessionJSONDocument: a *.json file whose document a session
// format claims is read by that format, as one record at line 0.
func TestLoadSessionJSONDocument(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"one.json":   `{"type":"assistant","sessionId":"j1","message":{"id":"m","content":[{"type":"tool_use","id":"t","name":"Bash","input":{"command":"ls"}}]}}`,
		"quiet.json": `{"type":"user","sessionId":"j2","message":{"role":"user","content":"hi"}}`,
	})
	res, err := Load(context.Background(), dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Traces) != 1 || res.Traces[0].ID != "j1" || res.Traces[0].Source != "one.json" {
		t.Fatalf("traces = %v", traceIDs(res))
	}
	data, _ := os.ReadFile(filepath.Join(dir, "one.json"))
	if res.Traces[0].SourceHash != trace.HashBytes(data) {
		t.Errorf("source hash %s, want the file's", res.Traces[0].SourceHash)
	}
	if len(res.SkippedSessions) != 1 || res.SkippedSessions[0].ID != "j2" || res.SkippedSessions[0].Line != 0 {
		t.Errorf("skipped sessions = %+v", res.SkippedSessions)
	}
}

// TestLoadOnlyQuietSessions: a directory whose sessions have no tool call
// has no trace, and the error says why.
func TestLoadOnlyQuietSessions(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"q.jsonl": `{"type":"user","sessionId":"q","message":{"role":"user","content":"hi"}}` + "\n"})
	_, err := Load(context.Background(), dir, Options{})
	want := "no traces in the *.json or *.jsonl files under " + dir + ": 1 agent sessions, none with a tool call"
	if err == nil || err.Error() != want {
		t.Errorf("Load error = %v, want %s", err, want)
	}
}

// benchClaudeSession writes a Claude Code session of calls tool calls, each
// in its own assistant record with usage, answered by a user record with a
// tool_result and a toolUseResult: the shape and size of a real log.
func benchClaudeSession(i, calls int) string {
	var b strings.Builder
	sid := fmt.Sprintf("bench-%05d", i)
	fmt.Fprintf(&b, `{"type":"user","sessionId":%q,"uuid":"u0","timestamp":"2025-10-14T09:00:00Z","cwd":"/w","gitBranch":"main","message":{"role":"user","content":"Bump the dependency %d and commit"}}`+"\n", sid, i)
	for c := range calls {
		cmd := []string{"go test ./...", "git status", "go get example.com/m@v1.2." + strconv.Itoa(c), "git add go.mod go.sum && git commit -m \"bump\""}[c%4]
		ts := fmt.Sprintf("2025-10-14T09:%02d:%02dZ", c/30, 2*(c%30))
		fmt.Fprintf(&b, `{"type":"assistant","sessionId":%q,"uuid":"a%d","timestamp":%q,"message":{"id":"msg_%d","role":"assistant","model":"claude-sonnet-4-5","usage":{"input_tokens":4,"cache_creation_input_tokens":300,"cache_read_input_tokens":15000,"output_tokens":90},"content":[{"type":"text","text":"Next step."},{"type":"tool_use","id":"toolu_%d","name":"Bash","input":{"command":%q,"description":"step"}}]}}`+"\n", sid, c, ts, c, c, cmd)
		fmt.Fprintf(&b, `{"type":"user","sessionId":%q,"uuid":"r%d","timestamp":%q,"message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_%d","content":"ok  \texample.com/m\t0.012s"}]},"toolUseResult":{"stdout":"ok  \texample.com/m\t0.012s","stderr":"","interrupted":false,"isImage":false}}`+"\n", sid, c, ts, c)
	}
	return b.String()
}

// BenchmarkLoadClaudeSessions loads 200 Claude Code sessions of 60 tool
// calls, one file each, as ~/.claude/projects holds them.
func BenchmarkLoadClaudeSessions(b *testing.B) {
	dir := b.TempDir()
	var size int64
	for i := range 200 {
		s := benchClaudeSession(i, 60)
		writeFile(b, filepath.Join(dir, fmt.Sprintf("p%d/s%04d.jsonl", i%5, i)), s)
		size += int64(len(s))
	}
	b.SetBytes(size)
	b.ReportAllocs()
	var res *Result
	for b.Loop() {
		var err error
		res, err = Load(context.Background(), dir, Options{})
		if err != nil {
			b.Fatal(err)
		}
		if len(res.Traces) != 200 {
			b.Fatalf("%d traces", len(res.Traces))
		}
	}
	reportLive(b, res)
}

// TestLoadSessionLineLimit: a line over the size limit in a session log is
// an error at that line, and the other lines are still read.
func TestLoadSessionLineLimit(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"s.jsonl": `{"type":"user","sessionId":"s","message":{"role":"user","content":"go"}}
{"type":"assistant","sessionId":"s","message":{"id":"m","content":[{"type":"tool_use","id":"t","name":"Bash","input":{"command":"ls"}}]}}
{"type":"user","sessionId":"s","message":{"role":"user","content":"` + strings.Repeat("x", 300) + `"}}
`})
	_, err := Load(context.Background(), dir, Options{MaxFileBytes: 200})
	want := filepath.Join(dir, "s.jsonl") + ":3: line is 370 bytes, over the 200-byte limit"
	if err == nil || err.Error() != want {
		t.Fatalf("Load error = %v, want %s", err, want)
	}
	res, err := Load(context.Background(), dir, Options{MaxFileBytes: 200, SkipInvalid: true})
	if err != nil || len(res.Traces) != 1 || len(res.Skipped) != 1 || res.Skipped[0].Line != 3 {
		t.Fatalf("Load = %+v, %v; want the session and line 3 skipped", res, err)
	}
}

// TestSplitCost checks what splitCost promises: the shares sum exactly to
// the turn, the first call carries the model call and the remainders, and
// every share names the turn's model.
func TestSplitCost(t *testing.T) {
	for _, tt := range []struct {
		u turnUsage
		n int
	}{
		{turnUsage{model: "m", input: 10, output: 3, wallMS: 7}, 1},
		{turnUsage{model: "m", input: 10, output: 3, wallMS: 7}, 3},
		{turnUsage{model: "m", input: 1001, output: 2, wallMS: 999}, 4},
		{turnUsage{model: "", input: 0, output: 0, wallMS: 0}, 2},
		{turnUsage{model: "m", input: 5, output: 5, wallMS: 5}, 7},
	} {
		shares := splitCost(tt.u, tt.n)
		if len(shares) != tt.n {
			t.Fatalf("splitCost(%+v, %d) gave %d shares", tt.u, tt.n, len(shares))
		}
		var in, out, wall int64
		var calls int64
		for i, c := range shares {
			in, out, wall = in+c.InputTokens, out+c.OutputTokens, wall+c.WallMS
			calls += c.ModelCalls
			if c.Model != tt.u.model {
				t.Errorf("splitCost(%+v, %d)[%d].Model = %q", tt.u, tt.n, i, c.Model)
			}
			if want := map[bool]int64{true: 1, false: 0}[i == 0]; c.ModelCalls != want {
				t.Errorf("splitCost(%+v, %d)[%d].ModelCalls = %d, want %d", tt.u, tt.n, i, c.ModelCalls, want)
			}
			if i > 0 && (c.InputTokens > shares[0].InputTokens || c.OutputTokens > shares[0].OutputTokens || c.WallMS > shares[0].WallMS) {
				t.Errorf("splitCost(%+v, %d)[%d] = %+v is more than the first share %+v", tt.u, tt.n, i, c, shares[0])
			}
		}
		if in != tt.u.input || out != tt.u.output || wall != tt.u.wallMS || calls != 1 {
			t.Errorf("splitCost(%+v, %d) sums to in %d, out %d, wall %d, calls %d", tt.u, tt.n, in, out, wall, calls)
		}
	}
}

// TestTextOf checks which message contents read as text.
func TestTextOf(t *testing.T) {
	for _, tt := range []struct {
		content any
		text    string
		ok      bool
	}{
		{"plain", "plain", true},
		{[]any{map[string]any{"type": "text", "text": "a"}, map[string]any{"type": "input_text", "text": "b"}, map[string]any{"type": "output_text", "text": "c"}}, "a\nb\nc", true},
		{[]any{}, "", true},
		{[]any{map[string]any{"type": "text", "text": "a"}, map[string]any{"type": "image"}}, "", false},
		{[]any{"not a block"}, "", false},
		{map[string]any{"type": "text", "text": "a"}, "", false},
		{nil, "", false},
	} {
		text, ok := textOf(tt.content)
		if text != tt.text || ok != tt.ok {
			t.Errorf("textOf(%v) = %q, %v; want %q, %v", tt.content, text, ok, tt.text, tt.ok)
		}
	}
}
