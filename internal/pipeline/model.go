package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/crystallize-dev/crystallize/internal/model"
	"github.com/crystallize-dev/crystallize/internal/runconfig"
	"github.com/crystallize-dev/crystallize/internal/synth"
)

// ConfigModel answers synthesis prompts with the [models.*] entries of a
// runtime configuration: an experiment's code.model, or a synthesized
// step's model, names the entry. Its api_key secret is read as a run
// reads it, through Getenv.
type ConfigModel struct {
	// Config is the configuration; nil when there is none, which every
	// prompt is refused for.
	Config *runconfig.Config
	Getenv func(string) string
	// Client is the HTTP client of the providers; nil is their default.
	Client *http.Client
}

// ErrNoModelConfig is returned by ConfigModel.Complete when it has no
// configuration to find the model in.
var ErrNoModelConfig = errors.New("no configuration")

// Complete implements synth.Model.
func (m *ConfigModel) Complete(ctx context.Context, key, prompt string) (*synth.Answer, error) {
	if m.Config == nil {
		return nil, fmt.Errorf("model %q: %w", key, ErrNoModelConfig)
	}
	mc, ok := m.Config.Models[key]
	if !ok {
		return nil, fmt.Errorf("model %q: no [models.%s] in %s", key, key, m.Config.File)
	}
	apiKey := ""
	if mc.APIKey != "" {
		var err error
		if apiKey, err = m.Config.Secret(mc.APIKey, m.Getenv); err != nil {
			return nil, fmt.Errorf("models.%s.api_key: %w", key, err)
		}
	}
	p, err := model.NewProvider(mc, apiKey, m.Client)
	if err != nil {
		return nil, fmt.Errorf("models.%s: %w", key, err)
	}
	resp, err := p.Complete(ctx, model.Request{Name: key, Prompt: prompt})
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
