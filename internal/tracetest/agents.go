package tracetest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"time"
)

// This file generates agent sessions: what a coding agent leaves behind
// when a person asks it to bump a dependency, triage an issue or cut a
// release, with everything real sessions have around the procedure —
// reading and grepping before each step, todo lists, unrelated builds, a
// failing test that is fixed by an edit and run again, commands chained
// with && — and sessions that only explore or never call a tool.
//
// A session is built once in an agent-neutral form (turns of tool calls;
// see agentSession) and written by claude.go, codex.go and otel.go in each
// agent's own log format. Every neutral call becomes exactly one tool call
// in every format, so the manifest's per-session tool call counts hold for
// all three. Which commands are procedure steps is pinned by the shell
// vocabulary the normalizer uses: a step is a command head (program plus
// subcommands), and read-only commands are observations, never steps.

// AgentFormat names an agent log format the generator writes.
type AgentFormat string

// The agent log formats.
const (
	// FormatClaude is Claude Code's session log:
	// <project>/<session-uuid>.jsonl.
	FormatClaude AgentFormat = "claude"
	// FormatCodex is the Codex CLI rollout:
	// YYYY/MM/DD/rollout-<timestamp>-<uuid>.jsonl.
	FormatCodex AgentFormat = "codex"
	// FormatOTel is OpenTelemetry GenAI spans in OTLP/JSON, one
	// ExportTraceServiceRequest per line.
	FormatOTel AgentFormat = "otel"
)

// AgentFormats lists every agent format, in a fixed order.
var AgentFormats = []AgentFormat{FormatClaude, FormatCodex, FormatOTel}

// AgentConfig says what agent sessions to generate. The zero value of
// every field but Sessions and Seed is its documented default.
type AgentConfig struct {
	// Sessions is the number of sessions.
	Sessions int
	// Seed selects the sessions: the same AgentConfig gives the same
	// sessions, and the same bytes in every format.
	Seed uint64
	// Calls is the average number of tool calls of a session that calls
	// tools (default 60). Each session's count is drawn within ±20 % of
	// it; a session whose procedures need more has more.
	Calls int
	// Support is the fraction of sessions each procedure is planted into
	// (default 0.25), rounded up and at least 3 sessions (or every session
	// that calls tools, when there are fewer).
	Support float64
}

// Defaults of AgentConfig.
const (
	DefaultAgentCalls   = 60
	DefaultAgentSupport = 0.25
)

func (c AgentConfig) withDefaults() AgentConfig {
	c.Sessions = max(c.Sessions, 0)
	if c.Calls <= 0 {
		c.Calls = DefaultAgentCalls
	}
	if !(c.Support > 0) { // also catches NaN
		c.Support = DefaultAgentSupport
	}
	c.Support = min(c.Support, 1)
	return c
}

// Session kinds in AgentSession.Kind.
const (
	// SessionProcedure has one or more planted procedures among noise.
	SessionProcedure = "procedure"
	// SessionExploration calls tools but follows no planted procedure.
	SessionExploration = "exploration"
	// SessionNoTools is a question answered without any tool call; an
	// importer skips it with a reason.
	SessionNoTools = "no_tools"
)

// AgentManifest says what was planted where: what mining the sessions
// should recover, in any format.
type AgentManifest struct {
	Seed       uint64           `json:"seed"`
	Procedures []AgentProcedure `json:"procedures"`
	Sessions   []AgentSession   `json:"sessions"`
}

// AgentProcedure is one planted procedure.
type AgentProcedure struct {
	// Name identifies the procedure: bump_go_dependency, triage_issue,
	// cut_release.
	Name string `json:"name"`
	// Steps are the procedure's steps in order: the command heads of its
	// commands that are not observations. A planting may run read-only
	// commands too (triage_issue starts with gh issue view); they are
	// not steps.
	Steps []AgentStep `json:"steps"`
	// Plantings are the sessions it was planted into, in session order.
	Plantings []AgentPlanting `json:"plantings"`
}

// AgentStep is one step of a planted procedure.
type AgentStep struct {
	// Head is the command head: program plus subcommands joined by one
	// space, such as "go mod tidy".
	Head string `json:"head"`
	// Varying are the parameter keys of the step whose value differs
	// between plantings: a flag by its long name without dashes
	// ("new_branch" for git checkout -b, "title"), the parts of go get's module@version operand "module"
	// and "version", any other operand by its position, "arg1", "arg2"…
	// (a normalizer may give an operand a name of its own, such as "tag"
	// for git tag's).
	Varying []string `json:"varying"`
}

