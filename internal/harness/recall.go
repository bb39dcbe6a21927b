package harness

import (
	"github.com/crystallize-dev/crystallize/internal/harness/memory"
)

// Subjects lists what a plan is about, as memory scopes name it: the
// paths, gates, kits, risk families and stacks of the profile p, the
// manifest m (nil when the repository has none) and the plan pl. A
// memory is recalled for the plan when one of its scope entries names
// one of them (memory.Recall).
//
// Paths come first in the order of how directly the work touches them,
// since a memory's reason is the first subject its scope matched: the
// files changed in the work tree, then the files the risk signals name,
// the manifest's own files and the files a proposed kit would write.
// Gates are the manifest's commands and eval suites and those of the
// proposed kits; kits are the applied and the proposed ones.
func Subjects(p *RepoProfile, m *Manifest, pl *Plan) []memory.Subject {
	var list []memory.Subject
	seen := map[memory.Subject]bool{}
	add := func(kind, value, why string) {
		s := memory.Subject{Kind: kind, Value: value, Why: why}
		if value != "" && !seen[s] {
			seen[s] = true
			list = append(list, s)
		}
	}
	for _, o := range p.Git.ChangedFiles {
		add(memory.ScopePath, o.Path, o.GitStatus+" file")
	}
	for _, h := range p.RiskHints {
		for _, path := range h.Paths {
			add(memory.ScopePath, path, h.Signal+" signal in")
		}
	}
	if m != nil {
		add(memory.ScopePath, ManifestPath, "harness file")
		for _, f := range m.Files {
			add(memory.ScopePath, f.Path, "harness file")
		}
		for _, s := range m.EvalSuites {
			add(memory.ScopePath, s.Path, "eval suite file")
		}
	}
	for _, pr := range pl.Proposed {
		for _, f := range pr.FilesWritten {
			add(memory.ScopePath, f, "kit "+pr.Kit+" would write")
		}
	}
	if m != nil {
		for _, c := range m.Commands {
			add(memory.ScopeGate, c.ID, "manifest gate")
		}
		for _, s := range m.EvalSuites {
			add(memory.ScopeGate, s.ID, "manifest eval suite")
		}
		for _, k := range m.Kits {
			add(memory.ScopeKit, k, "applied kit")
		}
	}
	for _, pr := range pl.Proposed {
		add(memory.ScopeKit, pr.Kit, "proposed kit")
		k, ok := KitByID(pr.Kit)
		if !ok {
			continue
		}
		for _, c := range k.commands(p) {
			add(memory.ScopeGate, c.ID, "kit "+pr.Kit+" gate")
		}
		for _, s := range k.EvalSuites {
			add(memory.ScopeGate, s.ID, "kit "+pr.Kit+" eval suite")
		}
	}
	for _, r := range pl.Risks {
		add(memory.ScopeFamily, r.Family, "risk family")
	}
	for _, s := range p.Stacks {
		add(memory.ScopeStack, s.Kind, "stack")
	}
	return list
}

// Recall loads the memories of the repository at root and returns those
// the plan pl of profile p and manifest m is about, the most relevant
// first (memory.Recall). A memory file with a bad line is an error: a
// plan that silently left out what the team decided to remember would
// read as if there were nothing to remember.
func Recall(root string, p *RepoProfile, m *Manifest, pl *Plan) ([]memory.Recalled, error) {
	entries, err := memory.Load(root)
	if err != nil {
		return nil, err
	}
	return memory.Recall(entries, Subjects(p, m, pl)), nil
}
