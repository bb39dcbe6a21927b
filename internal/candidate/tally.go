package candidate

// ShadowTally counts the traces of a shadow report by role and status:
// what a summary of the comparison says.
type ShadowTally struct {
	// Source and SourcePassed count the source examples compared and
	// those that replayed, listed in the report or not; SourceNotListed
	// is how many of the passing ones the report counts without listing
	// (ShadowReport.PassedNotListed).
	Source, SourcePassed, SourceNotListed int
	// Heldout counts the held-out traces compared (passed or failed);
	// HeldoutUnmatched those that do not contain the procedure, which
	// are not compared.
	Heldout, HeldoutPassed, HeldoutFailed, HeldoutUnmatched int
}

// Passed counts every compared trace that passed, source or held-out.
func (t ShadowTally) Passed() int { return t.SourcePassed + t.HeldoutPassed }

// Tally counts r's traces, the listed ones and those counted in
// PassedNotListed; a nil report counts nothing.
func (r *ShadowReport) Tally() ShadowTally {
	var t ShadowTally
	if r == nil {
		return t
	}
	t.Source, t.SourcePassed, t.SourceNotListed = r.PassedNotListed, r.PassedNotListed, r.PassedNotListed
	for _, tr := range r.Traces {
		switch {
		case tr.Role == RoleSource:
			t.Source++
			if tr.Status == StatusPass {
				t.SourcePassed++
			}
		case tr.Status == StatusUnmatched:
			t.HeldoutUnmatched++
		case tr.Status == StatusPass:
			t.Heldout++
			t.HeldoutPassed++
		default:
			t.Heldout++
			t.HeldoutFailed++
		}
	}
	return t
}
