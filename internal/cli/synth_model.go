package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/crystallize-dev/crystallize/internal/runtime"
	"github.com/crystallize-dev/crystallize/internal/synth"
)

// synthModel answers synthesis prompts with the [models.*] entries of the
// runtime configuration: the experiment's code.model names the entry.
type synthModel struct {
	cfg    *runtime.Config
	getenv func(string) string
	client *http.Client
}

func (m *synthModel) Complete(ctx context.Context, key, prompt string) (*synth.Answer, error) {
	if m.cfg == nil {
		return nil, fmt.Errorf("model %q: no configuration; name one with --config or create %s", key, runtime.ConfigFile)
	}
	mc, ok := m.cfg.Models[key]
	if !ok {
		return nil, fmt.Errorf("model %q: no [models.%s] in %s", key, key, m.cfg.File)
	}
	apiKey := ""
	if mc.APIKey != "" {
		var err error
		if apiKey, err = m.cfg.Secret(mc.APIKey, m.getenv); err != nil {
			return nil, fmt.Errorf("models.%s.api_key: %w", key, err)
		}
	}
	p, err := runtime.NewProvider(mc, apiKey, m.client)
	if err != nil {
		return nil, fmt.Errorf("models.%s: %w", key, err)
	}
	resp, err := p.Complete(ctx, runtime.ModelRequest{Name: key, Prompt: prompt})
	if err != nil {
		return nil, err
	}
	// The provider decodes an answer that happens to be JSON; synthesis
	// wants the text back.
	text, ok := resp.Output.(string)
	if !ok {
		b, err := json.Marshal(resp.Output)
		if err != nil {
			return nil, fmt.Errorf("models.%s: %w", key, err)
		}
		text = string(b)
	}
	return &synth.Answer{Text: text, Model: resp.Model, InputTokens: resp.InputTokens, OutputTokens: resp.OutputTokens}, nil
}

// loadSynthConfig reads --config, or crystallize.toml in the current
// directory when it exists; no file is no configuration.
func loadSynthConfig(file string) (*runtime.Config, error) {
	if file = runtime.ConfigPath(file); file == "" {
		return nil, nil
	}
	cfg, err := runtime.LoadConfig(file)
	if err != nil {
		return nil, usageError{err}
	}
	return cfg, nil
}
