package normalize

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/crystallize-dev/crystallize/internal/trace"
)

// MaxHeadDepth bounds the subcommand words one heads entry may add.
const MaxHeadDepth = 4

// Config is the [normalize] section of crystallize.toml: a user's
// additions to the built-in table. A name is an agent's tool name
// ("mcp__db__query") or a command head ("terraform plan"), whose words are
// separated by one space. The zero Config adds nothing.
//
//	[normalize]
//	observations = ["mcp__db__explain", "terraform plan"]
//	tool_calls   = ["git branch"]          # steps, though read-only by default
//	file_tools   = ["mcp__fs__write_file"] # writes the file named by its path argument;
//	                                       # content, or old_string/new_string, make it fs.write or fs.edit
//	shell_tools  = ["mcp__term__run"]      # its command argument is a shell command
//
//	[normalize.heads]      # subcommand words after a program or head
//	terraform = 1
//	"terraform workspace" = 1
//
//	[normalize.value_flags]  # flags that take the next word as their value
//	terraform = ["var", "var-file"]
//
//	[normalize.rename]     # action name for a tool
//	"mcp__github__create_pull_request" = "gh pr create"
type Config struct {
	Observations []string            `toml:"observations"`
	ToolCalls    []string            `toml:"tool_calls"`
	FileTools    []string            `toml:"file_tools"`
	ShellTools   []string            `toml:"shell_tools"`
	Heads        map[string]int      `toml:"heads"`
	ValueFlags   map[string][]string `toml:"value_flags"`
	Rename       map[string]string   `toml:"rename"`
}

// Extend returns the table r with cfg's entries added; r is unchanged.
// The error is a trace.ErrorList naming each bad entry by its key path in
// crystallize.toml (normalize.heads.terraform, normalize.observations[2]).
func (r *Rules) Extend(cfg Config) (*Rules, error) {
	if r == nil {
		r = Default()
	}
	var errs trace.ErrorList
	bad := func(p, format string, args ...any) {
		errs = append(errs, &trace.Error{Path: p, Msg: fmt.Sprintf(format, args...)})
	}
	checkName := func(p, name string) bool {
		switch {
		case name == "":
			bad(p, "empty name")
		case strings.TrimSpace(name) != name || strings.Contains(name, "  ") || strings.ContainsAny(name, "\t\n"):
			bad(p, "%q: the words of a head are separated by one space", name)
		default:
			return true
		}
		return false
	}
	list := func(key string, names []string) []string {
		var ok []string
		for i, n := range names {
			if checkName("normalize."+key+"["+strconv.Itoa(i)+"]", n) {
				ok = append(ok, n)
			}
		}
		return ok
	}
	obs, calls := list("observations", cfg.Observations), list("tool_calls", cfg.ToolCalls)
	files, shells := list("file_tools", cfg.FileTools), list("shell_tools", cfg.ShellTools)
	for i, n := range cfg.ToolCalls {
		if slices.Contains(cfg.Observations, n) {
			bad("normalize.tool_calls["+strconv.Itoa(i)+"]", "%q is also in normalize.observations", n)
		}
	}
	for i, n := range cfg.ShellTools {
		if slices.Contains(cfg.FileTools, n) {
			bad("normalize.shell_tools["+strconv.Itoa(i)+"]", "%q is also in normalize.file_tools", n)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(cfg.Heads)) {
		p := trace.Member("normalize.heads", k)
		if checkName(p, k) && (cfg.Heads[k] < 0 || cfg.Heads[k] > MaxHeadDepth) {
			bad(p, "depth %d out of range 0 to %d", cfg.Heads[k], MaxHeadDepth)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(cfg.ValueFlags)) {
		p := trace.Member("normalize.value_flags", k)
		checkName(p, k)
		for i, f := range cfg.ValueFlags[k] {
			if f == "" || strings.HasPrefix(f, "-") || strings.ContainsAny(f, " =") {
				bad(trace.Element(p, i), "%q: a flag is written without dashes, such as \"var-file\"", f)
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(cfg.Rename)) {
		p := trace.Member("normalize.rename", k)
		if checkName(p, k) {
			checkName(p, cfg.Rename[k])
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}

	n := *r
	n.observations = union(r.observations, obs)
	n.userObservations = union(r.userObservations, obs)
	n.toolCalls = union(r.toolCalls, calls)
	n.fileTools = union(r.fileTools, files)
	n.shellTools = union(r.shellTools, shells)
	// An entry the user moves from one list to another leaves the
	// first, so the last word is the user's.
	for _, c := range calls {
		delete(n.observations, c)
		delete(n.userObservations, c)
	}
	for _, o := range obs {
		delete(n.toolCalls, o)
	}
	for _, f := range files {
		delete(n.shellTools, f)
	}
	for _, s := range shells {
		delete(n.fileTools, s)
	}
	n.heads = maps.Clone(r.heads)
	maps.Copy(n.heads, cfg.Heads)
	n.valueFlags = maps.Clone(r.valueFlags)
	for k, fs := range cfg.ValueFlags {
		n.valueFlags[k] = union(n.valueFlags[k], fs)
	}
	n.rename = maps.Clone(r.rename)
	maps.Copy(n.rename, cfg.Rename)
	return &n, nil
}

func union(m map[string]bool, add []string) map[string]bool {
	out := make(map[string]bool, len(m)+len(add))
	maps.Copy(out, m)
	for _, a := range add {
		out[a] = true
	}
	return out
}
