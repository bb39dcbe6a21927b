// Package normalize turns the tool calls that agents record (Claude Code's
// Bash and Edit, Codex's shell and apply_patch, an OpenTelemetry
// execute_tool span) into the trace model's one vocabulary, so the same
// procedure mines the same way whichever agent ran it.
//
// The invariant: one Call gives the same actions whichever agent recorded
// it, and every decision is made by one table (Rules) that users extend in
// crystallize.toml.
//
// # Shell commands
//
// A shell tool's command is parsed with a real shell parser
// (mvdan.cc/sh/v3/syntax), never split on spaces. "bash -lc SCRIPT" and
// its sh, zsh and argv-list forms are unwrapped to SCRIPT. Then:
//
//   - "&&", "||", ";" and newlines separate parts; each part becomes one
//     action, ids <call id>, <call id>.2, <call id>.3, … with metadata
//     compound_index (1-based) and compound_count. The call's cost goes to
//     the first part, its output to the last, its timestamp, duration and
//     exit status to every part (a log does not say which part failed).
//   - "cd DIR" is not an action: DIR becomes metadata cwd of the parts
//     after it (a call that is only "cd DIR" is one observation).
//   - In a pipeline the first stage is an action; a later stage that is a
//     pure filter (grep, head, sort, …) is recorded in the metadata
//     filters of the stage before it, any other later stage is an action.
//   - Leading assignments (FOO=1 go test) go to metadata env; a value
//     whose name looks like a credential (…TOKEN, …KEY, …) is dropped, and
//     blanked in metadata command too.
//   - Redirections go to metadata redirects; an output redirection to a
//     file is a file_write side effect, and makes a read-only command an
//     ordinary tool call.
//   - A part the parser cannot reduce to plain words (command or process
//     substitution, parameter expansion, heredocs, subshells, loops) and a
//     command that does not parse at all become one action with metadata
//     unparsed = true and the raw text, named by the head of its leading
//     literal words ("git tag" for git tag "v$(cat VERSION)"), "shell"
//     when there are none; it is an observation only when that head is
//     read-only and it writes no file. Two forms are read in full:
//     "$(cat <<'EOF' … EOF)" inside double quotes, the way agents pass a
//     multi-line commit message, is the heredoc's text; and
//     "apply_patch <<'EOF' … EOF" is a file edit per file in the patch.
//
// # Command heads
//
// An action's name is its command head: the program's base name followed
// by its subcommand words, joined by ONE space ("git checkout",
// "go mod tidy", "gh pr create", "npm run build"). How many subcommand
// words a program takes is in the heads table, which nests: "go" takes
// one word and "go mod" one more. Only plain words count (a letter first,
// then letters, digits, ".", "_", ":" or "-"), so a flag or a path ends
// the head early. "python -m MODULE" is the head "python -m MODULE".
// Wrappers (timeout, nohup, env, time) are skipped: the head is the
// wrapped command's. make's target and a script's path stay operands.
//
// # Parameters and the argv template
//
// A flag becomes a parameter named by the flag without dashes, "-" and "."
// turned into "_" (-b x → b, --add-label=bug → add_label); a flag without
// a value is true. Whether a flag takes the next word as its value is in
// the valueFlags table; unknown flags are booleans. Operands (the words
// that are neither the head, a flag nor a flag's value) are one list
// parameter, args, or paths for heads whose operands are files (git add,
// rm, mkdir), however many there are: "git add a.go" and "git add a.go
// b.go" are both git add with the one key paths, so their repeats line up
// in mining, whose signatures are made of keys. operandNames names the
// operands of heads that take fixed ones (git checkout BRANCH, git push
// REMOTE BRANCH; extra ones still go to the list), and may split
// "module@version" into two parameters; a head's variadic operands that
// it names are a list named after them (npm install A B: packages), except
// that a single one to be split is split (go get M@V: module, version). A
// repeated key gets _2, _3, ….
//
// Metadata argv is the argv template: the command's words, with every
// parameter's text replaced by {name}, a list's operands in a row by the
// one element {name...}, and literal braces doubled, so that
// substituting the parameters (a list's items one element each) gives
// back the command's argv exactly. Operands split by a flag (find . -name
// x -exec …) are two lists, args and args_2, to keep that order.
// Running it needs the capability exec:<program>, and exec:<wrapper> for
// each wrapper kept in front of it, since the wrapper is what the argv
// starts.
//
// A program recorded on Windows is named as it is elsewhere: python.exe,
// C:\...\git.exe and npm.cmd are python, git and npm, in the head and as
// the template's program, and metadata program keeps the word recorded.
// Operands keep their backslashes: they are data. PowerShell commands
// (the PowerShell tool, powershell -Command SCRIPT, pwsh -c SCRIPT) are
// read like shell commands; a cmdlet that only reads (Get-*, Select-*,
// Test-*, Measure-*, Format-*, Out-String, …) is an observation, and a
// filter after a pipe.
//
// # Files, observations and other tools
//
// A file tool (Edit, Write, MultiEdit, apply_patch, Gemini CLI's
// write_file and replace, …) becomes one file_mutation per file it
// touches, carrying what it wrote, named after the runtime's built-in
// that redoes it: "fs.write" (path, content) for a whole file or an added
// one, "fs.edit" for exact replacements (path, old, new, and replace_all
// only when true; several replacements, a MultiEdit's or a patch's
// hunks, are the list edits of {old, new, replace_all?}). A call whose
// change the log does not hold in that form (a notebook cell, a
// deletion, a move) is a "file.edit" with the path as its only parameter
// and the rest of its arguments as inputs. A path below the agent's
// working directory (Call.Cwd) is made relative to it.
//
// A read-only tool (Read, Grep, Glob, TodoWrite, update_plan, Gemini
// CLI's read_file, …) or shell head (cat, rg, ls, sed without -i, find
// without -exec or -delete, git status, git log, git diff, git show, …)
// becomes an observation, which mining neither requires nor lets break a
// match. So does any program run with nothing but a version or help
// flag (node --version, npm -v, gh --help): agents probe their tools so
// before they work. So do WebFetch, WebSearch, ToolSearch, MCP resource reads,
// Codex's web_search_call and view_image, and MCP tools whose name says
// they read (mcp__github__get_issue, mcp__x__calendar_search; never one
// with a write word such as create or update in it); an MCP call recorded
// with the server's annotations follows its readOnlyHint instead, and the
// user's [normalize] lists overrule both. Any other tool is a tool_call
// named after the tool, its arguments its parameters.
//
// # Questions to the user
//
// AskUserQuestion with one single-select question is a human decision:
// kind human_approval named "ask_user", the question its one parameter
// and its approval prompt (boundary "decision"), the option labels in
// order in metadata options, and the answer as output. Several questions
// in one call, or one that allows several answers, stay an ordinary tool
// call: no one choice among options stands for them.
package normalize

