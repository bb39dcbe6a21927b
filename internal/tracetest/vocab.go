package tracetest

import (
	"encoding/json"
	"fmt"
	"strconv"
)

// This file holds the vocabulary the generator draws from: parameter keys
// with their constant and varying values, the keys that carry data from one
// step to another, goals, and the noise tool namespaces.
//
// Values are chosen so that the three classes can never be mistaken for one
// another by equality, which is how a miner tells them apart: a constant is
// never equal to any output field, a varying value embeds the procedure and
// the planting number, and a bound value has its own format that no
// parameter of the procedure uses. Without that, a chance equality would
// make the miner infer a binding the generator did not plant, and a test
// would fail for a reason that is the generator's fault.

// num returns n as the json.Number encoding/json decodes it to.
func num(n int) json.Number { return json.Number(strconv.Itoa(n)) }

// paramKey describes one parameter key a procedure step may take.
type paramKey struct {
	name string
	// consts are the values a procedure may fix the key to; a procedure
	// picks one of them and uses it in every planting.
	consts []any
	// vary returns the value of the key in planting n of procedure p. It
	// differs for every n, so a varying key varies in every corpus.
	vary func(p, n int) any
}

// paramKeys are the keys of procedure step parameters. Bindable keys are
// kept apart (bindKeys) so a bound value never also appears as an ordinary
// parameter of the same procedure.
var paramKeys = []paramKey{
	{"path", []any{"go.mod", "deploy/values.yaml", "CHANGELOG.md", "config/service.toml"},
		func(p, n int) any { return fmt.Sprintf("changes/p%02d/%04d.md", p+1, n) }},
	{"version", []any{"1.0.0", "2.3.0"},
		func(p, n int) any { return fmt.Sprintf("1.%d.%d", p+1, n) }},
	{"ticket", []any{"OPS-100", "SEC-7"},
		func(p, n int) any { return fmt.Sprintf("OPS-%d", 10000*(p+1)+n) }},
	{"repo", []any{"acme/payments", "acme/ledger"},
		func(p, n int) any { return fmt.Sprintf("acme/svc-p%02d-%04d", p+1, n) }},
	{"service", []any{"billing-api", "ledger-worker", "auth-gateway"},
		func(p, n int) any { return fmt.Sprintf("svc-p%02d-%04d", p+1, n) }},
	{"environment", []any{"staging", "production"},
		func(p, n int) any { return fmt.Sprintf("preview-p%02d-%04d", p+1, n) }},
	{"region", []any{"eu-west-1", "us-east-2"},
		func(p, n int) any { return fmt.Sprintf("cell-p%02d-%04d", p+1, n) }},
	{"message", []any{"chore: routine maintenance", "ci: refresh pinned tools"},
		func(p, n int) any { return fmt.Sprintf("proc%02d: change %d", p+1, n) }},
	{"title", []any{"Weekly maintenance", "Scheduled rotation"},
		func(p, n int) any { return fmt.Sprintf("Proc %02d run %d", p+1, n) }},
	{"labels", []any{[]any{"automated"}, []any{"maintenance", "low-risk"}},
		func(p, n int) any { return []any{"automated", fmt.Sprintf("batch-p%02d-%04d", p+1, n)} }},
	{"package", []any{"./...", "./internal/..."},
		func(p, n int) any { return fmt.Sprintf("./pkg/p%02d/m%04d", p+1, n) }},
	{"image", []any{"registry.example.invalid/billing:stable"},
		func(p, n int) any { return fmt.Sprintf("registry.example.invalid/p%02d:%04d", p+1, n) }},
	{"namespace", []any{"payments", "platform"},
		func(p, n int) any { return fmt.Sprintf("ns-p%02d-%04d", p+1, n) }},
	{"owner", []any{"platform-team", "release-captain"},
		func(p, n int) any { return fmt.Sprintf("oncall-p%02d-%04d", p+1, n) }},
	{"channel", []any{"#releases", "#ops-bots"},
		func(p, n int) any { return fmt.Sprintf("#inc-p%02d-%04d", p+1, n) }},
	{"target", []any{"linux/amd64", "crates.io"},
		func(p, n int) any { return fmt.Sprintf("target-p%02d-%04d", p+1, n) }},
	{"timeout_s", []any{num(300), num(600)},
		func(p, n int) any { return num(30 * (n + 1)) }},
	{"replicas", []any{num(3)},
		func(p, n int) any { return num(2 + n) }},
	{"dry_run", []any{false, true},
		// A bool has two values only; the planting number keeps it
		// alternating, so it still varies whenever there are two plantings.
		func(p, n int) any { return n%2 == 0 }},
	{"tag", []any{"stable", "lts"},
		func(p, n int) any { return fmt.Sprintf("v%d.%d.%d", p+1, n/100, n%100) }},
}