// AgentPlanting is one occurrence of a procedure.
type AgentPlanting struct {
	// Session is the session id (a UUID); TraceID gives the trace id an
	// importer derives from it.
	Session string `json:"session"`
	// Values are the step parameters of this planting: Values[i] maps
	// each of Steps[i].Varying to its value here.
	Values []map[string]string `json:"values"`
	// Retried is true when a step failed, a file was edited and the step
	// was run again before the procedure went on.
	Retried bool `json:"retried,omitempty"`
	// Compound is true when two steps ran as one shell command joined by
	// &&.
	Compound bool `json:"compound,omitempty"`
}

// AgentSession describes one generated session.
type AgentSession struct {
	// ID is the session id: a UUID.
	ID string `json:"id"`
	// Kind is SessionProcedure, SessionExploration or SessionNoTools.
	Kind string `json:"kind"`
	// Goal is the user's first prompt.
	Goal string `json:"goal"`
	// Cwd is the directory the agent worked in.
	Cwd string `json:"cwd"`
	// ToolCalls is the number of tool calls in the session, in every
	// format: tool_use blocks, function and custom tool calls,
	// execute_tool spans.
	ToolCalls int `json:"tool_calls"`
	// Procedures names the procedures planted in the session, in order.
	Procedures []string `json:"procedures"`
}

// TraceID returns the trace id an importer gives session id in format f:
// the session id itself, or for OpenTelemetry the trace id, which is the
// UUID's 32 hex digits.
func TraceID(f AgentFormat, session string) string {
	if f == FormatOTel {
		return strings.ReplaceAll(session, "-", "")
	}
	return session
}

// AgentCorpus is a generated set of agent sessions.
//
// Sessions are not held in memory: each is rebuilt from its own random
// stream when it is written, so writing 10,000 sessions of 60 tool calls
// needs the memory of one session per writer, not of the corpus.
type AgentCorpus struct {
	// Manifest says what was planted where.
	Manifest AgentManifest

	cfg   AgentConfig
	plans []sessionPlan
	// values[p][n] are the named values of planting n of procedure p
	// (module, version, branch…), from which its commands are written.
	values [][]map[string]string
}

// sessionPlan is what the assignment decided for one session.
type sessionPlan struct {
	id      string
	kind    string
	cwd     string
	start   time.Time
	plants  []planting // procedure and planting index into the manifest
	explore int        // index of the exploration goal
}

// agentEpoch is the first session's start; sessions follow every few minutes.
var agentEpoch = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

