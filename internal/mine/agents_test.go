package mine

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// The corpora under testdata/agents are agent sessions as the session
// readers normalize them (shell commands named by their head, operands as
// one list parameter, reads as observations, edits as file.edit with
// their path, a failed command with exit_code and error), with the noise
// real sessions have:
//
//   - push: git add → git commit → git push in 12 sessions, with reads
//     between the steps and path-only edits before them; in three the
//     push is rejected, the agent pulls, and the push goes through; in
//     one the push fails and is never retried; two sessions are the same
//     twenty-command exploration told twice, and two run the same six
//     make targets.
//   - failing: a four-step release check whose first call (gh auth
//     status) failed in every one of its four runs.

// loadAgents reads the traces of testdata/agents/dir in file order, as
// the source readers would give them to mining.
func loadAgents(t *testing.T, dir string) []*trace.Trace {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "agents", dir, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no traces in testdata/agents/%s: %v", dir, err)
	}
	var out []*trace.Trace
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		tr, err := trace.Decode(data, f, 0)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(data)
		tr.Source, tr.SourceHash = f, "sha256:"+hex.EncodeToString(sum[:])
		trace.Normalize(tr)
		out = append(out, tr)
	}
	return out
}

// TestAgentsShortProcedureInManySessions mines the push corpus: the three
// steps people repeat in every session are found, ranked first and
// selected, above the long exploration seen in two sessions; each rejected
// push folds into the push that went through, and the push that failed
// for good is kept and noted.
func TestAgentsShortProcedureInManySessions(t *testing.T) {
	traces := loadAgents(t, "push")
	rep := mustMine(t, traces, Options{})
	sel := rep.Selected()
	if sel == nil {
		t.Fatalf("no candidate: %+v", rep.Warnings)
	}
	if diff := gocmp.Diff([]string{"git add", "git commit", "git push"}, stepNames(sel)); diff != "" {
		t.Fatalf("selected steps (-want +got):\n%s", diff)
	}
	if sel.Support != 12 || sel.Score != 12*12*3 {
		t.Errorf("support %d, score %d; want 12 sessions, score 432", sel.Support, sel.Score)
	}
	// The long exploration is found too, and ranks below.
	var long *candidate.Candidate
	for i := range rep.Candidates {
		if len(rep.Candidates[i].Steps) == 20 {
			long = &rep.Candidates[i]
		}
	}
	if long == nil || long.Support != 2 || long.Score >= sel.Score {
		t.Errorf("the twenty-step exploration in two sessions: %+v, want it listed below the selected candidate", long)
	}

	// One rule for failed attempts: a rejected push, the pull and the
	// push that went through are the push that went through.
	if rep.Mining.RetriesCollapsed != 3 {
		t.Errorf("retries collapsed = %d, want 3", rep.Mining.RetriesCollapsed)
	}
	for _, ex := range sel.Examples {
		tr := traces[slices.IndexFunc(traces, func(tr *trace.Trace) bool { return tr.ID == ex.TraceID })]
		push := &tr.Actions[ex.Positions[2]]
		switch ex.TraceID {
		case "s01", "s04", "s07":
			if push.Failed() || ex.Retries == nil || ex.Retries[2] != 1 {
				t.Errorf("example %s: push at %d (failed %v), retries %v; want the push that went through, after one failed attempt", ex.TraceID, ex.Positions[2], push.Failed(), ex.Retries)
			}
		case "s10":
			if !push.Failed() {
				t.Errorf("example %s: push at %d did not fail; the session's only push failed", ex.TraceID, ex.Positions[2])
			}
		default:
			if push.Failed() || ex.Retries != nil {
				t.Errorf("example %s: push at %d (failed %v), retries %v", ex.TraceID, ex.Positions[2], push.Failed(), ex.Retries)
			}
		}
	}
	push := sel.Steps[2]
	if push.Retries != 3 || push.Failures != 1 {
		t.Errorf("push retries %d, failures %d; want 3 and 1", push.Retries, push.Failures)
	}
	if notes := strings.Join(push.ReviewNotes, "\n"); !strings.Contains(notes, "failed in 1 of 12 examples and was not retried") {
		t.Errorf("push review notes = %q, want the push that failed for good", notes)
	}
	if !sel.Safe() {
		t.Errorf("selected candidate rejected: %+v", sel.RejectionReasons)
	}
}

