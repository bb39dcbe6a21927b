package mine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// The traces here are shaped like normalized agent sessions: shell
// commands are tool calls named by their command head, reads are
// observations, edits are file mutations, and a failed command carries
// exit_code and error in its metadata.

// cmd is a shell command action.
func cmd(id, head, params string) trace.Action {
	a := act(id, trace.KindToolCall, head, params)
	a.Capabilities = []string{"exec:" + strings.Fields(head)[0]}
	return a
}

// obs is a read-only action.
func obs(id, name, params string) trace.Action {
	return act(id, trace.KindObservation, name, params)
}

// edit is a file edit.
func edit(id, path string) trace.Action {
	return act(id, trace.KindFileMutation, "file.edit", `{"path":"`+path+`"}`)
}

// failing marks a as a failed command.
func failing(a trace.Action) trace.Action {
	a.Metadata = map[string]any{"exit_code": json.Number("1"), "error": true}
	return a
}

// session builds a trace with metadata.agent set, numbering action ids.
func session(id string, actions ...trace.Action) *trace.Trace {
	for i := range actions {
		actions[i].ID = fmt.Sprintf("%s-%d", id, i)
	}
	t := mk(id, actions...)
	t.Metadata = map[string]any{"agent": "claude-code", "goal": "Bump a dependency"}
	return t
}

// bumpSteps is a dependency bump: five shell steps whose branch, module
// and version vary.
func bumpSteps(i int) []trace.Action {
	v := fmt.Sprintf("1.%d.0", i)
	mod := fmt.Sprintf("example.com/lib%d", i%3)
	return []trace.Action{
		cmd("", "git checkout", `{"b":"bump-`+v+`"}`),
		cmd("", "go get", `{"module":"`+mod+`","version":"v`+v+`"}`),
		cmd("", "go mod tidy", ""),
		cmd("", "go test", `{"arg1":"./..."}`),
		cmd("", "git commit", `{"m":"bump `+mod+` to v`+v+`"}`),
	}
}

var bumpNames = []string{"git checkout", "go get", "go mod tidy", "go test", "git commit"}

// noisy interleaves steps with reads, searches and unrelated commands
// drawn from r, and returns the actions and the index of each step.
func noisy(r *rand.Rand, steps []trace.Action) ([]trace.Action, []int) {
	fillers := []func() trace.Action{
		func() trace.Action { return obs("", "Read", fmt.Sprintf(`{"file_path":"f%d.go"}`, r.IntN(50))) },
		func() trace.Action { return obs("", "Grep", fmt.Sprintf(`{"pattern":"p%d"}`, r.IntN(50))) },
		func() trace.Action { return obs("", "git status", "") },
		func() trace.Action { return obs("", "ls", fmt.Sprintf(`{"arg1":"d%d"}`, r.IntN(9))) },
		func() trace.Action { return cmd("", "make", fmt.Sprintf(`{"arg1":"t%d"}`, r.IntN(3))) },
		func() trace.Action { return cmd("", fmt.Sprintf("tool%d", r.IntN(40)), "") },
	}
	var out []trace.Action
	var at []int
	add := func(n int) {
		for range n {
			out = append(out, fillers[r.IntN(len(fillers))]())
		}
	}
	add(r.IntN(4))
	for _, s := range steps {
		add(r.IntN(4))
		at = append(at, len(out))
		out = append(out, s)
	}
	add(r.IntN(4))
	return out, at
}

func stepNames(c *candidate.Candidate) []string {
	var out []string
	for _, s := range c.Steps {
		out = append(out, s.Name)
	}
	return out
}