// GenerateAgents returns the sessions cfg describes and their manifest. It
// is deterministic: the same cfg gives the same manifest and, written in
// any format, the same bytes. The cost is linear in the number of tool
// calls; every session is built once here to count its calls and again
// when it is written.
func GenerateAgents(cfg AgentConfig) *AgentCorpus {
	cfg = cfg.withDefaults()
	master := rand.New(rand.NewPCG(cfg.Seed, 0xbb67ae8584caa73b))
	c := &AgentCorpus{cfg: cfg, plans: make([]sessionPlan, cfg.Sessions)}

	at := agentEpoch
	for i := range c.plans {
		at = at.Add(time.Duration(2+master.IntN(40)) * time.Minute).Add(time.Duration(master.IntN(60000)) * time.Millisecond)
		c.plans[i] = sessionPlan{
			id:      newUUID(master),
			kind:    SessionExploration,
			cwd:     projects[master.IntN(len(projects))].cwd,
			start:   at,
			explore: master.IntN(len(exploreGoals)),
		}
	}
	// One session in twenty asks a question and gets an answer without a
	// tool call.
	var eligible []int
	noTools := map[int]bool{}
	for _, i := range master.Perm(cfg.Sessions)[:cfg.Sessions/20] {
		noTools[i] = true
		c.plans[i].kind = SessionNoTools
	}
	for i := range c.plans {
		if !noTools[i] {
			eligible = append(eligible, i)
		}
	}

	support := int(math.Ceil(cfg.Support*float64(cfg.Sessions) - 1e-9))
	support = min(max(support, MinSupport), len(eligible))
	c.Manifest = AgentManifest{Seed: cfg.Seed, Procedures: make([]AgentProcedure, len(procDefs))}
	for p, def := range procDefs {
		chosen := slices.Clone(eligible)
		for k := range support {
			j := k + master.IntN(len(chosen)-k)
			chosen[k], chosen[j] = chosen[j], chosen[k]
		}
		chosen = chosen[:support]
		slices.Sort(chosen)
		ap := AgentProcedure{Name: def.name, Plantings: make([]AgentPlanting, len(chosen))}
		c.values = append(c.values, make([]map[string]string, len(chosen)))
		for _, st := range def.steps {
			ap.Steps = append(ap.Steps, AgentStep{Head: st.head, Varying: slices.Clone(st.varying)})
		}
		for n, i := range chosen {
			v := def.draw(master, n)
			c.values[p][n] = v
			pl := AgentPlanting{Session: c.plans[i].id, Values: make([]map[string]string, len(def.steps))}
			for s, st := range def.steps {
				pl.Values[s] = map[string]string{}
				for _, k := range st.varying {
					pl.Values[s][k] = v[st.from[k]]
				}
			}
			// How the planting is written is decided here too, so the
			// manifest can say it without building the session.
			pl.Retried = def.retry && master.IntN(5) < 2
			pl.Compound = def.compound && master.IntN(5) < 3
			ap.Plantings[n] = pl
			c.plans[i].kind = SessionProcedure
			c.plans[i].plants = append(c.plans[i].plants, planting{proc: p, n: n})
		}
		c.Manifest.Procedures[p] = ap
	}
	// A session holding two procedures does them in a random order.
	for i := range c.plans {
		pl := c.plans[i].plants
		master.Shuffle(len(pl), func(a, b int) { pl[a], pl[b] = pl[b], pl[a] })
	}

	c.Manifest.Sessions = make([]AgentSession, cfg.Sessions)
	for i := range c.plans {
		s := c.build(i)
		info := AgentSession{ID: s.id, Kind: c.plans[i].kind, Goal: s.goal, Cwd: s.cwd, ToolCalls: s.toolCalls(), Procedures: []string{}}
		for _, pl := range c.plans[i].plants {
			info.Procedures = append(info.Procedures, procDefs[pl.proc].name)
		}
		c.Manifest.Sessions[i] = info
	}
	return c
}

// newUUID draws a random (version 4) UUID.
func newUUID(r *rand.Rand) string {
	hi, lo := r.Uint64(), r.Uint64()
	hi = hi&^0xf000 | 0x4000     // version 4
	lo = lo&^(0xc<<60) | 0x8<<60 // RFC 4122 variant
	return fmt.Sprintf("%08x-%04x-%04x-%04x-%012x", hi>>32, hi>>16&0xffff, hi&0xffff, lo>>48, lo&0xffffffffffff)
}

const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

// randKey draws n alphanumeric characters: the random part of a tool
// call id.
func randKey(r *rand.Rand, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alnum[r.IntN(len(alnum))]
	}
	return string(b)
}

// callKind is what an agent-neutral tool call does. Each format maps a
// kind to its own tool: a read is Claude's Read, a sed -n under Codex's
// shell, OpenTelemetry's read_file.
type callKind int

const (
	callShell  callKind = iota // a shell command
	callRead                   // read a file
	callSearch                 // search file contents
	callGlob                   // list files matching a pattern
	callList                   // list a directory
	callPlan                   // update the todo list / plan
	callEdit                   // edit a file
)

// agentCall is one agent-neutral tool call.
type agentCall struct {
	kind callKind
	// key is the random part of the call's id; each format adds its
	// prefix (toolu_, call_).
	key string
	// command is the shell command (callShell).
	command string
	// path is the file or directory, relative to the session's cwd
	// (read, list, edit, search).
	path string
	// pattern is the search or glob pattern.
	pattern string
	// oldText and newText are an edit's replaced and new text.
	oldText, newText string
	// plan is the todo list (callPlan).
	plan []planItem
	// output is what the tool returned; files is a search's or glob's
	// matches.
	output string
	files  []string
	// exit is a shell command's exit status; failed marks any failed
	// call.
	exit int
	// startMS is when the call started, in milliseconds after the
	// session's start; durMS is how long it took.
	startMS, durMS int64
}

func (c *agentCall) failed() bool { return c.exit != 0 }

