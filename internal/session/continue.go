package session

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/crystallize-dev/crystallize/internal/atomicfile"
	"github.com/crystallize-dev/crystallize/internal/proc"
	"github.com/crystallize-dev/crystallize/internal/redact"
)

// Resuming a session means more than rebuilding its context: the agent
// continues with it. Continue hands the context pack of Resume to an
// Agent (a configured model, or an agent's command line) and logs what
// the agent answered into the same session log, as a new phase:
//
//	## Continuation @reviewer
//
//	> [!resume] phase-2
//	> Resumed at phase 2, `design` (Design); the context pack went to
//	> reviewer (gpt-4o-mini) at 2026-01-12T10:00:00Z.
//
//	> [!answer] @reviewer (gpt-4o-mini)
//	> …the agent's answer, line by line…
//
// The [!resume] callout marks where the session was resumed from, and the
// frontmatter's resume_point moves to the new phase, so that the next
// resume starts from the continuation with everything before it as
// context. The answer is a callout so that nothing it holds (a "## "
// line, a callout of its own) can change the structure of the log; it is
// redacted as everything crystallize writes for others to read. The log
// is rewritten whole, atomically: a reader sees the old log or the new
// one, and an agent that fails leaves the log as it was.

// Callout types Continue writes.
const (
	CalloutResume = "resume"
	CalloutAnswer = "answer"
)

// ContinuationPhase is the name of the phase Continue appends.
const ContinuationPhase = "Continuation"

// Agent is what continues a session: a configured model or an agent's
// command. Continue gives it the prompt (the context pack and what to do
// with it) and logs its Reply.
type Agent interface {
	Continue(ctx context.Context, prompt string) (Reply, error)
}

// Reply is an agent's answer: its text, the model that gave it when
// known, and the tokens it used (0 when not known).
type Reply struct {
	Text   string `json:"text"`
	Model  string `json:"model,omitempty"`
	Tokens int64  `json:"tokens"`
}

// ContinueOptions are the options of Continue.
type ContinueOptions struct {
	// Key names the agent in the log: the phase's @agent and a
	// participant. Required, one word.
	Key   string
	Agent Agent
	// Resume chooses the phase to resume at and loads nested sessions,
	// as for Resume.
	Resume ResumeOptions
	// Now is the time the resume marker records; nil records none.
	Now func() time.Time
}

// Continuation is what Continue did.
type Continuation struct {
	Pack  *Pack  `json:"pack"`
	Phase string `json:"phase"` // the id of the phase appended
	Reply Reply  `json:"reply"`
}

// ErrEmptyAnswer is returned by Continue when the agent answered nothing:
// there is nothing to log, and the log is left as it was.
var ErrEmptyAnswer = errors.New("the agent answered nothing")

// continuePrompt is what the agent is asked, before the context pack.
const continuePrompt = `You are continuing an agent session from its log. The context pack below says what the session is for, what was done, what was decided and what is still open. Continue the work from the phase it resumes at: say what you do next and why, and give the result. Answer in markdown.

`