// TestAgentsCallFailedInEveryRun mines a procedure whose first call failed
// in every run: it is kept as a failed step, with a review note and a
// warning that say so, and the procedure is not rejected for it.
func TestAgentsCallFailedInEveryRun(t *testing.T) {
	for _, sample := range []int{0, 2} {
		t.Run(fmt.Sprintf("sample=%d", sample), func(t *testing.T) {
			// Built from a sample of two, the failures of the other two
			// examples count too: shadow replay checks every example.
			checkCallFailedInEveryRun(t, mustMine(t, loadAgents(t, "failing"), Options{ExampleSample: sample}))
		})
	}
}

func checkCallFailedInEveryRun(t *testing.T, rep *candidate.Report) {
	t.Helper()
	sel := rep.Selected()
	if sel == nil {
		t.Fatalf("no candidate: %+v (rejected %d)", rep.Warnings, len(rep.RejectedCandidates))
	}
	if diff := gocmp.Diff([]string{"gh auth status", "npm ci", "npm run build", "npm publish"}, stepNames(sel)); diff != "" {
		t.Fatalf("steps (-want +got):\n%s", diff)
	}
	first := sel.Steps[0]
	if first.Failures != 4 {
		t.Errorf("step 1 failures = %d, want 4", first.Failures)
	}
	want := "step 1 gh auth status failed in every example (4 of 4) and was never retried; it is kept as a failed step"
	if notes := strings.Join(first.ReviewNotes, "\n"); !strings.Contains(notes, want) {
		t.Errorf("step 1 review notes = %q, want %q", notes, want)
	}
	var warned bool
	for _, w := range sel.Warnings {
		warned = warned || w.Code == candidate.CodeFailedStep && w.Step == 1
	}
	if !warned {
		t.Errorf("warnings = %+v, want %s at step 1", sel.Warnings, candidate.CodeFailedStep)
	}
	for _, s := range sel.Steps[1:] {
		if s.Failures != 0 {
			t.Errorf("step %d %s failures = %d, want 0", s.Index, s.Name, s.Failures)
		}
	}
}