import (
	"maps"
	"strconv"
	"strings"

	"github.com/crystallize-dev/crystallize/internal/trace"
)

// Call is one tool call as an agent recorded it, before normalization.
type Call struct {
	// ID is the agent's id for the call (tool_use id, call_id, span's
	// gen_ai.tool.call.id).
	ID string
	// Tool is the agent's name for the tool: "Bash", "shell", "Edit",
	// "apply_patch", "run_shell", an MCP tool name.
	Tool string
	// Args are the call's arguments as recorded.
	Args map[string]any
	// Result is what the tool returned: text or a structured value.
	Result any
	// IsError is true when the agent recorded the call as failed.
	IsError bool
	// ExitCode is the exit status of a shell command, when recorded.
	ExitCode *int
	// Timestamp is when the call started (RFC 3339), if known.
	Timestamp string
	// DurationMS is how long the call took, if known.
	DurationMS *int64
	// Cost is the share of the model turn that produced this call.
	Cost *trace.Cost
	// Metadata is agent-specific provenance (sidechain, turn, span id),
	// copied into every action the call becomes.
	Metadata map[string]any
	// Cwd is the absolute directory the agent worked in when it made the
	// call, if recorded. A file the call writes below it is named
	// relative to it, so that the workflow runs in any workspace.
	Cwd string
}

