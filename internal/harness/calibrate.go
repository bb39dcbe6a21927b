package harness

// Judge calibration follows one rule: a model judge earns the right to
// block. A golden set of labelled cases is split into a calibration part
// (to tune rubrics against) and a held-out part (that decides). The
// judge's provider, model, temperature, output schema, prompt wrapper,
// case schema and rubric hash are pinned in a configuration hash; a
// calibration only counts for the hash it was made with, so changing any
// of them sends the judge back to advisory.

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/crystallize-dev/crystallize/internal/proc"
	"github.com/crystallize-dev/crystallize/internal/store"
)

// CaseSchemaVersion names the eval case format; it is part of the judge
// configuration hash.
const CaseSchemaVersion = "harness-case/1"

// CalibrateOptions configures Calibrate.
type CalibrateOptions struct {
	// Config is the pinned judge.
	Config JudgeConfig
	// Quorum are further judges; with two or more judges in all, every
	// verdict is a majority and their disagreement is measured.
	Quorum []JudgeConfig
	// Reruns is how many times each held-out case is judged to measure
	// stability (default 2).
	Reruns int
	// MaxFalseBlockRate is the highest held-out false-block rate a
	// promoted judge may have (default 0.1).
	MaxFalseBlockRate float64
	// Root is the repository the cases' commands and files are read
	// from; golden cases usually carry their output recorded inline.
	Root string
	// Environ and PassEnv give the cases' commands their environment,
	// as RunOptions does.
	Environ, PassEnv []string
}

// Pinned is what a calibration is valid for.
type Pinned struct {
	Provider      string  `json:"provider"`
	Model         string  `json:"model"`
	Temperature   float64 `json:"temperature"`
	Quorum        int     `json:"quorum"`
	OutputSchema  string  `json:"outputSchemaHash"`
	PromptWrapper string  `json:"promptWrapper"`
	CaseSchema    string  `json:"caseSchema"`
	RubricHash    string  `json:"rubricHash"`
}

// SplitMetrics are the judge's measurements on one split, with "fail"
// as the positive class: a false pass lets a known failure through, a
// false block stops a known good case.
type SplitMetrics struct {
	Cases                  int     `json:"cases"`
	FalsePasses            int     `json:"falsePasses"`
	FalseBlocks            int     `json:"falseBlocks"`
	CriticalFalsePasses    int     `json:"criticalFalsePasses"`
	CriticalFailures       int     `json:"criticalFailures"`
	FalsePassRate          float64 `json:"falsePassRate"`
	FalseBlockRate         float64 `json:"falseBlockRate"`
	Precision              float64 `json:"precision"`
	Recall                 float64 `json:"recall"`
	F1                     float64 `json:"f1"`
	SchemaValidity         float64 `json:"schemaValidity"`
	QuorumDisagreement     float64 `json:"quorumDisagreement"`
	RerunStability         float64 `json:"rerunStability"`
	AmbiguousOrUnjudgeable int     `json:"ambiguousOrUnjudgeable"`
}

// Calibration is the outcome of Calibrate. It names the suite and the
// golden set it was measured on: a judge promoted there is promoted
// nowhere else, and not there either once the golden set changes.
type Calibration struct {
	SuiteID string `json:"suiteId"`
	// GoldenSet is the golden set's file, relative to the repository
	// root when it lies inside it.
	GoldenSet string `json:"goldenSet,omitempty"`
	// GoldenSetHash digests the golden set's cases (GoldenSetHash).
	GoldenSetHash          string       `json:"goldenSetHash"`
	ConfigHash             string       `json:"configHash"`
	Pinned                 Pinned       `json:"pinned"`
	Calibration            SplitMetrics `json:"calibration"`
	HeldOut                SplitMetrics `json:"heldOut"`
	DeterministicCompanion bool         `json:"deterministicCompanion"`
	Promoted               bool         `json:"promoted"`
	Reasons                []string     `json:"reasons"`
}

// ConfigHash pins a judge configuration and a suite's rubrics.
func ConfigHash(p Pinned) string {
	b, _ := json.Marshal(p)
	return "jc_" + shortHash(string(b))
}

// GoldenSetHash digests a golden set's cases as parsed, so that any
// change to a case (an output, a label, a split, an assertion) makes a
// different golden set while reformatting the file does not.
func GoldenSetHash(cases []Case) string {
	b, _ := json.Marshal(cases)
	return "sha256:" + hashBytes(b)
}

