package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/tracetest"
)

// This file is the acceptance test of mining real agents' sessions: the
// generator plants procedures among exploration, retries and chained
// commands in Claude Code, Codex and OpenTelemetry logs, and "crystallize
// mine" must find each one, in each format, as the same workflow: the
// procedure's command heads in order, no observation among them, the
// varying values as parameters, from at least 80 % of the sessions it was
// planted in. The workflow it writes must then dry-run without any
// configuration and say which grants it needs.

// agentMinSupport is the share of its sessions a planted procedure must
// be mined from.
const agentMinSupport = 0.8

// agentSessions is the number of sessions per corpus: with the default
// support of 25 %, each procedure is planted in ten of them.
const agentSessions = 40

// e2eReport is the part of report.json this test reads.
type e2eReport struct {
	Candidates         []e2eCandidate `json:"candidates"`
	RejectedCandidates []e2eCandidate `json:"rejected_candidates"`
	SkippedFiles       []any          `json:"skipped_files"`
}

type e2eCandidate struct {
	ID           string         `json:"id"`
	Name         string         `json:"name"`
	Support      int            `json:"support"`
	Capabilities []string       `json:"capabilities"`
	Steps        []e2eStep      `json:"steps"`
	Parameters   []e2eParameter `json:"parameters"`
	// DerivedParameters vary like parameters, but the workflow computes
	// them; they are not passed to a run.
	DerivedParameters []e2eParameter `json:"derived_parameters"`
	Examples          []e2eExample   `json:"examples"`
	// Shadow lists the traces the candidate was compared with; the
	// sessions held out of mining (mine --holdout) are among them.
	Shadow *struct {
		Traces []e2eShadowTrace `json:"traces"`
	} `json:"shadow"`
	RejectionReasons []struct {
		Code string `json:"code"`
	} `json:"rejection_reasons"`
}

type e2eShadowTrace struct {
	TraceID string `json:"trace_id"`
	Role    string `json:"role"`
	Status  string `json:"status"`
}

type e2eStep struct {
	Kind      string        `json:"kind"`
	Name      string        `json:"name"`
	Arguments []e2eArgument `json:"arguments"`
	Argv      []string      `json:"argv"`
}

type e2eArgument struct {
	Key       string `json:"key"`
	Kind      string `json:"kind"`
	Value     any    `json:"value"`
	Parameter string `json:"parameter"`
}

type e2eParameter struct {
	Name        string   `json:"name"`
	Key         string   `json:"key"`
	SourcePaths []string `json:"source_paths"`
	Examples    []any    `json:"examples"`
}

type e2eExample struct {
	TraceID   string `json:"trace_id"`
	Positions []int  `json:"positions"`
}

func (c *e2eCandidate) stepNames() []string {
	names := make([]string, len(c.Steps))
	for i, s := range c.Steps {
		names[i] = s.Name
	}
	return names
}

// argMatches reports whether an argument named key can carry the
// manifest's parameter k: by name for a flag (named after its long form,
// git checkout -b is branch) or a part of go get's operand, and by value
// for a positional operand, which the normalizer may name after its
// meaning ("tag", "number") instead of its position.
func argMatches(k, key string) bool {
	if strings.HasPrefix(k, "arg") {
		return true
	}
	return key == k
}

// plantedValues returns the values of parameter k of step i over all
// plantings.
func plantedValues(p *tracetest.AgentProcedure, i int, k string) map[string]bool {
	vals := map[string]bool{}
	for _, pl := range p.Plantings {
		vals[pl.Values[i][k]] = true
	}
	return vals
}

// valuesFrom reports whether every example value of a parameter is one of
// vals.
func valuesFrom(examples []any, vals map[string]bool) bool {
	for _, ex := range examples {
		if !vals[fmt.Sprint(ex)] {
			return false
		}
	}
	return len(examples) > 0
}

// procHeads returns a procedure's step heads.
func procHeads(p *tracetest.AgentProcedure) []string {
	heads := make([]string, len(p.Steps))
	for i, s := range p.Steps {
		heads[i] = s.Head
	}
	return heads
}