func TestGappedFindsProcedureThroughNoise(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var traces []*trace.Trace
	var want [][]int
	for i := range 8 {
		actions, at := noisy(r, bumpSteps(i))
		traces = append(traces, session(fmt.Sprintf("s%d", i), actions...))
		want = append(want, at)
	}
	rep := mustMine(t, traces, Options{})
	if rep.Mining.Miner != ModeGapped || !strings.Contains(rep.Mining.MinerReason, "metadata.agent") {
		t.Errorf("miner = %q (%q), want gapped because of metadata.agent", rep.Mining.Miner, rep.Mining.MinerReason)
	}
	if rep.Mining.MaxGap != DefaultMaxGap || rep.Mining.ObservationsSkipped == 0 {
		t.Errorf("mining summary = %+v, want max gap %d and observations skipped", rep.Mining, DefaultMaxGap)
	}
	sel := rep.Selected()
	if sel == nil {
		t.Fatalf("no candidate: %+v", rep.Warnings)
	}
	if diff := cmp.Diff(bumpNames, stepNames(sel)); diff != "" {
		t.Errorf("steps (-want +got):\n%s", diff)
	}
	if sel.Support != 8 {
		t.Errorf("support = %d, want 8", sel.Support)
	}
	var params []string
	for _, p := range sel.Parameters {
		params = append(params, p.Name)
	}
	// Derived parameters still vary; the workflow computes them.
	for _, d := range sel.DerivedParameters {
		params = append(params, d.Name)
	}
	for _, p := range []string{"b", "module", "version", "m"} {
		if !slices.Contains(params, p) {
			t.Errorf("parameters %v lack %s", params, p)
		}
	}
	for e, ex := range sel.Examples {
		if diff := cmp.Diff(want[e], ex.Positions); diff != "" {
			t.Errorf("example %s positions (-want +got):\n%s", ex.TraceID, diff)
		}
		if ex.StartIndex != want[e][0] {
			t.Errorf("example %s start_index = %d, want %d", ex.TraceID, ex.StartIndex, want[e][0])
		}
		for k, id := range ex.ActionIDs {
			if wantID := fmt.Sprintf("%s-%d", ex.TraceID, want[e][k]); id != wantID {
				t.Errorf("example %s action %d = %s, want %s", ex.TraceID, k, id, wantID)
			}
		}
	}
	for _, c := range append(slices.Clone(rep.Candidates), rep.RejectedCandidates...) {
		for _, s := range c.Steps {
			if s.Kind == trace.KindObservation {
				t.Errorf("candidate %s has observation step %s", c.Name, s.Name)
			}
		}
	}
}

func TestGappedRetriesCollapse(t *testing.T) {
	var traces []*trace.Trace
	for i := range 5 {
		steps := bumpSteps(i)
		var actions []trace.Action
		for k, s := range steps {
			if k == 3 && i%2 == 0 {
				// go test fails twice, with an edit and a read between
				// the attempts, then passes.
				actions = append(actions, failing(s), edit("", "lib.go"), obs("", "Read", `{"file_path":"lib.go"}`), failing(s), edit("", "lib_test.go"))
			}
			actions = append(actions, s)
		}
		// A failure that is never retried stays as it is.
		actions = append(actions, failing(cmd("", "gh pr create", `{"title":"x"}`)))
		traces = append(traces, session(fmt.Sprintf("s%d", i), actions...))
	}
	rep := mustMine(t, traces, Options{})
	if rep.Mining.RetriesCollapsed != 6 {
		t.Errorf("retries collapsed = %d, want 6", rep.Mining.RetriesCollapsed)
	}
	sel := rep.Selected()
	if sel == nil {
		t.Fatalf("no candidate: %+v", rep.Warnings)
	}
	names := stepNames(sel)
	if !slices.Equal(names[:5], bumpNames) {
		t.Fatalf("steps = %v, want %v first", names, bumpNames)
	}
	if got := sel.Steps[3].Retries; got != 6 {
		t.Errorf("go test retries = %d, want 6", got)
	}
	if notes := strings.Join(sel.Steps[3].ReviewNotes, "\n"); !strings.Contains(notes, "retried in 3 of 5 examples") {
		t.Errorf("go test review notes = %q, want the retry", notes)
	}
	for e, ex := range sel.Examples {
		if e%2 == 0 {
			want := []int{0, 0, 0, 2, 0}
			if diff := cmp.Diff(want, ex.Retries[:5]); diff != "" {
				t.Errorf("example %s retries (-want +got):\n%s", ex.TraceID, diff)
			}
			// The successful attempt is matched: after the two failures,
			// the two edits and the read.
			if ex.Positions[3] != 8 {
				t.Errorf("example %s go test at %d, want 8 (the attempt that passed)", ex.TraceID, ex.Positions[3])
			}
		} else if ex.Retries != nil {
			t.Errorf("example %s retries = %v, want none", ex.TraceID, ex.Retries)
		}
	}
}

