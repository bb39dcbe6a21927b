package model

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/crystallize-dev/crystallize/internal/runconfig"
	"github.com/crystallize-dev/crystallize/internal/stepvalue"
)

// ErrUnavailable: a model call with no provider that can answer it.
var ErrUnavailable = errors.New("model unavailable")

// ErrOutput: a model's answer to a step with a schema did not fit
// the schema, even when asked again with the reason. The step fails, and
// the run follows its fallback policy as for a failed tool call.
var ErrOutput = errors.New("model answer does not fit the step's schema")

// maxErrorBody is how much of a provider's error response an error
// quotes; maxResponse bounds what a response body may be.
const (
	maxErrorBody = 500
	maxResponse  = 32 << 20
)

// ProviderError is a provider's answer that is not a success: the HTTP
// status and the message the provider gave, if any.
type ProviderError struct {
	Provider string
	URL      string
	Status   int
	Message  string
}

func (e *ProviderError) Error() string {
	msg := fmt.Sprintf("%s: POST %s: %d", e.Provider, e.URL, e.Status)
	if t := http.StatusText(e.Status); t != "" {
		msg += " " + t
	}
	if e.Message != "" {
		msg += ": " + e.Message
	}
	return msg
}

// NewProvider returns the client of a [models.name] entry for the
// providers that call a remote API: openai (any OpenAI-compatible
// chat-completions server) and anthropic (the Messages API). apiKey is
// the resolved value of c.APIKey ("" sends no credential, for local
// servers); it is sent only in the provider's authentication header.
// client nil means http.DefaultClient; the call's context and c's timeout
// bound every request.
func NewProvider(c runconfig.ModelConfig, apiKey string, client *http.Client) (Provider, error) {
	if client == nil {
		client = http.DefaultClient
	}
	p := &httpProvider{cfg: c, key: apiKey, client: client}
	switch c.Provider {
	case runconfig.ProviderOpenAI:
		p.base = runconfig.DefaultOpenAIURL
	case runconfig.ProviderAnthropic:
		p.base = runconfig.DefaultAnthropicURL
	default:
		return nil, fmt.Errorf("%w: provider %q has no HTTP client", ErrUnavailable, c.Provider)
	}
	if c.BaseURL != "" {
		p.base = c.BaseURL
	}
	p.base = strings.TrimSuffix(p.base, "/")
	return p, nil
}

// httpProvider speaks one provider's wire format over net/http.
type httpProvider struct {
	cfg    runconfig.ModelConfig
	key    string
	base   string
	client *http.Client
}

// Both wire formats are asked for the same thing: a system message saying
// how to answer, and a user message holding the prompt and the inputs as
// canonical JSON, so that a step's request is a pure function of its
// arguments. Temperature is 0: the workflow is deterministic and its model
// steps should be as near it as the provider allows.
const (
	systemText   = "You perform one step of an automated workflow. Answer only with the result of the step."
	systemSchema = "You perform one step of an automated workflow. Answer only with a JSON value that conforms to this JSON Schema, with no other text:\n"
)

func userText(req Request) string {
	var b strings.Builder
	b.WriteString(req.Prompt)
	if req.Prompt == "" {
		fmt.Fprintf(&b, "Perform the step %q.", req.Name)
	}
	if req.Inputs != nil {
		b.WriteString("\n\nInputs (JSON):\n")
		b.Write(stepvalue.Canonical(req.Inputs))
	}
	return b.String()
}