// e2eEnv returns an environment that pins generated_at and captures
// output.
func e2eEnv() (*env, *bytes.Buffer, *bytes.Buffer) {
	var stdout, stderr bytes.Buffer
	return &env{stdout: &stdout, stderr: &stderr, getenv: func(k string) string {
		if k == "SOURCE_DATE_EPOCH" {
			return sourceDateEpoch
		}
		return ""
	}}, &stdout, &stderr
}

func TestAgentSessionsMine(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		c := tracetest.GenerateAgents(tracetest.AgentConfig{Sessions: agentSessions, Seed: seed})
		for _, f := range tracetest.AgentFormats {
			t.Run(fmt.Sprintf("%s/seed=%d", f, seed), func(t *testing.T) {
				mineAgentSessions(t, c, f)
			})
		}
	}
}

func mineAgentSessions(t *testing.T, c *tracetest.AgentCorpus, f tracetest.AgentFormat) {
	tmp := t.TempDir()
	sessions := filepath.Join(tmp, "sessions")
	if err := c.Write(sessions, f); err != nil {
		t.Fatal(err)
	}
	outDir := filepath.Join(tmp, "workflows")
	reportPath := filepath.Join(tmp, "report.json")
	e, stdout, stderr := e2eEnv()
	code := run(context.Background(), e, []string{"mine", "--from", sessions, "--out-dir", outDir, "--report", reportPath, "--json"})
	if code != exitOK {
		// The report, when written, says what was found and rejected.
		t.Errorf("crystallize mine --from %s sessions: exit status %d\nstderr:\n%s", f, code, firstLines(stderr.String(), 4))
		if _, err := os.Stat(reportPath); err != nil {
			return
		}
	}
	if !json.Valid(stdout.Bytes()) {
		t.Errorf("mine --json printed no JSON: %q", firstLines(stdout.String(), 5))
	}
	data, err := os.ReadFile(reportPath)
	if err != nil {
		t.Fatal(err)
	}
	var report e2eReport
	if err := json.Unmarshal(data, &report); err != nil {
		t.Fatalf("report.json: %v", err)
	}
	if len(report.SkippedFiles) != 0 {
		t.Errorf("%d files skipped as invalid, want none", len(report.SkippedFiles))
	}

	for pi := range c.Manifest.Procedures {
		p := &c.Manifest.Procedures[pi]
		cand := checkProcedureMined(t, f, p, &report)
		if cand == nil || p.Name != "bump_go_dependency" {
			continue
		}
		checkBumpRuns(t, tmp, outDir, p, cand)
	}
}

// errorReporter is the part of testing.T the candidate checks use, so
// they can be tested themselves.
type errorReporter interface {
	Helper()
	Errorf(format string, args ...any)
}

