// Package runstats is run statistics: what the recorded runs of each
// workflow did and what they saved, read back from the run records
// (trace.json, journal.json) the runner writes, so that "crystallize stats" needs nothing but the
// state directory. Savings are the candidate's, from the bundle a run
// ran: the model calls and tokens the source traces spent on the steps
// the workflow now runs as code, per run, times the runs that completed.
// Beside them, PerCall sets what one call spent against what the source
// sessions spent on the same procedure, each a median, in the same
// units and priced by the same rule (price.Table.Dollars).
package runstats

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"

	"github.com/crystallize-dev/crystallize/internal/bundle"
	"github.com/crystallize-dev/crystallize/internal/capped"
	"github.com/crystallize-dev/crystallize/internal/price"
	"github.com/crystallize-dev/crystallize/internal/runner"
	"github.com/crystallize-dev/crystallize/internal/runstate"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// Stats is the summary of a directory of run records.
type Stats struct {
	// Runs is the directory read (<state-dir>/runs).
	Runs      string          `json:"runs_dir"`
	Workflows []WorkflowStats `json:"workflows"`
	// Skipped lists run directories that could not be read, each with
	// why; they are not counted. A bundle whose examples could not be
	// read is listed too: its runs are counted, without PerCall.
	Skipped []SkippedRun `json:"skipped"`
}

// SkippedRun is a run directory Stats could not read.
type SkippedRun struct {
	Dir   string `json:"dir"`
	Error string `json:"error"`
}

// WorkflowStats are the runs of one workflow.
type WorkflowStats struct {
	Workflow string `json:"workflow"`
	// Bundle is the bundle directory the savings were read from, "" when
	// no run named a readable bundle.
	Bundle string `json:"bundle,omitempty"`
	// Runs counts every run, DryRuns those that executed nothing (they
	// count nowhere else).
	Runs    int `json:"runs"`
	DryRuns int `json:"dry_runs"`
	// Statuses counts the runs that executed by final status.
	Statuses map[string]int `json:"statuses"`
	// DeterministicSteps counts the steps executed as code: every
	// recorded action but model calls, approvals and fuzzy steps.
	DeterministicSteps int `json:"deterministic_steps"`
	// ModelCalls and TokensUsed are what the runs themselves spent.
	ModelCalls int64 `json:"model_calls"`
	TokensUsed int64 `json:"tokens_used"`
	// Avoided is the saving over the source traces, nil when unknown.
	Avoided *Avoided `json:"avoided"`
	// ApprovalsWaited counts runs that stopped at an approval nobody had
	// decided (still pending, or resumed since).
	ApprovalsWaited int `json:"approvals_waited"`
	// Failures counts failed, rejected and cancelled runs by reason
	// code (see FailureCode).
	Failures map[string]int `json:"failures"`
	// Fallbacks counts, per step ("step N name"), the failed checks and
	// steps that went to the fallback policy (see FallbackKey).
	Fallbacks map[string]int `json:"fallbacks_per_step"`
	// PerCall compares one call with one source session, nil when no
	// run named a bundle whose examples could be read.
	PerCall *PerCall `json:"per_call"`

	served   []Spend // per executed run
	unpriced map[string]bool
}

// PerCall is what one call of a workflow spent against what the agent
// spent on the same procedure in the sessions it was mined from.
type PerCall struct {
	// Examples counts the source examples measured (those the bundle
	// holds as fixtures); Source is the median of their spend on the
	// procedure's steps.
	Examples int   `json:"examples"`
	Source   Spend `json:"source"`
	// Calls counts the calls measured (every run that executed); Served
	// is the median of their spend.
	Calls  int   `json:"calls"`
	Served Spend `json:"served"`
	// UnpricedModels are the models whose tokens the price table does not
	// know and whose log gave no dollars: CostUSD leaves them out.
	// Sorted; absent when every token was priced.
	UnpricedModels []string `json:"unpriced_models,omitempty"`
}

// Spend is what some model calls cost.
type Spend struct {
	ModelCalls float64 `json:"model_calls"`
	Tokens     float64 `json:"tokens"`
	CostUSD    float64 `json:"cost_usd"`
}

// Avoided is what completed runs did not spend compared to the source
// traces of their candidate.
type Avoided struct {
	// Runs is the number of completed runs counted.
	Runs         int     `json:"runs"`
	ModelCalls   float64 `json:"model_calls"`
	InputTokens  float64 `json:"input_tokens"`
	OutputTokens float64 `json:"output_tokens"`
	CostUSD      float64 `json:"cost_usd"`
	WallMS       float64 `json:"wall_ms"`
}

// EmptyStats is the summary of a runs directory with no run in it.
func EmptyStats(runsDir string) *Stats {
	return &Stats{Runs: runsDir, Workflows: []WorkflowStats{}, Skipped: []SkippedRun{}}
}