// Complete sends req and decodes the answer. With a schema the answer
// must be JSON that conforms to it: an answer that does not (prose, or
// JSON of another shape) is asked for once more, with the reason, and
// a second answer that does not either fails with ErrOutput. Without
// a schema, an answer that is a JSON document is decoded and any other is
// returned as a string, as command output is.
func (p *httpProvider) Complete(ctx context.Context, req Request) (*Response, error) {
	timeout := p.cfg.ParsedTimeout()
	if timeout == 0 {
		timeout = runconfig.DefaultModelTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var schema *jsonschema.Schema
	if req.Schema != nil {
		var err error
		if schema, err = compileSchema(req.Schema); err != nil {
			return nil, fmt.Errorf("%w: step %s: schema: %v", ErrUnavailable, req.Name, err)
		}
	}
	resp, text, url, err := p.ask(ctx, req, nil, timeout)
	if err != nil || schema == nil {
		return resp, err
	}
	problem := fits(schema, resp.Output, text)
	if problem == "" {
		return resp, nil
	}
	// One more turn, told what was wrong: a model that answered in prose
	// usually answers in JSON when shown the schema's complaint.
	again, text2, _, err := p.ask(ctx, req, &retry{answer: text, output: resp.Output, problem: problem}, timeout)
	if err != nil {
		return nil, err
	}
	again.InputTokens += resp.InputTokens
	again.OutputTokens += resp.OutputTokens
	again.CostUSD = p.cfg.Cost(again.InputTokens, again.OutputTokens)
	if problem := fits(schema, again.Output, text2); problem != "" {
		return again, fmt.Errorf("%s: %s: %w: asked twice, the second answer %s", p.cfg.Provider, url, ErrOutput, problem)
	}
	return again, nil
}

// retry is what a second request of a step says about the first answer:
// the answer and why it does not fit the schema.
type retry struct {
	answer  string
	output  any
	problem string
}

// retryText is the user turn that asks again.
func (r *retry) text() string {
	return "Your answer " + strings.TrimRight(r.problem, ".") + ".\nAnswer again with only a JSON value that conforms to the step's JSON Schema, with no other text."
}

// ask sends one request of req (the retry turn appended when r is not
// nil) and decodes the answer: resp.Output is the decoded answer (a
// string when it is not JSON), text the raw text the model wrote ("" for
// a tool call's input).
func (p *httpProvider) ask(ctx context.Context, req Request, r *retry, timeout time.Duration) (resp *Response, text, url string, err error) {
	var (
		body any
		hdr  = http.Header{"Content-Type": {"application/json"}}
	)
	if p.cfg.Provider == runconfig.ProviderAnthropic {
		url = p.base + "/v1/messages"
		body = p.anthropicRequest(req, r)
		hdr.Set("anthropic-version", runconfig.AnthropicVersion)
		if p.key != "" {
			hdr.Set("x-api-key", p.key)
		}
	} else {
		url = p.base + "/chat/completions"
		body = p.openaiRequest(req, r)
		if p.key != "" {
			hdr.Set("Authorization", "Bearer "+p.key)
		}
	}
	data, err := p.post(ctx, url, hdr, body, timeout)
	if err != nil {
		return nil, "", url, err
	}
	if p.cfg.Provider == runconfig.ProviderAnthropic {
		resp, text, err = decodeAnthropic(data)
	} else {
		resp, text, err = decodeOpenAI(data)
	}
	if err != nil {
		return nil, "", url, fmt.Errorf("%s: %s: %w", p.cfg.Provider, url, err)
	}
	if resp.Output == nil {
		// Prose where JSON was asked for is kept as a string, for the
		// schema check to refuse with a reason the retry can quote.
		resp.Output, _ = answer(text, false)
	}
	if resp.Model == "" {
		resp.Model = p.cfg.Model
	}
	resp.CostUSD = p.cfg.Cost(resp.InputTokens, resp.OutputTokens)
	return resp, text, url, nil
}

const stepSchemaURL = "urn:crystallize:step"

// compileSchema compiles a step's JSON Schema.
func compileSchema(schema any) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(stepvalue.Canonical(schema)))
	if err != nil {
		return nil, err
	}
	// A URN, not a file name: the compiler would resolve a relative name
	// against the working directory, and its messages quote it.
	c := jsonschema.NewCompiler()
	if err := c.AddResource(stepSchemaURL, doc); err != nil {
		return nil, err
	}
	return c.Compile(stepSchemaURL)
}

// fits returns why out, the decoded answer whose text is text, does not
// conform to schema, or "" when it does.
func fits(schema *jsonschema.Schema, out any, text string) string {
	if s, ok := out.(string); ok && text != "" && s == text {
		if _, err := answer(text, true); err != nil {
			return "is not JSON: " + stepvalue.Clip(stepvalue.OneLine(text), 200)
		}
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(stepvalue.Canonical(out)))
	if err != nil {
		return "is not JSON: " + err.Error()
	}
	if err := schema.Validate(v); err != nil {
		// The first line names the schema; the others are the
		// problems, "- at '/labels': got string, want array".
		lines := strings.Split(err.Error(), "\n")
		if len(lines) > 1 {
			lines = lines[1:]
		}
		for i, l := range lines {
			lines[i] = strings.TrimPrefix(l, "- ")
		}
		return "does not match the schema: " + stepvalue.Clip(stepvalue.OneLine(strings.Join(lines, "; ")), 500)
	}
	return ""
}

