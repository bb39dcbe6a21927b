package plan

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strconv"
	"strings"
)

// VerifyTool is the name of the in-process tool the Starlark lowering
// calls for a verify node. The caller of Starlark binds it (the cli binds
// it to Verifier) with capability VerifyCapability, so running a verify
// command is subject to the run's grants like any other tool.
const (
	VerifyTool       = "plan.verify"
	VerifyCapability = "plan.verify"
)

// Starlark lowers p to a workflow in the dialect codegen.Check accepts,
// so the runtime runs it with the same capability policy, receipts,
// journal, approvals, trace and session log as any crystallized workflow.
//
// Nodes run in one topological order from the entry (file order breaks
// ties); an edge that closes a cycle is not followed, since a workflow has
// no recursion or while loop. A node runs when one of its predecessors ran
// and the edge from it is unlabelled or labelled with the branch that
// predecessor reported, so a verify failure takes its "fail" edge and
// skips the "pass" one. Each kind lowers to what it is:
//
//   - deterministic_command: ctx.tool(tool, KEY=VALUE…), no model;
//   - verify: ctx.tool(VerifyTool, command=…, expect_status=…, …), no
//     model; it reports branch "pass" or "fail";
//   - human_gate: ctx.approve(id, prompt=…);
//   - read_fact, search, context_pack, sub_agent: one ctx.model turn named
//     by the node, with its purpose, tools and upstream results as inputs;
//   - agent_loop: ctx.model at most max_iterations times, stopping at the
//     first reply containing done_sentinel;
//   - workflow_map: one ctx.model turn per item;
//   - join: nothing (the sequential order has already run its inputs);
//   - compact: a ctx.log line.
//
// Every "{{name}}" in a deterministic_command argument is replaced by
// params[name] (from-bundle writes parameters that way); the values are
// part of the generated source, so a resumed run sees the same ones.
//
// A model reply that is a dict with a "branch" key reports that branch.
// The output is deterministic: the same plan gives the same bytes.
func Starlark(p *Plan, params map[string]string) ([]byte, error) {
	order := topoOrder(p)
	preds := map[string][]Edge{}
	pos := map[string]int{}
	for i, id := range order {
		pos[id] = i
	}
	for _, e := range p.Edges {
		// Only forward edges are followed; see the doc comment.
		if pf, ok := pos[e.From]; ok && pos[e.To] > pf {
			preds[e.To] = append(preds[e.To], e)
		}
	}

	caps := slices.Clone(strs(p.Capabilities["tools"]))
	for _, n := range p.Nodes {
		if n.Kind == "verify" && !slices.Contains(caps, VerifyCapability) {
			caps = append(caps, VerifyCapability)
		}
	}
	slices.Sort(caps)
	capList := "none"
	if len(caps) > 0 {
		capList = strings.Join(caps, ", ")
	}

	var b bytes.Buffer
	fmt.Fprintf(&b, "# Generated from task plan %s (%s) by crystallize plan run; do not edit.\n", oneLine(p.File), p.SourceHash)
	fmt.Fprintf(&b, "# capabilities: %s · secrets: none\n\n", capList)
	b.WriteString("def plan(ctx):\n")
	fmt.Fprintf(&b, "    # %s\n", oneLine(p.Objective))
	b.WriteString("    out = {}\n    branch = {}\n")
	for _, id := range order {
		n := p.Node(id)
		fmt.Fprintf(&b, "\n    # %s (%s): %s\n", id, n.Kind, oneLine(n.Purpose))
		if id == p.Entry {
			b.WriteString("    if True:\n")
		} else {
			var conds []string
			for _, e := range preds[id] {
				c := "(" + q(e.From) + " in out"
				if e.Branch != "" {
					c += " and branch.get(" + q(e.From) + ") == " + q(e.Branch)
				}
				conds = append(conds, c+")")
			}
			if len(conds) == 0 {
				conds = []string{"False"}
			}
			fmt.Fprintf(&b, "    if %s:\n", strings.Join(conds, " or "))
		}
		if err := lowerStarNode(&b, n, preds[id], params); err != nil {
			return nil, err
		}
	}
	b.WriteString("\n    return {\"outputs\": out, \"branches\": branch}\n")
	return b.Bytes(), nil
}

