package harness

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/crystallize-dev/crystallize/internal/harness/memory"
)

// Risk is a risk family the profile shows, with the hints that
// triggered it and the harness the family calls for.
type Risk struct {
	Family    string     `json:"family"`
	Signals   []RiskHint `json:"signals"`
	Harnesses []string   `json:"harnesses"`
}

// familyHarnesses are the harnesses each family calls for.
var familyHarnesses = map[string][]string{
	FamilyWeb:            {"browser smoke", "accessibility checks", "visual diffs", "performance budget", "browser trace replay"},
	FamilyTerminal:       {"SSH session smoke", "recorded screen baseline"},
	FamilyAgent:          {"fixture replay", "trajectory assertions", "tool permission tests", "injection red-team"},
	FamilyRAG:            {"recall@k", "MRR", "NDCG", "near-miss sets", "faithfulness", "context recall"},
	FamilyInfrastructure: {"build matrix", "secret scan", "config validation", "rollback checks"},
	FamilyDatabase:       {"migration up/down", "data contract tests", "destructive-change guard"},
	FamilyWindows:        {"GOOS=windows build", "service install smoke", "PowerShell contract tests"},
	FamilySecurity:       {"auth bypass tests", "CSRF", "rate limit", "sensitive log scan"},
	FamilyPerformance:    {"benchmark suite", "regression threshold", "flamegraph capture"},
}

// Classify maps a profile to its risk families, in Families order.
func Classify(p *RepoProfile) []Risk {
	list := []Risk{}
	for _, f := range Families {
		r := Risk{Family: f, Signals: []RiskHint{}, Harnesses: familyHarnesses[f]}
		for _, h := range p.RiskHints {
			if h.Family == f {
				r.Signals = append(r.Signals, h)
			}
		}
		if len(r.Signals) > 0 {
			list = append(list, r)
		}
	}
	return list
}

// Finding is one planner output entry: a subject (a family, gate, suite
// or file) and why it is listed.
type Finding struct {
	Subject string `json:"subject"`
	Reason  string `json:"reason"`
}

// Proposal is a kit the planner proposes, with what a reviewer needs to
// accept it.
type Proposal struct {
	Kit              string   `json:"kit"`
	Purpose          string   `json:"purpose"`
	Consumer         string   `json:"consumer"`
	RiskProtected    []string `json:"riskProtected"`
	FilesWritten     []string `json:"filesWritten"`
	CommandsRun      []string `json:"commandsRun"`
	BlockingCriteria string   `json:"blockingCriteria"`
	RollbackPath     string   `json:"rollbackPath"`
}

// Plan is the planner's output for a profile and the current harness.
type Plan struct {
	ProfileID string     `json:"profileId"`
	Risks     []Risk     `json:"risks"`
	Missing   []Finding  `json:"missing"`
	Weak      []Finding  `json:"weak"`
	Stale     []Finding  `json:"stale"`
	Overbroad []Finding  `json:"overbroad"`
	Proposed  []Proposal `json:"proposed"`
	// Memories are the repository's memories this plan recalls (Recall),
	// the most relevant first; empty unless the plan was made by
	// PlanStored, which reads them.
	Memories []memory.Recalled `json:"memories"`
}

// maxGateSeconds is the longest timeout a gate may declare before the
// planner calls it overbroad: a gate slower than that gets routed
// around.
const maxGateSeconds = 1800

