package tracetest

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// sessionBuilder builds one agent-neutral session from its random stream.
type sessionBuilder struct {
	r     *rand.Rand
	s     *agentSession
	proj  project
	clock int64 // ms after the session's start
	// edits is true when noise may edit files: in sessions that explore
	// without a procedure. A session asked to bump, triage or release
	// edits only to fix what its procedure broke.
	edits bool
}

// agentStreamSalt separates the sessions' random streams from the trace
// generator's, so the same seed does not give related corpora.
const agentStreamSalt = 0x3c6ef372fe94f82b

// build returns session i. It depends only on the corpus's config and
// plan, so building it again gives the same session.
func (c *AgentCorpus) build(i int) *agentSession {
	plan := &c.plans[i]
	r := streamRand(c.cfg.Seed^agentStreamSalt, i)
	s := &agentSession{id: plan.id, cwd: plan.cwd, branch: "main", start: plan.start}
	b := &sessionBuilder{r: r, s: s, edits: plan.kind == SessionExploration}
	for _, p := range projects {
		if p.cwd == plan.cwd {
			b.proj = p
		}
	}
	if r.IntN(10) < 3 {
		s.summary = sessionTitles[r.IntN(len(sessionTitles))]
	}

	if plan.kind == SessionNoTools {
		q := r.IntN(len(questionGoals))
		s.goal = questionGoals[q]
		b.turn(answers[q], nil)
		s.endMS = b.clock
		return s
	}

	// The procedure groups in order, and the gaps before, between and
	// after them that noise fills.
	var units [][]agentCall
	var goals []string
	boundary := map[int]bool{} // gap index that separates two procedures
	asks := map[int]string{}   // gap index → the request typed there
	for k, pl := range plan.plants {
		def := &procDefs[pl.proc]
		v := c.values[pl.proc][pl.n]
		if k > 0 {
			boundary[len(units)] = true
			asks[len(units)] = def.goal(v)
		}
		units = append(units, def.units(b, v, &c.Manifest.Procedures[pl.proc].Plantings[pl.n])...)
		goals = append(goals, def.goal(v))
	}
	switch len(goals) {
	case 0:
		s.goal = exploreGoals[plan.explore]
	default:
		// The person asks for the first procedure at the start and for
		// each next one when the one before is done, as people do.
		s.goal = goals[0]
	}

	procCalls := 0
	for _, u := range units {
		procCalls += len(u)
	}
	target := c.cfg.Calls*4/5 + r.IntN(c.cfg.Calls*2/5+1)
	noise := max(target-procCalls, 0)

	// Most exploring happens before the first step and after the last;
	// some between steps, where a miner must look past it.
	weights := make([]int, len(units)+1)
	total := 0
	for g := range weights {
		switch {
		case g == 0:
			weights[g] = 4 * max(len(units), 1)
		case g == len(units):
			weights[g] = 2 * max(len(units), 1)
		case boundary[g]:
			weights[g] = 3
		default:
			weights[g] = 1
		}
		total += weights[g]
	}
	gaps := make([]int, len(weights))
	for range noise {
		x := r.IntN(total)
		g := 0
		for x >= weights[g] {
			x -= weights[g]
			g++
		}
		gaps[g]++
	}

	for g, n := range gaps {
		inner := g > 0 && g < len(units) && !boundary[g]
		first := len(s.turns)
		b.noise(n, inner)
		if g < len(units) {
			for _, call := range units[g] {
				b.turn(stepTexts[r.IntN(len(stepTexts))], []agentCall{call})
			}
		}
		if ask := asks[g]; ask != "" && first < len(s.turns) {
			s.turns[first].prompt = ask
		}
	}
	if len(plan.plants) > 0 {
		b.turn("Done. "+s.goal, nil)
	} else {
		b.turn(findings[r.IntN(len(findings))], nil)
	}
	s.endMS = b.clock
	return s
}

// turn appends a model turn that says text and makes calls, timing the
// model's latency and each call in turn.
func (b *sessionBuilder) turn(text string, calls []agentCall) {
	s := b.s
	k := len(s.turns)
	t := agentTurn{
		text:    text,
		startMS: b.clock,
		latMS:   int64(600 + b.r.IntN(5400)),
		input:   8000 + 420*k + b.r.IntN(600),
		output:  30 + b.r.IntN(350),
	}
	t.cacheRead = max(t.input-1500-b.r.IntN(1500), 0)
	if len(calls) > 0 && b.r.IntN(10) < 6 {
		t.text = "" // most tool turns say nothing
	}
	b.clock += t.latMS
	for i := range calls {
		c := &calls[i]
		c.startMS = b.clock
		b.clock += c.durMS + int64(20+b.r.IntN(200))
	}
	t.calls = calls
	s.turns = append(s.turns, t)
}