// bindKey describes a key whose value one step outputs and a later step
// takes as a parameter: the data flow a miner must detect.
type bindKey struct {
	name string
	// value returns the value produced in planting n of procedure p.
	value func(p, n int) any
}

// bindKeys are the keys used for data flow. Their string formats differ
// from every paramKeys value; a number may meet a varying number in one
// planting, but the two grow at different rates, so never in all of them.
var bindKeys = []bindKey{
	{"branch", func(p, n int) any { return fmt.Sprintf("release-%d.%d", p+1, n) }},
	{"commit", func(p, n int) any { return fmt.Sprintf("%08x%08x", uint32(p+1)*2654435761, uint32(n)*40503+1) }},
	{"build_id", func(p, n int) any { return fmt.Sprintf("build-%d-%d", p+1, n) }},
	{"artifact", func(p, n int) any { return fmt.Sprintf("artifacts/proc%02d/%04d.tar.gz", p+1, n) }},
	{"change_id", func(p, n int) any { return fmt.Sprintf("CH-%d-%d", p+1, n) }},
	{"pr_number", func(p, n int) any { return num(1000*(p+1) + n) }},
	{"snapshot_id", func(p, n int) any { return fmt.Sprintf("snap-%02d-%06d", p+1, n) }},
}

// goals are the metadata goals of procedures, cycled by procedure index.
var goals = []string{
	"bump a dependency",
	"cut a release branch",
	"rotate a service credential",
	"triage an incoming ticket",
	"deploy a service to staging",
	"renew a TLS certificate",
	"backfill a reporting table",
	"publish release notes",
	"roll back a bad deploy",
	"refresh a cached index",
}

// Verbs of procedure step tool names, by step kind.
var (
	toolVerbs     = []string{"fetch", "check", "build", "run", "verify", "render", "lint", "scan", "package", "resolve"}
	mutationVerbs = []string{"apply", "write", "patch", "update", "bump"}
	apiVerbs      = []string{"notify", "publish", "open", "register", "trigger"}
	modelVerbs    = []string{"decide", "classify", "summarize", "draft"}
)

// Constant outputs of procedure steps. No parameter value equals any of
// them.
var stepStatuses = []string{"ok", "applied", "passed", "done", "unchanged"}

// noiseNamespace is a family of noise tools: their kind and capability.
type noiseNamespace struct {
	name       string
	kind       string
	capability string
	verbs      []string
}

// noiseNamespaces spread noise over realistic kinds: mostly read-only tool
// calls, some API calls, some agent model calls, a few file writes.
var noiseNamespaces = []noiseNamespace{
	{"fs", "tool_call", "fs.read", []string{"read", "list", "stat", "glob"}},
	{"search", "tool_call", "fs.read", []string{"grep", "find", "rank", "symbols"}},
	{"git", "tool_call", "git.read", []string{"log", "show", "diff", "blame"}},
	{"shell", "tool_call", "proc.exec", []string{"run", "probe", "time", "which"}},
	{"logs", "tool_call", "logs.read", []string{"query", "tail", "count", "sample"}},
	{"k8s", "tool_call", "k8s.read", []string{"get", "describe", "top", "events"}},
	{"db", "tool_call", "db.read", []string{"query", "explain", "count", "schema"}},
	{"ci", "tool_call", "ci.read", []string{"status", "logs", "artifacts", "history"}},
	{"http", "external_api_call", "net.http", []string{"get", "head", "fetch", "probe"}},
	{"tracker", "external_api_call", "tracker.read", []string{"search", "get", "watchers", "history"}},
	{"agent", "model_call", "model.invoke", []string{"plan", "reflect", "summarize", "critique"}},
	{"scratch", "file_mutation", "fs.write", []string{"write", "append", "note", "stash"}},
}

// noiseNouns complete noise tool names: namespace.verb_noun.
var noiseNouns = []string{
	"file", "dir", "config", "log", "status", "history", "schema", "metrics", "issue", "build",
	"owners", "deps", "tests", "alerts", "docs",
}

// noiseKeys are the parameter keys of noise tools.
var noiseKeys = []string{"path", "pattern", "limit", "ref", "query", "url", "dir", "since", "format", "depth", "lines", "selector"}
