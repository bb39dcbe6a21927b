package runtime

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
)

// Model providers, the values of [models.name] provider.
const (
	ProviderOpenAI    = "openai"
	ProviderAnthropic = "anthropic"
	ProviderReplay    = "replay"
)

// Defaults of a [models.name] entry.
const (
	// DefaultModelTimeout bounds one model call that sets no timeout.
	DefaultModelTimeout = 2 * time.Minute
	// DefaultMaxTokens is the answer budget sent to providers that
	// require one (Anthropic) when max_tokens is not set.
	DefaultMaxTokens = 1024
	// DefaultOpenAIURL and DefaultAnthropicURL are the base URLs of
	// providers that set none.
	DefaultOpenAIURL    = "https://api.openai.com/v1"
	DefaultAnthropicURL = "https://api.anthropic.com"
	// AnthropicVersion is the anthropic-version header the Messages
	// client sends.
	AnthropicVersion = "2023-06-01"
)

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
func NewProvider(c ModelConfig, apiKey string, client *http.Client) (Model, error) {
	if client == nil {
		client = http.DefaultClient
	}
	p := &httpProvider{cfg: c, key: apiKey, client: client}
	switch c.Provider {
	case ProviderOpenAI:
		p.base = DefaultOpenAIURL
	case ProviderAnthropic:
		p.base = DefaultAnthropicURL
	default:
		return nil, fmt.Errorf("%w: provider %q has no HTTP client", ErrModel, c.Provider)
	}
	if c.BaseURL != "" {
		p.base = c.BaseURL
	}
	p.base = strings.TrimSuffix(p.base, "/")
	return p, nil
}

// httpProvider speaks one provider's wire format over net/http.
type httpProvider struct {
	cfg    ModelConfig
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

func userText(req ModelRequest) string {
	var b strings.Builder
	b.WriteString(req.Prompt)
	if req.Prompt == "" {
		fmt.Fprintf(&b, "Perform the step %q.", req.Name)
	}
	if req.Inputs != nil {
		b.WriteString("\n\nInputs (JSON):\n")
		b.Write(canonical(req.Inputs))
	}
	return b.String()
}

// Complete sends req and decodes the answer. With a schema the answer
// must be JSON; without one, an answer that is a JSON document is decoded
// and any other is returned as a string, as command output is.
func (p *httpProvider) Complete(ctx context.Context, req ModelRequest) (*ModelResponse, error) {
	timeout := p.cfg.timeout
	if timeout == 0 {
		timeout = DefaultModelTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var (
		url  string
		body any
		hdr  = http.Header{"Content-Type": {"application/json"}}
	)
	if p.cfg.Provider == ProviderAnthropic {
		url = p.base + "/v1/messages"
		body = p.anthropicRequest(req)
		hdr.Set("anthropic-version", AnthropicVersion)
		if p.key != "" {
			hdr.Set("x-api-key", p.key)
		}
	} else {
		url = p.base + "/chat/completions"
		body = p.openaiRequest(req)
		if p.key != "" {
			hdr.Set("Authorization", "Bearer "+p.key)
		}
	}
	data, err := p.post(ctx, url, hdr, body, timeout)
	if err != nil {
		return nil, err
	}
	var resp *ModelResponse
	var text string
	if p.cfg.Provider == ProviderAnthropic {
		resp, text, err = decodeAnthropic(data)
	} else {
		resp, text, err = decodeOpenAI(data)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w", p.cfg.Provider, url, err)
	}
	if resp.Output == nil {
		resp.Output, err = answer(text, req.Schema != nil)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", p.cfg.Provider, url, err)
		}
	}
	if resp.Model == "" {
		resp.Model = p.cfg.Model
	}
	resp.CostUSD = p.cfg.cost(resp.InputTokens, resp.OutputTokens)
	return resp, nil
}

// post sends one JSON request and returns the body of a 2xx answer.
// Errors name the provider, the URL and the status, never the key.
func (p *httpProvider) post(ctx context.Context, url string, hdr http.Header, body any, timeout time.Duration) ([]byte, error) {
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(canonical(body)))
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
			return clip(oneLine(obj.Message), maxErrorBody)
		case json.Unmarshal(e.Error, &s) == nil && s != "":
			return clip(oneLine(s), maxErrorBody)
		}
	}
	return clip(oneLine(string(data)), maxErrorBody)
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
		return parseOutput([]byte(s)), nil
	}
	if wantJSON {
		return nil, fmt.Errorf("the answer is not JSON, but the step has a schema: %s", clip(oneLine(text), 200))
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
func (p *httpProvider) openaiRequest(req ModelRequest) map[string]any {
	sys := systemText
	if req.Schema != nil {
		sys = systemSchema + string(canonical(req.Schema))
	}
	body := map[string]any{
		"model":       p.cfg.Model,
		"messages":    []chatMessage{{Role: "system", Content: sys}, {Role: "user", Content: userText(req)}},
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

func decodeOpenAI(data []byte) (*ModelResponse, string, error) {
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
	resp := &ModelResponse{Model: r.Model, InputTokens: r.Usage.PromptTokens, OutputTokens: r.Usage.CompletionTokens}
	if len(r.Choices) == 0 {
		return nil, "", errors.New("the response has no choices")
	}
	m := r.Choices[0].Message
	switch {
	case m.Refusal != "":
		return nil, "", fmt.Errorf("the model refused: %s", clip(oneLine(m.Refusal), 200))
	case m.Content == nil:
		return nil, "", fmt.Errorf("the response has no content (finish reason %q)", r.Choices[0].FinishReason)
	}
	return resp, *m.Content, nil
}

// anthropicRequest builds a Messages request. A schema becomes the input
// schema of one tool the model is made to call (tool_choice), the
// documented way to get JSON that conforms to a schema.
func (p *httpProvider) anthropicRequest(req ModelRequest) map[string]any {
	maxTokens := p.cfg.MaxTokens
	if maxTokens == 0 {
		maxTokens = DefaultMaxTokens
	}
	body := map[string]any{
		"model":       p.cfg.Model,
		"max_tokens":  maxTokens,
		"system":      systemText,
		"messages":    []chatMessage{{Role: "user", Content: userText(req)}},
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

func decodeAnthropic(data []byte) (*ModelResponse, string, error) {
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
	resp := &ModelResponse{Model: r.Model, InputTokens: r.Usage.InputTokens, OutputTokens: r.Usage.OutputTokens}
	var text strings.Builder
	for _, c := range r.Content {
		switch c.Type {
		case "tool_use":
			if c.Name == "output" {
				resp.Output = parseOutput(c.Input)
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

// cost is the price of a call at c's per-million-token prices.
func (c *ModelConfig) cost(in, out int64) float64 {
	return (float64(in)*c.InputUSDPerMTok + float64(out)*c.OutputUSDPerMTok) / 1e6
}
