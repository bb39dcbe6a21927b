package runner

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/crystallize-dev/crystallize/internal/model"
	"github.com/crystallize-dev/crystallize/internal/runconfig"
	"github.com/crystallize-dev/crystallize/internal/runstate"
	"github.com/crystallize-dev/crystallize/internal/toolexec"
)

const apiKeyValue = "sk-test-0123456789abcdef-never-logged"

// providerServer is a local server speaking one provider's wire format:
// it records each request's headers and JSON body and answers with
// answer (or status and body when status is not 200).
type providerServer struct {
	t      *testing.T
	path   string
	status int
	answer string
	// answers, when set, are the answers to the requests in turn (the
	// last one to every request after it).
	answers []string
	delay   time.Duration
	headers []http.Header
	bodies  []map[string]any
}

func (s *providerServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != s.path {
		s.t.Errorf("request %s %s, want POST %s", r.Method, r.URL.Path, s.path)
	}
	data, _ := io.ReadAll(r.Body)
	var body map[string]any
	if err := json.Unmarshal(data, &body); err != nil {
		s.t.Errorf("request body is not a JSON object: %v\n%s", err, data)
	}
	s.headers = append(s.headers, r.Header.Clone())
	s.bodies = append(s.bodies, body)
	if s.delay > 0 {
		select {
		case <-time.After(s.delay):
		case <-r.Context().Done():
			return
		}
	}
	w.Header().Set("Content-Type", "application/json")
	if s.status != 0 {
		w.WriteHeader(s.status)
	}
	if n := len(s.answers); n > 0 {
		io.WriteString(w, s.answers[min(len(s.bodies), n)-1])
		return
	}
	io.WriteString(w, s.answer)
}

func serve(t *testing.T, s *providerServer) string {
	s.t = t
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return srv.URL
}

const modelWorkflow = `def wf(ctx, ticket):
    c = ctx.model("classify", prompt = "Classify the ticket.", inputs = {"ticket": ticket}, schema = {"type": "object"})
    return ctx.tool("echo", label = c["label"])
`

func modelOpts(t *testing.T, mc runconfig.ModelConfig) Options {
	o := opts(t, &runconfig.Config{Models: map[string]runconfig.ModelConfig{"default": mc}})
	o.Tools = map[string]toolexec.Tool{"echo": {Func: echo}}
	o.Getenv = func(k string) string {
		if k == "LLM_KEY" {
			return apiKeyValue
		}
		return ""
	}
	return o
}

func TestOpenAIProvider(t *testing.T) {
	s := &providerServer{path: "/v1/chat/completions", answer: `{"id":"c1","model":"llama3.1-served",
"choices":[{"index":0,"message":{"role":"assistant","content":"{\"label\": \"refund\"}"},"finish_reason":"stop"}],
"usage":{"prompt_tokens":120,"completion_tokens":8,"total_tokens":128}}`}
	base := serve(t, s) + "/v1"
	o := modelOpts(t, runconfig.ModelConfig{Provider: runconfig.ProviderOpenAI, BaseURL: base, Model: "llama3.1", APIKey: "LLM_KEY", InputUSDPerMTok: 1, OutputUSDPerMTok: 2})
	res, err := Run(context.Background(), workflow(t, modelWorkflow), Params{"ticket": "T-1"}, o)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]any{"label": "refund"}, res.Output); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
	if len(s.bodies) != 1 {
		t.Fatalf("the server got %d requests, want 1", len(s.bodies))
	}
	h := s.headers[0]
	if got := h.Get("Authorization"); got != "Bearer "+apiKeyValue {
		t.Errorf("Authorization = %q, want the bearer key", got)
	}
	if got := h.Get("Content-Type"); got != "application/json" {
		t.Errorf("Content-Type = %q", got)
	}
	want := map[string]any{
		"model": "llama3.1",
		"messages": []any{
			map[string]any{"role": "system", "content": "You perform one step of an automated workflow. Answer only with a JSON value that conforms to this JSON Schema, with no other text:\n" + `{"type":"object"}`},
			map[string]any{"role": "user", "content": "Classify the ticket.\n\nInputs (JSON):\n{\"ticket\":\"T-1\"}"},
		},
		"temperature":     float64(0),
		"response_format": map[string]any{"type": "json_schema", "json_schema": map[string]any{"name": "output", "schema": map[string]any{"type": "object"}}},
	}
	if diff := cmp.Diff(want, s.bodies[0]); diff != "" {
		t.Errorf("request body (-want +got):\n%s", diff)
	}
	checkUsage(t, res, o, ModelUsage{Model: "llama3.1-served", InputTokens: 120, OutputTokens: 8, CostUSD: (120*1 + 8*2) / 1e6})
}