// ReadStats reads every run record under runsDir (one directory per run,
// each with trace.json) and summarizes them per workflow, sorted by name,
// pricing tokens with prices (nil is price.Default). A directory without
// a readable trace is listed in Skipped. A runsDir that does not exist is
// an error.
func ReadStats(runsDir string, prices *price.Table) (*Stats, error) {
	if prices == nil {
		prices = price.Default()
	}
	entries, err := os.ReadDir(runsDir)
	if err != nil {
		return nil, fmt.Errorf("reading runs: %w", err)
	}
	st := EmptyStats(runsDir)
	by := map[string]*WorkflowStats{}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		dir := filepath.Join(runsDir, e.Name())
		r, err := readRun(dir, prices)
		if err != nil {
			st.Skipped = append(st.Skipped, SkippedRun{Dir: dir, Error: err.Error()})
			continue
		}
		w := by[r.workflow]
		if w == nil {
			w = &WorkflowStats{Workflow: r.workflow, Statuses: map[string]int{}, Failures: map[string]int{}, Fallbacks: map[string]int{}}
			by[r.workflow] = w
		}
		w.add(r)
	}
	for _, w := range by {
		pc, err := perCall(w, prices)
		if err != nil {
			// The runs are counted; only the comparison is unknown.
			st.Skipped = append(st.Skipped, SkippedRun{Dir: w.Bundle, Error: err.Error()})
		}
		w.PerCall = pc
		st.Workflows = append(st.Workflows, *w)
	}
	sort.Slice(st.Workflows, func(i, j int) bool { return st.Workflows[i].Workflow < st.Workflows[j].Workflow })
	return st, nil
}

// run is what Stats needs of one run record.
type run struct {
	workflow, status, failure string
	dryRun, waited            bool
	steps                     int
	modelCalls, tokens        int64
	bundle                    string
	savings                   *Avoided // per run
	fallbacks                 map[string]int
	spent                     Spend
	unpriced                  []string
}

func (w *WorkflowStats) add(r *run) {
	w.Runs++
	if r.dryRun {
		w.DryRuns++
		return
	}
	w.Statuses[r.status]++
	w.served = append(w.served, r.spent)
	for _, m := range r.unpriced {
		if w.unpriced == nil {
			w.unpriced = map[string]bool{}
		}
		w.unpriced[m] = true
	}
	w.DeterministicSteps += r.steps
	w.ModelCalls += r.modelCalls
	w.TokensUsed += r.tokens
	if r.waited {
		w.ApprovalsWaited++
	}
	if r.failure != "" {
		w.Failures[r.failure]++
	}
	for k, n := range r.fallbacks {
		w.Fallbacks[k] += n
	}
	if r.savings != nil {
		if w.Bundle == "" {
			w.Bundle = r.bundle
		}
		if r.status == runstate.StatusCompleted {
			if w.Avoided == nil {
				w.Avoided = &Avoided{}
			}
			a := w.Avoided
			a.Runs++
			a.ModelCalls += r.savings.ModelCalls
			a.InputTokens += r.savings.InputTokens
			a.OutputTokens += r.savings.OutputTokens
			a.CostUSD += r.savings.CostUSD
			a.WallMS += r.savings.WallMS
		}
	}
}

// maxRecordBytes bounds a run record stats reads (trace.json, the
// journal): a run records each string clipped (maxRecordedString), so
// a real record is far smaller.
const maxRecordBytes = 64 << 20

