package main

import (
	"slices"
	"strings"
)

// Event is one thing an agent did that the detector looks at: a shell
// command named by its head, or a file edit. Reads, searches and the
// agent's own bookkeeping are not events: no named procedure has them as
// a step, and leaving them out cannot break an ordered subsequence.
type Event struct {
	// Head names a command: "git push", "go test", "pytest" (see
	// commandHead). Empty for an edit.
	Head string
	// Operand says the command names something after its head
	// ("npm install left-pad", "git tag v1.2.0").
	Operand bool
	// Edit marks a file edit (Claude Code's Edit, Write, MultiEdit; Codex's
	// apply_patch; a trace's file_mutation).
	Edit bool
}

func (e Event) String() string {
	if e.Edit {
		return "edit"
	}
	return e.Head
}

// A Step is one step of a named procedure: a test an event passes.
type Step struct {
	Name  string
	Match func(Event) bool
}

// A Procedure is a procedure a person would name. It occurs in a session
// when the events of one of its alternatives occur there in order, with
// any other events between them.
type Procedure struct {
	Name         string
	Alternatives [][]Step
}

func head(names ...string) func(Event) bool {
	return func(e Event) bool { return !e.Edit && slices.Contains(names, e.Head) }
}

func headWithOperand(names ...string) func(Event) bool {
	return func(e Event) bool { return !e.Edit && e.Operand && slices.Contains(names, e.Head) }
}

func isEdit(e Event) bool { return e.Edit }

// testFamilies maps the heads that run a project's tests to the name of
// their family: "yarn test" and "npm run test" run the same tests as
// "npm test". test-fix-retest asks for the same family twice.
var testFamilies = map[string]string{
	"go test":       "go test",
	"pytest":        "pytest",
	"npm test":      "npm test",
	"npm t":         "npm test",
	"npm run test":  "npm test",
	"yarn test":     "npm test",
	"yarn run test": "npm test",
	"pnpm test":     "npm test",
	"pnpm run test": "npm test",
	"bun test":      "npm test",
	"bun run test":  "npm test",
	"cargo test":    "cargo test",
}

// testFamily is the test family of an event, or "".
func testFamily(e Event) string {
	if e.Edit {
		return ""
	}
	return testFamilies[e.Head]
}

func inFamily(f string) func(Event) bool {
	return func(e Event) bool { return testFamily(e) == f }
}

func anyTest(e Event) bool { return testFamily(e) != "" }

// Procedures are the procedures the benchmark counts, in report order.
var Procedures = procedures()

func procedures() []Procedure {
	var retest [][]Step
	for _, f := range []string{"go test", "pytest", "npm test", "cargo test"} {
		retest = append(retest, []Step{{f, inFamily(f)}, {"edit", isEdit}, {f, inFamily(f)}})
	}
	bump := Step{"dependency change", func(e Event) bool {
		return headWithOperand("go get", "npm install", "npm i", "npm add", "yarn add", "pnpm add", "pnpm install", "bun add",
			"cargo add", "pip install", "pip3 install", "uv add", "poetry add")(e) ||
			head("cargo update", "npm update", "yarn upgrade", "pnpm update", "go mod edit")(e)
	}}
	verify := Step{"tidy or test", func(e Event) bool {
		return head("go mod tidy", "npm install", "npm i", "npm ci", "yarn install", "pnpm install", "uv sync", "poetry lock", "cargo build", "cargo check", "go build")(e) || anyTest(e)
	}}
	return []Procedure{
		{Name: "commit-push", Alternatives: [][]Step{{{"git add", head("git add")}, {"git commit", head("git commit")}, {"git push", head("git push")}}}},
		{Name: "commit-push-pr", Alternatives: [][]Step{{{"git commit", head("git commit")}, {"git push", head("git push")}, {"gh pr create", head("gh pr create")}}}},
		{Name: "test-fix-retest", Alternatives: retest},
		{Name: "dependency-bump", Alternatives: [][]Step{{bump, verify, {"git commit", head("git commit")}}}},
		{Name: "release", Alternatives: [][]Step{
			{{"git tag", headWithOperand("git tag")}, {"git push", head("git push")}},
			// "npm version patch" bumps package.json, commits and tags;
			// pushing the tag is the release.
			{{"npm version", headWithOperand("npm version", "yarn version", "pnpm version")}, {"git push", head("git push")}},
			{{"gh release create", head("gh release create")}},
		}},
	}
}