// pin computes the pinned configuration of a judge over cases.
func pin(cfg JudgeConfig, quorum int, cases []Case) Pinned {
	var rubrics []string
	for _, c := range cases {
		for _, a := range c.Assert {
			if modelJudged[a.Type] {
				rubrics = append(rubrics, a.Type+"\x00"+a.Rubric)
			}
		}
	}
	slices.Sort(rubrics)
	provider := cfg.Provider
	if provider == "" {
		provider = ProviderOpenAI
	}
	return Pinned{Provider: provider, Model: cfg.Model, Temperature: cfg.Temperature, Quorum: quorum,
		OutputSchema: shortHash(VerdictSchema), PromptWrapper: PromptWrapperVersion, CaseSchema: CaseSchemaVersion,
		RubricHash: "sha256:" + hashBytes([]byte(strings.Join(rubrics, "\n")))}
}

// splitOf is a case's split: its own, else a stable half of the ids by
// hash, so the split never depends on file order.
func splitOf(c Case) string {
	if c.Split != "" {
		return c.Split
	}
	if hashBytes([]byte(c.ID))[0] < '8' {
		return SplitCalibration
	}
	return SplitHeldOut
}

// Calibrate measures the judge on the golden set cases (each with
// expected pass or fail and a model-judged assertion) and decides
// whether it may block. The error is for a golden set that cannot be
// calibrated at all; a judge that answers badly is a measured result.
func Calibrate(ctx context.Context, suiteID string, cases []Case, opts CalibrateOptions) (*Calibration, error) {
	judges := []Judge{&HTTPJudge{Config: opts.Config}}
	for _, q := range opts.Quorum {
		judges = append(judges, &HTTPJudge{Config: q})
	}
	reruns := opts.Reruns
	if reruns <= 0 {
		reruns = 2
	}
	maxFB := opts.MaxFalseBlockRate
	if maxFB == 0 {
		maxFB = 0.1
	}
	p := pin(opts.Config, len(judges), cases)
	cal := &Calibration{SuiteID: suiteID, GoldenSetHash: GoldenSetHash(cases), Pinned: p, ConfigHash: ConfigHash(p), Reasons: []string{}}
	var labelled int
	cal.DeterministicCompanion = true
	critical := 0
	for _, c := range cases {
		if c.Expected == "pass" || c.Expected == "fail" {
			labelled++
		}
		if c.Critical {
			critical++
			if !slices.ContainsFunc(c.Assert, func(a Assertion) bool { return Blocking[a.Type] == "yes" }) {
				cal.DeterministicCompanion = false
			}
		}
	}
	if critical == 0 {
		cal.DeterministicCompanion = false
	}
	if labelled == 0 {
		return nil, fmt.Errorf("calibrating %s: no case is labelled expected pass or fail", suiteID)
	}
	for _, split := range []string{SplitCalibration, SplitHeldOut} {
		var part []Case
		for _, c := range cases {
			if splitOf(c) == split {
				part = append(part, c)
			}
		}
		runs := 1
		if split == SplitHeldOut {
			runs = reruns
		}
		m := measure(ctx, opts.Root, proc.Environ(opts.Environ, opts.PassEnv), judges, part, runs)
		if split == SplitCalibration {
			cal.Calibration = m
		} else {
			cal.HeldOut = m
		}
	}
	h := cal.HeldOut
	bar := []struct {
		ok     bool
		reason string
	}{
		{h.Cases > 0, "the held-out split has no labelled case"},
		{h.CriticalFailures > 0, "no held-out critical failure to prove the judge catches one"},
		{h.CriticalFalsePasses == 0, fmt.Sprintf("%d false pass(es) on held-out critical failures", h.CriticalFalsePasses)},
		{h.SchemaValidity == 1, fmt.Sprintf("schema validity %.3g < 1", h.SchemaValidity)},
		{h.RerunStability == 1, fmt.Sprintf("rerun stability %.3g < 1", h.RerunStability)},
		{h.FalseBlockRate <= maxFB, fmt.Sprintf("false-block rate %.3g > %.3g", h.FalseBlockRate, maxFB)},
		{cal.DeterministicCompanion || (len(judges) >= 2 && h.QuorumDisagreement == 0),
			"no deterministic companion assertion on every critical case and no agreeing judge quorum"},
	}
	cal.Promoted = true
	for _, b := range bar {
		if !b.ok {
			cal.Promoted = false
			cal.Reasons = append(cal.Reasons, b.reason)
		}
	}
	return cal, nil
}