// Rules is the normalization table: which tools run shell commands, which
// write files, which only read, and how shell commands are named and
// parameterized. Default returns the built-in table and Extend adds a
// user's entries; a Rules is never modified after it is built, so one
// may be shared by concurrent decoders.
type Rules struct {
	shellTools   map[string]bool
	fileTools    map[string]bool
	observations map[string]bool
	// userObservations are the observations crystallize.toml adds,
	// which a tool's own annotations do not overrule.
	userObservations map[string]bool
	toolCalls        map[string]bool // user entries that are never observations
	filters          map[string]bool
	heads            map[string]int
	valueFlags       map[string]map[string]bool
	operandNames     map[string][]string
	pathOperands     map[string]bool
	rename           map[string]string
	// scripts caches parsed shell scripts; it is the one part of a
	// Rules that changes, and only as a cache: see parseShell.
	scripts *scriptCache
}

// Default returns the built-in table.
func Default() *Rules {
	return &Rules{
		shellTools:   shellTools,
		fileTools:    fileTools,
		observations: observations,
		toolCalls:    map[string]bool{},
		filters:      filters,
		heads:        heads,
		valueFlags:   valueFlags,
		operandNames: operandNames,
		pathOperands: pathOperands,
		rename:       map[string]string{},
		scripts:      &scriptCache{},
	}
}

// Actions converts c into one or more actions (a compound shell command
// becomes several, a patch one per file). Action ids are derived from
// c.ID. It never fails: input it cannot take apart becomes one action
// marked unparsed.
func (r *Rules) Actions(c Call) []trace.Action {
	if r == nil {
		r = Default()
	}
	var acts []trace.Action
	switch {
	case r.shellTools[c.Tool]:
		acts = r.shellActions(c)
	case r.fileTools[c.Tool]:
		acts = r.fileActions(c)
	case questionTools[c.Tool]:
		acts = questionActions(c)
	default:
		acts = []trace.Action{r.toolAction(c)}
	}
	if len(acts) == 0 {
		// Every call is at least one action, so that counts of calls and
		// actions agree and nothing the agent did disappears.
		acts = []trace.Action{r.toolAction(c)}
	}
	relativeTo(acts, c.Cwd)
	finish(c, acts)
	return acts
}

// toolAction is a call of a tool that is neither a shell nor a file tool:
// named after the tool (or its rename), its arguments as parameters.
func (r *Rules) toolAction(c Call) trace.Action {
	a := trace.Action{Kind: trace.KindToolCall, Name: c.Tool, Parameters: maps.Clone(c.Args)}
	if n, ok := r.rename[c.Tool]; ok {
		a.Name = n
	}
	if r.isObservationTool(c) {
		a.Kind = trace.KindObservation
	}
	return a
}

// isObservationTool reports whether a call of a tool that is neither a
// shell nor a file tool only reads. The user's table decides first, then
// what the MCP server said of the tool when the call carries its
// annotations (metadata mcp.annotations.readOnlyHint, as capture records
// them), then the built-in list and the MCP tool's name.
func (r *Rules) isObservationTool(c Call) bool {
	switch {
	case r.toolCalls[c.Tool]:
		return false
	case r.userObservations[c.Tool]:
		return true
	}
	if hint, ok := readOnlyHint(c.Metadata); ok {
		return hint
	}
	return r.observations[c.Tool] || mcpReadOnly(c.Tool)
}