// checkProcedureMined finds the candidate of planted procedure p and
// checks it; it returns nil when there is none.
func checkProcedureMined(t errorReporter, f tracetest.AgentFormat, p *tracetest.AgentProcedure, report *e2eReport) *e2eCandidate {
	t.Helper()
	heads := procHeads(p)
	var cand *e2eCandidate
	for i := range report.Candidates {
		if slices.Equal(report.Candidates[i].stepNames(), heads) {
			cand = &report.Candidates[i]
			break
		}
	}
	if cand == nil {
		var seen []string
		for _, rc := range report.RejectedCandidates {
			if slices.Equal(rc.stepNames(), heads) {
				t.Errorf("%s: the candidate with steps %q was rejected: %v", p.Name, heads, rc.RejectionReasons)
				return nil
			}
		}
		for _, oc := range report.Candidates {
			seen = append(seen, fmt.Sprintf("%q", oc.stepNames()))
		}
		t.Errorf("%s: no candidate has exactly the steps %q; candidates:\n%s", p.Name, heads, strings.Join(seen, "\n"))
		return nil
	}

	for i, s := range cand.Steps {
		if s.Kind == "observation" {
			t.Errorf("%s: step %d %s is an observation", p.Name, i+1, s.Name)
		}
	}
	// Every varying value is a parameter of its step: an argument of
	// kind parameter whose workflow parameter took the planted values.
	params := map[string][]any{}
	for _, pm := range append(slices.Clone(cand.Parameters), cand.DerivedParameters...) {
		params[pm.Name] = pm.Examples
	}
	for i, st := range p.Steps {
		for _, k := range st.Varying {
			vals := plantedValues(p, i, k)
			found, constant := false, ""
			for _, a := range cand.Steps[i].Arguments {
				if !argMatches(k, a.Key) {
					continue
				}
				if a.Kind == "parameter" && valuesFrom(params[a.Parameter], vals) {
					found = true
				} else if a.Kind != "parameter" && (!strings.HasPrefix(k, "arg") || vals[fmt.Sprint(a.Value)]) {
					constant = a.Key + " is a " + a.Kind
				}
			}
			switch {
			case found:
			case constant != "":
				t.Errorf("%s: step %d %s argument %s, want a parameter (it varies)", p.Name, i+1, st.Head, constant)
			default:
				t.Errorf("%s: step %d %s has no parameter carrying its varying %s", p.Name, i+1, st.Head, k)
			}
		}
	}
	// Support: mined from at least 80 % of the sessions it was planted
	// in, and from no other session (no other session runs its steps).
	planted := map[string]bool{}
	for _, pl := range p.Plantings {
		planted[tracetest.TraceID(f, pl.Session)] = true
	}
	hit := map[string]bool{}
	for _, ex := range cand.Examples {
		if !planted[ex.TraceID] {
			t.Errorf("%s: example trace %s is not a session it was planted in", p.Name, ex.TraceID)
		}
		hit[ex.TraceID] = true
	}
	// A session held out of mining that the candidate replays against
	// is one it was found in, by the gate that promotes it.
	if cand.Shadow != nil {
		for _, st := range cand.Shadow.Traces {
			if st.Role != "heldout" || st.Status == "unmatched" {
				continue
			}
			if !planted[st.TraceID] {
				t.Errorf("%s: held-out trace %s matched, but the procedure was not planted in it", p.Name, st.TraceID)
			}
			if st.Status != "pass" {
				t.Errorf("%s: held-out session %s it was planted in: %s", p.Name, st.TraceID, st.Status)
			}
			hit[st.TraceID] = true
		}
	}
	if got, want := len(hit), int(agentMinSupport*float64(len(planted))+0.999); got < want {
		t.Errorf("%s: mined from or replayed on %d of the %d sessions it was planted in, want at least %d (80 %%)", p.Name, got, len(planted), want)
	}
	// Capabilities name each program the steps run.
	for _, h := range heads {
		program, _, _ := strings.Cut(h, " ")
		if !slices.Contains(cand.Capabilities, "exec:"+program) {
			t.Errorf("%s: capabilities %q lack exec:%s", p.Name, cand.Capabilities, program)
		}
	}
	return cand
}

