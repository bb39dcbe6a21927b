package plan

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/crystallize-dev/crystallize/internal/trace"
)

// graph runs the checks that need the whole graph: reachability, cycles,
// depth and the budgets. It sees only the edges between known nodes, so
// a dangling edge (already an error) cannot produce a second, confusing
// one here.
func (c *checker) graph() {
	succ := map[string][]edge{}
	for _, e := range c.edges {
		succ[e.from] = append(succ[e.from], e)
	}
	c.cycles(succ)

	entry, _ := str(c.root["entry"])
	reach := map[string]bool{}
	depth := 0
	if c.isNode(entry) {
		reach = reachable(entry, succ)
		depth = longestPath(entry, succ)
		for _, id := range c.ids {
			if !reach[id] {
				c.v.warnf(CodeNodeUnreachable, child("$.nodes", id), "no path from the entry %q reaches this node", entry)
			}
		}
	}
	c.v.GraphStats.ReachableCount = len(reach)
	c.v.GraphStats.MaxDepth = depth

	// Joins wait for all their inputs; one input makes the barrier a no-op
	// and usually means an edge is missing.
	inputs := map[string]map[string]bool{}
	for _, e := range c.edges {
		if inputs[e.to] == nil {
			inputs[e.to] = map[string]bool{}
		}
		inputs[e.to][e.from] = true
	}
	for _, id := range c.ids {
		if c.kinds[id] == "join" && len(inputs[id]) < 2 {
			c.v.warnf(CodeJoinSingleInput, child("$.nodes", id), "a join with %d input(s) synchronizes nothing", len(inputs[id]))
		}
	}

	// Static bounds count every node the run can reach once: nodes that
	// cannot be reached never run, and a node that is never reached cannot
	// spend. When the entry is broken (already an error), count every node.
	var steps, tools, models int64
	for _, id := range c.ids {
		if len(reach) > 0 && !reach[id] {
			continue
		}
		n, _ := obj(c.nodes[id])
		s, t, m := bounds(n, c.kinds[id])
		steps, tools, models = satAdd(steps, s), satAdd(tools, t), satAdd(models, m)
	}
	c.budgets(int64(len(c.ids)), int64(depth), steps, tools, models)
}

// bounds returns a static upper bound on the steps (node runs), tool
// calls and model calls of one visit to a node, from its kind, its tools
// and its loop settings. plan run lowers each kind so that it cannot
// spend more (an agent is offered no tools on its last turn, so it makes
// at most one tool call per turn but the last), and enforces the plan's
// ceilings again at run time:
//
//	read_fact, search, context_pack  1 step; with n tools, n+1 model turns and n tool calls
//	sub_agent                        the same, unless its worker preset sets max_iterations,
//	                                 which only the run knows
//	agent_loop                       1 step; max_iterations (default 8) model turns and,
//	                                 with tools, max_iterations-1 tool calls
//	workflow_map                     1 step; one model turn per item (len(map.items) when a
//	                                 list, else 1: a fan-out over an artifact is bounded at
//	                                 run time), no tools
//	verify, deterministic_command    1 step, 1 tool call, no model
//	human_gate, join, compact        1 step, nothing else (compaction needs no model)
//
// A loop through a branch edge may visit nodes again; the static bound
// counts one pass, and the run-time budgets bound the rest.
func bounds(n map[string]any, kind string) (steps, tools, models int64) {
	var nt int64
	seen := map[string]bool{}
	for _, t := range strs(n["tools"]) {
		if !seen[t] {
			seen[t] = true
			nt++
		}
	}
	switch kind {
	case "read_fact", "search", "context_pack", "sub_agent":
		return 1, nt, satAdd(nt, 1)
	case "agent_loop":
		it := int64(DefaultMaxIterations)
		if al, ok := obj(n["agent_loop"]); ok {
			if i, ok := integer(al["max_iterations"]); ok && i >= 1 {
				it = i
			}
		}
		if nt == 0 {
			return 1, 0, it
		}
		return 1, it - 1, it
	case "workflow_map":
		items := int64(1)
		if m, ok := obj(n["map"]); ok {
			if l, ok := m["items"].([]any); ok && len(l) > 0 {
				items = int64(len(l))
			}
		}
		return 1, 0, items
	case "verify", "deterministic_command":
		return 1, 1, 0
	case "human_gate", "join", "compact":
		return 1, 0, 0
	}
	return 0, 0, 0
}