// readOnlyHint is the readOnlyHint annotation recorded with an MCP call.
func readOnlyHint(md map[string]any) (hint, ok bool) {
	mcp, _ := md["mcp"].(map[string]any)
	ann, _ := mcp["annotations"].(map[string]any)
	hint, ok = ann["readOnlyHint"].(bool)
	return hint, ok
}

// mcpReadOnly reports whether an MCP tool's name, mcp__<server>__<tool>
// as Claude Code writes it, says the tool only reads: the tool's first
// word is a read verb (get_issue, list_projects, searchPages) or its last
// one a read noun (calendar_search), and no word of it is a write
// (get_or_create_branch). A name that says nothing either way is a tool
// call: an observation that wrote would hide a step.
func mcpReadOnly(tool string) bool {
	rest, ok := strings.CutPrefix(tool, "mcp__")
	if !ok {
		return false
	}
	i := strings.LastIndex(rest, "__")
	if i < 0 {
		return false
	}
	words := nameWords(rest[i+2:])
	if len(words) == 0 {
		return false
	}
	for _, w := range words {
		if mcpWriteWords[w] {
			return false
		}
	}
	// "query" alone runs what it is given (SQL may write); query_issues
	// reads issues.
	if words[0] == "query" && len(words) == 1 {
		return false
	}
	return mcpReadVerbs[words[0]] || mcpReadSuffixes[words[len(words)-1]]
}

// nameWords splits a tool name into lower-case words at "_", "-" and
// lower-to-upper case changes: getIssue_comments is get, issue, comments.
func nameWords(s string) []string {
	var words []string
	var b strings.Builder
	flush := func() {
		if b.Len() > 0 {
			words = append(words, b.String())
			b.Reset()
		}
	}
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case ch == '_' || ch == '-' || ch == '.':
			flush()
		case ch >= 'A' && ch <= 'Z':
			if i > 0 && s[i-1] >= 'a' && s[i-1] <= 'z' {
				flush()
			}
			b.WriteByte(ch + 'a' - 'A')
		default:
			b.WriteByte(ch)
		}
	}
	flush()
	return words
}

// failed reports whether the agent recorded c as failed.
func failed(c Call) bool { return c.IsError || (c.ExitCode != nil && *c.ExitCode != 0) }

// redone reports whether a is a file mutation a built-in redoes. What the
// agent's tool answered ("File created successfully at: …", "Success.
// Updated the following files") is not what the built-in answers, and
// differs between agents for the same edit, so a successful one keeps no
// output: mining then expects none of the step and binds no later step
// to it, and a Codex edit replays a step mined from Claude Code's. A
// failed one keeps the agent's answer, which says why.
func redone(a *trace.Action) bool { return a.Name == FileWrite || a.Name == FileEdit }

// finish sets what every action of c shares: ids, timing, cost on the
// first, output on the last, exit status and the call's metadata.
func finish(c Call, acts []trace.Action) {
	n := len(acts)
	for i := range acts {
		a := &acts[i]
		a.ID = c.ID
		if i > 0 {
			a.ID = c.ID + "." + strconv.Itoa(i+1)
		}
		a.Timestamp = c.Timestamp
		if c.DurationMS != nil {
			d := *c.DurationMS
			a.DurationMS = &d
		}
		if i == 0 && c.Cost != nil {
			cost := *c.Cost
			a.Cost = &cost
		}
		if i == n-1 && a.Output == nil && (!redone(a) || failed(c)) {
			a.Output = c.Result
		}
		md := make(map[string]any, len(c.Metadata)+len(a.Metadata)+4)
		maps.Copy(md, c.Metadata)
		maps.Copy(md, a.Metadata)
		md["agent_tool"] = c.Tool
		if c.ExitCode != nil {
			md["exit_code"] = *c.ExitCode
		}
		if failed(c) {
			md["error"] = true
		}
		if n > 1 {
			md["compound_index"] = i + 1
			md["compound_count"] = n
		}
		a.Metadata = md
	}
}
