package skill

// The skill an agent installs: the bundle's SKILL.md, reviewed and gated,
// turned from "how the procedure goes" into "call the tool that runs it".
// An agent that reads the steps runs the steps; the reviewed workflow,
// with its capability policy, approvals and receipts, runs only when the
// agent calls the MCP tool instead, so the installed skill says so first,
// in its description (what an agent reads before it loads a skill) and at
// the top of its body.

import (
	"fmt"
	"strings"

	"github.com/crystallize-dev/crystallize/internal/candidate"
)

// ToolCall is what an installed skill tells the agent to call.
type ToolCall struct {
	// Server is the MCP server's name in the agent's configuration.
	Server string
	// Tool is the tool's name (the workflow function).
	Tool string
	// Qualified is the name the agent itself gives the tool, when it
	// has its own (Claude Code's mcp__SERVER__TOOL); "" when not.
	Qualified string
	// Bundle is the bundle directory the server serves.
	Bundle string
	// Params are the tool's arguments, in the workflow's order.
	Params []ToolParam
	// Capabilities are what the project must grant for a call to run.
	Capabilities []string
	// Secrets are the logical ids of the secrets a call needs.
	Secrets []string
}

// ToolParam is one argument of the tool, with the values the traces had.
type ToolParam struct {
	Name     string
	Type     string
	Required bool
	Examples []any
}

// ForAgent returns the SKILL.md an agent installs for the skill src (a
// SKILL.md this package rendered, as a bundle holds it): the same name,
// metadata and body, with a description that tells the agent to call
// the tool, a "Run it with the MCP tool" section before the procedure
// (when to call, with which arguments, what the call needs granted, what
// to do when it fails), and no allowed-tools: those are the tools the
// recorded steps used, which the agent is not to call itself. The result
// passes Check.
func ForAgent(src []byte, call ToolCall) ([]byte, error) {
	pairs, err := parseFrontmatter(src)
	if err != nil {
		return nil, fmt.Errorf("SKILL.md: %w", err)
	}
	fm := frontmatter{Metadata: map[string]string{}}
	for _, p := range pairs {
		str := func() (string, error) {
			if p.val.typ != yamlString {
				return "", fmt.Errorf("SKILL.md: line %d: %s is a %s, not a string", p.line, p.key, p.val.typ)
			}
			return p.val.str, nil
		}
		var err error
		switch p.key {
		case "name":
			fm.Name, err = str()
		case "description":
			fm.Description, err = str()
		case "license":
			fm.License, err = str()
		case "compatibility":
			fm.Compatibility, err = str()
		case "allowed-tools":
			// Dropped; see above.
		case "metadata":
			if p.val.typ != yamlMapping {
				return nil, fmt.Errorf("SKILL.md: line %d: metadata is a %s, not a mapping", p.line, p.val.typ)
			}
			for _, m := range p.val.pairs {
				if m.val.typ != yamlString {
					return nil, fmt.Errorf("SKILL.md: line %d: metadata.%s is a %s, not a string", m.line, m.key, m.val.typ)
				}
				fm.Metadata[m.key] = m.val.str
			}
		default:
			return nil, fmt.Errorf("SKILL.md: line %d: unknown key %q", p.line, p.key)
		}
		if err != nil {
			return nil, err
		}
	}
	if call.Server == "" || call.Tool == "" {
		return nil, fmt.Errorf("no MCP server or tool to call")
	}
	fm.Description = truncateRunes(fmt.Sprintf("Call the MCP tool %s (server %s) instead of doing these steps yourself. %s",
		candidate.OneLine(call.Tool), candidate.OneLine(call.Server), fm.Description), MaxDescriptionLen)
	fm.Metadata["mcp_server"] = candidate.OneLine(call.Server)
	fm.Metadata["mcp_tool"] = candidate.OneLine(call.Tool)

	// The body follows the closing "---" line of the frontmatter, which
	// parseFrontmatter found.
	text := strings.ReplaceAll(string(src), "\r\n", "\n")
	_, rest, ok := strings.Cut(text, "\n---\n")
	if !ok {
		return nil, fmt.Errorf("SKILL.md: frontmatter is not closed by a \"---\" line")
	}
	var b strings.Builder
	writeFrontmatter(&b, fm)
	// The section goes before the first section of the body, so that an
	// agent reads it before the procedure.
	at := strings.Index(rest, "\n## ")
	if at < 0 {
		at = len(rest)
	}
	b.WriteString(rest[:at+1])
	writeCallSection(&b, call)
	b.WriteString(rest[at+1:])
	return []byte(b.String()), nil
}

