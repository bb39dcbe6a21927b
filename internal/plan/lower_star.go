package plan

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strconv"
	"strings"

	"github.com/crystallize-dev/crystallize/internal/proc"
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
// The workflow is a scheduler over the plan's graph: a queue that starts
// at the entry, one node taken per turn of a loop bounded by the plan's
// max_steps. After a node runs, every edge from it is followed that is
// unlabelled or labelled with the branch it reported: "pass", or what a
// model node names by answering a dict with a "branch" string. A node
// that failed reports "fail" and follows only edges labelled "fail", and
// with none the run fails. Loops through branch edges therefore run until their branch
// changes or the budgets stop them. A join waits until every node with an
// edge into it has arrived, or until nothing else is left to run. Each
// kind lowers to what it is:
//
//   - deterministic_command: ctx.try_tool(tool, KEY=VALUE…), no model;
//     it fails when the tool does;
//   - verify: ctx.try_tool(VerifyTool, command=…, …), no model; it
//     reports "pass" or "fail" (a dry run, which runs nothing, "pass");
//   - human_gate: ctx.approve(id, prompt=…), reporting "pass";
//   - read_fact, search, context_pack: ctx.agent, read-only, restricted
//     to the node's tools, one answer (and a turn per tool call);
//   - agent_loop: ctx.agent with the node's tools until done_sentinel or
//     max_iterations; it fails when the sentinel never comes;
//   - sub_agent: ctx.agent running the worker preset sub_agent.preset
//     (else sub_agent.worker_name) of the configuration's [workers.*];
//   - workflow_map: ctx.map over map.items (a list, or the name of an
//     upstream node whose output is the list) with map.max_concurrency;
//   - join: nothing beyond waiting;
//   - compact: compacts the transcript (see below), no model.
//
// The transcript is the list of node outputs so far, given to every
// model node. A compact node, and every node when the plan has a
// compaction_policy, shortens it when its estimated size (JSON bytes / 4)
// is over threshold_tokens: the last preserve_recent turns are kept and
// the older ones become one summary turn, clipped to fit.
//
// Budgets: max_steps bounds node runs; wall_clock_ms, total_cost_usd,
// max_tool_calls and max_model_calls go to ctx.budget; with
// consecutive_failures, that many failed nodes in a row (of its kinds)
// stop the run, or with pause ask approval "consecutive_failures" to go
// on; agents of counted kinds stop after that many failed tool calls in a
// row.
//
// Every "{{name}}" in a deterministic_command argument is replaced by
// params[name] (from-bundle writes parameters that way); the values are
// part of the generated source, so a resumed run sees the same ones.
// The output is deterministic: the same plan gives the same bytes.
func Starlark(p *Plan, params map[string]string) ([]byte, error) {
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

	// Edges by source in file order, and each node's inputs.
	succ := map[string][]string{}
	inputs := map[string][]string{}
	for _, e := range p.Edges {
		succ[e.From] = append(succ[e.From], fmt.Sprintf("(%s, %s)", q(e.To), q(e.Branch)))
		if !slices.Contains(inputs[e.To], e.From) {
			inputs[e.To] = append(inputs[e.To], e.From)
		}
	}
	var joins []string
	for _, n := range p.Nodes {
		if n.Kind == "join" {
			joins = append(joins, n.ID)
		}
	}

	bs := p.Validation.BudgetSummary
	cf := bs.ConsecutiveFailures

	var b bytes.Buffer
	fmt.Fprintf(&b, "# Generated from task plan %s (%s) by crystallize plan run; do not edit.\n", oneLine(p.File), p.SourceHash)
	fmt.Fprintf(&b, "# capabilities: %s · secrets: none\n\n", capList)
	b.WriteString("def plan(ctx):\n")
	fmt.Fprintf(&b, "    # Objective: %s\n", oneLine(p.Objective))
	var budget []string
	if bs.WallClockMS != nil {
		budget = append(budget, fmt.Sprintf("wall_clock_ms = %d", *bs.WallClockMS))
	}
	if bs.TotalCostUSD != nil {
		budget = append(budget, fmt.Sprintf("cost_usd = %s", strconv.FormatFloat(*bs.TotalCostUSD, 'g', -1, 64)))
	}
	budget = append(budget, fmt.Sprintf("tool_calls = %d", bs.MaxToolCalls.Limit), fmt.Sprintf("model_calls = %d", bs.MaxModelCalls.Limit))
	fmt.Fprintf(&b, "    ctx.budget(%s)\n\n", strings.Join(budget, ", "))

	b.WriteString("    # The graph: edges as (target, branch) by source, inputs by node.\n")
	b.WriteString("    edges = {\n")
	for _, n := range p.Nodes {
		if len(succ[n.ID]) > 0 {
			fmt.Fprintf(&b, "        %s: [%s],\n", q(n.ID), strings.Join(succ[n.ID], ", "))
		}
	}
	b.WriteString("    }\n    inputs = {\n")
	for _, n := range p.Nodes {
		if len(inputs[n.ID]) > 0 {
			fmt.Fprintf(&b, "        %s: %s,\n", q(n.ID), list(inputs[n.ID]))
		}
	}
	b.WriteString("    }\n")
	fmt.Fprintf(&b, "    joins = %s\n", list(joins))
	fmt.Fprintf(&b, "    max_steps = %d\n", bs.MaxSteps.Limit)
	if cf != nil {
		var counted []string
		for _, n := range p.Nodes {
			if len(cf.Kinds) == 0 || slices.Contains(cf.Kinds, n.Kind) {
				counted = append(counted, n.ID)
			}
		}
		fmt.Fprintf(&b, "    max_failures = %d  # budgets.consecutive_failures\n", cf.Max)
		fmt.Fprintf(&b, "    counted = %s  # nodes whose failures count\n", list(counted))
	}
	b.WriteString(compactFunc)
	fmt.Fprintf(&b, `
    out = {}
    branch = {}
    visits = {}
    transcript = []
    waiting = {}
    failures = 0
    steps = 0
    queue = [%s]
    for _ in range(max_steps + len(joins) + 1):
        if not queue:
            # Nothing else can arrive at a join still waiting: release it.
            held = [j for j in joins if j in waiting]
            if not held:
                break
            waiting.pop(held[0])
            queue.append(held[0])
        node = queue.pop(0)
        if steps == max_steps:
            ctx.fail("task plan budget max_steps (%%d) used up before node %%s" %% (max_steps, node))
        steps += 1
        visits[node] = visits.get(node, 0) + 1
        upstream = {k: out[k] for k in inputs.get(node, []) if k in out}
        result = None
        took = "pass"
        failed = False
        why = ""
`, q(p.Entry))
	for i, n := range p.Nodes {
		kw := "elif"
		if i == 0 {
			kw = "if"
		}
		fmt.Fprintf(&b, "\n        %s node == %s:\n", kw, q(n.ID))
		fmt.Fprintf(&b, "            # %s: %s\n", n.Kind, oneLine(n.Purpose))
		if err := lowerStarNode(&b, p, n, params); err != nil {
			return nil, err
		}
	}
	b.WriteString(`
        if failed:
            took = "fail"
        out[node] = result
        branch[node] = took
        if result != None:
            transcript.append({"node": node, "output": result})
`)
	if cp := p.CompactionPolicy; cp != nil {
		th, keep := compactParams(nil, cp)
		fmt.Fprintf(&b, "            transcript = compact(transcript, %d, %d)  # compaction_policy\n", th, keep)
	}
	b.WriteString(`        nexts = [e[0] for e in edges.get(node, []) if e[1] == took or (e[1] == "" and not failed)]
        if failed and not nexts:
            ctx.fail("node %s failed and has no \"fail\" edge: %s" % (node, why))
`)
	if cf != nil {
		b.WriteString("        if failed and node in counted:\n            failures += 1\n            if failures >= max_failures:\n")
		if cf.Pause {
			b.WriteString(`                ctx.approve("consecutive_failures", prompt = "%d nodes failed in a row, the last %s: %s. Go on?" % (failures, node, why))
                failures = 0
`)
		} else {
			b.WriteString(`                ctx.fail("task plan budget consecutive_failures: %d nodes failed in a row (max %d), the last %s: %s" % (failures, max_failures, node, why))
`)
		}
		b.WriteString("        elif node in counted:\n            failures = 0\n")
	}
	b.WriteString(`        for n in nexts:
            if n in joins:
                arrived = waiting.get(n, [])
                if node not in arrived:
                    arrived.append(node)
                waiting[n] = arrived
                if len(arrived) < len(inputs[n]):
                    continue
                waiting.pop(n)
            if n not in queue:
                queue.append(n)

    return {"outputs": out, "branches": branch, "visits": visits, "steps": steps}
`)
	return b.Bytes(), nil
}