// MakePlan compares the profile's risks with the harness in root (its
// manifest, nil when there is none) and lists what is missing, weak,
// stale and overbroad, and the kits to propose. passed, when not nil,
// is the ledger's evidence: the gate and suite ids that have passed at
// least once; a kit's required evidence that never passed makes its
// harness weak.
func MakePlan(root string, p *RepoProfile, m *Manifest, passed map[string]bool) *Plan {
	pl := &Plan{ProfileID: p.ProfileID, Risks: Classify(p), Missing: []Finding{}, Weak: []Finding{}, Stale: []Finding{}, Overbroad: []Finding{}, Proposed: []Proposal{}, Memories: []memory.Recalled{}}
	applied := map[string]bool{}
	covered := map[string]bool{}
	if m != nil {
		for _, k := range m.Kits {
			applied[k] = true
		}
		for _, f := range m.RiskFamilies {
			covered[f] = true
		}
		pl.Weak, pl.Stale, pl.Overbroad = inspect(root, p, m)
		if passed != nil {
			for _, id := range m.Kits {
				k, ok := KitByID(id)
				if !ok {
					continue
				}
				for _, ev := range k.RequiredEvidence {
					declared := slices.ContainsFunc(m.Commands, func(c Command) bool { return c.ID == ev.ID }) ||
						slices.ContainsFunc(m.EvalSuites, func(s EvalSuite) bool { return s.ID == ev.ID })
					if declared && !passed[ev.ID] {
						pl.Weak = append(pl.Weak, Finding{Subject: "evidence " + ev.ID, Reason: "kit " + id + " requires that " + ev.Description + ", and no run in the ledger shows it"})
					}
				}
			}
		}
	}
	detected := map[string]bool{}
	for _, r := range pl.Risks {
		detected[r.Family] = true
	}
	kits := Kits()
	for _, r := range pl.Risks {
		if covered[r.Family] {
			continue
		}
		var by, rewrite []string
		for _, k := range kits {
			switch {
			case !slices.Contains(k.Families, r.Family) || !k.Applies(p):
			case applied[k.ID]:
				rewrite = append(rewrite, k.ID)
			default:
				by = append(by, k.ID)
			}
		}
		reason := "no harness covers it; it calls for " + strings.Join(r.Harnesses, ", ")
		switch {
		case len(by) > 0:
			reason += "; proposed kit " + strings.Join(by, ", ")
		case len(rewrite) > 0:
			// The kit was written before the family showed up; writing it
			// again adds the gates it has for the family.
			reason += "; rewrite kit " + strings.Join(rewrite, ", ") + " to add its gates for it"
		default:
			reason += "; no template kit yet, write these gates by hand"
		}
		pl.Missing = append(pl.Missing, Finding{Subject: r.Family, Reason: reason})
	}
	for _, k := range kits {
		if applied[k.ID] || !k.Applies(p) {
			continue
		}
		pr := Proposal{Kit: k.ID, Purpose: k.Purpose, Consumer: k.Consumer, RiskProtected: []string{}, FilesWritten: []string{ManifestPath},
			CommandsRun: []string{}, BlockingCriteria: k.BlockingCriteria, RollbackPath: k.Rollback}
		for _, f := range k.Families {
			if detected[f] {
				pr.RiskProtected = append(pr.RiskProtected, f)
			}
		}
		for _, c := range k.AppliesWhen {
			if c.Stack != "" && c.matches(p) {
				pr.RiskProtected = append(pr.RiskProtected, "regressions in the "+c.Stack+" build and tests")
				break
			}
		}
		for _, w := range k.outputs(p) {
			pr.FilesWritten = append(pr.FilesWritten, w.Path)
		}
		for _, c := range k.commands(p) {
			pr.CommandsRun = append(pr.CommandsRun, c.Command)
		}
		for _, s := range k.EvalSuites {
			pr.CommandsRun = append(pr.CommandsRun, "crystallize harness run (eval suite "+s.ID+")")
		}
		pl.Proposed = append(pl.Proposed, pr)
	}
	return pl
}

// inspect checks an existing manifest against the repository.
func inspect(root string, p *RepoProfile, m *Manifest) (weak, stale, overbroad []Finding) {
	weak, stale, overbroad = []Finding{}, []Finding{}, []Finding{}
	exists := func(rel string) bool {
		_, err := os.Stat(filepath.Join(root, filepath.FromSlash(rel)))
		return err == nil
	}
	for _, c := range m.Commands {
		if s := scriptOf(c.Command); s != "" && !exists(s) {
			stale = append(stale, Finding{Subject: "command " + c.ID, Reason: fmt.Sprintf("runs %s, which does not exist", s)})
		}
		if c.TimeoutSeconds == 0 {
			weak = append(weak, Finding{Subject: "command " + c.ID, Reason: "no timeout: a hung gate blocks forever"})
		}
		if c.TimeoutSeconds > maxGateSeconds {
			overbroad = append(overbroad, Finding{Subject: "command " + c.ID, Reason: fmt.Sprintf("timeout %ds is over %ds: split it by package or phase", c.TimeoutSeconds, maxGateSeconds)})
		}
	}
	for _, s := range m.EvalSuites {
		if !exists(s.Path) {
			stale = append(stale, Finding{Subject: "eval suite " + s.ID, Reason: fmt.Sprintf("reads %s, which does not exist", s.Path)})
		}
		if s.Threshold == 0 {
			weak = append(weak, Finding{Subject: "eval suite " + s.ID, Reason: "threshold 0: the suite can never fail"})
		}
	}
	for _, f := range m.Files {
		if !exists(f.Path) && !slices.ContainsFunc(stale, func(x Finding) bool { return strings.Contains(x.Reason, f.Path+",") }) {
			stale = append(stale, Finding{Subject: "file " + f.Path, Reason: "listed in the manifest, missing from the repository"})
		}
	}
	if len(m.Commands) > 0 && len(p.CI) == 0 {
		weak = append(weak, Finding{Subject: "manifest", Reason: "no CI configuration runs the harness"})
	}
	if len(m.Commands) > 0 && !slices.ContainsFunc(m.Commands, func(c Command) bool { return c.Blocks }) {
		weak = append(weak, Finding{Subject: "manifest", Reason: "no command blocks: every gate is advisory"})
	}
	detected := map[string]bool{}
	for _, h := range p.RiskHints {
		detected[h.Family] = true
	}
	for _, f := range m.RiskFamilies {
		if !detected[f] {
			overbroad = append(overbroad, Finding{Subject: "risk family " + f, Reason: "the manifest guards it but the profile shows no signal for it"})
		}
	}
	return weak, stale, overbroad
}
