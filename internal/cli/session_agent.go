package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/crystallize-dev/crystallize/internal/model"
	"github.com/crystallize-dev/crystallize/internal/runconfig"
	"github.com/crystallize-dev/crystallize/internal/runner"
	"github.com/crystallize-dev/crystallize/internal/session"
)

// sessionAgent returns the agent "session resume --agent KEY" hands the
// context pack to: the model of [models.KEY] (provider openai or
// anthropic, its api_key secret resolved as in a run), else the command
// of [tools."KEY"], which reads the prompt on stdin and answers on
// stdout. Anything else is a usage error naming what was looked for.
func sessionAgent(cfg *runconfig.Config, key string, getenv func(string) string) (session.Agent, error) {
	if cfg == nil {
		return nil, usagef("--agent %s: no %s (or --config): the agent is [models.%s] or a command bound as [tools.%q]", key, runconfig.ConfigFile, key, key)
	}
	if mc, ok := cfg.Models[key]; ok {
		if mc.Provider == runconfig.ProviderReplay {
			return nil, usagef("--agent %s: [models.%s] replays a bundle's fixtures and cannot continue a session", key, key)
		}
		apiKey := ""
		if mc.APIKey != "" {
			var err error
			if apiKey, err = cfg.Secret(mc.APIKey, getenv); err != nil {
				return nil, fmt.Errorf("models.%s.api_key: %w", key, err)
			}
		}
		m, err := model.NewProvider(mc, apiKey, nil)
		if err != nil {
			return nil, usagef("--agent %s: models.%s: %v", key, key, err)
		}
		return modelAgent{model: m, name: mc.Model}, nil
	}
	if b, ok := cfg.Tools[key]; ok && len(b.Command) > 0 {
		argv := slices.Clone(b.Command)
		if strings.Contains(argv[0], "/") && !filepath.IsAbs(argv[0]) {
			argv[0] = filepath.Join(cfg.Dir, argv[0])
		}
		dir := cfg.Dir
		if b.Cwd != "" {
			dir = b.Cwd
			if !filepath.IsAbs(dir) {
				dir = filepath.Join(cfg.Dir, dir)
			}
		}
		return session.CommandAgent{Argv: argv, Dir: dir}, nil
	}
	return nil, usagef("--agent %s: %s has no [models.%s] and no [tools.%q] with a command", key, cfg.File, key, key)
}

// modelAgent continues a session with a configured model.
type modelAgent struct {
	model model.Provider
	name  string
}

func (a modelAgent) Continue(ctx context.Context, prompt string) (session.Reply, error) {
	resp, err := a.model.Complete(ctx, model.Request{Name: "resume", Prompt: prompt})
	if err != nil {
		return session.Reply{}, err
	}
	text, ok := resp.Output.(string)
	if !ok {
		// An answer that is a JSON document is decoded by the
		// provider; the log keeps it as the JSON it was.
		b, err := json.MarshalIndent(resp.Output, "", "  ")
		if err != nil {
			return session.Reply{}, err
		}
		text = string(b)
	}
	model := resp.Model
	if model == "" {
		model = a.name
	}
	return session.Reply{Text: text, Model: model, Tokens: resp.InputTokens + resp.OutputTokens}, nil
}

// continueSession is session resume --agent: the log's session continued
// by the agent KEY and the continuation logged into the log.
func continueSession(ctx context.Context, e *env, rf *resumeFlags, name string, s *session.Session, phase, key string) error {
	if len(rf.approve)+len(rf.reject) > 0 {
		return usagef("--agent continues a session with an agent; --approve and --reject continue a suspended run")
	}
	if r, err := runner.OpenRunLog(name, s); err != nil {
		return err
	} else if r != nil && r.Journal != nil {
		return usagef("run %s is suspended at an approval: continue it with --approve or --reject, not --agent", r.RunID)
	}
	cfg, err := projectConfig(rf.config)
	if err != nil {
		return err
	}
	agent, err := sessionAgent(cfg, key, e.getenv)
	if err != nil {
		return err
	}
	c, err := session.Continue(ctx, name, session.ContinueOptions{
		Key: key, Agent: agent, Now: time.Now,
		Resume: session.ResumeOptions{Phase: phase, Load: session.DirLoader(filepath.Dir(name))},
	})
	if errors.Is(err, session.ErrNoPhase) {
		return usagef("--phase: %v", err)
	}
	if err != nil {
		return err
	}
	if rf.asJSON {
		return writeJSON(e.stdout, c)
	}
	fmt.Fprintf(e.stdout, "Continued %s with %s: phase %s\n\n%s\n", name, key, c.Phase, c.Reply.Text)
	return nil
}