// compactFunc is the transcript compaction the generated workflow uses.
const compactFunc = `
    def compact(turns, threshold, keep):
        # Keep the last keep turns; fold the older ones into one summary
        # turn, clipping each so that the estimated size (JSON bytes / 4)
        # fits threshold, unless the kept turns alone are over it.
        if len(json.encode(turns)) // 4 <= threshold:
            return turns
        cut = max(len(turns) - keep, 0)
        older = turns[:cut]
        recent = turns[cut:]
        if not older:
            return turns
        clip = max((threshold * 4 - len(json.encode(recent))) // len(older), 0)
        summary = None
        for _ in range(12):
            lines = [t["node"] + ": " + json.encode(t["output"])[:clip] for t in older]
            summary = {"node": "compacted", "output": "%d earlier turns, clipped:\n" % len(older) + "\n".join(lines)}
            if clip == 0 or len(json.encode([summary] + recent)) // 4 <= threshold:
                break
            clip = clip // 2
        return [summary] + recent
`

// compactParams returns threshold_tokens and preserve_recent from the
// node's compact block, else the plan's compaction_policy, else defaults.
func compactParams(node, policy map[string]any) (threshold, keep int64) {
	threshold, keep = DefaultCompactThreshold, DefaultPreserveRecent
	for _, m := range []map[string]any{policy, node} {
		if i, ok := integer(m["threshold_tokens"]); ok && i >= 0 {
			threshold = i
		}
		if i, ok := integer(m["preserve_recent"]); ok && i >= 0 {
			keep = i
		}
	}
	return threshold, keep
}