// writeCallSection writes the section that tells the agent to call the
// tool: in words an agent acts on, when, how, with what granted, and
// what to do when the call fails.
func writeCallSection(b *strings.Builder, call ToolCall) {
	tool, server := mdCode(call.Tool), mdCode(call.Server)
	b.WriteString("## Run it with the MCP tool\n\n")
	fmt.Fprintf(b, "This procedure is installed as the MCP tool %s of the MCP server %s", tool, server)
	if call.Qualified != "" {
		fmt.Fprintf(b, ", which you call as %s", mdCode(call.Qualified))
	}
	fmt.Fprintf(b, " (`crystallize serve mcp` serving the reviewed bundle %s). "+
		"When a task asks for the outcome described above, call that tool; do not carry out the steps under Procedure yourself. "+
		"The tool runs the reviewed workflow with its capability checks, approvals and receipts; doing the steps by hand skips all of them.\n\n",
		mdCode(call.Bundle))
	b.WriteString("1. Take the value of every argument from the task at hand, never from the examples, which are values earlier runs used:\n")
	if len(call.Params) == 0 {
		b.WriteString("   the tool takes no arguments.\n")
	}
	example := map[string]any{}
	for _, p := range call.Params {
		req := "optional"
		if p.Required {
			req = "required"
		}
		typ := p.Type
		if typ == "" {
			typ = "any"
		}
		fmt.Fprintf(b, "   - %s (%s, %s)", mdCode(p.Name), mdText(typ), req)
		if len(p.Examples) > 0 {
			var ex []string
			for _, v := range p.Examples {
				ex = append(ex, mdCode(jsonText(v)))
			}
			b.WriteString(", for example " + strings.Join(ex, ", "))
			example[p.Name] = p.Examples[0]
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(b, "2. Call %s with them", tool)
	if len(example) > 0 {
		fmt.Fprintf(b, ", as in %s", mdCode(jsonText(example)))
	}
	b.WriteString(". If a required value is not in the task, ask the user for it instead of guessing.\n")
	b.WriteString("3. Report the result to the user: its `status`, `run_id` and `output`.\n\n")

	b.WriteString("The call runs only with what the project grants (`[grants]` in `crystallize.toml`): ")
	if len(call.Capabilities) == 0 {
		b.WriteString("it needs no capability")
	} else {
		var cs []string
		for _, c := range call.Capabilities {
			cs = append(cs, mdCode(c))
		}
		b.WriteString("capabilities " + strings.Join(cs, ", "))
	}
	if len(call.Secrets) > 0 {
		var ss []string
		for _, s := range call.Secrets {
			ss = append(ss, mdCode(s))
		}
		b.WriteString("; secrets " + strings.Join(ss, ", ") + ", by their logical ids")
	}
	b.WriteString(".\n\n")

	b.WriteString("When the call fails:\n\n")
	b.WriteString("- A failed precondition, a capability not granted, or a failed step (the result is an error): stop. " +
		"Do not do the steps yourself and do not work around the check. Tell the user the tool's message and what it names " +
		"(the precondition, the capability to grant, the step), and call the tool again only after they have fixed it.\n")
	b.WriteString("- Arguments the tool does not take or of the wrong type: correct them from the message and call again.\n")
	b.WriteString("- Status `pending_approval`: a person has to decide. Give the user the `resume` command from the result; never approve it yourself.\n")
	fmt.Fprintf(b, "- The tool is not listed or the server refuses it: the bundle is no longer approved for the bytes it runs. "+
		"Tell the user to run %s, and do not do the steps by hand instead.\n\n", mdCode("crystallize validate "+call.Bundle))
}