// post sends one JSON request and returns the body of a 2xx answer.
// Errors name the provider, the URL and the status, never the key.
func (p *httpProvider) post(ctx context.Context, url string, hdr http.Header, body any, timeout time.Duration) ([]byte, error) {
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(stepvalue.Canonical(body)))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p.cfg.Provider, err)
	}
	hr.Header = hdr
	r, err := p.client.Do(hr)
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, fmt.Errorf("%s: POST %s: timed out after %s", p.cfg.Provider, url, timeout)
		}
		// *url.Error quotes the URL, which holds no credential: keys go
		// in headers only.
		return nil, fmt.Errorf("%s: %w", p.cfg.Provider, err)
	}
	defer r.Body.Close()
	data, err := io.ReadAll(io.LimitReader(r.Body, maxResponse))
	if err != nil {
		return nil, fmt.Errorf("%s: POST %s: reading response: %w", p.cfg.Provider, url, err)
	}
	if r.StatusCode/100 != 2 {
		return nil, &ProviderError{Provider: p.cfg.Provider, URL: url, Status: r.StatusCode, Message: errorMessage(data)}
	}
	return data, nil
}

// errorMessage extracts the message of an error body in either format
// ({"error": {"message": …}}), else quotes the start of the body.
func errorMessage(data []byte) string {
	var e struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(data, &e) == nil && len(e.Error) > 0 {
		var obj struct {
			Message string `json:"message"`
		}
		var s string
		switch {
		case json.Unmarshal(e.Error, &obj) == nil && obj.Message != "":
			return stepvalue.Clip(stepvalue.OneLine(obj.Message), maxErrorBody)
		case json.Unmarshal(e.Error, &s) == nil && s != "":
			return stepvalue.Clip(stepvalue.OneLine(s), maxErrorBody)
		}
	}
	return stepvalue.Clip(stepvalue.OneLine(string(data)), maxErrorBody)
}

// answer decodes a model's text: JSON when it is JSON (inside a markdown
// code fence too, which models add despite being told not to).
func answer(text string, wantJSON bool) (any, error) {
	s := strings.TrimSpace(text)
	if strings.HasPrefix(s, "```") {
		s = strings.TrimPrefix(s, "```")
		if i := strings.IndexByte(s, '\n'); i >= 0 {
			s = s[i+1:] // the fence's language tag
		}
		s = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), "```"))
	}
	if json.Valid([]byte(s)) {
		return stepvalue.ParseOutput([]byte(s)), nil
	}
	if wantJSON {
		return nil, fmt.Errorf("the answer is not JSON, but the step has a schema: %s", stepvalue.Clip(stepvalue.OneLine(text), 200))
	}
	return text, nil
}

type chatMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// openaiRequest builds a chat-completions request. A schema is sent as
// response_format json_schema, which OpenAI, vLLM, Ollama and llama.cpp
// server honour; the system message repeats it for servers that do not.
func (p *httpProvider) openaiRequest(req Request, r *retry) map[string]any {
	sys := systemText
	if req.Schema != nil {
		sys = systemSchema + string(stepvalue.Canonical(req.Schema))
	}
	msgs := []chatMessage{{Role: "system", Content: sys}, {Role: "user", Content: userText(req)}}
	if r != nil {
		msgs = append(msgs, chatMessage{Role: "assistant", Content: r.answer}, chatMessage{Role: "user", Content: r.text()})
	}
	body := map[string]any{
		"model":       p.cfg.Model,
		"messages":    msgs,
		"temperature": 0,
	}
	if p.cfg.MaxTokens > 0 {
		body["max_tokens"] = p.cfg.MaxTokens
	}
	if req.Schema != nil {
		body["response_format"] = map[string]any{
			"type":        "json_schema",
			"json_schema": map[string]any{"name": "output", "schema": req.Schema},
		}
	}
	return body
}

