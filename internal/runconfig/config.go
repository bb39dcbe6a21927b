package runconfig

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/crystallize-dev/crystallize/internal/price"
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
	// deterministic step fails; see the runner's fallback.go.
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
	// actions when their sessions are imported; see NormalizeSection.
	Normalize NormalizeSection `toml:"normalize"`

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
	// workflow bytes (the runner's approvals.go), not only an approval record in
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
	// Command is an argv template; see package toolexec.
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
	// [tools."docs.*"] calls "search" (see package toolexec).
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
var Builtins = []string{ToolFSRead, ToolFSWrite, ToolFSEdit}

// writesFiles reports whether the built-in named builtin changes files.
func WritesFiles(builtin string) bool { return builtin == ToolFSWrite || builtin == ToolFSEdit }

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
	if dir, ok := BundleOf(file); ok {
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
	for _, name := range slices.Sorted(maps.Keys(c.Tools)) {
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
		case b.Builtin != "" && !slices.Contains(Builtins, b.Builtin):
			bad(p+".builtin", "unknown built-in %q; want one of %s", b.Builtin, strings.Join(Builtins, ", "))
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
				lead, ok := LeadingPlaceholder(el)
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
	for _, name := range slices.Sorted(maps.Keys(c.Models)) {
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
	for _, name := range slices.Sorted(maps.Keys(c.Workers)) {
		wc := c.Workers[name]
		p := "workers." + name
		if _, _, ok := c.ModelEntry(cmp.Or(wc.Model, name)); !ok {
			bad(p+".model", "no [models.%s] and no [models.default] answers this worker", cmp.Or(wc.Model, name))
		}
		if wc.MaxIterations < 0 {
			bad(p+".max_iterations", "negative")
		}
	}
	return errs
}

// roots returns the absolute workspace roots.
func (c *Config) Roots() []string {
	rs := c.Workspace.Roots
	if len(rs) == 0 {
		rs = []string{"."}
	}
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = c.Abs(r)
	}
	return out
}

// abs resolves p against Dir.
func (c *Config) Abs(p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(c.Dir, p)
}

// model returns the [models.*] entry a ctx.model step named name uses,
// and its key: [models.name], else [models.default].
func (c *Config) ModelEntry(name string) (key string, m ModelConfig, ok bool) {
	if m, ok := c.Models[name]; ok {
		return name, m, true
	}
	m, ok = c.Models["default"]
	return "default", m, ok
}

// checkPrices checks the [prices] section: every model has an input and
// an output price, no price is negative or not a number, and a cache
// price not given becomes the input price.
func (c *Config) checkPrices(file string, md toml.MetaData) []error {
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(c.Prices)) {
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

// WorkerConfig is a [workers.name] entry: a preset ctx.agent(…,
// worker="name") runs as. Its prompt comes before the step's; its tools,
// when set, narrow the step's (a preset never widens what a step may
// call); its model names the [models.*] entry that answers.
type WorkerConfig struct {
	Model         string   `toml:"model"`
	Prompt        string   `toml:"prompt"`
	Tools         []string `toml:"tools"`
	MaxIterations int      `toml:"max_iterations"`
	DoneSentinel  string   `toml:"done_sentinel"`
}

// Fallback policies.
const (
	FallbackFail  = "fail"
	FallbackAgent = "agent"
	FallbackAsk   = "ask"
)

// FallbackPolicies are the policies, in documentation order.
var FallbackPolicies = []string{FallbackFail, FallbackAgent, FallbackAsk}

// FallbackConfig is the [fallback] table of crystallize.toml.
type FallbackConfig struct {
	Policy string `toml:"policy"`
	// Model is the [models.*] key of the agent policy's model.
	Model         string `toml:"model"`
	MaxIterations int    `toml:"max_iterations"`
}

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

// cost is the price of a call at c's per-million-token prices.
func (c *ModelConfig) Cost(in, out int64) float64 {
	return (float64(in)*c.InputUSDPerMTok + float64(out)*c.OutputUSDPerMTok) / 1e6
}

// leadingPlaceholder returns the name of the placeholder el starts with
// ("{name}…"); "{{" is a literal brace.
func LeadingPlaceholder(el string) (string, bool) {
	if len(el) < 3 || el[0] != '{' || el[1] == '{' {
		return "", false
	}
	end := strings.IndexByte(el, '}')
	if end < 0 {
		return "", false
	}
	return el[1:end], true
}

// templateSecrets returns the ids of the {secret:ID} placeholders in
// tmpl, in order.
func TemplateSecrets(tmpl string) []string {
	var ids []string
	for rest := tmpl; ; {
		i := strings.Index(rest, "{secret:")
		if i < 0 {
			return ids
		}
		rest = rest[i+len("{secret:"):]
		end := strings.IndexByte(rest, '}')
		if end < 0 {
			return ids
		}
		if id := rest[:end]; IsSecretID(id) {
			ids = append(ids, id)
		}
		rest = rest[end+1:]
	}
}

func IsIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// bundleOf reports the bundle directory holding file (or, when file is a
// symlink, the file it points to): the nearest directory above it whose
// candidate.json carries the bundle schema marker.
func BundleOf(file string) (string, bool) {
	paths := []string{file}
	if real, err := filepath.EvalSymlinks(file); err == nil && real != file {
		paths = append(paths, real)
	}
	for _, p := range paths {
		abs, err := filepath.Abs(p)
		if err != nil {
			continue
		}
		for d := filepath.Dir(abs); ; d = filepath.Dir(d) {
			if isBundleDir(d) {
				return d, true
			}
			if d == filepath.Dir(d) {
				break
			}
		}
	}
	return "", false
}

// bundleManifestFile and bundleSchema are bundle.ManifestFile and
// bundle.Schema, the file and the marker that make a directory a bundle.
// The configuration is read by stages that bundle's own imports sit
// below, so it does not import bundle; a test pins the two copies
// together.
const (
	bundleManifestFile = "candidate.json"
	bundleSchema       = "harn.crystallization.candidate.bundle"
)

// isBundleDir reports whether dir holds a candidate.json with the bundle
// schema marker; another tool's candidate.json does not make a bundle.
func isBundleDir(dir string) bool {
	// Only a regular file of a manifest's size is read: a FIFO or device
	// named candidate.json must not hang or flood the check.
	name := filepath.Join(dir, bundleManifestFile)
	if st, err := os.Stat(name); err != nil || !st.Mode().IsRegular() || st.Size() > 64<<20 {
		return false
	}
	data, err := os.ReadFile(name)
	if err != nil {
		return false
	}
	var head struct {
		Schema string `json:"schema"`
	}
	return json.Unmarshal(data, &head) == nil && head.Schema == bundleSchema
}

// ParsedTimeout is Timeout as LoadConfig parsed it (DefaultToolTimeout
// when unset); 0 for a binding built in code.
func (t *ToolBinding) ParsedTimeout() time.Duration { return t.timeout }

// ParsedTimeout is Timeout as LoadConfig parsed it (DefaultModelTimeout
// when unset); 0 for an entry built in code.
func (m *ModelConfig) ParsedTimeout() time.Duration { return m.timeout }

// WithTimeout is m with the timeout LoadConfig would have parsed from
// Timeout, for an entry built in code (tests, embedders).
func (m ModelConfig) WithTimeout(d time.Duration) ModelConfig {
	m.timeout = d
	return m
}

// NormalizeSection is the [normalize] section of crystallize.toml as it is
// read: the fields and toml keys of normalize.Config, which documents
// them and turns them into rules (normalize.Rules.Extend). The
// configuration holds a copy rather than normalize.Config itself so that
// it depends on no stage that reads agents' logs: the runtime, which
// reads the configuration, reads no logs. pipeline.NormalizeRules
// converts one to the other with a Go conversion,
// normalize.Config(section), which stops compiling when the fields'
// names, types or order differ; a test in pipeline holds the two to the
// same toml keys, which a conversion ignores.
type NormalizeSection struct {
	Observations []string            `toml:"observations"`
	ToolCalls    []string            `toml:"tool_calls"`
	FileTools    []string            `toml:"file_tools"`
	ShellTools   []string            `toml:"shell_tools"`
	Heads        map[string]int      `toml:"heads"`
	ValueFlags   map[string][]string `toml:"value_flags"`
	Rename       map[string]string   `toml:"rename"`
}