// lowerStarNode writes the body of one node's if-block, at 8 spaces.
func lowerStarNode(b *bytes.Buffer, n *Node, preds []Edge, params map[string]string) error {
	id := q(n.ID)
	var up []string
	for _, e := range preds {
		if !slices.Contains(up, q(e.From)) {
			up = append(up, q(e.From))
		}
	}
	inputs := fmt.Sprintf("{\"kind\": %s, \"purpose\": %s, \"tools\": %s, \"upstream\": {k: out[k] for k in [%s] if k in out}}",
		q(n.Kind), q(n.Purpose), list(n.Tools), strings.Join(up, ", "))
	model := func(extra string) string {
		in := inputs
		if extra != "" {
			in = strings.TrimSuffix(inputs, "}") + ", " + extra + "}"
		}
		return fmt.Sprintf("ctx.model(%s, prompt = %s, inputs = %s)", id, q(n.Prompt), in)
	}
	reportBranch := fmt.Sprintf("        branch[%s] = out[%s].get(\"branch\", \"\") if type(out[%s]) == \"dict\" else \"\"\n", id, id, id)
	switch n.Kind {
	case "deterministic_command":
		tool, _ := str(n.Command["tool"])
		var kv []string
		for i, a := range strs(n.Command["args"]) {
			k, v, ok := strings.Cut(a, "=")
			if !ok {
				k, v = "arg"+strconv.Itoa(i), a
			}
			for name, val := range params {
				v = strings.ReplaceAll(v, "{{"+name+"}}", val)
			}
			kv = append(kv, q(k)+": "+q(v))
		}
		fmt.Fprintf(b, "        out[%s] = ctx.tool(%s, **{%s})\n", id, q(tool), strings.Join(kv, ", "))
		b.WriteString(reportBranch)
	case "verify":
		var kv []string
		for _, k := range []string{"command", "expect_status", "expect_text", "assert_text"} {
			if v, ok := n.Verify[k]; ok {
				kv = append(kv, q(k)+": "+jsonLit(v))
			}
		}
		fmt.Fprintf(b, "        out[%s] = ctx.tool(%s, **{%s})\n", id, q(VerifyTool), strings.Join(kv, ", "))
		b.WriteString(reportBranch)
	case "human_gate":
		gate, _ := str(n.Approval["id"])
		if gate == "" {
			gate = n.ID
		}
		prompt, _ := str(n.Approval["prompt"])
		if prompt == "" {
			prompt = n.Purpose
		}
		fmt.Fprintf(b, "        out[%s] = ctx.approve(%s, prompt = %s)\n", id, q(gate), q(prompt))
		fmt.Fprintf(b, "        branch[%s] = \"approved\"\n", id)
	case "read_fact", "search", "context_pack":
		fmt.Fprintf(b, "        out[%s] = %s\n", id, model(""))
		b.WriteString(reportBranch)
	case "sub_agent":
		worker, _ := str(n.SubAgent["worker_name"])
		fmt.Fprintf(b, "        out[%s] = %s\n", id, model("\"worker\": "+q(worker)))
		b.WriteString(reportBranch)
	case "agent_loop":
		iters, ok := integer(n.AgentLoop["max_iterations"])
		if !ok || iters < 1 {
			iters = 1
		}
		sentinel, _ := str(n.AgentLoop["done_sentinel"])
		fmt.Fprintf(b, "        reply = None\n        for i in range(%d):\n", iters)
		fmt.Fprintf(b, "            reply = %s\n", model("\"iteration\": i, \"previous\": reply"))
		if sentinel != "" {
			fmt.Fprintf(b, "            if %s in str(reply):\n                break\n", q(sentinel))
		}
		fmt.Fprintf(b, "        out[%s] = reply\n", id)
		b.WriteString(reportBranch)
	case "workflow_map":
		items, _ := n.Map["items"].([]any)
		fmt.Fprintf(b, "        results = []\n        for item in %s:\n", jsonLit(items))
		fmt.Fprintf(b, "            results.append(%s)\n", model("\"item\": item"))
		fmt.Fprintf(b, "        out[%s] = results\n", id)
	case "join":
		fmt.Fprintf(b, "        out[%s] = None\n", id)
	case "compact":
		fmt.Fprintf(b, "        ctx.log(%s)\n", q("compact "+n.ID+": "+jsonText(n.Compact)))
		fmt.Fprintf(b, "        out[%s] = None\n", id)
	default:
		return fmt.Errorf("lowering %s: unknown kind %q", n.ID, n.Kind) // unreachable: Parse checked it
	}
	return nil
}

