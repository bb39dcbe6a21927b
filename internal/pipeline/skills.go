package pipeline

import (
	"fmt"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/codegen"
	"github.com/crystallize-dev/crystallize/internal/skill"
)

// recordSkills fills r's skill candidates: the skill of every candidate,
// decided by its replay gate (skill.ShadowGate) as a bundle decides it,
// with the SKILL.md of every safe one. The skills are named with only
// the package name, as bundle.Write and Induce name them, so that the
// ids in report.json are those of the bundles. r is the redacted report:
// the SKILL.md text is rendered from what is written, never from a
// secret the traces held.
func recordSkills(r *candidate.Report, packageName string) error {
	r.SkillCandidates = []candidate.SkillCandidate{}
	r.RejectedSkillCandidates = []candidate.SkillCandidate{}
	for i := range r.Candidates {
		c := &r.Candidates[i]
		w := skillWorkflow(c, packageName)
		g := skill.ShadowGate(c, w)
		md, err := skill.Render(c, g, w)
		if err != nil {
			return fmt.Errorf("rendering skill %s: %w", g.SkillName, err)
		}
		act := skill.Activation(c, g, w)
		sc := skillCandidate(c, g)
		sc.SkillMD, sc.Activation = string(md), &act
		if g.Accepted() {
			r.SkillCandidates = append(r.SkillCandidates, sc)
		} else {
			r.RejectedSkillCandidates = append(r.RejectedSkillCandidates, sc)
		}
	}
	// A rejected candidate's skill is rejected with it; it is listed so
	// that every candidate's skill is accounted for.
	for i := range r.RejectedCandidates {
		c := &r.RejectedCandidates[i]
		r.RejectedSkillCandidates = append(r.RejectedSkillCandidates, skillCandidate(c, skill.ShadowGate(c, skillWorkflow(c, packageName))))
	}
	return nil
}

// skillWorkflow names the workflow whose skill is c's: the function
// Workflow(c, opts) defines with only the package name in the options,
// as bundle.Write generates it.
func skillWorkflow(c *candidate.Candidate, packageName string) skill.Workflow {
	return skill.Workflow{Func: codegen.FuncName(c, codegen.Options{PackageName: packageName}), Package: packageName}
}

func skillCandidate(c *candidate.Candidate, g skill.Gate) candidate.SkillCandidate {
	reasons := g.RejectionReasons
	if reasons == nil {
		reasons = []candidate.Problem{}
	}
	return candidate.SkillCandidate{
		SkillID: g.SkillID, Name: g.SkillName, WorkflowCandidateID: c.ID,
		Decision: g.Decision, RejectionReasons: reasons, Gate: g,
	}
}
