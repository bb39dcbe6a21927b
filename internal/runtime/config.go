package runtime

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"net/url"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/crystallize-dev/crystallize/internal/normalize"
	"github.com/crystallize-dev/crystallize/internal/price"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// ConfigFile is the name of the project configuration the cli looks for
// in the current directory.
const ConfigFile = "crystallize.toml"

// DefaultToolTimeout bounds a command tool that sets no timeout.
const DefaultToolTimeout = 5 * time.Minute

// Config is the project configuration, crystallize.toml. Relative paths in
// it (workspace roots, a command's program when it contains a slash, cwd)
// are relative to Dir, the directory of the file.
type Config struct {
	Workspace Workspace               `toml:"workspace"`
	Tools     map[string]ToolBinding  `toml:"tools"`
	MCP       map[string]MCPServer    `toml:"mcp"`
	Models    map[string]ModelConfig  `toml:"models"`
	Workers   map[string]WorkerConfig `toml:"workers"`
	Grants    Grants                  `toml:"grants"`
	// Fallback is what a run does when a precondition or a
	// deterministic step fails; see fallback.go.
	Fallback FallbackConfig `toml:"fallback"`

	// Secrets names the file secrets are read from after the
	// environment; see SecretsConfig.
	Secrets SecretsConfig `toml:"secrets"`

	// Approvals decides which approvals a run trusts; see
	// ApprovalsConfig.
	Approvals ApprovalsConfig `toml:"approvals"`

	// Temporal is how a run on Temporal times and retries its steps
	// (package temporal).
	Temporal TemporalConfig `toml:"temporal"`

	// Normalize extends the table that turns agents' tool calls into
	// actions when their sessions are imported; see normalize.Config.
	Normalize normalize.Config `toml:"normalize"`

	// Prices prices the model calls of agents' logs that carry tokens
	// but no dollars, over the built-in table (price.Default): each key
	// is a model name, as logs write it or its family without a date
	// ("claude-sonnet-4-5"), and input and output are required. A cache
	// price not given is the input price (no cache discount is assumed).
	// See PriceTable.
	Prices map[string]price.Price `toml:"prices"`

	// Dir is the directory relative paths resolve against; LoadConfig
	// sets it to the file's directory, and File to the file's absolute
	// path (recorded in a suspended run's journal).
	Dir  string `toml:"-"`
	File string `toml:"-"`
}

// Workspace lists the directories the built-in fs tools may touch. The
// first root is also the default working directory of command tools and
// the value of the {workspace} placeholder. No roots means "." (the
// config's directory), so that a project works as its own workspace;
// what makes that safe is that no root, the default or one the config
// names, ever exposes the protected set (see ProtectedError): the config,
// the programs the bindings run, the secrets file, .crystallize and .git
// stay out of the file built-ins' reach wherever they are.
type Workspace struct {
	Roots []string `toml:"roots"`
}

// ApprovalsConfig is the [approvals] table.
type ApprovalsConfig struct {
	// RequireLedger makes a bundle run for real only when the state
	// directory's approval ledger holds an authenticated approval of its
	// workflow bytes (see approvals.go), not only an approval record in
	// its candidate.json, which anyone who can write the bundle can add.
	RequireLedger bool `toml:"require_ledger"`
	// AllowSelfApproval lets the author a bundle records approve it
	// (crystallize approve, crystallize review). Off by default: an
	// approval is a second person's reading.
	AllowSelfApproval bool `toml:"allow_self_approval"`
}

// Grants are the capabilities the project grants to workflows; a workflow
// gets the intersection of these and the ones it declares.
type Grants struct {
	Capabilities []string `toml:"capabilities"`
}