func decodeOpenAI(data []byte) (*Response, string, error) {
	var r struct {
		Model   string `json:"model"`
		Choices []struct {
			Message struct {
				Content *string `json:"content"`
				Refusal string  `json:"refusal"`
			} `json:"message"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
		Usage struct {
			PromptTokens     int64 `json:"prompt_tokens"`
			CompletionTokens int64 `json:"completion_tokens"`
		} `json:"usage"`
	}
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, "", fmt.Errorf("decoding response: %w", err)
	}
	resp := &Response{Model: r.Model, InputTokens: r.Usage.PromptTokens, OutputTokens: r.Usage.CompletionTokens}
	if len(r.Choices) == 0 {
		return nil, "", errors.New("the response has no choices")
	}
	m := r.Choices[0].Message
	switch {
	case m.Refusal != "":
		return nil, "", fmt.Errorf("the model refused: %s", stepvalue.Clip(stepvalue.OneLine(m.Refusal), 200))
	case m.Content == nil:
		return nil, "", fmt.Errorf("the response has no content (finish reason %q)", r.Choices[0].FinishReason)
	}
	return resp, *m.Content, nil
}

// anthropicRequest builds a Messages request. A schema becomes the input
// schema of one tool the model is made to call (tool_choice), the
// documented way to get JSON that conforms to a schema.
//
// A retry repeats the request with the reason appended to the user turn:
// the first answer may have been a tool call, which the Messages API
// would want answered with a tool result rather than a new question.
func (p *httpProvider) anthropicRequest(req Request, r *retry) map[string]any {
	maxTokens := p.cfg.MaxTokens
	if maxTokens == 0 {
		maxTokens = runconfig.DefaultMaxTokens
	}
	body := map[string]any{
		"model":       p.cfg.Model,
		"max_tokens":  maxTokens,
		"system":      systemText,
		"messages":    []chatMessage{{Role: "user", Content: anthropicUser(req, r)}},
		"temperature": 0,
	}
	if req.Schema != nil {
		body["tools"] = []any{map[string]any{
			"name":         "output",
			"description":  "Record the result of the step.",
			"input_schema": req.Schema,
		}}
		body["tool_choice"] = map[string]any{"type": "tool", "name": "output"}
	}
	return body
}

func decodeAnthropic(data []byte) (*Response, string, error) {
	var r struct {
		Model   string `json:"model"`
		Content []struct {
			Type  string          `json:"type"`
			Text  string          `json:"text"`
			Name  string          `json:"name"`
			Input json.RawMessage `json:"input"`
		} `json:"content"`
		StopReason string `json:"stop_reason"`
		Usage      struct {
			InputTokens  int64 `json:"input_tokens"`
			OutputTokens int64 `json:"output_tokens"`
		} `json:"usage"`
	}
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, "", fmt.Errorf("decoding response: %w", err)
	}
	resp := &Response{Model: r.Model, InputTokens: r.Usage.InputTokens, OutputTokens: r.Usage.OutputTokens}
	var text strings.Builder
	for _, c := range r.Content {
		switch c.Type {
		case "tool_use":
			if c.Name == "output" {
				resp.Output = stepvalue.ParseOutput(c.Input)
				return resp, "", nil
			}
		case "text":
			text.WriteString(c.Text)
		}
	}
	if text.Len() == 0 {
		return nil, "", fmt.Errorf("the response has no text (stop reason %q)", r.StopReason)
	}
	return resp, text.String(), nil
}

// anthropicUser is the user turn of a Messages request: the step, and on a
// retry the first answer and why it does not fit.
func anthropicUser(req Request, r *retry) string {
	u := userText(req)
	if r == nil {
		return u
	}
	prev := r.answer
	if prev == "" {
		prev = string(stepvalue.Canonical(r.output))
	}
	return u + "\n\nAn earlier answer was:\n" + prev + "\n\n" + r.text()
}

// Provider answers ctx.model calls: a remote API's client (NewProvider),
// the runner's replay of recorded answers, or a caller's own.
type Provider interface {
	Complete(ctx context.Context, req Request) (*Response, error)
}

// Request is one ctx.model call.
type Request struct {
	Step   int
	Name   string
	Prompt string
	Inputs any
	Schema any
}

// Response is a model's answer and what it cost.
type Response struct {
	Output       any
	Model        string
	InputTokens  int64
	OutputTokens int64
	CostUSD      float64
}