// topoOrder orders the nodes reachable from the entry so that every node
// comes after its predecessors, ignoring edges that close a cycle. It is
// Kahn's algorithm over the forward edges of a depth-first search from the
// entry; ready nodes are taken in file order, so the order is stable.
func topoOrder(p *Plan) []string {
	succ := map[string][]string{}
	for _, e := range p.Edges {
		succ[e.From] = append(succ[e.From], e.To)
	}
	// Classify back edges with a DFS from the entry.
	back := map[[2]string]bool{}
	state := map[string]int{} // 1 on stack, 2 done
	var dfs func(string)
	dfs = func(id string) {
		state[id] = 1
		for _, to := range succ[id] {
			switch state[to] {
			case 0:
				dfs(to)
			case 1:
				back[[2]string{id, to}] = true
			}
		}
		state[id] = 2
	}
	dfs(p.Entry)
	indeg := map[string]int{}
	for _, e := range p.Edges {
		if state[e.From] != 0 && !back[[2]string{e.From, e.To}] {
			indeg[e.To]++
		}
	}
	// Parallel edges count once per edge on both sides, so indeg is
	// consistent with the decrements below.
	var order []string
	done := map[string]bool{}
	for len(order) < len(state) {
		progressed := false
		for _, n := range p.Nodes {
			if state[n.ID] == 0 || done[n.ID] || indeg[n.ID] > 0 {
				continue
			}
			done[n.ID] = true
			order = append(order, n.ID)
			for _, e := range p.Edges {
				if e.From == n.ID && !back[[2]string{e.From, e.To}] {
					indeg[e.To]--
				}
			}
			progressed = true
			break
		}
		if !progressed {
			break // unreachable: back edges were removed
		}
	}
	return order
}

// q quotes s as a Starlark string literal. strconv.Quote's escapes are a
// subset of Starlark's.
func q(s string) string { return strconv.Quote(s) }

func list(ss []string) string {
	parts := make([]string, len(ss))
	for i, s := range ss {
		parts[i] = q(s)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// jsonLit renders a decoded JSON value as a Starlark expression.
func jsonLit(v any) string {
	switch v := v.(type) {
	case nil:
		return "None"
	case bool:
		if v {
			return "True"
		}
		return "False"
	case string:
		return q(v)
	case []any:
		parts := make([]string, len(v))
		for i, e := range v {
			parts[i] = jsonLit(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = q(k) + ": " + jsonLit(v[k])
		}
		return "{" + strings.Join(parts, ", ") + "}"
	default: // json.Number, float64
		return fmt.Sprint(v)
	}
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// Verifier returns the function behind VerifyTool: it runs args["command"]
// with sh -c in dir, with environ, and checks its exit status against
// expect_status (default 0) and its combined output against expect_text
// and assert_text (each a substring that must appear). It never fails for
// a command that ran, whatever it returned: it reports {"branch": "pass"}
// or {"branch": "fail", "reasons": […]} with the status and output, so the
// workflow takes the matching edge. It fails only when the command cannot
// be started or ctx is cancelled.
func Verifier(dir string, environ []string) func(ctx context.Context, args map[string]any) (any, error) {
	return func(ctx context.Context, args map[string]any) (any, error) {
		command, _ := str(args["command"])
		if command == "" {
			return nil, errors.New("plan.verify: no command")
		}
		want := int64(0)
		switch v := args["expect_status"].(type) {
		case int64:
			want = v
		case int:
			want = int64(v)
		case float64:
			want = int64(v)
		}
		cmd := exec.CommandContext(ctx, "sh", "-c", command)
		cmd.Dir = dir
		cmd.Env = environ
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		status := 0
		if err := cmd.Run(); err != nil {
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ctx.Err() != nil {
				return nil, fmt.Errorf("plan.verify: %w", err)
			}
			status = ee.ExitCode()
		}
		var reasons []any
		if int64(status) != want {
			reasons = append(reasons, fmt.Sprintf("exit status %d, want %d", status, want))
		}
		for _, k := range []string{"expect_text", "assert_text"} {
			if t, ok := str(args[k]); ok && t != "" && !strings.Contains(out.String(), t) {
				reasons = append(reasons, fmt.Sprintf("%s %q not in output", k, t))
			}
		}
		res := map[string]any{"branch": "pass", "status": status, "output": out.String()}
		if len(reasons) > 0 {
			res["branch"], res["reasons"] = "fail", reasons
		}
		return res, nil
	}
}