// TestNotProcedures checks that repeats made only of observations, or of
// edits that recorded only their path, are ranked after the procedures
// and rejected with their code, under either miner.
func TestNotProcedures(t *testing.T) {
	read := func(p string) trace.Action { return obs("", "Read", `{"file_path":"`+p+`"}`) }
	notebook := func(p string) trace.Action {
		a := act("", trace.KindFileMutation, "notebook.edit", `{"notebook_path":"`+p+`"}`)
		a.SideEffects = []trace.SideEffect{{Kind: "file_write", Target: p, Capability: "fs.write"}}
		return a
	}
	contentEdit := func(p string) trace.Action {
		a := edit("", p)
		a.Parameters["content"] = "x " + p
		return a
	}
	tests := []struct {
		name      string
		mode      string
		actions   func(i int) []trace.Action
		procedure []string // the selected candidate's steps
		code      string   // the rejection of the other repeat
		sessions  int      // 8 when zero
	}{{
		name: "reads under the exact miner", mode: ModeExact,
		actions: func(i int) []trace.Action {
			out := []trace.Action{read("a.go"), read("b.go"), read("c.go"), read("d.go"), cmd("", fmt.Sprintf("task%d", i), "")}
			if i < 3 {
				out = append(out, cmd("", "go test", `{"packages":["./..."]}`), cmd("", "git commit", fmt.Sprintf(`{"m":"fix %d"}`, i)))
			}
			return out
		},
		procedure: []string{"go test", "git commit"}, code: candidate.CodeObservationsOnly,
	}, {
		name: "path-only edits under the gapped miner", mode: ModeGapped,
		actions: func(i int) []trace.Action {
			// Other work first, then three edits of the session's pages.
			var out []trace.Action
			for k := range 10 {
				out = append(out, cmd("", fmt.Sprintf("task%d", 10*i+k), ""))
			}
			out = append(out, edit("", fmt.Sprintf("a%d.md", i)), read("x"), notebook(fmt.Sprintf("b%d.ipynb", i)), edit("", fmt.Sprintf("c%d.md", i)))
			if i < 3 {
				out = append(out, cmd("", "make docs", ""), cmd("", "git commit", fmt.Sprintf(`{"m":"docs %d"}`, i)))
			}
			return out
		},
		// Enough sessions that edits following edits are more than
		// chance, which the gapped search asks of a pattern.
		procedure: []string{"make docs", "git commit"}, code: candidate.CodeEditsWithoutContent, sessions: 20,
	}, {
		name: "one tool in bursts under the gapped miner", mode: ModeGapped,
		actions: func(i int) []trace.Action {
			var out []trace.Action
			for k := range 10 {
				out = append(out, cmd("", fmt.Sprintf("task%d", 10*i+k), ""))
			}
			out = append(out, cmd("", "psql", fmt.Sprintf(`{"c":"select %d"}`, i)), cmd("", "psql", fmt.Sprintf(`{"f":"q%d.sql"}`, i)), cmd("", "psql", fmt.Sprintf(`{"c":"select %d"}`, i)))
			if i < 3 {
				out = append(out, cmd("", "make docs", ""), cmd("", "git commit", fmt.Sprintf(`{"m":"docs %d"}`, i)))
			}
			return out
		},
		procedure: []string{"make docs", "git commit"}, code: candidate.CodeOneToolRepeated,
	}, {
		name: "edits and reads under the exact miner", mode: ModeExact,
		actions: func(i int) []trace.Action {
			out := []trace.Action{read("a"), edit("", fmt.Sprintf("a%d.md", i)), read("b"), edit("", fmt.Sprintf("b%d.md", i)), read("c"), cmd("", fmt.Sprintf("task%d", i), "")}
			if i < 3 {
				out = append(out, cmd("", "make docs", ""), cmd("", "git commit", fmt.Sprintf(`{"m":"docs %d"}`, i)))
			}
			return out
		},
		procedure: []string{"make docs", "git commit"}, code: candidate.CodeEditsWithoutContent,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var traces []*trace.Trace
			for i := range cmp.Or(tt.sessions, 8) {
				traces = append(traces, session(fmt.Sprintf("s%02d", i), tt.actions(i)...))
			}
			rep := mustMine(t, traces, Options{Mode: tt.mode})
			sel := rep.Selected()
			if sel == nil {
				t.Fatalf("no candidate: %+v", rep.Warnings)
			}
			if diff := gocmp.Diff(tt.procedure, stepNames(sel)); diff != "" {
				t.Errorf("selected steps (-want +got):\n%s", diff)
			}
			var codes []string
			for _, c := range rep.RejectedCandidates {
				for _, r := range c.RejectionReasons {
					codes = append(codes, r.Code)
				}
			}
			if !slices.Contains(codes, tt.code) {
				t.Errorf("rejection codes = %v, want %s", codes, tt.code)
			}
			for _, c := range rep.Candidates {
				sigs := c.SequenceSignature
				if notProcedure(len(sigs), func(k int) uint8 { return signatureShape(sigs[k]) }, func(k int) string { return toolName(sigs[k]) }) != "" {
					t.Errorf("safe candidate %s %v is not a procedure", c.Name, stepNames(&c))
				}
			}
		})
	}

	// Edits that carry what they wrote are a procedure.
	var traces []*trace.Trace
	for i := range 4 {
		traces = append(traces, session(fmt.Sprintf("s%d", i), contentEdit("CHANGELOG.md"), contentEdit("VERSION")))
	}
	rep := mustMine(t, traces, Options{Mode: ModeExact})
	if sel := rep.Selected(); sel == nil || len(sel.Steps) != 2 {
		t.Errorf("edits with content: selected %+v, rejected %+v; want a two-step candidate", sel, rep.RejectedCandidates)
	}
}