type planItem struct{ step, status string }

// agentTurn is one model turn: its text, its usage and the tool calls it
// produced (several when the model called tools in parallel).
type agentTurn struct {
	// prompt, when set, is what the person typed before the turn: the
	// request for the next procedure of a session that does several.
	prompt         string
	text           string
	startMS, latMS int64
	input, output  int
	cacheRead      int
	// calls are the tool calls of the turn; the last turn of a session
	// has none and holds the model's answer.
	calls []agentCall
}

// agentSession is one session in agent-neutral form.
type agentSession struct {
	id, goal, cwd, branch string
	start                 time.Time
	// summary, when set, is a title the agent gave the session.
	summary string
	turns   []agentTurn
	// endMS is when the session ended, after its start.
	endMS int64
}

func (s *agentSession) toolCalls() int {
	n := 0
	for _, t := range s.turns {
		n += len(t.calls)
	}
	return n
}

// at returns the wall time ms milliseconds after the session's start.
func (s *agentSession) at(ms int64) time.Time {
	return s.start.Add(time.Duration(ms) * time.Millisecond)
}

// project is a repository sessions work in.
type project struct {
	cwd, module string
}

var projects = []project{
	{"/home/dev/src/payments-api", "github.com/acme/payments-api"},
	{"/home/dev/src/ledger", "github.com/acme/ledger"},
	{"/home/dev/work/edge-proxy", "github.com/acme/edge-proxy"},
	{"/srv/checkouts/billing-worker", "github.com/acme/billing-worker"},
}

// repoFiles are the files sessions read, grep and edit, relative to the
// project root.
var repoFiles = []string{
	"go.mod", "README.md", "Makefile", "cmd/server/main.go", "internal/server/server.go",
	"internal/server/server_test.go", "internal/store/store.go", "internal/store/cache.go",
	"internal/store/store_test.go", "internal/config/config.go", "internal/retry/retry.go",
	"internal/retry/retry_test.go", "internal/parse/parse.go", "internal/parse/parse_test.go",
	"docs/architecture.md", "CHANGELOG.md",
}

var repoDirs = []string{".", "internal", "internal/server", "internal/store", "cmd", "docs"}

var searchPatterns = []string{"func New", "TODO", "ctx.Err()", "retry", "http.Client", "sync.Mutex", "deprecated", "ErrNotFound", "timeout"}

var globPatterns = []string{"**/*.go", "**/*_test.go", "internal/**/*.go", "*.md", "**/go.mod"}

// exploreGoals are the prompts of sessions that follow no procedure.
var exploreGoals = []string{
	"Why does TestServerShutdown flake on CI? Look around and tell me what you find.",
	"Explain how the store package caches queries and when the cache is invalidated.",
	"Review the error handling in internal/server and list anything that swallows errors.",
	"Where is the retry policy configured, and what are its defaults?",
	"Find dead code in internal/parse and suggest what can go.",
	"Summarize the architecture doc against what the code actually does.",
}

// questionGoals are the prompts of sessions without a tool call.
var questionGoals = []string{
	"What does context.WithoutCancel do, and when should I use it?",
	"What is the difference between go mod tidy and go get -u?",
	"How do I write a table-driven test with subtests in Go?",
	"Should a library return errors wrapped with %w or %v?",
}

// modules are the dependencies a bump planting draws from.
var modules = []string{
	"golang.org/x/net", "golang.org/x/sync", "golang.org/x/text", "golang.org/x/crypto",
	"github.com/spf13/cobra", "github.com/google/go-cmp", "go.opentelemetry.io/otel",
	"github.com/prometheus/client_golang", "google.golang.org/grpc", "github.com/stretchr/testify",
	"go.uber.org/zap", "github.com/jackc/pgx/v5",
}

// modLast is the last element of a module path that is not a major
// version suffix: pgx for github.com/jackc/pgx/v5.
func modLast(module string) string {
	parts := strings.Split(module, "/")
	last := parts[len(parts)-1]
	if len(parts) > 1 && len(last) > 1 && last[0] == 'v' && strings.Trim(last[1:], "0123456789") == "" {
		last = parts[len(parts)-2]
	}
	return last
}

// dq quotes s for a POSIX shell in double quotes, as agents write
// messages and titles.
func dq(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, `$`, `\$`, "`", "\\`")
	return `"` + r.Replace(s) + `"`
}