// noise appends n noise calls: mostly reads and searches, some unrelated
// builds, and outside a procedure's steps (not inner) in a session that
// only explores, edits. Reads are sometimes batched into one turn, as
// models call tools in parallel.
func (b *sessionBuilder) noise(n int, inner bool) {
	for n > 0 {
		c := b.noiseCall(inner)
		batch := []agentCall{c}
		n--
		if c.kind != callShell && c.kind != callEdit && c.kind != callPlan {
			for n > 0 && len(batch) < 3 && b.r.IntN(10) < 3 {
				batch = append(batch, b.noiseOf([]callKind{callRead, callSearch, callList}[b.r.IntN(3)], ""))
				n--
			}
		}
		b.turn(noiseTexts[b.r.IntN(len(noiseTexts))], batch)
	}
}

// noiseCall draws one noise call.
func (b *sessionBuilder) noiseCall(inner bool) agentCall {
	x := b.r.IntN(100)
	switch {
	case x < 30:
		return b.noiseOf(callRead, "")
	case x < 46:
		return b.noiseOf(callSearch, "")
	case x < 51:
		return b.noiseOf(callGlob, "")
	case x < 58:
		return b.noiseOf(callList, "")
	case x < 63:
		return b.noiseOf(callPlan, "")
	case x < 86:
		return b.observeShell()
	case x < 93 || inner:
		return b.unrelatedShell()
	case !b.edits:
		return b.observeShell()
	default:
		return b.noiseOf(callEdit, "")
	}
}

// noiseOf returns a call of kind k on path (a random file when empty).
func (b *sessionBuilder) noiseOf(k callKind, path string) agentCall {
	r := b.r
	if path == "" {
		path = repoFiles[r.IntN(len(repoFiles))]
	}
	c := agentCall{kind: k, key: randKey(r, 24), path: path, durMS: int64(3 + r.IntN(60))}
	switch k {
	case callRead:
		c.output = fileText(r, path)
	case callSearch:
		c.pattern = searchPatterns[r.IntN(len(searchPatterns))]
		c.path = "internal"
		c.files = b.someFiles(1 + r.IntN(4))
	case callGlob:
		c.pattern = globPatterns[r.IntN(len(globPatterns))]
		c.path = ""
		c.files = b.someFiles(2 + r.IntN(8))
	case callList:
		c.path = repoDirs[r.IntN(len(repoDirs))]
		c.files = b.someFiles(3 + r.IntN(6))
	case callPlan:
		c.path = ""
		for i := range 2 + r.IntN(3) {
			status := "pending"
			switch {
			case i == 0:
				status = "completed"
			case i == 1:
				status = "in_progress"
			}
			c.plan = append(c.plan, planItem{planSteps[r.IntN(len(planSteps))], status})
		}
	case callEdit:
		n := r.IntN(200)
		c.oldText = fmt.Sprintf("return nil, err // %d", n)
		c.newText = fmt.Sprintf("return nil, fmt.Errorf(\"load %d: %%w\", err)", n)
	}
	return c
}

// someFiles returns n repository files.
func (b *sessionBuilder) someFiles(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = repoFiles[b.r.IntN(len(repoFiles))]
	}
	return out
}

// shell returns a shell call running command with the given output and
// exit status.
func (b *sessionBuilder) shell(command, output string, exit int) agentCall {
	return agentCall{kind: callShell, key: randKey(b.r, 24), command: command, output: output, exit: exit, durMS: int64(80 + b.r.IntN(4000))}
}

// goTest is the test command of a bump, sometimes piped through tail: a
// pipeline whose later stage only filters.
func (b *sessionBuilder) goTest() string {
	if b.r.IntN(4) == 0 {
		return "go test ./... | tail -n 20"
	}
	return "go test ./..."
}