func TestPrepare(t *testing.T) {
	tr := session("s",
		obs("", "Read", `{"file_path":"a"}`),
		failing(cmd("", "go test", "")),
		edit("", "a.go"),
		failing(cmd("", "go test", "")),
		cmd("", "go test", ""), // passes: folds the failures and the edit
		failing(cmd("", "go vet", "")),
		cmd("", "go build", ""), // another head: the vet failure stays
		failing(cmd("", "go vet", "")),
	)
	symbols := map[string]int32{}
	p := prepare([]*trace.Trace{tr}, symbols)
	s := p.seqs[0]
	if diff := cmp.Diff([]int32{4, 5, 6, 7}, s.pos); diff != "" {
		t.Errorf("positions (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int32{2, 0, 0, 0}, s.retries); diff != "" {
		t.Errorf("retries (-want +got):\n%s", diff)
	}
	if p.observations != 1 || p.retries != 2 {
		t.Errorf("observations, retries = %d, %d; want 1, 2", p.observations, p.retries)
	}
}

// TestGappedNoiseStep plants a five-step procedure in ten sessions, with
// an extra action between its second and third steps in some of them.
func TestGappedNoiseStep(t *testing.T) {
	build := func() trace.Action { return cmd("", "go build", `{"arg1":"./..."}`) }
	lint := func() trace.Action { return cmd("", "golangci-lint run", "") }
	tests := []struct {
		name      string
		extra     func() trace.Action
		in        int  // sessions with the extra action between steps 2 and 3
		elsewhere bool // the extra action is also common outside the procedure
		want      []string
		support   int
	}{{
		name:  "a common build in most runs is noise",
		extra: build, in: 7, elsewhere: true,
		want: bumpNames, support: 10,
	}, {
		name:  "a common build in nine runs of ten is noise too",
		extra: build, in: 9, elsewhere: true,
		want: bumpNames, support: 10,
	}, {
		name:  "a rare action in every run is a step",
		extra: lint, in: 10,
		want:    []string{"git checkout", "go get", "golangci-lint run", "go mod tidy", "go test", "git commit"},
		support: 10,
	}}
	for _, tt := range tests {
		for seed := range uint64(3) {
			t.Run(fmt.Sprintf("%s/seed=%d", tt.name, seed), func(t *testing.T) {
				r := rand.New(rand.NewPCG(seed, 7))
				var traces []*trace.Trace
				for i := range 10 {
					steps := bumpSteps(i)
					if i < tt.in {
						steps = slices.Insert(steps, 2, tt.extra())
					}
					actions, _ := noisy(r, steps)
					if tt.elsewhere {
						// Builds everywhere: a few at random places in every
						// session, as agents do.
						for range 3 + r.IntN(4) {
							actions = slices.Insert(actions, r.IntN(len(actions)+1), build())
						}
					}
					traces = append(traces, session(fmt.Sprintf("s%02d", i), actions...))
				}
				if tt.elsewhere {
					// And sessions that build without the procedure.
					for i := range 10 {
						actions, _ := noisy(r, []trace.Action{build(), build(), cmd("", "go test", `{"arg1":"./..."}`), build()})
						traces = append(traces, session(fmt.Sprintf("x%02d", i), actions...))
					}
				}
				rep := mustMine(t, traces, Options{})
				sel := rep.Selected()
				if sel == nil {
					t.Fatalf("no candidate: %+v", rep.Warnings)
				}
				if diff := cmp.Diff(tt.want, stepNames(sel)); diff != "" {
					t.Errorf("steps (-want +got):\n%s", diff)
				}
				if sel.Support != tt.support {
					t.Errorf("support = %d, want %d", sel.Support, tt.support)
				}
				for _, c := range rep.Candidates[1:] {
					if len(c.Steps) > len(sel.Steps) && isSubsequence(namesSyms(stepNames(&c)), namesSyms(stepNames(sel))) {
						t.Errorf("candidate %s %v repeats the selected one with an extra step", c.Name, stepNames(&c))
					}
				}
			})
		}
	}
}

// namesSyms maps names to stable small ints, for isSubsequence.
func namesSyms(names []string) []int32 {
	out := make([]int32, len(names))
	for i, n := range names {
		var h int32
		for _, c := range n {
			h = h*31 + c
		}
		out[i] = h
	}
	return out
}

func TestGappedModes(t *testing.T) {
	clean := func() []*trace.Trace {
		var out []*trace.Trace
		for i := range 3 {
			id := fmt.Sprintf("t%d", i)
			out = append(out, mk(id, noise(id+"-n"),
				act(id+"-a", trace.KindToolCall, "git.create_branch", fmt.Sprintf(`{"name":"b%d"}`, i)),
				act(id+"-b", trace.KindToolCall, "go.get", fmt.Sprintf(`{"version":"1.%d"}`, i))))
		}
		return out
	}
	// Auto on traces with neither agent metadata nor observations is the
	// exact miner, and says nothing about a miner in the report.
	auto := mustMine(t, clean(), Options{})
	exact := mustMine(t, clean(), Options{Mode: ModeExact})
	a, _ := auto.Encode()
	e, _ := exact.Encode()
	if diff := cmp.Diff(string(e), string(a)); diff != "" {
		t.Errorf("auto differs from exact on clean traces (-exact +auto):\n%s", diff)
	}
	if auto.Mining.Miner != "" || auto.Selected().Examples[0].Positions != nil {
		t.Errorf("exact report has miner %q, positions %v; want neither", auto.Mining.Miner, auto.Selected().Examples[0].Positions)
	}

	// One observation anywhere makes auto choose gapped.
	withObs := clean()
	withObs[1].Actions = append(withObs[1].Actions, obs("t1-r", "Read", ""))
	rep := mustMine(t, withObs, Options{})
	if rep.Mining.Miner != ModeGapped || rep.Mining.MinerReason != "auto: trace t1 action t1-r is an observation" {
		t.Errorf("miner = %q (%q), want gapped for the observation", rep.Mining.Miner, rep.Mining.MinerReason)
	}
	if sel := rep.Selected(); sel == nil || sel.Support != 3 || len(sel.Steps) != 2 {
		t.Errorf("gapped on clean traces: %+v, want the 2-step procedure in 3 traces", sel)
	}

	// Exact on sessions finds nothing contiguous enough; gapped does.
	r := rand.New(rand.NewPCG(3, 3))
	var sessions []*trace.Trace
	for i := range 4 {
		actions, _ := noisy(r, bumpSteps(i))
		sessions = append(sessions, session(fmt.Sprintf("s%d", i), actions...))
	}
	ex := mustMine(t, sessions, Options{Mode: ModeExact})
	if ex.Mining.Miner != "" {
		t.Errorf("exact mode reports miner %q", ex.Mining.Miner)
	}
	if sel := ex.Selected(); sel != nil && slices.Equal(stepNames(sel), bumpNames) {
		t.Errorf("exact mode found %v through the noise", stepNames(sel))
	}
	gp := mustMine(t, sessions, Options{Mode: ModeGapped})
	if gp.Mining.MinerReason != "requested" {
		t.Errorf("miner reason = %q, want requested", gp.Mining.MinerReason)
	}

	if _, err := Mine(context.Background(), sessions, Options{Mode: "fuzzy"}); !errors.Is(err, ErrMode) {
		t.Errorf("Mine(mode fuzzy) error = %v, want ErrMode", err)
	}
	if _, err := Mine(context.Background(), sessions, Options{MaxGap: -1}); err == nil {
		t.Errorf("Mine(max gap -1) succeeded, want an error")
	}
}

func TestGappedMaxGap(t *testing.T) {
	// Three unrelated commands between every two steps: found with a gap
	// of 3, not with a gap of 2.
	var traces []*trace.Trace
	for i := range 3 {
		var actions []trace.Action
		for k, s := range bumpSteps(i) {
			actions = append(actions, s)
			for j := range 3 {
				actions = append(actions, cmd("", fmt.Sprintf("tool%d.%d.%d", i, k, j), ""))
			}
		}
		traces = append(traces, session(fmt.Sprintf("s%d", i), actions...))
	}
	if sel := mustMine(t, traces, Options{MaxGap: 3}).Selected(); sel == nil || len(sel.Steps) != 5 {
		t.Errorf("max gap 3: selected %v, want the 5 steps", sel)
	}
	if sel := mustMine(t, traces, Options{MaxGap: 2}).Selected(); sel != nil {
		t.Errorf("max gap 2: selected %v, want none", stepNames(sel))
	}
}

func TestGappedDeterministic(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	var traces []*trace.Trace
	for i := range 12 {
		actions, _ := noisy(r, bumpSteps(i))
		traces = append(traces, session(fmt.Sprintf("s%02d", i), actions...))
	}
	encode := func(procs int) string {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		b, err := mustMine(t, traces, Options{}).Encode()
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	first := encode(1)
	for _, procs := range []int{1, 4} {
		if diff := cmp.Diff(first, encode(procs)); diff != "" {
			t.Fatalf("report with GOMAXPROCS=%d differs (-first +got):\n%s", procs, diff)
		}
	}
}

func TestGappedSearchBound(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	var traces []*trace.Trace
	for i := range 6 {
		actions, _ := noisy(r, bumpSteps(i))
		traces = append(traces, session(fmt.Sprintf("s%d", i), actions...))
	}
	rep := mustMine(t, traces, Options{SearchBudget: 5})
	var found bool
	for _, w := range rep.Warnings {
		if w.Code == CodeSearchBound && strings.Contains(w.Message, "budget of 5 patterns") {
			found = true
		}
	}
	if !found {
		t.Errorf("warnings = %+v, want %s for the budget", rep.Warnings, CodeSearchBound)
	}
	if rep.Mining.PatternsSearched > 5 {
		t.Errorf("patterns searched = %d, want at most the budget 5", rep.Mining.PatternsSearched)
	}
	full := mustMine(t, traces, Options{})
	for _, w := range full.Warnings {
		if w.Code == CodeSearchBound {
			t.Errorf("default budget cut a small search: %s", w.Message)
		}
	}
}

// bruteSupport counts the sequences that contain syms with at most gap
// items between consecutive symbols, trying every embedding. stops, when
// not nil, holds each sequence's gap-rule bits (gseq.stops, one bool per
// bit): a gap between steps at items a < b must have bits 2a+2 through
// 2b clear.
func bruteSupport(seqs [][]int32, syms []int32, gap int, stops ...[]bool) int {
	var ok func(i int, s []int32, k, from int) bool
	ok = func(i int, s []int32, k, from int) bool {
		if k == len(syms) {
			return true
		}
		hi := len(s) - 1
		if k > 0 {
			hi = min(hi, from+gap)
		}
		for q := from; q <= hi; q++ {
			if k > 0 && stops != nil && slices.Contains(stops[i][2*from:2*q+1], true) {
				break
			}
			if s[q] == syms[k] && ok(i, s, k+1, q+1) {
				return true
			}
		}
		return false
	}
	n := 0
	for i, s := range seqs {
		if ok(i, s, 0, 0) {
			n++
		}
	}
	return n
}

// TestGapSearchAgainstBruteForce checks the search on random sequences,
// with random actions the gap rule keeps out of gaps: every pattern it
// reports has the support a brute-force count gives, and every pattern
// that brute force finds frequent and closed at both ends is reported.
func TestGapSearchAgainstBruteForce(t *testing.T) {
	for seed := range uint64(40) {
		r := rand.New(rand.NewPCG(seed, 1))
		const nsym = 4
		seqs := make([][]int32, 3+r.IntN(4))
		for i := range seqs {
			seqs[i] = make([]int32, r.IntN(9))
			for j := range seqs[i] {
				seqs[i][j] = int32(r.IntN(nsym))
			}
		}
		gap := r.IntN(3)
		minSup := 2
		p := &prepared{seqs: make([]gseq, len(seqs)), traces: make([][]int32, nsym)}
		stops := make([][]bool, len(seqs))
		for i, s := range seqs {
			p.seqs[i] = gseq{items: s}
			stops[i] = make([]bool, 2*len(s)+2)
			if seed%2 == 1 {
				for b := range stops[i] {
					if r.IntN(6) == 0 {
						stops[i][b] = true
						p.seqs[i].setStop(b)
					}
				}
			}
			p.seqs[i].index()
			for _, y := range s {
				if tr := p.traces[y]; len(tr) == 0 || tr[len(tr)-1] != int32(i) {
					p.traces[y] = append(tr, int32(i))
				}
			}
		}
		g := &gapSearch{seqs: p.seqs, minSup: minSup, gap: int32(gap), nodeBudget: 1 << 30, workBudget: 1 << 40,
			last: make([]int32, nsym), cnt: make([]int32, nsym), bucket: make([][]int32, nsym), spans: map[int32]int{}}
		roots, projs := g.rootProjections(p.traces)
		got := map[string]int{}
		for _, pt := range g.search(roots, projs) {
			got[fmt.Sprint(pt.syms)] = pt.support
			if want := bruteSupport(seqs, pt.syms, gap, stops...); pt.support != want {
				t.Errorf("seed %d: %v support %d, brute force %d", seed, pt.syms, pt.support, want)
			}
			if m := p.matchAll(pt.syms, int32(gap), -1, 0); len(m) != pt.support {
				t.Errorf("seed %d: %v embeds in %d traces, support %d", seed, pt.syms, len(m), pt.support)
			}
		}
		// Enumerate every pattern of length 2..5 by brute force.
		var all [][]int32
		var gen func(prefix []int32)
		gen = func(prefix []int32) {
			if len(prefix) >= 2 {
				all = append(all, slices.Clone(prefix))
			}
			if len(prefix) == 5 {
				return
			}
			for y := range int32(nsym) {
				gen(append(prefix, y))
			}
		}
		gen(nil)
		for _, syms := range all {
			sup := bruteSupport(seqs, syms, gap, stops...)
			if sup < minSup {
				continue
			}
			closed := true
			for y := range int32(nsym) {
				if bruteSupport(seqs, append(slices.Clone(syms), y), gap, stops...) == sup ||
					bruteSupport(seqs, append([]int32{y}, syms...), gap, stops...) == sup {
					closed = false
					break
				}
			}
			if _, ok := got[fmt.Sprint(syms)]; closed && !ok {
				t.Errorf("seed %d gap %d: closed pattern %v (support %d) not reported", seed, gap, syms, sup)
			}
		}
	}
}

func TestEmbedLeftmostFeasible(t *testing.T) {
	embed := func(items, syms []int32, gap int32, wide int) []int32 {
		p := &prepared{seqs: []gseq{{items: items}}}
		p.seqs[0].index()
		return p.embed(0, syms, gap, wide)
	}
	// The first a cannot reach b within the gap; the second can.
	items := []int32{0, 2, 2, 0, 1}
	if got := embed(items, []int32{0, 1}, 0, -1); !slices.Equal(got, []int32{3, 4}) {
		t.Errorf("embed gap 0 = %v, want [3 4]", got)
	}
	if got := embed(items, []int32{0, 1}, 3, -1); !slices.Equal(got, []int32{0, 4}) {
		t.Errorf("embed gap 3 = %v, want [0 4]", got)
	}
	// A wide gap before step 2 allows 2·0+1 items there.
	short := []int32{0, 2, 2, 1}
	if got := embed(short, []int32{0, 2, 1}, 0, -1); got != nil {
		t.Errorf("embed gap 0 = %v, want nil", got)
	}
	if got := embed(short, []int32{0, 2, 1}, 0, 2); !slices.Equal(got, []int32{0, 1, 3}) {
		t.Errorf("embed wide = %v, want [0 1 3]", got)
	}
	if got := embed(items, []int32{1, 0}, 8, -1); got != nil {
		t.Errorf("embed out of order = %v, want nil", got)
	}
}

func TestGappedCancelled(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	var traces []*trace.Trace
	for i := range 4 {
		actions, _ := noisy(r, bumpSteps(i))
		traces = append(traces, session(fmt.Sprintf("s%d", i), actions...))
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Mine(ctx, traces, Options{}); !errors.Is(err, context.Canceled) {
		t.Errorf("Mine(cancelled) error = %v, want context.Canceled", err)
	}
}

// A procedure longer than the search grows is cut at gapMaxLength steps,
// and the report says so with a search_bound warning rather than listing
// the prefix as if it were the whole procedure.
func TestGappedSearchBoundLength(t *testing.T) {
	steps := gapMaxLength + 4
	var traces []*trace.Trace
	for i := range 3 {
		var actions []trace.Action
		for k := range steps {
			actions = append(actions, cmd("", fmt.Sprintf("step%d run", k), `{}`))
		}
		traces = append(traces, session(fmt.Sprintf("s%d", i), actions...))
	}
	rep := mustMine(t, traces, Options{Mode: ModeGapped, SearchBudget: 2000})
	var found bool
	for _, w := range rep.Warnings {
		if w.Code == CodeSearchBound && strings.Contains(w.Message, fmt.Sprintf("reached %d steps", gapMaxLength)) {
			found = true
		}
	}
	if !found {
		t.Errorf("warnings = %+v, want %s for the length", rep.Warnings, CodeSearchBound)
	}
	for _, c := range rep.Candidates {
		if len(c.Steps) > gapMaxLength {
			t.Errorf("candidate %s has %d steps, more than the %d the search grows", c.Name, len(c.Steps), gapMaxLength)
		}
	}
}

// TestPrepareRetryWindow checks the bound on how far back a success looks
// for the failures it retries: a failure RetryWindow items back, past
// RetryWindow-1 edits, is folded; one item further it is not, and stays a
// failed action of its own.
func TestPrepareRetryWindow(t *testing.T) {
	for _, tc := range []struct {
		edits   int
		retries int32
	}{{candidate.RetryWindow - 1, 1}, {candidate.RetryWindow, 0}} {
		t.Run(fmt.Sprintf("edits=%d", tc.edits), func(t *testing.T) {
			actions := []trace.Action{failing(cmd("", "go test", ""))}
			for k := range tc.edits {
				actions = append(actions, edit("", fmt.Sprintf("f%d.go", k)))
			}
			actions = append(actions, cmd("", "go test", ""))
			p := prepare([]*trace.Trace{session("s", actions...)}, map[string]int32{})
			s := p.seqs[0]
			if got := s.retries[len(s.retries)-1]; got != tc.retries || int32(p.retries) != tc.retries {
				t.Errorf("success retries %d, total %d; want %d", got, p.retries, tc.retries)
			}
			if tc.retries == 0 && s.pos[0] != 0 {
				t.Errorf("first item at %d, want the unfolded failure at 0", s.pos[0])
			}
			if tc.retries > 0 && len(s.items) != 1 {
				t.Errorf("%d items, want the success alone (failure and edits folded)", len(s.items))
			}
		})
	}
}

// TestGappedSearchBoundWork checks the second bound: the positions a
// search scans are limited to gapWorkPerNode per pattern of budget, and
// reaching it is reported like the other bounds.
func TestGappedSearchBoundWork(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	var traces []*trace.Trace
	// Enough traces that the first extension alone scans more than
	// one pattern's share.
	for i := range 400 {
		actions, _ := noisy(r, bumpSteps(i))
		traces = append(traces, session(fmt.Sprintf("s%02d", i), actions...))
	}
	rep := mustMine(t, traces, Options{SearchBudget: 1})
	want := fmt.Sprintf("scanned its budget of %d projected positions", gapWorkPerNode)
	var found bool
	for _, w := range rep.Warnings {
		if w.Code == CodeSearchBound && strings.Contains(w.Message, want) {
			found = true
		}
	}
	if !found {
		t.Errorf("warnings = %+v, want %s %q", rep.Warnings, CodeSearchBound, want)
	}
}
