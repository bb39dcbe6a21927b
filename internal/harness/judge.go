package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// Judge providers.
const (
	ProviderOpenAI    = "openai"    // any OpenAI-compatible chat completions API
	ProviderAnthropic = "anthropic" // the Anthropic Messages API
)

// Golden-set splits for judge calibration.
const (
	SplitCalibration = "calibration"
	SplitHeldOut     = "heldout"
)

// VerdictSchema is the output schema a judge must answer in.
const VerdictSchema = `{"type":"object","required":["pass","score","reason"],"properties":{"pass":{"type":"boolean"},"score":{"type":"number","minimum":0,"maximum":1},"reason":{"type":"string"},"best":{"type":"integer","minimum":0}}}`

// JudgeConfig pins a judge: provider, endpoint, model and temperature.
type JudgeConfig struct {
	Provider    string  `json:"provider"`
	BaseURL     string  `json:"baseUrl"`
	Model       string  `json:"model"`
	Temperature float64 `json:"temperature"`
	// APIKey is sent as a bearer token (OpenAI) or x-api-key (Anthropic);
	// it is never stored or hashed.
	APIKey string `json:"-"`
	// Client is the HTTP client; nil is http.DefaultClient.
	Client *http.Client `json:"-"`
}

// HTTPJudge asks a model over HTTP.
type HTTPJudge struct {
	Config JudgeConfig
}

// Describe names the judge as provider/model@temperature.
func (j *HTTPJudge) Describe() string {
	p := j.Config.Provider
	if p == "" {
		p = ProviderOpenAI
	}
	return fmt.Sprintf("%s/%s@%g", p, j.Config.Model, j.Config.Temperature)
}

// ErrSchema marks a judge answer that does not follow VerdictSchema.
var ErrSchema = fmt.Errorf("judge answer does not follow the verdict schema")

// Judge sends the request and decodes the verdict.
func (j *HTTPJudge) Judge(ctx context.Context, req JudgeRequest) (Verdict, error) {
	v, _, err := j.JudgeRaw(ctx, req)
	return v, err
}

// JudgeRaw is Judge that also returns the endpoint's answer as received
// (the response body, at most 1 MiB), nil when no answer came: a run
// keeps it as the evidence behind the verdict.
func (j *HTTPJudge) JudgeRaw(ctx context.Context, req JudgeRequest) (Verdict, []byte, error) {
	raw, err := j.send(ctx, req)
	if err != nil {
		return Verdict{}, raw, err
	}
	v, err := j.decode(raw)
	return v, raw, err
}

// send posts the judge prompt and returns the response body.
func (j *HTTPJudge) send(ctx context.Context, req JudgeRequest) ([]byte, error) {
	prompt := judgePrompt(req)
	cfg := j.Config
	var body any
	var url string
	switch cfg.Provider {
	case ProviderOpenAI, "":
		url = strings.TrimSuffix(cfg.BaseURL, "/") + "/chat/completions"
		body = map[string]any{
			"model": cfg.Model, "temperature": cfg.Temperature,
			"response_format": map[string]any{"type": "json_object"},
			"messages": []map[string]string{
				{"role": "system", "content": "You are an evaluation judge. Answer with one JSON object matching this schema: " + VerdictSchema},
				{"role": "user", "content": prompt},
			},
		}
	case ProviderAnthropic:
		url = strings.TrimSuffix(cfg.BaseURL, "/") + "/v1/messages"
		body = map[string]any{
			"model": cfg.Model, "temperature": cfg.Temperature, "max_tokens": 512,
			"system":   "You are an evaluation judge. Answer with one JSON object matching this schema: " + VerdictSchema,
			"messages": []map[string]string{{"role": "user", "content": prompt}},
		}
	default:
		return nil, fmt.Errorf("unknown judge provider %q", cfg.Provider)
	}
	data, _ := json.Marshal(body)
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	hr.Header.Set("Content-Type", "application/json")
	if cfg.APIKey != "" {
		if cfg.Provider == ProviderAnthropic {
			hr.Header.Set("x-api-key", cfg.APIKey)
		} else {
			hr.Header.Set("Authorization", "Bearer "+cfg.APIKey)
		}
	}
	if cfg.Provider == ProviderAnthropic {
		hr.Header.Set("anthropic-version", "2023-06-01")
	}
	client := cfg.Client
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(hr)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return raw, fmt.Errorf("judge endpoint: %s: %s", resp.Status, strings.TrimSpace(string(raw)))
	}
	return raw, nil
}