func TestAnthropicProvider(t *testing.T) {
	s := &providerServer{path: "/v1/messages", answer: `{"id":"m1","type":"message","role":"assistant","model":"claude-x-1",
"content":[{"type":"text","text":"Recording it."},{"type":"tool_use","id":"t1","name":"output","input":{"label":"refund"}}],
"stop_reason":"tool_use","usage":{"input_tokens":300,"output_tokens":20}}`}
	base := serve(t, s)
	o := modelOpts(t, runconfig.ModelConfig{Provider: runconfig.ProviderAnthropic, BaseURL: base + "/", Model: "claude-x", APIKey: "LLM_KEY", OutputUSDPerMTok: 15})
	res, err := Run(context.Background(), workflow(t, modelWorkflow), Params{"ticket": "T-1"}, o)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]any{"label": "refund"}, res.Output); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
	h := s.headers[0]
	for k, v := range map[string]string{"X-Api-Key": apiKeyValue, "Anthropic-Version": runconfig.AnthropicVersion, "Content-Type": "application/json", "Authorization": ""} {
		if got := h.Get(k); got != v {
			t.Errorf("header %s = %q, want %q", k, got, v)
		}
	}
	want := map[string]any{
		"model":       "claude-x",
		"max_tokens":  float64(runconfig.DefaultMaxTokens),
		"system":      "You perform one step of an automated workflow. Answer only with the result of the step.",
		"messages":    []any{map[string]any{"role": "user", "content": "Classify the ticket.\n\nInputs (JSON):\n{\"ticket\":\"T-1\"}"}},
		"temperature": float64(0),
		"tools": []any{map[string]any{
			"name": "output", "description": "Record the result of the step.", "input_schema": map[string]any{"type": "object"},
		}},
		"tool_choice": map[string]any{"type": "tool", "name": "output"},
	}
	if diff := cmp.Diff(want, s.bodies[0]); diff != "" {
		t.Errorf("request body (-want +got):\n%s", diff)
	}
	checkUsage(t, res, o, ModelUsage{Model: "claude-x-1", InputTokens: 300, OutputTokens: 20, CostUSD: 20 * 15 / 1e6})
}

// checkUsage checks that the model call's usage is in its receipt, the
// trace (action cost, totals, replay_run) and session.md, and that the API
// key is in none of the run's files.
func checkUsage(t *testing.T, res *Result, o Options, want ModelUsage) {
	t.Helper()
	if res.ModelCalls != 1 || res.TokensUsed != want.InputTokens+want.OutputTokens || res.CostUSD != want.CostUSD {
		t.Errorf("model calls %d, tokens %d, cost %g; want 1, %d, %g", res.ModelCalls, res.TokensUsed, res.CostUSD, want.InputTokens+want.OutputTokens, want.CostUSD)
	}
	if diff := cmp.Diff(&want, res.Receipts[0].Usage); diff != "" {
		t.Errorf("receipt usage (-want +got):\n%s", diff)
	}
	tr := readTrace(t, res)
	c := tr.Actions[0].Cost
	if c == nil || c.Model != want.Model || c.InputTokens != want.InputTokens || c.OutputTokens != want.OutputTokens || c.TotalCostUSD != want.CostUSD {
		t.Errorf("action cost = %+v, want %+v", c, want)
	}
	if tr.Usage == nil || tr.Usage.TotalCostUSD != want.CostUSD || tr.Usage.ModelCalls != 1 {
		t.Errorf("trace usage = %+v", tr.Usage)
	}
	rc := tr.ReplayRun["effect_receipts"].([]any)[0].(map[string]any)
	if u, ok := rc["usage"].(map[string]any); !ok || u["model"] != want.Model {
		t.Errorf("replay_run receipt usage = %v", rc["usage"])
	}
	if s := readFile(t, filepath.Join(res.Dir, runstate.SessionFile)); !strings.Contains(s, "model: "+want.Model) || !strings.Contains(s, "tokens_used: ") {
		t.Errorf("session.md lacks the model:\n%s", s)
	}
	noSecret(t, o.StateDir, apiKeyValue)
}