// Defaults of a compact node with neither its own settings nor a plan
// compaction_policy.
const (
	DefaultCompactThreshold = 8000
	DefaultPreserveRecent   = 8
)

// lowerStarNode writes the body of one node's branch of the scheduler, at
// 12 spaces. It sets result, and failed and why when the node failed.
func lowerStarNode(b *bytes.Buffer, p *Plan, n *Node, params map[string]string) error {
	const in = "            "
	id := q(n.ID)
	cf := p.Validation.BudgetSummary.ConsecutiveFailures
	maxFailures := ""
	if cf != nil && (len(cf.Kinds) == 0 || slices.Contains(cf.Kinds, n.Kind)) {
		maxFailures = ", max_failures = max_failures"
	}
	modelInputs := fmt.Sprintf(`{"objective": %s, "purpose": %s, "upstream": upstream, "transcript": transcript}`, q(p.Objective), q(n.Purpose))
	// A model node may choose its branch by answering a dict with a
	// "branch" string; a tool's output is not asked, since a field of
	// that name there means something else (a git branch).
	agentResult := in + "result = r[\"output\"]\n" +
		in + "if type(result) == \"dict\" and type(result.get(\"branch\")) == \"string\":\n" +
		in + "    took = result[\"branch\"]\n"
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
		fmt.Fprintf(b, "%sr = ctx.try_tool(%s, **{%s})\n", in, q(tool), strings.Join(kv, ", "))
		fmt.Fprintf(b, "%sresult = r.get(\"output\")\n%sif not r[\"ok\"]:\n%s    failed, why = True, r[\"error\"]\n", in, in, in)
	case "verify":
		var kv []string
		for _, k := range []string{"command", "expect_status", "expect_text", "assert_text"} {
			if v, ok := n.Verify[k]; ok {
				kv = append(kv, q(k)+": "+jsonLit(v))
			}
		}
		fmt.Fprintf(b, "%sr = ctx.try_tool(%s, **{%s})\n", in, q(VerifyTool), strings.Join(kv, ", "))
		fmt.Fprintf(b, "%sresult = r.get(\"output\")\n", in)
		fmt.Fprintf(b, "%sif not r[\"ok\"]:\n%s    failed, why = True, r[\"error\"]\n", in, in)
		fmt.Fprintf(b, "%selif result == None:\n%s    ctx.log(\"verify %s: not run in a dry run; taking its pass branch\")\n", in, in, n.ID)
		fmt.Fprintf(b, "%selif result[\"branch\"] == \"fail\":\n%s    failed, why = True, \"; \".join(result[\"reasons\"])\n", in, in)
	case "human_gate":
		gate, _ := str(n.HumanGate["approval_id"])
		if gate == "" {
			gate = n.ID
		}
		prompt, _ := str(n.HumanGate["prompt"])
		if prompt == "" {
			prompt = n.Purpose
		}
		fmt.Fprintf(b, "%sresult = {\"approved\": ctx.approve(%s, prompt = %s)}\n", in, q(gate), q(prompt))
	case "read_fact", "search", "context_pack":
		fmt.Fprintf(b, "%sr = ctx.agent(%s, prompt = %s, inputs = %s, tools = %s, max_iterations = %d, read_only = True%s)\n",
			in, id, q(n.Prompt), modelInputs, list(n.Tools), len(n.Tools)+1, maxFailures)
		b.WriteString(agentResult)
		fmt.Fprintf(b, "%sif not r[\"done\"]:\n%s    failed, why = True, \"stopped after \" + r[\"stopped\"]\n", in, in)
	case "agent_loop":
		iters, ok := integer(n.AgentLoop["max_iterations"])
		if !ok || iters < 1 {
			iters = DefaultMaxIterations
		}
		sentinel, _ := str(n.AgentLoop["done_sentinel"])
		fmt.Fprintf(b, "%sr = ctx.agent(%s, prompt = %s, inputs = %s, tools = %s, max_iterations = %d, done_sentinel = %s%s)\n",
			in, id, q(n.Prompt), modelInputs, list(n.Tools), iters, q(sentinel), maxFailures)
		b.WriteString(agentResult)
		fmt.Fprintf(b, "%sif not r[\"done\"]:\n%s    failed, why = True, \"stopped after \" + r[\"stopped\"] + \" without \" + %s\n", in, in, q(cmp.Or(sentinel, "an answer")))
	case "sub_agent":
		worker, _ := str(n.SubAgent["preset"])
		if worker == "" {
			worker, _ = str(n.SubAgent["worker_name"])
		}
		tools := ""
		if len(n.Tools) > 0 {
			tools = ", tools = " + list(n.Tools)
		}
		label, _ := str(n.SubAgent["task_label"])
		prompt := n.Prompt
		if label != "" {
			prompt = strings.TrimSpace("Task: " + label + "\n\n" + prompt)
		}
		fmt.Fprintf(b, "%sr = ctx.agent(%s, prompt = %s, inputs = %s%s, max_iterations = %d, worker = %s%s)\n", in, id, q(prompt), modelInputs, tools, len(n.Tools)+1, q(worker), maxFailures)
		b.WriteString(agentResult)
		fmt.Fprintf(b, "%sif not r[\"done\"]:\n%s    failed, why = True, \"stopped after \" + r[\"stopped\"]\n", in, in)
	case "workflow_map":
		conc := int64(1)
		if c, ok := integer(n.Map["max_concurrency"]); ok && c > 1 {
			conc = c
		}
		switch items := n.Map["items"].(type) {
		case []any:
			fmt.Fprintf(b, "%sitems = %s\n", in, jsonLit(items))
		default:
			// An artifact name: the output of the upstream node of
			// that name, else the first upstream output that is a list.
			ref, _ := str(items)
			fmt.Fprintf(b, "%sitems = upstream.get(%s)\n", in, q(ref))
			fmt.Fprintf(b, "%sif type(items) != \"list\":\n%s    items = ([v for v in upstream.values() if type(v) == \"list\"] + [None])[0]\n", in, in)
		}
		fmt.Fprintf(b, "%sif type(items) != \"list\":\n%s    failed, why = True, \"no list of items upstream to map over\"\n", in, in)
		fmt.Fprintf(b, "%selse:\n%s    result = ctx.map(%s, prompt = %s, items = items, inputs = %s, max_concurrency = %d)\n",
			in, in, id, q(n.Prompt), modelInputs, conc)
	case "join":
		fmt.Fprintf(b, "%sresult = None\n", in)
	case "compact":
		th, keep := compactParams(n.Compact, p.CompactionPolicy)
		fmt.Fprintf(b, "%sbefore = len(transcript)\n", in)
		fmt.Fprintf(b, "%stranscript = compact(transcript, %d, %d)\n", in, th, keep)
		fmt.Fprintf(b, "%sctx.log(\"compact %s: %%d turns to %%d, about %%d tokens (threshold %d, keeping %d)\" %% (before, len(transcript), len(json.encode(transcript)) // 4))\n", in, n.ID, th, keep)
	default:
		return fmt.Errorf("lowering %s: unknown kind %q", n.ID, n.Kind) // unreachable: Parse checked it
	}
	return nil
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