// ToolBinding is one [tools."name"] entry: how calls to the tools it names
// are executed, and what they need and change.
type ToolBinding struct {
	// Command is an argv template; see the package comment.
	Command []string `toml:"command"`
	// AllowOptions names the parameters of Command that may start with
	// "-" where they start an argv element. Any other such value is
	// refused (ErrOptionArgument): the program would read it as an
	// option ("--output=/tmp/x", "--upload-pack=…"), not as the operand
	// the template means. An element after a literal "--" is an operand
	// by the usual convention and needs no entry.
	AllowOptions []string `toml:"allow_options"`
	// Cwd is the working directory (a template too); default the first
	// workspace root.
	Cwd string `toml:"cwd"`
	// Env adds variables (values are templates) to the command's
	// environment.
	Env map[string]string `toml:"env"`
	// Timeout is a time.ParseDuration string; default DefaultToolTimeout.
	Timeout string `toml:"timeout"`
	// Builtin binds the name to a built-in tool, "fs.read", "fs.write"
	// or "fs.edit".
	Builtin string `toml:"builtin"`
	// MCP binds the name to a tool of the server [mcp.<MCP>]. Tool
	// names that tool; by default it is the called name without the
	// literal prefix of a glob key, so "docs.search" bound by
	// [tools."docs.*"] calls "search" (see the package comment).
	MCP  string `toml:"mcp"`
	Tool string `toml:"tool"`
	// HTTP makes every call an HTTP request; see HTTPBinding.
	HTTP *HTTPBinding `toml:"http"`

	// Capability (and Capabilities, an extension for tools that need
	// several) are what a call needs; so are the capabilities of
	// SideEffects.
	Capability   string   `toml:"capability"`
	Capabilities []string `toml:"capabilities"`
	// Kind is the action kind recorded in the run's trace: "tool_call"
	// by default ("external_api_call" for an http binding), or
	// "external_api_call" for a command that calls a remote API, so a
	// run's trace lines up with the traces it was mined from.
	Kind string `toml:"kind"`
	// SideEffects are recorded with every call and in its receipt.
	SideEffects []SideEffect `toml:"side_effects"`

	timeout time.Duration
}

// SideEffect is a side effect a tool declares, in trace.SideEffect's
// terms.
type SideEffect struct {
	Kind       string `toml:"kind"`
	Target     string `toml:"target"`
	Capability string `toml:"capability"`
	Mutation   string `toml:"mutation"`
}

// ModelConfig is one [models.name] entry. A ctx.model step named name
// uses [models.name] when there is one, else [models.default].
type ModelConfig struct {
	// Provider is ProviderOpenAI (any OpenAI-compatible chat-completions
	// server: OpenAI, vLLM, Ollama, llama.cpp server, LiteLLM),
	// ProviderAnthropic (the Messages API) or ProviderReplay (answers
	// from the bundle's fixtures).
	Provider string `toml:"provider"`
	// BaseURL is the API's base: DefaultOpenAIURL or DefaultAnthropicURL
	// when empty. The OpenAI client posts to BaseURL/chat/completions,
	// the Anthropic one to BaseURL/v1/messages.
	BaseURL string `toml:"base_url"`
	// Model is the provider's model name.
	Model string `toml:"model"`
	// APIKey is the logical id of the secret holding the key, never the
	// key; empty sends no key (local servers).
	APIKey string `toml:"api_key"`
	// MaxTokens bounds the answer; 0 sends none to OpenAI-compatible
	// servers and DefaultMaxTokens to Anthropic, which requires one.
	MaxTokens int `toml:"max_tokens"`
	// Timeout bounds one call (a time.ParseDuration string); default
	// DefaultModelTimeout.
	Timeout string `toml:"timeout"`
	// InputUSDPerMTok and OutputUSDPerMTok are prices in US dollars per
	// million tokens; a call's recorded cost is computed from them (zero
	// when unset).
	InputUSDPerMTok  float64 `toml:"input_usd_per_mtok"`
	OutputUSDPerMTok float64 `toml:"output_usd_per_mtok"`

	timeout time.Duration
}

// Built-in tool names. A workflow calls them by these names without a
// binding; a binding may also give them another name.
const (
	ToolFSRead  = "fs.read"
	ToolFSWrite = "fs.write"
	ToolFSEdit  = "fs.edit"
)

// builtins are the built-in tools, in the order messages list them.
var builtins = []string{ToolFSRead, ToolFSWrite, ToolFSEdit}

// writesFiles reports whether the built-in named builtin changes files.
func writesFiles(builtin string) bool { return builtin == ToolFSWrite || builtin == ToolFSEdit }

// ErrConfigInBundle is returned by LoadConfig for a configuration file
// inside a bundle directory. A bundle is what a reviewer approved: its
// workflow, fixtures and report. A configuration decides what each of its
// tools runs and what it is granted, so one the bundle ships would let
// the bundle rebind every tool it calls (`cd bundle && crystallize run .`
// reads the working directory's crystallize.toml); it is never loaded,
// whoever names it.
var ErrConfigInBundle = errors.New("configuration inside a bundle")