// Continue resumes the session log in file name with opts.Agent and
// appends the continuation to the log (see the comment above). The log
// must parse without problems (the error is Parse's); Resume's errors
// (ErrNoPhase) are returned as they are.
func Continue(ctx context.Context, name string, opts ContinueOptions) (*Continuation, error) {
	if opts.Agent == nil || !agentKeyOK(opts.Key) {
		return nil, fmt.Errorf("continuing %s: no agent, or an agent key %q that is not one word", name, opts.Key)
	}
	s, err := Open(name)
	if err != nil {
		return nil, err
	}
	pack, err := Resume(s, opts.Resume)
	if err != nil {
		return nil, err
	}
	var md bytes.Buffer
	if err := pack.WriteMarkdown(&md); err != nil {
		return nil, err
	}
	reply, err := opts.Agent.Continue(ctx, continuePrompt+md.String())
	if err != nil {
		return nil, fmt.Errorf("continuing %s with %s: %w", name, opts.Key, err)
	}
	answer := answerLines(reply.Text)
	if len(answer) == 0 {
		return nil, fmt.Errorf("continuing %s with %s: %w", name, opts.Key, ErrEmptyAnswer)
	}

	from := "the end"
	where := "after the last phase"
	if pack.ResumeAt != nil {
		from = pack.ResumeAt.ID
		where = fmt.Sprintf("at phase %d, %s (%s)", pack.ResumeAt.Index, renderCode(pack.ResumeAt.ID), singleLine(pack.ResumeAt.Name, maxTitle))
	}
	who := opts.Key
	title := "@" + opts.Key
	if m := oneWord(reply.Model); m != "" {
		who += " (" + m + ")"
		title += " (" + m + ")"
	}
	marker := "Resumed " + where + "; the context pack went to " + who
	if opts.Now != nil {
		marker += " at " + opts.Now().UTC().Format(time.RFC3339)
	}
	phase := Phase{Name: ContinuationPhase, Agent: opts.Key, Blocks: []Block{
		Callout{Type: CalloutResume, Title: from, Body: []string{marker + "."}},
		Callout{Type: CalloutAnswer, Title: title, Body: answer},
	}}
	s.Phases = append(s.Phases, phase)
	ids := s.PhaseIDs()
	id := ids[len(ids)-1]
	s.Meta.ResumePoint = id
	if reply.Tokens > 0 {
		s.Meta.TokensUsed += reply.Tokens
	}
	if !slices.ContainsFunc(s.Meta.Participants, func(p string) bool { return p == opts.Key || strings.HasPrefix(p, opts.Key+"@") }) {
		s.Meta.Participants = append(s.Meta.Participants, opts.Key)
	}
	data, err := Format(s)
	if err != nil {
		return nil, fmt.Errorf("continuing %s: %w", name, err)
	}
	info, err := os.Stat(name)
	if err != nil {
		return nil, err
	}
	if err := atomicfile.Write(name, data, info.Mode().Perm()); err != nil {
		return nil, err
	}
	reply.Text = strings.Join(answer, "\n")
	return &Continuation{Pack: pack, Phase: id, Reply: reply}, nil
}

// answerLines are the lines of an agent's answer as a callout body holds
// them: redacted, without carriage returns or trailing space, each fit
// to the nesting a log can hold, and without leading or trailing blank
// lines; nil for an answer with no text.
func answerLines(text string) []string {
	text, _ = redact.Text(text)
	text = strings.TrimSpace(strings.ReplaceAll(strings.ToValidUTF8(text, "\uFFFD"), "\r", ""))
	if text == "" {
		return nil
	}
	var out []string
	for _, l := range strings.Split(text, "\n") {
		out = append(out, flatten(strings.TrimRight(l, " \t")))
	}
	return out
}

// CommandAgent is an agent run as a command: the prompt on its standard
// input, its standard output the answer (as claude -p, codex exec - or
// gemini -p read and answer). A command that exits non-zero fails the
// continuation, with what it wrote on standard error.
type CommandAgent struct {
	Argv []string
	Dir  string   // working directory; "" is the current one
	Env  []string // environment; nil inherits the process's
}

// Continue runs the command.
func (c CommandAgent) Continue(ctx context.Context, prompt string) (Reply, error) {
	if len(c.Argv) == 0 {
		return Reply{}, errors.New("agent command: empty command line")
	}
	cmd := exec.CommandContext(ctx, c.Argv[0], c.Argv[1:]...)
	cmd.Dir, cmd.Env = c.Dir, c.Env
	cmd.Stdin = strings.NewReader(prompt)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := proc.Run(cmd); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if len(msg) > 500 {
			msg = msg[:500] + "…"
		}
		if msg != "" {
			return Reply{}, fmt.Errorf("%s: %w: %s", filepath.Base(c.Argv[0]), err, msg)
		}
		return Reply{}, fmt.Errorf("%s: %w", filepath.Base(c.Argv[0]), err)
	}
	return Reply{Text: stdout.String(), Model: filepath.Base(c.Argv[0])}, nil
}