// noSecret fails when any file under dir contains value.
func noSecret(t *testing.T, dir, value string) {
	t.Helper()
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if strings.Contains(readFile(t, p), value) {
			t.Errorf("%s contains the secret value", p)
		}
		return nil
	})
}

func TestModelProviderErrors(t *testing.T) {
	for _, tc := range []struct {
		name     string
		provider string
		path     string
		srv      providerServer
		timeout  time.Duration
		want     string
	}{
		{"openai 401", runconfig.ProviderOpenAI, "/chat/completions", providerServer{status: 401, answer: `{"error":{"message":"Incorrect API key provided: sk-test-0123456789abcdef-never-logged","type":"invalid_request_error"}}`},
			0, "openai: POST %s/chat/completions: 401 Unauthorized: Incorrect API key provided: [redacted:LLM_KEY]"},
		{"anthropic 529", runconfig.ProviderAnthropic, "/v1/messages", providerServer{status: 529, answer: `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`},
			0, "anthropic: POST %s/v1/messages: 529: Overloaded"},
		{"openai 500 text", runconfig.ProviderOpenAI, "/chat/completions", providerServer{status: 500, answer: "upstream exploded"},
			0, "openai: POST %s/chat/completions: 500 Internal Server Error: upstream exploded"},
		{"not json with schema", runconfig.ProviderOpenAI, "/chat/completions", providerServer{answer: `{"choices":[{"message":{"content":"refund"}}]}`},
			0, "openai: %s/chat/completions: model answer does not fit the step's schema: asked twice, the second answer is not JSON: refund"},
		{"timeout", runconfig.ProviderOpenAI, "/chat/completions", providerServer{delay: 5 * time.Second, answer: `{}`},
			50 * time.Millisecond, "openai: POST %s/chat/completions: timed out after 50ms"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.srv
			s.path = tc.path
			base := serve(t, &s)
			o := modelOpts(t, runconfig.ModelConfig{Provider: tc.provider, BaseURL: base, Model: "m", APIKey: "LLM_KEY"}.WithTimeout(tc.timeout))
			called := false
			o.Tools = map[string]toolexec.Tool{"echo": {Func: func(context.Context, map[string]any) (any, error) { called = true; return nil, nil }}}
			res, err := Run(context.Background(), workflow(t, modelWorkflow), Params{"ticket": "T-1"}, o)
			want := strings.ReplaceAll(tc.want, "%s", base)
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("Run = %v, want an error containing %q", err, want)
			}
			if called || res.Status != runstate.StatusFailed || res.Receipts[0].Status != ReceiptError {
				t.Errorf("called %v, status %s, receipt %s; want a failed run stopped at the model step", called, res.Status, res.Receipts[0].Status)
			}
			noSecret(t, o.StateDir, apiKeyValue)
		})
	}
}