// LoadConfig reads and checks the configuration file at file. It reports
// every problem it finds, each as "file: path: message", joined. A file
// inside a bundle is refused (ErrConfigInBundle).
func LoadConfig(file string) (*Config, error) {
	if dir, ok := bundleOf(file); ok {
		return nil, fmt.Errorf("%w: %s is a file of the bundle %s; the project's configuration binds the tools (run from the project, or pass --config)", ErrConfigInBundle, file, dir)
	}
	c := new(Config)
	md, err := toml.DecodeFile(file, c)
	if err != nil {
		return nil, fmt.Errorf("reading config: %w", err)
	}
	abs, err := filepath.Abs(filepath.Dir(file))
	if err != nil {
		return nil, fmt.Errorf("reading config: %w", err)
	}
	c.Dir = abs
	c.File = filepath.Join(abs, filepath.Base(file))
	var errs []error
	for _, k := range md.Undecoded() {
		errs = append(errs, fmt.Errorf("%s: %s: unknown key", file, k.String()))
	}
	errs = append(errs, c.checkPrices(file, md)...)
	errs = append(errs, c.check(file)...)
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return c, nil
}

// TemporalConfig is the [temporal] table. Each step of a run on
// Temporal is one activity; these say how long it may take and how a
// failed attempt is retried. An attempt fails when its worker is lost or
// cannot reach what the step needs, not when the step's tool fails: that
// is the run's failure, recorded and handled by the fallback policy as in
// a local run. Durations are time.ParseDuration strings.
type TemporalConfig struct {
	// StepTimeout bounds one attempt at one step; "" means the longest
	// timeout of the tools and models the workflow calls, plus a minute.
	StepTimeout string `toml:"step_timeout"`
	// ApprovalTimeout is how long an approval or decision waits; ""
	// waits until it is decided. A boundary not decided in time is
	// rejected.
	ApprovalTimeout string `toml:"approval_timeout"`
	// InitialInterval is the wait before the first retry ("" is 1s),
	// BackoffCoefficient what each wait is multiplied by (0 is 2),
	// MaximumInterval the longest wait ("" is 100 × InitialInterval),
	// MaximumAttempts the attempts at most (0 is unlimited).
	InitialInterval    string  `toml:"initial_interval"`
	BackoffCoefficient float64 `toml:"backoff_coefficient"`
	MaximumInterval    string  `toml:"maximum_interval"`
	MaximumAttempts    int     `toml:"maximum_attempts"`
}

// Durations parses the table's durations, naming the key of a bad one.
func (t TemporalConfig) Durations() (step, approval, initial, maximum time.Duration, err error) {
	var errs []error
	parse := func(key, s string) time.Duration {
		if s == "" {
			return 0
		}
		d, perr := time.ParseDuration(s)
		if perr != nil || d <= 0 {
			errs = append(errs, fmt.Errorf("temporal.%s: %q is not a positive duration such as \"30s\"", key, s))
		}
		return d
	}
	step = parse("step_timeout", t.StepTimeout)
	approval = parse("approval_timeout", t.ApprovalTimeout)
	initial = parse("initial_interval", t.InitialInterval)
	maximum = parse("maximum_interval", t.MaximumInterval)
	if t.BackoffCoefficient != 0 && t.BackoffCoefficient < 1 {
		errs = append(errs, fmt.Errorf("temporal.backoff_coefficient: %v, want at least 1", t.BackoffCoefficient))
	}
	if t.MaximumAttempts < 0 {
		errs = append(errs, fmt.Errorf("temporal.maximum_attempts: %d, want 0 (unlimited) or more", t.MaximumAttempts))
	}
	return step, approval, initial, maximum, errors.Join(errs...)
}

// StepTimeout is the longest a step of w may take under c: the longest
// timeout of a tool binding or model entry, at least DefaultToolTimeout.
func (c *Config) StepTimeout() time.Duration {
	d := max(DefaultToolTimeout, DefaultModelTimeout)
	for _, b := range c.Tools {
		d = max(d, b.timeout)
	}
	for _, m := range c.Models {
		if t, err := time.ParseDuration(m.Timeout); err == nil {
			d = max(d, t)
		}
	}
	return d
}