// measure judges each labelled case runs times with every judge.
func measure(ctx context.Context, root string, env []string, judges []Judge, cases []Case, runs int) SplitMetrics {
	var m SplitMetrics
	var calls, valid, stable, judgedCases, disagree int
	var tp, fp, fn int
	var failures, passes int
	for _, c := range cases {
		if c.Expected != "pass" && c.Expected != "fail" {
			m.AmbiguousOrUnjudgeable++
			continue
		}
		i := slices.IndexFunc(c.Assert, func(a Assertion) bool { return a.Type == TypeLLMRubric || a.Type == TypeFactuality })
		if i < 0 {
			m.AmbiguousOrUnjudgeable++
			continue
		}
		a := c.Assert[i]
		ev, err := gather(ctx, root, c.Input, env)
		if err != nil {
			m.AmbiguousOrUnjudgeable++
			continue
		}
		req := JudgeRequest{Type: a.Type, Rubric: a.Rubric, Input: c.Input.Prompt, Output: ev.Output, Reference: c.Input.Reference}
		if req.Input == "" {
			req.Input = c.Input.Query
		}
		var verdicts []bool
		caseDisagree := false
		for r := 0; r < runs; r++ {
			votes := 0
			var first *bool
			for _, j := range judges {
				calls++
				v, err := j.Judge(ctx, req)
				pass := false
				if err == nil {
					valid++
					pass = v.Pass
				}
				// An invalid or missing answer counts as a pass: the risk
				// calibration guards against is a judge that lets failures
				// through, so a judge that cannot answer must not look safe.
				if err != nil {
					pass = true
				}
				if pass {
					votes++
				}
				if first == nil {
					first = &pass
				} else if *first != pass {
					caseDisagree = true
				}
			}
			verdicts = append(verdicts, votes*2 > len(judges))
		}
		if caseDisagree {
			disagree++
		}
		judgedCases++
		if !slices.ContainsFunc(verdicts, func(v bool) bool { return v != verdicts[0] }) {
			stable++
		}
		pass := verdicts[0]
		m.Cases++
		switch {
		case c.Expected == "fail":
			failures++
			if c.Critical {
				m.CriticalFailures++
			}
			if pass {
				fn++
				m.FalsePasses++
				if c.Critical {
					m.CriticalFalsePasses++
				}
			} else {
				tp++
			}
		default:
			passes++
			if !pass {
				fp++
				m.FalseBlocks++
			}
		}
	}
	ratio := func(a, b int) float64 {
		if b == 0 {
			return 0
		}
		return float64(a) / float64(b)
	}
	m.FalsePassRate, m.FalseBlockRate = ratio(fn, failures), ratio(fp, passes)
	m.Precision, m.Recall = ratio(tp, tp+fp), ratio(tp, tp+fn)
	if m.Precision+m.Recall > 0 {
		m.F1 = 2 * m.Precision * m.Recall / (m.Precision + m.Recall)
	}
	m.SchemaValidity = ratio(valid, calls)
	m.RerunStability = ratio(stable, judgedCases)
	m.QuorumDisagreement = ratio(disagree, judgedCases)
	return m
}

// SaveCalibration stores a calibration in the ledger.
func SaveCalibration(ctx context.Context, db *store.DB, cal *Calibration, createdAt string) error {
	body, _ := json.Marshal(cal)
	return db.PutCalibration(ctx, store.CalibrationRow{SuiteID: cal.SuiteID, ConfigHash: cal.ConfigHash, CreatedAt: createdAt, Promoted: cal.Promoted, Body: string(body)})
}

// PromotedFor returns the Promoted function of RunOptions: a suite's
// judge blocks only when its newest calibration promoted it for that
// suite, on the golden set the suite holds now, under the same
// configuration hash that cfg and the suite's current rubrics give now.
// Any change to them (a rubric edit, another model, another case, the
// suite pointed at another file) invalidates it, and a suite without a
// calibration of its own has an advisory judge, whatever other suites
// promoted it for.
func PromotedFor(ctx context.Context, db *store.DB, root string, m *Manifest, cfg JudgeConfig) func(string) bool {
	return func(suiteID string) bool {
		i := slices.IndexFunc(m.EvalSuites, func(s EvalSuite) bool { return s.ID == suiteID })
		if i < 0 {
			return false
		}
		cases, err := LoadSuite(joinRoot(root, m.EvalSuites[i].Path))
		if err != nil {
			return false
		}
		row, ok, err := db.LastCalibration(ctx, suiteID)
		if err != nil || !ok || !row.Promoted {
			return false
		}
		var cal Calibration
		if err := json.Unmarshal([]byte(row.Body), &cal); err != nil {
			return false
		}
		// The calibration must be of this suite and of the cases it holds
		// now: the rubrics alone do not say which cases the judge was
		// measured on, and a golden set that is easier than the suite
		// proves nothing about it.
		if cal.SuiteID != suiteID || cal.GoldenSetHash != GoldenSetHash(cases) {
			return false
		}
		// A run asks one judge, so only a calibration of that judge alone
		// counts: a promotion earned by a quorum needs the quorum.
		return row.ConfigHash == ConfigHash(pin(cfg, 1, cases))
	}
}

func joinRoot(root, rel string) string { return filepath.Join(root, filepath.FromSlash(rel)) }
