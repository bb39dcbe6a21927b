package session

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/crystallize-dev/crystallize/internal/atomicfile"
)

// Running a split delegates it: each group of the plan goes to the agent
// of its tier, with the group's phases as they stand in the log, and what
// the agent answered comes back into the log as a phase of its own, one
// per group, after the phases it was given:
//
//	## Delegated group 1 @fast
//
//	> [!delegated] build, publish
//	> Group 1 of 2 (phases `build`, `publish`, ~310 tokens, tier fast)
//	> went to fast (llama3) at 2026-01-12T10:00:00Z.
//
//	> [!answer] @fast (llama3)
//	> …the agent's answer, line by line…
//
// The answer is a callout, redacted, for the reasons Continue gives. The
// log is written once, atomically, after every group has answered: a
// reader sees the old log or the new one, and a group whose agent fails
// or answers nothing leaves the log as it was, so that a run can simply
// be repeated.

// CalloutDelegated is the callout RunSplit writes to say which phases a
// group held and where they went.
const CalloutDelegated = "delegated"

// DelegatedPhase is the name of the phase RunSplit appends for group n
// (from 1).
func DelegatedPhase(n int) string { return fmt.Sprintf("Delegated group %d", n) }

// splitPrompt is what each group's agent is asked, before its phases.
const splitPrompt = `You are given a part of an agent session's log: the phases below, one group of a session split for delegation. Do the work these phases describe, or review it when it is done: say what you do and why, and give the result. Answer in markdown.

`

// SplitRunOptions are the options of RunSplit.
type SplitRunOptions struct {
	Split SplitOptions
	// Agent returns the agent group g goes to and the key that names it
	// in the log (a one-word participant, the phase's @agent). It is
	// called for every group before any agent is asked, so that a group
	// without an agent fails the run before it costs anything.
	Agent func(g Group) (key string, a Agent, err error)
	// Now is the time the log records; nil records none.
	Now func() time.Time
}

// SplitRun is what RunSplit did: the plan, and for each group the id of
// the phase appended and the agent's reply.
type SplitRun struct {
	Plan    *SplitPlan      `json:"plan"`
	Results []DelegatedPart `json:"results"`
}

// DelegatedPart is one group's outcome.
type DelegatedPart struct {
	Agent string `json:"agent"` // the key
	Phase string `json:"phase"` // the id of the phase appended
	Reply Reply  `json:"reply"`
}

// RunSplit splits the session log in file name as Split does, sends each
// group to its agent and appends the answers to the log as phases (see
// the comment above). The log must parse without problems (the error is
// Parse's).
func RunSplit(ctx context.Context, name string, opts SplitRunOptions) (*SplitRun, error) {
	if opts.Agent == nil {
		return nil, fmt.Errorf("running the split of %s: no agents", name)
	}
	s, err := Open(name)
	if err != nil {
		return nil, err
	}
	plan, err := Split(s, opts.Split)
	if err != nil {
		return nil, err
	}
	ids := s.PhaseIDs()
	index := make(map[string]int, len(ids))
	for i, id := range ids {
		index[id] = i
	}
	keys := make([]string, len(plan.Groups))
	agents := make([]Agent, len(plan.Groups))
	for i, g := range plan.Groups {
		key, a, err := opts.Agent(g)
		if err != nil {
			return nil, fmt.Errorf("group %d (tier %s): %w", i+1, g.Tier, err)
		}
		if !agentKeyOK(key) || a == nil {
			return nil, fmt.Errorf("group %d (tier %s): no agent, or an agent key %q that is not one word", i+1, g.Tier, key)
		}
		keys[i], agents[i] = key, a
	}
	var phases []Phase
	run := &SplitRun{Plan: plan, Results: []DelegatedPart{}}
	for i, g := range plan.Groups {
		var prompt strings.Builder
		prompt.WriteString(splitPrompt)
		for _, id := range g.Phases {
			prompt.WriteString(renderPhase(s.Phases[index[id]]))
			prompt.WriteByte('\n')
		}
		reply, err := agents[i].Continue(ctx, prompt.String())
		if err != nil {
			return nil, fmt.Errorf("running group %d of %s with %s: %w", i+1, name, keys[i], err)
		}
		answer := answerLines(reply.Text)
		if len(answer) == 0 {
			return nil, fmt.Errorf("running group %d of %s with %s: %w", i+1, name, keys[i], ErrEmptyAnswer)
		}
		who, title := keys[i], "@"+keys[i]
		if m := oneWord(reply.Model); m != "" {
			who += " (" + m + ")"
			title += " (" + m + ")"
		}
		codes := make([]string, len(g.Phases))
		for j, id := range g.Phases {
			codes[j] = renderCode(id)
		}
		marker := fmt.Sprintf("Group %d of %d (phases %s, ~%d tokens, tier %s) went to %s",
			i+1, len(plan.Groups), strings.Join(codes, ", "), g.Tokens, g.Tier, who)
		if opts.Now != nil {
			marker += " at " + opts.Now().UTC().Format(time.RFC3339)
		}
		phases = append(phases, Phase{Name: DelegatedPhase(i + 1), Agent: keys[i], Blocks: []Block{
			Callout{Type: CalloutDelegated, Title: strings.Join(g.Phases, ", "), Body: []string{marker + "."}},
			Callout{Type: CalloutAnswer, Title: title, Body: answer},
		}})
		if reply.Tokens > 0 {
			s.Meta.TokensUsed += reply.Tokens
		}
		if !slices.ContainsFunc(s.Meta.Participants, func(p string) bool { return p == keys[i] || strings.HasPrefix(p, keys[i]+"@") }) {
			s.Meta.Participants = append(s.Meta.Participants, keys[i])
		}
		reply.Text = strings.Join(answer, "\n")
		run.Results = append(run.Results, DelegatedPart{Agent: keys[i], Reply: reply})
	}
	first := len(s.Phases)
	s.Phases = append(s.Phases, phases...)
	ids = s.PhaseIDs()
	for i := range run.Results {
		run.Results[i].Phase = ids[first+i]
	}
	data, err := Format(s)
	if err != nil {
		return nil, fmt.Errorf("running the split of %s: %w", name, err)
	}
	info, err := os.Stat(name)
	if err != nil {
		return nil, err
	}
	if err := atomicfile.Write(name, data, info.Mode().Perm()); err != nil {
		return nil, err
	}
	return run, nil
}

// agentKeyOK reports whether key can name an agent in a log: one word,
// on one line, not a #tag.
func agentKeyOK(key string) bool {
	return lineOK(key, true) && !strings.ContainsFunc(key, func(r rune) bool { return r == ' ' || r == '\t' }) && !isTag(key)
}