// check validates the bindings and parses their timeouts.
func (c *Config) check(file string) []error {
	var errs []error
	bad := func(p, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s: %s", file, p, fmt.Sprintf(format, args...)))
	}
	if _, _, _, _, err := c.Temporal.Durations(); err != nil {
		for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
			errs = append(errs, fmt.Errorf("%s: %w", file, e))
		}
	}
	if p := c.Fallback.Policy; p != "" && !slices.Contains(FallbackPolicies, p) {
		bad("fallback.policy", "%q, want one of %s", p, strings.Join(FallbackPolicies, ", "))
	}
	for _, name := range sortedKeys(c.Tools) {
		b := c.Tools[name]
		p := fmt.Sprintf("tools.%q", name)
		if _, err := path.Match(name, ""); err != nil {
			bad(p, "bad glob pattern: %v", err)
		}
		executors := 0
		for _, set := range []bool{len(b.Command) > 0, b.Builtin != "", b.MCP != "", b.HTTP != nil} {
			if set {
				executors++
			}
		}
		switch {
		case executors == 0:
			bad(p, "no executor; set one of command, builtin, mcp, http")
		case executors > 1:
			bad(p, "more than one executor; set exactly one of command, builtin, mcp, http")
		case b.HTTP != nil:
			errs = append(errs, b.HTTP.check(file, p+".http")...)
		case b.Builtin != "" && !slices.Contains(builtins, b.Builtin):
			bad(p+".builtin", "unknown built-in %q; want one of %s", b.Builtin, strings.Join(builtins, ", "))
		}
		b.timeout = DefaultToolTimeout
		if b.Timeout != "" {
			d, err := time.ParseDuration(b.Timeout)
			if err != nil || d <= 0 {
				bad(p+".timeout", "%q is not a positive duration such as \"30s\"", b.Timeout)
			}
			b.timeout = d
		}
		for i, o := range b.AllowOptions {
			if !slices.ContainsFunc(b.Command, func(el string) bool {
				lead, ok := leadingPlaceholder(el)
				return ok && lead == o || el == "{"+o+"...}"
			}) {
				bad(fmt.Sprintf("%s.allow_options[%d]", p, i), "%q is not a parameter that starts an element of command", o)
			}
		}
		for i, se := range b.SideEffects {
			if se.Kind == "" {
				bad(fmt.Sprintf("%s.side_effects[%d].kind", p, i), "empty kind")
			}
		}
		c.Tools[name] = b
	}
	errs = append(errs, c.checkMCP(file)...)
	for _, name := range sortedKeys(c.Models) {
		m := c.Models[name]
		p := "models." + name
		switch m.Provider {
		case ProviderOpenAI, ProviderAnthropic:
			if m.Model == "" {
				bad(p+".model", "empty model; name the provider's model")
			}
		case ProviderReplay:
		default:
			bad(p+".provider", "unknown provider %q; want %s, %s or %s", m.Provider, ProviderOpenAI, ProviderAnthropic, ProviderReplay)
		}
		if m.BaseURL != "" {
			if u, err := url.Parse(m.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				bad(p+".base_url", "%q is not an http or https URL", m.BaseURL)
			}
		}
		if m.MaxTokens < 0 {
			bad(p+".max_tokens", "negative")
		}
		if m.InputUSDPerMTok < 0 || m.OutputUSDPerMTok < 0 {
			bad(p, "negative price")
		}
		m.timeout = DefaultModelTimeout
		if m.Timeout != "" {
			d, err := time.ParseDuration(m.Timeout)
			if err != nil || d <= 0 {
				bad(p+".timeout", "%q is not a positive duration such as \"30s\"", m.Timeout)
			}
			m.timeout = d
		}
		c.Models[name] = m
	}
	for _, name := range sortedKeys(c.Workers) {
		wc := c.Workers[name]
		p := "workers." + name
		if _, _, ok := c.model(cmp.Or(wc.Model, name)); !ok {
			bad(p+".model", "no [models.%s] and no [models.default] answers this worker", cmp.Or(wc.Model, name))
		}
		if wc.MaxIterations < 0 {
			bad(p+".max_iterations", "negative")
		}
	}
	return errs
}

// roots returns the absolute workspace roots.
func (c *Config) roots() []string {
	rs := c.Workspace.Roots
	if len(rs) == 0 {
		rs = []string{"."}
	}
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = c.abs(r)
	}
	return out
}

// abs resolves p against Dir.
func (c *Config) abs(p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(c.Dir, p)
}

// binding is a resolved tool name: what executes it and what it needs.
type binding struct {
	// pattern is the config key that bound the name ("" for in-process
	// and default built-ins).
	pattern string
	tool    *ToolBinding // nil for in-process tools
	inproc  *Tool
	builtin string
	// caps is capabilities' answer once asked (capsKnown): a run
	// resolves each name once and asks at every call. Records share it
	// and never change it.
	caps      []string
	capsKnown bool
}

// capabilities returns what a call through b needs, sorted.
func (b *binding) capabilities() []string {
	if !b.capsKnown {
		b.caps, b.capsKnown = b.neededCapabilities(), true
	}
	return b.caps
}