// checkBumpRuns dry-runs the mined bump workflow with no configuration
// and checks that run --check names the grants it needs.
func checkBumpRuns(t *testing.T, tmp, outDir string, p *tracetest.AgentProcedure, cand *e2eCandidate) {
	t.Helper()
	workflow := filepath.Join(outDir, cand.Name+".star")
	if _, err := os.Stat(workflow); err != nil {
		t.Errorf("mined workflow: %v", err)
		return
	}
	// The values of the first planting, by step and key.
	pl := p.Plantings[0]
	args := []string{"run", workflow, "--dry-run", "--state-dir", filepath.Join(tmp, "state")}
	for _, param := range cand.Parameters {
		value, ok := "", false
		for _, sp := range param.SourcePaths {
			step, key, okPath := parseStepPath(sp)
			if !okPath || step < 1 || step > len(pl.Values) {
				continue
			}
			for k, v := range pl.Values[step-1] {
				if argMatches(k, key) && valuesFrom(param.Examples, plantedValues(p, step-1, k)) {
					value, ok = v, true
				}
			}
		}
		if !ok && len(param.Examples) > 0 {
			value, ok = fmt.Sprint(param.Examples[0]), true
		}
		if !ok {
			t.Errorf("no value for parameter %s (%v)", param.Name, param.SourcePaths)
			continue
		}
		args = append(args, "--param", param.Name+"="+value)
	}
	// No crystallize.toml: the run starts in an empty directory.
	t.Chdir(t.TempDir())

	e, stdout, stderr := e2eEnv()
	if code := run(context.Background(), e, args); code != exitOK {
		t.Errorf("crystallize %s: exit status %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, firstLines(stdout.String(), 20), firstLines(stderr.String(), 20))
		return
	}
	// The dry run shows the exact argv of go get: the module and version
	// substituted inside one argv element.
	get := slices.IndexFunc(p.Steps, func(s tracetest.AgentStep) bool { return s.Head == "go get" })
	if get < 0 {
		t.Fatalf("%s has no go get step", p.Name)
	}
	goGet := pl.Values[get]["module"] + "@" + pl.Values[get]["version"]
	if !strings.Contains(stdout.String()+stderr.String(), goGet) {
		t.Errorf("dry run output does not show the argv element %q:\n%s", goGet, firstLines(stdout.String(), 30))
	}
	// The run's trace has the procedure's steps, named as in the sessions
	// it was mined from.
	traces, _ := filepath.Glob(filepath.Join(tmp, "state", "runs", "*", "trace.json"))
	if len(traces) != 1 {
		t.Errorf("runs recorded: %q, want one", traces)
	} else {
		checkRunTrace(t, traces[0], procHeads(p), pl.Values[get])
	}

	e, stdout, stderr = e2eEnv()
	code := run(context.Background(), e, []string{"run", workflow, "--check"})
	if code == exitUsage {
		t.Errorf("run --check: usage error: %s", stderr.String())
	}
	out := stdout.String() + stderr.String()
	for _, grant := range []string{"exec:git", "exec:go", "exec:gh"} {
		if !strings.Contains(out, grant) {
			t.Errorf("run --check does not name the grant %s it needs:\n%s", grant, firstLines(out, 20))
		}
	}
}

// checkRunTrace checks that the run trace at path has the steps heads in
// order, and that its go get step took the module and version given.
func checkRunTrace(t *testing.T, path string, heads []string, goGet map[string]string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var tr struct {
		Actions []struct {
			Kind       string         `json:"kind"`
			Name       string         `json:"name"`
			Parameters map[string]any `json:"parameters"`
		} `json:"actions"`
	}
	if err := json.Unmarshal(data, &tr); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var names []string
	for _, a := range tr.Actions {
		if a.Kind == "observation" {
			continue // a precondition checked before a step
		}
		names = append(names, a.Name)
		if a.Name == "go get" {
			for k, want := range goGet {
				if got := fmt.Sprint(a.Parameters[k]); got != want {
					t.Errorf("run trace: go get %s = %q, want %q", k, got, want)
				}
			}
		}
	}
	if !slices.Equal(names, heads) {
		t.Errorf("run trace steps = %q, want %q", names, heads)
	}
}

// parseStepPath splits "steps[i].parameters.key" into i and key.
func parseStepPath(p string) (int, string, bool) {
	rest, ok := strings.CutPrefix(p, "steps[")
	if !ok {
		return 0, "", false
	}
	num, rest, ok := strings.Cut(rest, "].parameters.")
	if !ok {
		return 0, "", false
	}
	i, err := strconv.Atoi(num)
	return i, rest, err == nil
}

// firstLines returns at most n lines of s.
func firstLines(s string, n int) string {
	lines := strings.SplitAfterN(s, "\n", n+1)
	if len(lines) > n {
		lines = append(lines[:n], "…\n")
	}
	return strings.Join(lines, "")
}

// errorLog records the errors of a check.
type errorLog struct{ errs []string }

func (l *errorLog) Helper() {}
func (l *errorLog) Errorf(format string, args ...any) {
	l.errs = append(l.errs, fmt.Sprintf(format, args...))
}

// plantedCandidate returns the candidate a correct miner reports for p:
// its heads as tool calls, its varying values as parameters, every
// planting as an example.
func plantedCandidate(f tracetest.AgentFormat, p *tracetest.AgentProcedure) e2eCandidate {
	var c e2eCandidate
	c.Name = p.Name
	for _, st := range p.Steps {
		s := e2eStep{Kind: "tool_call", Name: st.Head}
		for _, k := range st.Varying {
			name := fmt.Sprintf("%s_%d", k, len(c.Steps)+1)
			s.Arguments = append(s.Arguments, e2eArgument{Key: k, Kind: "parameter", Parameter: name})
			var examples []any
			for _, pl := range p.Plantings[:5] {
				examples = append(examples, pl.Values[len(c.Steps)][k])
			}
			c.Parameters = append(c.Parameters, e2eParameter{Name: name, Key: k, Examples: examples,
				SourcePaths: []string{fmt.Sprintf("steps[%d].parameters.%s", len(c.Steps)+1, k)}})
		}
		c.Steps = append(c.Steps, s)
		program, _, _ := strings.Cut(st.Head, " ")
		if !slices.Contains(c.Capabilities, "exec:"+program) {
			c.Capabilities = append(c.Capabilities, "exec:"+program)
		}
	}
	for _, pl := range p.Plantings {
		c.Examples = append(c.Examples, e2eExample{TraceID: tracetest.TraceID(f, pl.Session)})
	}
	return c
}

// holdOut moves the last n examples of r's first candidate to its shadow
// traces as held-out traces with the given status, as mine --holdout
// reports the sessions it held out.
func holdOut(r *e2eReport, n int, status string) {
	c := &r.Candidates[0]
	if c.Shadow == nil {
		c.Shadow = &struct {
			Traces []e2eShadowTrace `json:"traces"`
		}{}
	}
	for _, ex := range c.Examples[len(c.Examples)-n:] {
		c.Shadow.Traces = append(c.Shadow.Traces, e2eShadowTrace{TraceID: ex.TraceID, Role: "heldout", Status: status})
	}
	c.Examples = c.Examples[:len(c.Examples)-n]
}

// TestAgentSessionsMineChecks checks the checks of TestAgentSessionsMine:
// they accept what a correct miner reports and refuse each way of being
// wrong.
func TestAgentSessionsMineChecks(t *testing.T) {
	c := tracetest.GenerateAgents(tracetest.AgentConfig{Sessions: agentSessions, Seed: 1})
	f := tracetest.FormatOTel
	bump := &c.Manifest.Procedures[0]
	if bump.Name != "bump_go_dependency" {
		t.Fatalf("first procedure is %s, want bump_go_dependency", bump.Name)
	}
	notPlanted := ""
	for _, s := range c.Manifest.Sessions {
		if !slices.Contains(s.Procedures, bump.Name) {
			notPlanted = tracetest.TraceID(f, s.ID)
			break
		}
	}
	for _, tc := range []struct {
		name   string
		mutate func(r *e2eReport)
		want   string // a substring of the first error; "" for none
	}{
		{"correct", func(*e2eReport) {}, ""},
		{"branch named by the head's rule", func(r *e2eReport) { r.Candidates[0].Steps[0].Arguments[0].Key = "new_branch" }, ""},
		{"observation among the steps", func(r *e2eReport) {
			s := r.Candidates[0].Steps[2]
			s.Name, s.Kind, s.Arguments = "git status", "observation", nil
			r.Candidates[0].Steps = slices.Insert(r.Candidates[0].Steps, 2, s)
		}, "no candidate has exactly the steps"},
		{"step of kind observation", func(r *e2eReport) { r.Candidates[0].Steps[2].Kind = "observation" }, "is an observation"},
		{"varying value as a constant", func(r *e2eReport) { r.Candidates[0].Steps[1].Arguments[1].Kind = "constant" }, "version is a constant, want a parameter"},
		{"varying value missing", func(r *e2eReport) { r.Candidates[0].Steps[1].Arguments = r.Candidates[0].Steps[1].Arguments[:1] }, "no parameter carrying its varying version"},
		{"parameter with other values", func(r *e2eReport) {
			r.Candidates[0].Parameters[1].Examples = []any{"golang.org/x/elsewhere"}
		}, "no parameter carrying its varying module"},
		{"support below 80 %", func(r *e2eReport) { r.Candidates[0].Examples = r.Candidates[0].Examples[:7] }, "mined from or replayed on 7 of the 10 sessions"},
		{"held out and replayed", func(r *e2eReport) { holdOut(r, 3, "pass") }, ""},
		{"held out and failed", func(r *e2eReport) { holdOut(r, 3, "fail") }, "held-out session " + tracetest.TraceID(f, bump.Plantings[7].Session) + " it was planted in: fail"},
		{"held out, not planted, matched", func(r *e2eReport) {
			holdOut(r, 0, "pass")
			r.Candidates[0].Shadow.Traces = append(r.Candidates[0].Shadow.Traces, e2eShadowTrace{TraceID: notPlanted, Role: "heldout", Status: "pass"})
		}, "held-out trace " + notPlanted + " matched, but the procedure was not planted in it"},
		{"example outside the plantings", func(r *e2eReport) {
			r.Candidates[0].Examples[0].TraceID = notPlanted
		}, "is not a session it was planted in"},
		{"grant missing", func(r *e2eReport) { r.Candidates[0].Capabilities = []string{"exec:git", "exec:go"} }, "lack exec:gh"},
		{"rejected", func(r *e2eReport) {
			r.RejectedCandidates, r.Candidates = r.Candidates, nil
		}, "was rejected"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &e2eReport{Candidates: []e2eCandidate{plantedCandidate(f, bump)}}
			tc.mutate(r)
			var log errorLog
			got := checkProcedureMined(&log, f, bump, r)
			switch {
			case tc.want == "" && len(log.errs) > 0:
				t.Errorf("errors %q, want none", log.errs)
			case tc.want == "" && got == nil:
				t.Errorf("no candidate returned")
			case tc.want != "" && (len(log.errs) == 0 || !strings.Contains(log.errs[0], tc.want)):
				t.Errorf("errors %q, want one containing %q", log.errs, tc.want)
			}
		})
	}
}

