package session

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// agentFunc is an Agent that answers with a function.
type agentFunc func(prompt string) (Reply, error)

func (f agentFunc) Continue(_ context.Context, prompt string) (Reply, error) { return f(prompt) }

const splitRunLog = `---
type: session
session_id: s1
status: completed
---

# Two phases

## Plan @lead

> [!decision]
> Use the small cache.

## Build @lead

Built it.
`

// TestRunSplit: each group's agent gets its group's phases, the log
// gains one phase per group and lints clean; an agent that answers
// nothing, or a group with no agent, leaves the log byte for byte.
func TestRunSplit(t *testing.T) {
	file := filepath.Join(t.TempDir(), "s.md")
	write := func() {
		if err := os.WriteFile(file, []byte(splitRunLog), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write()
	var asked []string
	agents := func(g Group) (string, Agent, error) {
		return g.Tier, agentFunc(func(prompt string) (Reply, error) {
			asked = append(asked, g.Tier)
			if !strings.Contains(prompt, "## "+map[string]string{TierStrong: "Plan", TierFast: "Build"}[g.Tier]) {
				t.Errorf("tier %s got another group's phases:\n%s", g.Tier, prompt)
			}
			return Reply{Text: "ok from " + g.Tier, Model: "m-" + g.Tier, Tokens: 5}, nil
		}), nil
	}
	run, err := RunSplit(context.Background(), file, SplitRunOptions{Split: SplitOptions{MaxTokens: 8}, Agent: agents})
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Results) != 2 || run.Results[0].Phase != "delegated-group-1" || run.Results[1].Phase != "delegated-group-2" || strings.Join(asked, ",") != "strong,fast" {
		t.Fatalf("results = %+v, asked %v", run.Results, asked)
	}
	if problems, err := Lint(file); err != nil || len(problems) > 0 {
		t.Fatalf("lint: %v %v", err, problems)
	}
	s, err := Open(file)
	if err != nil || len(s.Phases) != 4 || s.Phases[2].Agent != TierStrong || s.Meta.TokensUsed != 10 {
		t.Fatalf("log after the run: %+v, %v", s, err)
	}

	for name, agent := range map[string]func(Group) (string, Agent, error){
		"empty answer": func(g Group) (string, Agent, error) {
			return g.Tier, agentFunc(func(string) (Reply, error) {
				if g.Tier == TierFast {
					return Reply{Text: " \n"}, nil
				}
				return Reply{Text: "fine"}, nil
			}), nil
		},
		"no agent": func(g Group) (string, Agent, error) {
			if g.Tier == TierFast {
				return "", nil, errors.New("no agent for fast")
			}
			return g.Tier, agentFunc(func(string) (Reply, error) { return Reply{Text: "fine"}, nil }), nil
		},
		"bad key": func(g Group) (string, Agent, error) {
			return "two words", agentFunc(func(string) (Reply, error) { return Reply{Text: "fine"}, nil }), nil
		},
	} {
		write()
		if _, err := RunSplit(context.Background(), file, SplitRunOptions{Split: SplitOptions{MaxTokens: 8}, Agent: agent}); err == nil {
			t.Errorf("%s: no error", name)
		}
		if data, _ := os.ReadFile(file); string(data) != splitRunLog {
			t.Errorf("%s: the log changed:\n%s", name, data)
		}
	}
}
