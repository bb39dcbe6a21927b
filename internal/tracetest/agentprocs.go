package tracetest

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// procStep is one step of a planted procedure.
type procStep struct {
	head string
	// varying are the step's parameter keys that vary between plantings;
	// from maps each to the named value (procDef.draw) it takes.
	varying []string
	from    map[string]string
}

// procDef is a planted procedure: its steps, how its varying values are
// drawn, and how one planting is written as tool calls.
type procDef struct {
	name  string
	steps []procStep
	// retry and compound say whether some plantings retry a step after a
	// failure and whether some chain two steps with &&.
	retry, compound bool
	// draw returns the named values of planting n.
	draw func(r *rand.Rand, n int) map[string]string
	// goal is the user's prompt asking for the procedure.
	goal func(v map[string]string) string
	// units writes the planting as groups of calls. The calls of one
	// group stay together (a retry: the failing run, the fix, the run
	// that passes); noise may fall between groups.
	units func(b *sessionBuilder, v map[string]string, pl *AgentPlanting) [][]agentCall
}

// procDefs are the planted procedures. Their command heads are disjoint
// from the noise's, except the observations (git status, git log…) that
// are never steps, so noise never completes a procedure by chance.
var procDefs = []procDef{
	{
		name: "bump_go_dependency",
		steps: []procStep{
			{head: "git checkout", varying: []string{"new_branch"}, from: map[string]string{"new_branch": "branch"}},
			{head: "go get", varying: []string{"module", "version"}, from: map[string]string{"module": "module", "version": "version"}},
			{head: "go mod tidy"},
			{head: "go test"},
			{head: "git add"},
			{head: "git commit", varying: []string{"message"}, from: map[string]string{"message": "message"}},
			{head: "gh pr create", varying: []string{"body", "title"}, from: map[string]string{"title": "title", "body": "body"}},
		},
		retry: true, compound: true,
		draw: func(r *rand.Rand, n int) map[string]string {
			mod := modules[r.IntN(len(modules))]
			major := 0
			if strings.HasSuffix(mod, "/v5") || strings.Contains(mod, "grpc") || strings.Contains(mod, "cobra") || strings.Contains(mod, "otel") {
				major = 1
			}
			ver := fmt.Sprintf("v%d.%d.%d", major, 1+r.IntN(60), r.IntN(10))
			msg := fmt.Sprintf("Bump %s to %s", mod, ver)
			return map[string]string{
				"module": mod, "version": ver,
				"branch":  fmt.Sprintf("deps/%s-%s", modLast(mod), ver),
				"message": msg, "title": msg,
				"body": fmt.Sprintf("Updates %s to %s. go mod tidy and go test ./... pass.", mod, ver),
			}
		},
		goal: func(v map[string]string) string {
			return fmt.Sprintf("Bump %s to %s, make sure the tests pass and open a PR.", v["module"], v["version"])
		},
		units: func(b *sessionBuilder, v map[string]string, pl *AgentPlanting) [][]agentCall {
			tidy := "go mod tidy"
			if b.r.IntN(4) == 0 {
				tidy = "cd " + b.s.cwd + " && go mod tidy"
			}
			units := [][]agentCall{
				{b.shell("git checkout -b "+v["branch"], fmt.Sprintf("Switched to a new branch '%s'\n", v["branch"]), 0)},
				{b.shell("go get "+v["module"]+"@"+v["version"], fmt.Sprintf("go: upgraded %s v0.%d.0 => %s\n", v["module"], b.r.IntN(30), v["version"]), 0)},
				{b.shell(tidy, "", 0)},
			}
			var test []agentCall
			if pl.Retried {
				file := repoFiles[9+b.r.IntN(5)] // a file under internal/
				// Not piped: through | tail the pipeline would exit 0.
				test = append(test, b.shell("go test ./...", fmt.Sprintf("--- FAIL: TestParse (0.00s)\n    parse_test.go:%d: got %d, want %d\nFAIL\nFAIL\t%s/internal/parse\t0.0%02ds\nFAIL\n", 20+b.r.IntN(80), b.r.IntN(9), 9+b.r.IntN(9), b.proj.module, b.r.IntN(99)), 1))
				if b.r.IntN(2) == 0 {
					test = append(test, b.noiseOf(callRead, file))
				}
				test = append(test, b.noiseOf(callEdit, file))
			}
			test = append(test, b.shell(b.goTest(), fmt.Sprintf("ok  \t%s/internal/parse\t0.0%02ds\nok  \t%s/internal/store\t0.%03ds\n", b.proj.module, b.r.IntN(99), b.proj.module, b.r.IntN(999)), 0))
			units = append(units, test)
			commit := fmt.Sprintf("[%s %s] %s\n 2 files changed, 4 insertions(+), 4 deletions(-)\n", v["branch"], b.sha(7), v["message"])
			if pl.Compound {
				units = append(units, []agentCall{b.shell("git add go.mod go.sum && git commit -m "+dq(v["message"]), commit, 0)})
			} else {
				units = append(units, []agentCall{b.shell("git add go.mod go.sum", "", 0)}, []agentCall{b.shell("git commit -m "+dq(v["message"]), commit, 0)})
			}
			units = append(units, []agentCall{b.shell("gh pr create --title "+dq(v["title"])+" --body "+dq(v["body"]),
				fmt.Sprintf("https://%s/pull/%d\n", b.proj.module, 100+b.r.IntN(900)), 0)})
			return units
		},
	},
	{
		// gh issue view comes first in every planting, but it only reads:
		// it is an observation, not a step.
		name: "triage_issue",
		steps: []procStep{
			{head: "gh issue edit", varying: []string{"arg1"}, from: map[string]string{"arg1": "issue"}},
			{head: "gh issue comment", varying: []string{"arg1", "body"}, from: map[string]string{"arg1": "issue", "body": "comment"}},
		},
		draw: func(r *rand.Rand, n int) map[string]string {
			// The planting number keeps every issue number distinct.
			issue := fmt.Sprint(1000 + 37*n + r.IntN(37))
			return map[string]string{
				"issue":   issue,
				"comment": fmt.Sprintf("Reproduced on main at %07x: %s. Labelled as a bug.", r.Uint32()&0xfffffff, symptoms[r.IntN(len(symptoms))]),
			}
		},
		goal: func(v map[string]string) string {
			return fmt.Sprintf("Triage issue #%s: check whether it reproduces, label it and leave a comment.", v["issue"])
		},
		units: func(b *sessionBuilder, v map[string]string, _ *AgentPlanting) [][]agentCall {
			url := fmt.Sprintf("https://%s/issues/%s", b.proj.module, v["issue"])
			return [][]agentCall{
				{b.shell("gh issue view "+v["issue"], fmt.Sprintf("%s\nstate:\tOPEN\nauthor:\tuser%d\nlabels:\t\n--\n%s when the server restarts.\n", symptoms[b.r.IntN(len(symptoms))], b.r.IntN(500), symptoms[b.r.IntN(len(symptoms))]), 0)},
				{b.shell("gh issue edit "+v["issue"]+" --add-label bug", url+"\n", 0)},
				{b.shell("gh issue comment "+v["issue"]+" --body "+dq(v["comment"]), url+fmt.Sprintf("#issuecomment-%d\n", 1000000+b.r.IntN(9000000)), 0)},
			}
		},
	},
	{
		name: "cut_release",
		steps: []procStep{
			{head: "git tag", varying: []string{"arg1"}, from: map[string]string{"arg1": "tag"}},
			{head: "git push", varying: []string{"arg2"}, from: map[string]string{"arg2": "tag"}},
			{head: "gh release create", varying: []string{"arg1", "notes", "title"}, from: map[string]string{"arg1": "tag", "title": "tag", "notes": "notes"}},
		},
		draw: func(r *rand.Rand, n int) map[string]string {
			major, minor, patch := r.IntN(3), 1+n, r.IntN(10)
			tag := fmt.Sprintf("v%d.%d.%d", major, minor, patch)
			return map[string]string{
				"tag":   tag,
				"notes": fmt.Sprintf("Release %s: %d changes since v%d.%d.0.", tag, 2+r.IntN(30), major, minor),
			}
		},
		goal: func(v map[string]string) string {
			return fmt.Sprintf("Cut release %s: tag it, push the tag and create the GitHub release.", v["tag"])
		},
		units: func(b *sessionBuilder, v map[string]string, _ *AgentPlanting) [][]agentCall {
			tag := v["tag"]
			return [][]agentCall{
				{b.shell("git tag "+tag, "", 0)},
				{b.shell("git push origin "+tag, fmt.Sprintf("To github.com:%s.git\n * [new tag]         %s -> %s\n", strings.TrimPrefix(b.proj.module, "github.com/"), tag, tag), 0)},
				{b.shell("gh release create "+tag+" --title "+dq(tag)+" --notes "+dq(v["notes"]), fmt.Sprintf("https://%s/releases/tag/%s\n", b.proj.module, tag), 0)},
			}
		},
	},
}

var symptoms = []string{
	"the cache returns stale rows", "shutdown hangs for 30s", "retries ignore the deadline",
	"config reload drops the TLS settings", "the parser rejects trailing commas",
}
