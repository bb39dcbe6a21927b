package candidate

import "testing"

func TestShadowTally(t *testing.T) {
	r := &ShadowReport{Traces: []ShadowTrace{
		{Role: RoleSource, Status: StatusPass}, {Role: RoleSource, Status: StatusFail},
		{Role: RoleHeldout, Status: StatusPass}, {Role: RoleHeldout, Status: StatusPass},
		{Role: RoleHeldout, Status: StatusFail}, {Role: RoleHeldout, Status: StatusUnmatched},
	}}
	want := ShadowTally{Source: 2, SourcePassed: 1, Heldout: 3, HeldoutPassed: 2, HeldoutFailed: 1, HeldoutUnmatched: 1}
	if got := r.Tally(); got != want {
		t.Errorf("Tally = %+v, want %+v", got, want)
	}
	if got := r.Tally().Passed(); got != 3 {
		t.Errorf("Passed = %d, want 3", got)
	}
	if got := (*ShadowReport)(nil).Tally(); got != (ShadowTally{}) {
		t.Errorf("nil Tally = %+v", got)
	}
}