func TestModelChecksBeforeFirstStep(t *testing.T) {
	w := workflow(t, `def wf(ctx):
    ctx.tool("echo")
    ctx.model("classify", inputs = {})
    ctx.model("summarize", inputs = {})
    ctx.model("draft", inputs = {})
`)
	o := opts(t, &runconfig.Config{Models: map[string]runconfig.ModelConfig{
		"summarize": {Provider: runconfig.ProviderOpenAI, Model: "m", APIKey: "UNSET_KEY"},
		"draft":     {Provider: runconfig.ProviderReplay},
	}})
	called := false
	o.Tools = map[string]toolexec.Tool{"echo": {Func: func(context.Context, map[string]any) (any, error) { called = true; return nil, nil }}}
	_, err := Run(context.Background(), w, nil, o)
	if !errors.Is(err, model.ErrUnavailable) || !errors.Is(err, runconfig.ErrSecret) {
		t.Fatalf("Run = %v, want ErrModel and ErrSecret", err)
	}
	for _, want := range []string{
		`model unavailable: model steps "classify" have no provider`,
		"secret unavailable: models.summarize.api_key names secret UNSET_KEY, which is not set",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	if called {
		t.Error("a step ran before the model check")
	}
	if _, err := os.Stat(filepath.Join(o.StateDir, "runs")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a run refused before its first step recorded something: %v", err)
	}
}

// triageWorkflow is the shape of a mined workflow with a fuzzy step: the
// model step carries the JSON Schema of the output the next step reads,
// and the next step checks that shape before it uses it.
const triageWorkflow = `# capabilities: tracker.write · secrets: none
def wf(ctx, issue_id):
    step1 = ctx.model("classify_issue", inputs = {"issue_id": issue_id}, schema = {"type": "object", "properties": {"labels": {"type": "array"}}, "required": ["labels"]})
    ctx.check("output_shape", value = step1, step = 1, shape = {"labels": "array"})
    return ctx.tool("echo", labels = step1["labels"])
`

// TestModelSchemaRetry checks that a model step with a schema sends it as
// the OpenAI-compatible response_format, that an answer in prose is asked
// again once with the reason it does not fit, and that the run completes
// with the second answer when it fits.
func TestModelSchemaRetry(t *testing.T) {
	prose := `{"choices":[{"message":{"role":"assistant","content":"The issue is about a refund, so I would label it billing."}}],"usage":{"prompt_tokens":100,"completion_tokens":20}}`
	fitting := `{"choices":[{"message":{"role":"assistant","content":"{\"labels\": [\"billing\"]}"}}],"usage":{"prompt_tokens":150,"completion_tokens":10}}`
	s := &providerServer{path: "/chat/completions", answers: []string{prose, fitting}}
	base := serve(t, s)
	o := modelOpts(t, runconfig.ModelConfig{Provider: runconfig.ProviderOpenAI, BaseURL: base, Model: "m", InputUSDPerMTok: 1, OutputUSDPerMTok: 1})
	o.Config.Grants.Capabilities = []string{"tracker.write"}
	res, err := Run(context.Background(), workflow(t, triageWorkflow), Params{"issue_id": "I-1"}, o)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if diff := cmp.Diff(map[string]any{"labels": []any{"billing"}}, res.Output); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
	if len(s.bodies) != 2 {
		t.Fatalf("the server got %d requests, want 2 (the answer, and one retry)", len(s.bodies))
	}
	schema := map[string]any{"type": "object", "properties": map[string]any{"labels": map[string]any{"type": "array"}}, "required": []any{"labels"}}
	for i, b := range s.bodies {
		want := map[string]any{"type": "json_schema", "json_schema": map[string]any{"name": "output", "schema": schema}}
		if diff := cmp.Diff(want, b["response_format"]); diff != "" {
			t.Errorf("request %d response_format (-want +got):\n%s", i+1, diff)
		}
	}
	msgs := s.bodies[1]["messages"].([]any)
	if len(msgs) != 4 {
		t.Fatalf("retry messages = %v, want system, user, the first answer, and the reason", msgs)
	}
	if m := msgs[2].(map[string]any); m["role"] != "assistant" || !strings.Contains(m["content"].(string), "label it billing") {
		t.Errorf("retry message 3 = %v, want the first answer", m)
	}
	reason := msgs[3].(map[string]any)["content"].(string)
	if !strings.Contains(reason, "Your answer is not JSON: The issue is about a refund") {
		t.Errorf("retry reason = %q, want it to say the answer is not JSON", reason)
	}
	// Both calls are paid for, and recorded as one model step.
	if res.ModelCalls != 1 || res.TokensUsed != 280 {
		t.Errorf("model calls %d, tokens %d; want 1 step, 280 tokens over both requests", res.ModelCalls, res.TokensUsed)
	}

	// A second answer that does not fit either fails the step with
	// ErrModelOutput, after exactly one retry.
	s = &providerServer{path: "/chat/completions", answers: []string{prose, `{"choices":[{"message":{"content":"{\"label\": \"billing\"}"}}]}`}}
	base = serve(t, s)
	o = modelOpts(t, runconfig.ModelConfig{Provider: runconfig.ProviderOpenAI, BaseURL: base, Model: "m"})
	o.Config.Grants.Capabilities = []string{"tracker.write"}
	_, err = Run(context.Background(), workflow(t, triageWorkflow), Params{"issue_id": "I-1"}, o)
	if !errors.Is(err, model.ErrOutput) || !strings.Contains(err.Error(), "the second answer does not match the schema: at '': missing property 'labels'") {
		t.Errorf("Run = %v, want ErrModelOutput naming the missing labels", err)
	}
	if len(s.bodies) != 2 {
		t.Errorf("the server got %d requests, want 2", len(s.bodies))
	}

	// Then the fallback policy handles it, as a failed tool call: ask
	// suspends the run at the step for a person.
	o = modelOpts(t, runconfig.ModelConfig{Provider: runconfig.ProviderOpenAI, BaseURL: base, Model: "m"})
	o.Config.Grants.Capabilities = []string{"tracker.write"}
	o.Fallback = runconfig.FallbackAsk
	res, err = Run(context.Background(), workflow(t, triageWorkflow), Params{"issue_id": "I-1"}, o)
	if !errors.Is(err, ErrPendingApproval) || res == nil || res.Pending == nil || res.Pending.Boundary != "step-1-failed" {
		t.Errorf("Run with fallback ask = %v (pending %+v), want it suspended at step-1-failed", err, res)
	}
}

// TestAnthropicSchemaRetry checks the retry on the Messages API: the
// schema is the forced output tool's input_schema, and a tool input that
// does not fit is asked for again with the earlier answer and the reason
// in the user turn.
func TestAnthropicSchemaRetry(t *testing.T) {
	wrong := `{"model":"claude-x","content":[{"type":"tool_use","id":"t1","name":"output","input":{"label":"billing"}}],"usage":{"input_tokens":10,"output_tokens":5}}`
	right := `{"model":"claude-x","content":[{"type":"tool_use","id":"t2","name":"output","input":{"labels":["billing"]}}],"usage":{"input_tokens":12,"output_tokens":5}}`
	s := &providerServer{path: "/v1/messages", answers: []string{wrong, right}}
	base := serve(t, s)
	o := modelOpts(t, runconfig.ModelConfig{Provider: runconfig.ProviderAnthropic, BaseURL: base, Model: "claude-x", APIKey: "LLM_KEY"})
	o.Config.Grants.Capabilities = []string{"tracker.write"}
	res, err := Run(context.Background(), workflow(t, triageWorkflow), Params{"issue_id": "I-1"}, o)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if diff := cmp.Diff(map[string]any{"labels": []any{"billing"}}, res.Output); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
	if len(s.bodies) != 2 {
		t.Fatalf("the server got %d requests, want 2", len(s.bodies))
	}
	tool := s.bodies[0]["tools"].([]any)[0].(map[string]any)
	if tool["name"] != "output" || tool["input_schema"] == nil {
		t.Errorf("tool = %v, want the output tool with the step's input_schema", tool)
	}
	user := s.bodies[1]["messages"].([]any)[0].(map[string]any)["content"].(string)
	for _, want := range []string{`An earlier answer was:` + "\n" + `{"label":"billing"}`, "does not match the schema: at '': missing property 'labels'"} {
		if !strings.Contains(user, want) {
			t.Errorf("retry user turn = %q, want it to contain %q", user, want)
		}
	}
}