func satAdd(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// budgets checks the declared ceilings and compares the static ones with
// the plan's bounds. A ceiling that is not a valid number is reported and
// not compared: comparing against a default the author did not intend
// would only add noise.
func (c *checker) budgets(nodes, depth, steps, tools, models int64) {
	bm, _ := obj(c.root["budgets"])
	s := &c.v.BudgetSummary
	ceiling := func(name, code string, minimum, def, used int64, what string) Budget {
		b := Budget{Limit: def, Used: used, Default: true}
		path := "$.budgets." + name
		if raw, has := bm[name]; has {
			i, ok := integer(raw)
			if !ok || i < minimum {
				c.v.errorf(code, path, "%s must be an integer of at least %d, got %s", name, minimum, jsonText(raw))
				return b
			}
			b.Limit, b.Default = i, false
		}
		if used > b.Limit {
			suffix := ""
			if b.Default {
				suffix = " (the default)"
			}
			c.v.errorf(code, path, "%s %d; the budget allows %d%s", what, used, b.Limit, suffix)
		}
		return b
	}
	s.MaxNodes = ceiling("max_nodes", CodeBudgetMaxNodes, 1, DefaultMaxNodes, nodes, "node count is")
	s.MaxDepth = ceiling("max_depth", CodeBudgetMaxDepth, 1, DefaultMaxDepth, depth, "the longest path from the entry has nodes:")
	s.MaxSteps = ceiling("max_steps", CodeBudgetMaxSteps, 1, DefaultMaxSteps, steps, "the reachable nodes take at most steps:")
	s.MaxToolCalls = ceiling("max_tool_calls", CodeBudgetMaxToolCalls, 0, DefaultMaxToolCalls, tools, "the reachable nodes make at most tool calls:")
	s.MaxModelCalls = ceiling("max_model_calls", CodeBudgetMaxModelCalls, 0, DefaultMaxModelCalls, models, "the reachable nodes make at most model calls:")

	if raw, has := bm["wall_clock_ms"]; has {
		if i, ok := integer(raw); ok && i >= 1 {
			s.WallClockMS = &i
		} else {
			c.v.errorf(CodeBudgetWallClock, "$.budgets.wall_clock_ms", "wall_clock_ms must be a positive integer, got %s", jsonText(raw))
		}
	}
	if raw, has := bm["total_cost_usd"]; has {
		if f, ok := num(raw); ok && f > 0 {
			s.TotalCostUSD = &f
		} else {
			c.v.errorf(CodeBudgetTotalCost, "$.budgets.total_cost_usd", "total_cost_usd must be a positive number, got %s", jsonText(raw))
		}
	}
	if raw, has := bm["consecutive_failures"]; has {
		c.consecutiveFailures(raw)
	}
}

func (c *checker) consecutiveFailures(raw any) {
	const path = "$.budgets.consecutive_failures"
	cf, ok := obj(raw)
	if !ok {
		c.v.errorf(CodeBudgetFailures, path, "consecutive_failures must be an object {max, kinds, pause}, got %s", typeName(raw))
		return
	}
	out := &ConsecutiveFailuresBudget{Kinds: []string{}}
	bad := false
	if m, ok := integer(cf["max"]); ok && m >= 1 {
		out.Max = m
	} else {
		bad = true
		if cf["max"] == nil {
			c.v.errorf(CodeBudgetFailuresMax, path+".max", "missing; how many failed steps in a row stop the run")
		} else {
			c.v.errorf(CodeBudgetFailuresMax, path+".max", "max must be a positive integer, got %s", jsonText(cf["max"]))
		}
	}
	if rk, has := cf["kinds"]; has {
		list, ok := rk.([]any)
		switch {
		case !ok || len(list) == 0:
			bad = true
			c.v.errorf(CodeBudgetFailuresKinds, path+".kinds", "kinds must be a non-empty list of node kinds, got %s", jsonText(rk))
		default:
			for i, e := range list {
				k, isStr := str(e)
				switch {
				case isStr && slices.Contains(strs(list[:i]), k):
					bad = true
					c.v.errorf(CodeBudgetFailuresKinds, path+".kinds", "kind %s is listed twice", quoteAny(e))
				case !slices.Contains(Kinds, k):
					bad = true
					c.v.errorf(CodeBudgetFailuresKind, trace.Element(path+".kinds", i), "unknown kind %s; want one of %s", quoteAny(e), strings.Join(Kinds, ", "))
				default:
					out.Kinds = append(out.Kinds, k)
				}
			}
		}
	}
	if rp, has := cf["pause"]; has {
		p, ok := rp.(bool)
		if !ok {
			bad = true
			c.v.errorf(CodeBudgetFailuresPause, path+".pause", "pause must be true (wait for approval) or false (fail the run), got %s", jsonText(rp))
		}
		out.Pause = p
	}
	if !bad {
		c.v.BudgetSummary.ConsecutiveFailures = out
	}
}

// cycles reports every cycle made only of unconditional edges: such a
// loop has no way out, so a run entering it could only end by exhausting
// a budget. A cycle through a branch edge is a retry loop and is allowed.
// It finds the strongly connected components of the unconditional graph
// (Tarjan, O(V+E)) and reports each one that has more than one node or a
// self-loop, at its first edge in file order.
func (c *checker) cycles(succ map[string][]edge) {
	index := map[string]int{}
	low := map[string]int{}
	onStack := map[string]bool{}
	var stack []string
	comp := map[string]int{}
	ncomp := 0
	var visit func(u string)
	visit = func(u string) {
		index[u] = len(index)
		low[u] = index[u]
		stack = append(stack, u)
		onStack[u] = true
		for _, e := range succ[u] {
			if e.branch != "" {
				continue
			}
			if _, seen := index[e.to]; !seen {
				visit(e.to)
				low[u] = min(low[u], low[e.to])
			} else if onStack[e.to] {
				low[u] = min(low[u], index[e.to])
			}
		}
		if low[u] == index[u] {
			for {
				w := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				onStack[w] = false
				comp[w] = ncomp
				if w == u {
					break
				}
			}
			ncomp++
		}
	}
	for _, id := range c.ids {
		if _, seen := index[id]; !seen {
			visit(id)
		}
	}
	members := map[int][]string{}
	for _, id := range c.ids {
		members[comp[id]] = append(members[comp[id]], id)
	}
	reported := map[int]bool{}
	for _, e := range c.edges { // file order
		if e.branch != "" || comp[e.from] != comp[e.to] || reported[comp[e.from]] {
			continue
		}
		reported[comp[e.from]] = true
		ids := members[comp[e.from]]
		var what string
		if len(ids) == 1 {
			what = fmt.Sprintf("node %q loops to itself", ids[0])
		} else {
			what = "nodes " + quoteList(ids) + " form a cycle"
		}
		c.v.errorf(CodeCycle, trace.Element("$.edges", e.index), "%s with no branch edge to leave it", what)
	}
}

// reachable returns the nodes reachable from entry, entry included.
func reachable(entry string, succ map[string][]edge) map[string]bool {
	seen := map[string]bool{entry: true}
	queue := []string{entry}
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		for _, e := range succ[u] {
			if !seen[e.to] {
				seen[e.to] = true
				queue = append(queue, e.to)
			}
		}
	}
	return seen
}