func TestSignatureShape(t *testing.T) {
	for _, tc := range []struct {
		sig  string
		want uint8
	}{
		{"observation:Read:file_path", shapeObservation},
		{"observation:git status:", shapeObservation},
		{"file_mutation:file.edit:path", shapeBareEdit},
		{"file_mutation:file.edit:", shapeBareEdit},
		{"file_mutation:mcp:fs:write:file_path", shapeBareEdit},
		{"file_mutation:file.edit:content,path", shapeAction},
		{"file_mutation:update_manifest_version:path,version", shapeAction},
		{"tool_call:git push:", shapeAction},
		{"tool_call:cat:path", shapeAction},
		{"unknown", shapeAction},
	} {
		if got := signatureShape(tc.sig); got != tc.want {
			t.Errorf("signatureShape(%q) = %d, want %d", tc.sig, got, tc.want)
		}
	}
}

// TestRankShortProceduresInManySessions ranks by support² × length: three
// steps in twelve sessions come before twenty steps in two, which
// support × length would put first (40 against 36).
func TestRankShortProceduresInManySessions(t *testing.T) {
	var long []trace.Action
	for k := range 20 {
		long = append(long, cmd("", fmt.Sprintf("tool%d", k), ""))
	}
	var traces []*trace.Trace
	for i := range 12 {
		actions := []trace.Action{
			cmd("", "git add", fmt.Sprintf(`{"paths":["f%d"]}`, i)),
			cmd("", "git commit", fmt.Sprintf(`{"m":"change %d"}`, i)),
			cmd("", "git push", ""),
		}
		if i < 2 {
			actions = append(slices.Clone(long), actions...)
			actions = slices.Insert(actions, 20, cmd("", fmt.Sprintf("sep%d", i), ""))
		}
		traces = append(traces, mk(fmt.Sprintf("t%02d", i), actions...))
	}
	for _, mode := range []string{ModeExact, ModeGapped} {
		t.Run(mode, func(t *testing.T) {
			// The twenty steps have 2^20 subsequences, all in the same two
			// traces; the search grows the whole sequence first, so a
			// smaller budget finds it and saves the time.
			rep := mustMine(t, traces, Options{Mode: mode, SearchBudget: 20_000})
			var got [][2]int
			for _, c := range rep.Candidates {
				got = append(got, [2]int{c.Support, len(c.Steps)})
			}
			want := [][2]int{{12, 3}, {2, 20}}
			if diff := gocmp.Diff(want, got); diff != "" {
				t.Errorf("candidates as (support, length) (-want +got):\n%s", diff)
			}
			if len(rep.Candidates) == 2 && (rep.Candidates[0].Score != 432 || rep.Candidates[1].Score != 80) {
				t.Errorf("scores %d, %d; want 432, 80", rep.Candidates[0].Score, rep.Candidates[1].Score)
			}
		})
	}
}

// TestOneActionAmongReadsIsProcedure checks that a repeat with one action
// and the reads around it is a procedure: it keeps its rank among the
// procedures of the exact miner, ahead of a rarer one, and is not sent
// after them as the repeats made only of reads, or of one tool, are.
func TestOneActionAmongReadsIsProcedure(t *testing.T) {
	read := func(p string) trace.Action { return obs("", "Read", `{"file_path":"`+p+`"}`) }
	var traces []*trace.Trace
	for i := range 8 {
		actions := []trace.Action{read("go.mod"), cmd("", "go test", `{"arg1":"./..."}`), cmd("", fmt.Sprintf("task%d", i), "")}
		if i < 3 {
			actions = append(actions, cmd("", "make docs", ""), cmd("", "git commit", fmt.Sprintf(`{"m":"docs %d"}`, i)))
		}
		traces = append(traces, session(fmt.Sprintf("s%02d", i), actions...))
	}
	rep := mustMine(t, traces, Options{Mode: ModeExact, MaxCandidates: 1})
	sel := rep.Selected()
	if sel == nil {
		t.Fatalf("no candidate: %+v", rep.Warnings)
	}
	if diff := gocmp.Diff([]string{"Read", "go test"}, stepNames(sel)); diff != "" {
		t.Errorf("selected steps (-want +got):\n%s", diff)
	}
}