// TestAgentSessionsMineOperands checks that an operand is found by its
// values whatever the normalizer names it, and that a constant operand
// carrying a planted value is refused.
func TestAgentSessionsMineOperands(t *testing.T) {
	c := tracetest.GenerateAgents(tracetest.AgentConfig{Sessions: agentSessions, Seed: 2})
	f := tracetest.FormatCodex
	release := &c.Manifest.Procedures[2]
	if release.Name != "cut_release" {
		t.Fatalf("third procedure is %s, want cut_release", release.Name)
	}
	rename := map[string]string{"git tag": "tag", "git push": "branch", "gh release create": "tag"}
	for _, tc := range []struct {
		name   string
		mutate func(c *e2eCandidate)
		want   string
	}{
		{"operands named by the head's rule", func(c *e2eCandidate) {
			for i := range c.Steps {
				for j := range c.Steps[i].Arguments {
					if strings.HasPrefix(c.Steps[i].Arguments[j].Key, "arg") {
						c.Steps[i].Arguments[j].Key = rename[c.Steps[i].Name]
					}
				}
			}
		}, ""},
		{"operand as a constant", func(c *e2eCandidate) {
			a := &c.Steps[0].Arguments[0]
			a.Kind, a.Value = "constant", release.Plantings[0].Values[0]["arg1"]
		}, "git tag argument arg1 is a constant, want a parameter"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cand := plantedCandidate(f, release)
			tc.mutate(&cand)
			var log errorLog
			checkProcedureMined(&log, f, release, &e2eReport{Candidates: []e2eCandidate{cand}})
			switch {
			case tc.want == "" && len(log.errs) > 0:
				t.Errorf("errors %q, want none", log.errs)
			case tc.want != "" && (len(log.errs) == 0 || !strings.Contains(log.errs[0], tc.want)):
				t.Errorf("errors %q, want one containing %q", log.errs, tc.want)
			}
		})
	}
}