// readRun reads one run directory.
func readRun(dir string, prices *price.Table) (*run, error) {
	file := filepath.Join(dir, runstate.TraceFile)
	// Regular files only, and bounded: a FIFO named trace.json would
	// hang stats and a link to /dev/zero fill memory.
	data, err := capped.ReadFile(file, maxRecordBytes)
	if err != nil {
		return nil, err
	}
	t, err := trace.Decode(data, file, 0)
	if err != nil {
		return nil, err
	}
	meta, _ := t.Metadata["crystallize_run"].(map[string]any)
	if meta == nil {
		return nil, fmt.Errorf("%s: $.metadata.crystallize_run: missing; not a run record", file)
	}
	r := &run{}
	r.workflow, _ = meta["workflow"].(string)
	r.status, _ = meta["status"].(string)
	r.dryRun, _ = meta["dry_run"].(bool)
	if r.workflow == "" || r.status == "" {
		return nil, fmt.Errorf("%s: $.metadata.crystallize_run: no workflow or status", file)
	}
	r.fallbacks = runner.FallbackCounts(t.Actions)
	r.spent, r.unpriced = spend(t.Actions, prices)
	for _, a := range t.Actions {
		switch {
		case a.Metadata["check"] != nil: // a precondition, not a step
		case a.Kind == trace.KindModelCall, a.Kind == trace.KindHumanApproval:
		case a.Fuzzy != nil && *a.Fuzzy:
		default:
			r.steps++
		}
	}
	if u := t.Usage; u != nil {
		r.modelCalls = u.ModelCalls
		r.tokens = u.InputTokens + u.OutputTokens
	}
	switch r.status {
	case runstate.StatusFailed, runstate.StatusRejected, runstate.StatusCancelled:
		msg, _ := meta["error"].(string)
		r.failure, _ = meta["reason_code"].(string)
		if r.failure == "" {
			r.failure = runner.FailureCode(r.status, msg)
		}
	}
	_, err = os.Stat(filepath.Join(dir, runstate.JournalFile))
	r.waited = err == nil || r.status == runstate.StatusPendingApproval

	// The bundle the run ran: the journal's absolute target, else the
	// directory of the workflow file when it holds a manifest.
	var target string
	if jdata, err := capped.ReadFile(filepath.Join(dir, runstate.JournalFile), maxRecordBytes); err == nil {
		var j struct {
			Target string `json:"target"`
		}
		if json.Unmarshal(jdata, &j) == nil {
			target = j.Target
		}
	}
	if target == "" {
		if wf, _ := meta["workflow_file"].(string); wf != "" {
			target = filepath.Dir(filepath.FromSlash(wf))
		}
	}
	if target != "" {
		if b, err := bundle.Read(target); err == nil && b.Manifest.Savings != nil {
			p := b.Manifest.Savings.PerRun
			r.bundle = target
			r.savings = &Avoided{
				ModelCalls: p.ModelCallsAvoided, InputTokens: p.InputTokensAvoided,
				OutputTokens: p.OutputTokensAvoided, CostUSD: p.EstimatedCostUSDAvoided, WallMS: p.WallMSAvoided,
			}
		}
	}
	return r, nil
}

// spend is what actions cost (their recorded model calls and tokens,
// priced by prices), with the models whose tokens have no price.
func spend(actions []trace.Action, prices *price.Table) (Spend, []string) {
	var s Spend
	var unpriced []string
	for _, a := range actions {
		c := a.Cost
		if c == nil {
			continue
		}
		s.ModelCalls += float64(c.ModelCalls)
		s.Tokens += float64(c.InputTokens + c.OutputTokens)
		usd, ok := prices.Dollars(c.Model, price.Usage{
			Input: c.InputTokens, Output: c.OutputTokens, CacheRead: c.CacheReadTokens, CacheWrite: c.CacheWriteTokens,
		}, c.TotalCostUSD)
		if !ok && !slices.Contains(unpriced, c.Model) {
			unpriced = append(unpriced, c.Model)
		}
		s.CostUSD += usd
	}
	return s, unpriced
}

// perCall compares the median call of w with the median source example
// of the bundle its runs ran; nil when there is no such bundle, no
// example the bundle holds, or no executed call.
func perCall(w *WorkflowStats, prices *price.Table) (*PerCall, error) {
	if w.Bundle == "" || len(w.served) == 0 {
		return nil, nil
	}
	b, err := bundle.Read(w.Bundle)
	if err != nil {
		return nil, err
	}
	examples, err := b.ExampleActions()
	if err != nil {
		return nil, fmt.Errorf("reading the examples of %s: %w", w.Bundle, err)
	}
	if len(examples) == 0 {
		return nil, nil
	}
	unpriced := map[string]bool{}
	for m := range w.unpriced {
		unpriced[m] = true
	}
	source := make([]Spend, len(examples))
	for i, acts := range examples {
		var ms []string
		source[i], ms = spend(acts, prices)
		for _, m := range ms {
			unpriced[m] = true
		}
	}
	pc := &PerCall{Examples: len(source), Source: median(source), Calls: len(w.served), Served: median(w.served)}
	for m := range unpriced {
		pc.UnpricedModels = append(pc.UnpricedModels, m)
	}
	sort.Strings(pc.UnpricedModels)
	return pc, nil
}

// median is the median of each field of spends, taken apart: the
// typical session, not one pulled up by a session that wandered.
func median(spends []Spend) Spend {
	field := func(get func(Spend) float64) float64 {
		v := make([]float64, len(spends))
		for i, s := range spends {
			v[i] = get(s)
		}
		sort.Float64s(v)
		n := len(v)
		if n%2 == 1 {
			return v[n/2]
		}
		return (v[n/2-1] + v[n/2]) / 2
	}
	return Spend{
		ModelCalls: field(func(s Spend) float64 { return s.ModelCalls }),
		Tokens:     field(func(s Spend) float64 { return s.Tokens }),
		CostUSD:    math.Round(field(func(s Spend) float64 { return s.CostUSD })*1e6) / 1e6,
	}
}