// observeShell returns a read-only shell command: an observation.
func (b *sessionBuilder) observeShell() agentCall {
	r := b.r
	file := repoFiles[r.IntN(len(repoFiles))]
	switch r.IntN(8) {
	case 0:
		return b.shell("git status", "On branch main\nnothing to commit, working tree clean\n", 0)
	case 1:
		return b.shell("git status --short", " M "+file+"\n", 0)
	case 2:
		var log strings.Builder
		for range 5 {
			fmt.Fprintf(&log, "%s %s\n", b.sha(7), commitSubjects[r.IntN(len(commitSubjects))])
		}
		return b.shell("git log --oneline -5", log.String(), 0)
	case 3:
		return b.shell("git diff --stat", fmt.Sprintf(" %s | %d ++--\n 1 file changed\n", file, 2+r.IntN(20)), 0)
	case 4:
		return b.shell("cat "+file, fileText(r, file), 0)
	case 5:
		return b.shell(fmt.Sprintf("sed -n '1,%dp' %s", 40+r.IntN(160), file), fileText(r, file), 0)
	case 6:
		return b.shell("ls "+repoDirs[r.IntN(len(repoDirs))], strings.Join(b.someFiles(4), "\n")+"\n", 0)
	default:
		return b.shell(fmt.Sprintf("rg -n %s internal", dq(searchPatterns[r.IntN(len(searchPatterns))])), fmt.Sprintf("%s:%d:\t// %s\n", file, 1+r.IntN(300), searchPatterns[r.IntN(len(searchPatterns))]), 0)
	}
}

// unrelatedShell returns a command that changes nothing the procedures
// care about but is not an observation either: builds, vets, linters,
// sometimes chained or prefixed with cd, sometimes failing.
func (b *sessionBuilder) unrelatedShell() agentCall {
	r := b.r
	switch r.IntN(6) {
	case 0:
		if r.IntN(5) == 0 {
			return b.shell("go build ./...", fmt.Sprintf("# %s/internal/store\ninternal/store/cache.go:%d:2: undefined: evict\n", b.proj.module, 10+r.IntN(200)), 1)
		}
		return b.shell("go build ./...", "", 0)
	case 1:
		return b.shell("go vet ./...", "", 0)
	case 2:
		return b.shell("go build ./... && go vet ./...", "", 0)
	case 3:
		return b.shell("cd "+b.s.cwd+" && go build ./...", "", 0)
	case 4:
		return b.shell("make lint", "golangci-lint run ./...\n0 issues.\n", 0)
	default:
		return b.shell("gofmt -l .", "", 0)
	}
}

// sha returns n random hex digits.
func (b *sessionBuilder) sha(n int) string {
	const hex = "0123456789abcdef"
	out := make([]byte, n)
	for i := range out {
		out[i] = hex[b.r.IntN(16)]
	}
	return string(out)
}

// fileText returns plausible contents of path.
func fileText(r *rand.Rand, path string) string {
	switch {
	case path == "go.mod":
		return "module example.com/app\n\ngo 1.24\n\nrequire (\n\tgolang.org/x/net v0.30.0\n\tgithub.com/spf13/cobra v1.8.1\n)\n"
	case strings.HasSuffix(path, ".go"):
		dir, _, _ := strings.Cut(path[strings.Index(path, "/")+1:], "/")
		pkg := dir
		return fmt.Sprintf("package %s\n\nimport (\n\t\"context\"\n\t\"fmt\"\n)\n\n// New returns a ready %s.\nfunc New(ctx context.Context) (*T, error) {\n\tif err := ctx.Err(); err != nil {\n\t\treturn nil, fmt.Errorf(\"new: %%w\", err)\n\t}\n\treturn &T{limit: %d}, nil\n}\n", pkg, pkg, 1+r.IntN(100))
	default:
		return fmt.Sprintf("# %s\n\nSee docs/architecture.md. Revision %d.\n", path, r.IntN(1000))
	}
}

var (
	sessionTitles = []string{"Dependency bump and PR", "Flaky test investigation", "Issue triage", "Release v-next", "Code tour of the store package"}
	answers       = []string{
		"context.WithoutCancel returns a context that keeps the parent's values but is never cancelled; use it for work that must outlive the request, such as cleanup.",
		"go mod tidy makes go.mod and go.sum match the imports; go get -u upgrades dependencies to newer versions.",
		"Declare a slice of cases, loop over it and call t.Run with each case's name.",
		"Use %w when callers may need errors.Is or errors.As on the cause; %v when the cause is an implementation detail.",
	}
	findings       = []string{"Here is what I found.", "The flake comes from a shared listener between subtests.", "Nothing swallows errors except one deferred Close.", "The defaults live in internal/config/config.go."}
	stepTexts      = []string{"", "Next step.", "Running it now.", "That worked; continuing.", "Let me run the next command."}
	noiseTexts     = []string{"Let me look around first.", "Checking the code.", "Let me read that file.", "Searching for where this is used.", ""}
	planSteps      = []string{"Read the module file", "Update the dependency", "Run the tests", "Open the pull request", "Reproduce the issue", "Write the release notes"}
	commitSubjects = []string{"Fix retry deadline", "Add cache metrics", "Refactor config loading", "Bump golang.org/x/sys", "Document the store package"}
)