// occurs reports whether steps occur in events in order (an ordered
// subsequence: other events may come between), and at which positions.
// Taking the earliest event for each step is enough: if any choice of
// positions exists, the earliest-first choice exists too.
func occurs(steps []Step, events []Event) ([]int, bool) {
	pos := make([]int, 0, len(steps))
	i := 0
	for _, s := range steps {
		for i < len(events) && !s.Match(events[i]) {
			i++
		}
		if i == len(events) {
			return nil, false
		}
		pos = append(pos, i)
		i++
	}
	return pos, true
}

// Occurs reports whether p occurs in events through any alternative.
func (p Procedure) Occurs(events []Event) bool {
	for _, alt := range p.Alternatives {
		if _, ok := occurs(alt, events); ok {
			return true
		}
	}
	return false
}

// OccursPartly reports whether all but one step of some alternative of
// three or more steps occur in events in order: "git commit → git push"
// is most of commit-push. It tells a near miss from a candidate that has
// nothing to do with the procedure.
func (p Procedure) OccursPartly(events []Event) bool {
	for _, alt := range p.Alternatives {
		if len(alt) < 3 {
			continue
		}
		for drop := range alt {
			if _, ok := occurs(slices.Delete(slices.Clone(alt), drop, drop+1), events); ok {
				return true
			}
		}
	}
	return false
}

// StepNames shows the procedure's alternatives, "git add → git commit →
// git push | …".
func (p Procedure) StepNames() string {
	var alts []string
	for _, alt := range p.Alternatives {
		var names []string
		for _, s := range alt {
			names = append(names, s.Name)
		}
		alts = append(alts, strings.Join(names, " → "))
	}
	return strings.Join(alts, " | ")
}

// Session is one agent session's events in the order they happened.
type Session struct {
	// Key identifies the session the way the importer names its trace:
	// Claude Code's sessionId (with ".agent-<id>" for a subagent's own
	// log), Codex's session_meta id, Gemini's sessionId, a trace's id.
	Key    string
	Agent  string
	Source string
	Events []Event
}

// Detection says, for each procedure, in how many distinct sessions it
// occurs.
type Detection struct {
	Procedure string `json:"procedure"`
	Steps     string `json:"steps"`
	Sessions  int    `json:"sessions"`
	// In lists those sessions, by Session.Key and source file, so that a
	// count can be checked against the logs.
	In []string `json:"in"`
}

// Detect counts each procedure's sessions. A subagent's own log counts
// with the session that started it, as mine counts it: the subagent's
// work is part of that session, so four subagents of one conversation
// that each commit and push are one occasion, not four.
func Detect(procs []Procedure, sessions []Session) []Detection {
	out := make([]Detection, len(procs))
	for i, p := range procs {
		out[i] = Detection{Procedure: p.Name, Steps: p.StepNames()}
		roots := map[string]bool{}
		for _, s := range sessions {
			if p.Occurs(s.Events) {
				roots[rootSession(s.Key)] = true
				out[i].In = append(out[i].In, s.Key+" "+s.Source)
			}
		}
		out[i].Sessions = len(roots)
	}
	return out
}

// rootSession is the session a subagent's key belongs to: the key
// without its ".agent-<id>" suffix.
func rootSession(key string) string {
	root, _, _ := strings.Cut(key, ".agent-")
	return root
}