// decode reads the verdict out of a response body of the provider.
func (j *HTTPJudge) decode(raw []byte) (Verdict, error) {
	var text string
	if j.Config.Provider == ProviderAnthropic {
		var r struct {
			Content []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
		}
		if err := json.Unmarshal(raw, &r); err != nil {
			return Verdict{}, fmt.Errorf("judge endpoint: %w", err)
		}
		for _, c := range r.Content {
			if c.Type == "text" {
				text += c.Text
			}
		}
	} else {
		var r struct {
			Choices []struct {
				Message struct {
					Content string `json:"content"`
				} `json:"message"`
			} `json:"choices"`
		}
		if err := json.Unmarshal(raw, &r); err != nil || len(r.Choices) == 0 {
			return Verdict{}, fmt.Errorf("judge endpoint: no choices in the answer")
		}
		text = r.Choices[0].Message.Content
	}
	return parseVerdict(text)
}

// parseVerdict decodes a judge's answer, checking it against
// VerdictSchema by hand (required fields, types, score range).
func parseVerdict(text string) (Verdict, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(strings.TrimSpace(text)), &m); err != nil {
		return Verdict{}, fmt.Errorf("%w: %v", ErrSchema, err)
	}
	var v Verdict
	for _, f := range []struct {
		key string
		dst any
	}{{"pass", &v.Pass}, {"score", &v.Score}, {"reason", &v.Reason}} {
		raw, ok := m[f.key]
		if !ok {
			return Verdict{}, fmt.Errorf("%w: no %q", ErrSchema, f.key)
		}
		if err := json.Unmarshal(raw, f.dst); err != nil {
			return Verdict{}, fmt.Errorf("%w: %q: %v", ErrSchema, f.key, err)
		}
	}
	if raw, ok := m["best"]; ok {
		if err := json.Unmarshal(raw, &v.Best); err != nil || v.Best < 0 {
			return Verdict{}, fmt.Errorf("%w: \"best\" is not a non-negative integer", ErrSchema)
		}
	}
	if v.Score < 0 || v.Score > 1 {
		return Verdict{}, fmt.Errorf("%w: score %v outside [0, 1]", ErrSchema, v.Score)
	}
	return v, nil
}

// RawJudge is a judge that can hand back its answer as received.
type RawJudge interface {
	JudgeRaw(ctx context.Context, req JudgeRequest) (Verdict, []byte, error)
}

// JudgeOutput references the answer a judge gave on one assertion of a
// case: the file a run stored it in, relative to the root, with its
// size and digest. The report keeps the reference, not the answer, which
// can be long and is the model's text, not the harness's.
type JudgeOutput struct {
	Assertion int    `json:"assertion"`
	Path      string `json:"path"`
	Bytes     int64  `json:"bytes"`
	SHA256    string `json:"sha256"`
}

// recordingJudge keeps the last answer of the judge it wraps. A judge
// that cannot give its raw answer is recorded by the verdict or error it
// returned, so every verdict has its evidence.
type recordingJudge struct {
	inner Judge
	raw   []byte
}

func (r *recordingJudge) Judge(ctx context.Context, req JudgeRequest) (Verdict, error) {
	var v Verdict
	var err error
	if rj, ok := r.inner.(RawJudge); ok {
		v, r.raw, err = rj.JudgeRaw(ctx, req)
	} else {
		v, err = r.inner.Judge(ctx, req)
	}
	if r.raw == nil {
		if err != nil {
			r.raw = []byte("error: " + err.Error() + "\n")
		} else {
			r.raw, _ = json.Marshal(v)
		}
	}
	return v, err
}

// describingRecorder is a recordingJudge of a judge that names itself,
// so the report names the judge and not the recorder.
type describingRecorder struct {
	*recordingJudge
	Describer
}

// record wraps j in a recordingJudge, keeping its Describe if it has one.
func record(j Judge) (Judge, *recordingJudge) {
	r := &recordingJudge{inner: j}
	if d, ok := j.(Describer); ok {
		return describingRecorder{r, d}, r
	}
	return r, r
}