// verifyEnv lists the variables of environ a verify command gets: what
// common programs need to find each other, their configuration and a
// temporary directory, and to pick a locale and a time zone (on Windows,
// what starting a process needs). Every other variable, tokens and
// credentials among them, is dropped: a verify command is a shell, and a
// workflow granted plan.verify must not be able to print GH_TOKEN with
// it. It is the list the runtime gives commands it starts.
var verifyEnv = []string{
	"HOME", "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "LC_MESSAGES", "LOGNAME",
	"PATH", "TMPDIR", "TZ", "USER",
	"COMSPEC", "PATHEXT", "SYSTEMROOT", "TEMP", "TMP", "USERPROFILE",
}

// scrubEnviron keeps the verifyEnv variables of environ.
func scrubEnviron(environ []string) []string {
	env := []string{}
	for _, kv := range environ {
		if k, _, ok := strings.Cut(kv, "="); ok && slices.Contains(verifyEnv, k) {
			env = append(env, kv)
		}
	}
	return env
}

// Verifier returns the function behind VerifyTool: it runs args["command"]
// with sh -c in dir, with the variables of environ that verifyEnv keeps,
// and checks its exit status against
// expect_status (default 0) and its combined output against expect_text
// and assert_text (each a substring that must appear). It never fails for
// a command that ran, whatever it returned: it reports {"branch": "pass"}
// or {"branch": "fail", "reasons": […]} with the status and output, so the
// workflow takes the matching edge. It fails only when the command cannot
// be started or ctx is cancelled.
func Verifier(dir string, environ []string) func(ctx context.Context, args map[string]any) (any, error) {
	environ = scrubEnviron(environ)
	return func(ctx context.Context, args map[string]any) (any, error) {
		command, _ := str(args["command"])
		if command == "" {
			return nil, errors.New("plan.verify: no command")
		}
		want := int64(0)
		// Arguments arrive from the workflow as JSON values, a number as
		// json.Number; in-process callers may pass Go integers.
		switch v := args["expect_status"].(type) {
		case json.Number:
			if i, ok := integer(v); ok {
				want = i
			}
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
		// Its own process group, killed when the command returns: nothing
		// the check starts in the background outlives it.
		if err := proc.Run(cmd); err != nil {
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