// longestPath returns the most nodes on a path from entry. Finding the
// longest simple path is NP-hard once there are cycles, so the search
// drops the edges that close a cycle (the back edges of a depth-first
// search from the entry, visited in file order, hence deterministic) and
// takes the longest path of the acyclic rest in O(V+E): a loop is
// followed once, which is also how the step bounds count it.
func longestPath(entry string, succ map[string][]edge) int {
	const (
		white = iota
		grey
		black
	)
	color := map[string]int{}
	depth := map[string]int{}
	var visit func(u string)
	visit = func(u string) {
		color[u] = grey
		best := 0
		for _, e := range succ[u] {
			switch color[e.to] {
			case white:
				visit(e.to)
			case grey:
				continue // a back edge: it closes a cycle
			}
			best = max(best, depth[e.to])
		}
		depth[u] = best + 1
		color[u] = black
	}
	visit(entry)
	return depth[entry]
}

func quoteList(ids []string) string {
	q := make([]string, len(ids))
	for i, id := range ids {
		q[i] = fmt.Sprintf("%q", id)
	}
	return strings.Join(q, ", ")
}

// jsonText shows a decoded JSON value as the author wrote it, near enough
// for a message.
func jsonText(v any) string {
	switch x := v.(type) {
	case string:
		return fmt.Sprintf("%q", x)
	case nil:
		return "null"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprint(v)
}
