package harness

import (
	"fmt"
	"slices"
	"time"

	"github.com/crystallize-dev/crystallize/internal/harness/memory"
)

// ProposeMemories proposes a memory for each blocking gate that failed in
// rep and that no memory of known names yet: its text says how the gate
// failed, its scope and source are the gate. Nothing is written; a person
// reads the proposal, rewrites the text into the lesson (what the failure
// meant, what fixed it) and records it with memory.Add. A run teaches
// the ledger by itself (Retain); what outlasts the ledger is a person's
// decision.
//
// A gate that checked nothing (not evidence) teaches nothing and is not
// proposed. The text is the gate's last line of output, which the run
// has redacted; when that line is not plain text a memory may hold
// (control characters, markup, too long), the proposal says only the
// exit status.
func ProposeMemories(rep *RunReport, known []memory.Entry, now time.Time) []memory.Entry {
	named := map[string]bool{}
	for _, e := range known {
		for _, s := range e.Scope {
			named[s] = true
		}
	}
	list := []memory.Entry{}
	for _, g := range rep.Gates {
		scope := memory.ScopeGate + ":" + g.ID
		if !g.Blocks || g.Passed || g.NotEvidence || named[scope] {
			continue
		}
		why := fmt.Sprintf("exit %d", g.ExitCode)
		if g.TimedOut {
			why = "timed out"
		}
		e, err := memory.New(fmt.Sprintf("gate %s failed (%s): %s", g.ID, why, lastLine(g.Tail)), []string{scope}, scope, now)
		if err != nil || lastLine(g.Tail) == "" {
			e, err = memory.New(fmt.Sprintf("gate %s failed (%s)", g.ID, why), []string{scope}, scope, now)
		}
		if err != nil || slices.ContainsFunc(list, func(x memory.Entry) bool { return x.ID == e.ID }) {
			continue // a gate id a memory scope cannot name
		}
		list = append(list, e)
	}
	return list
}