func (b *binding) neededCapabilities() []string {
	var caps []string
	switch {
	case b.inproc != nil:
		caps = append(caps, b.inproc.Capabilities...)
		for _, se := range b.inproc.SideEffects {
			caps = append(caps, se.Capability)
		}
	case b.tool != nil:
		caps = append(caps, b.tool.Capability)
		caps = append(caps, b.tool.Capabilities...)
		for _, se := range b.tool.SideEffects {
			caps = append(caps, se.Capability)
		}
	}
	switch {
	case b.builtin == ToolFSRead:
		caps = append(caps, "fs.read")
	case writesFiles(b.builtin):
		caps = append(caps, "fs.write")
	}
	caps = slices.DeleteFunc(caps, func(s string) bool { return s == "" })
	slices.Sort(caps)
	return slices.Compact(caps)
}

// kind is the action kind b's calls are recorded with.
func (b *binding) kind() trace.Kind {
	switch {
	case b.tool != nil && b.tool.Kind != "":
		return trace.Kind(b.tool.Kind)
	case b.tool != nil && b.tool.HTTP != nil:
		return trace.KindExternalAPICall
	case writesFiles(b.builtin):
		// As agents' file edits are normalized, so that a run's trace
		// lines up with the traces it was mined from.
		return trace.KindFileMutation
	}
	return trace.KindToolCall
}

// sideEffects returns the side effects b declares.
func (b *binding) sideEffects() []trace.SideEffect {
	var out []trace.SideEffect
	switch {
	case b.inproc != nil:
		out = append(out, b.inproc.SideEffects...)
	case b.tool != nil:
		for _, se := range b.tool.SideEffects {
			out = append(out, trace.SideEffect{Kind: se.Kind, Target: se.Target, Capability: se.Capability, Mutation: se.Mutation})
		}
	}
	return out
}

// model returns the [models.*] entry a ctx.model step named name uses,
// and its key: [models.name], else [models.default].
func (c *Config) model(name string) (key string, m ModelConfig, ok bool) {
	if m, ok := c.Models[name]; ok {
		return name, m, true
	}
	m, ok = c.Models["default"]
	return "default", m, ok
}

// resolve finds the binding of a tool name; see the package comment for
// the order.
func resolve(c *Config, tools map[string]Tool, name string) (*binding, bool) {
	if t, ok := tools[name]; ok {
		return &binding{inproc: &t}, true
	}
	if c != nil {
		if b, ok := c.Tools[name]; ok {
			return &binding{pattern: name, tool: &b, builtin: b.Builtin}, true
		}
		best := ""
		for pat := range c.Tools {
			if !strings.ContainsAny(pat, "*?[") {
				continue
			}
			if ok, _ := path.Match(pat, name); ok && (len(pat) > len(best) || len(pat) == len(best) && pat < best) {
				best = pat
			}
		}
		if best != "" {
			b := c.Tools[best]
			return &binding{pattern: best, tool: &b, builtin: b.Builtin}, true
		}
	}
	if slices.Contains(builtins, name) {
		return &binding{builtin: name}, true
	}
	return nil, false
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// checkPrices checks the [prices] section: every model has an input and
// an output price, no price is negative or not a number, and a cache
// price not given becomes the input price.
func (c *Config) checkPrices(file string, md toml.MetaData) []error {
	var errs []error
	for _, name := range sortedKeys(c.Prices) {
		p := c.Prices[name]
		key := fmt.Sprintf("prices.%q", name)
		for _, req := range []string{"input", "output"} {
			if !md.IsDefined("prices", name, req) {
				errs = append(errs, fmt.Errorf("%s: %s.%s: missing price (US dollars per million tokens)", file, key, req))
			}
		}
		if !md.IsDefined("prices", name, "cache_read") {
			p.CacheRead = p.Input
		}
		if !md.IsDefined("prices", name, "cache_write") {
			p.CacheWrite = p.Input
		}
		for _, f := range []struct {
			name string
			v    float64
		}{{"input", p.Input}, {"output", p.Output}, {"cache_read", p.CacheRead}, {"cache_write", p.CacheWrite}} {
			if f.v < 0 || math.IsNaN(f.v) || math.IsInf(f.v, 0) {
				errs = append(errs, fmt.Errorf("%s: %s.%s: %v, want a price of 0 or more", file, key, f.name, f.v))
			}
		}
		c.Prices[name] = p
	}
	return errs
}
