package bundle

import (
	"testing"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// TestRiskWriteSignals checks that each of a side effect's capability,
// mutation and kind makes it write-class on its own: a secret-holding
// candidate that writes is high risk whichever of them says so.
func TestRiskWriteSignals(t *testing.T) {
	for _, tt := range []struct {
		name string
		se   trace.SideEffect
		want string
	}{
		{"capability alone", trace.SideEffect{Kind: "git_ref", Target: "main", Capability: "git.push"}, RiskHigh},
		{"mutation alone", trace.SideEffect{Kind: "http", Target: "api", Capability: "net.call", Mutation: "delete"}, RiskHigh},
		{"kind alone", trace.SideEffect{Kind: "file_write", Target: "a.txt", Capability: "fs"}, RiskHigh},
		{"none", trace.SideEffect{Kind: "http", Target: "api", Capability: "net.read", Mutation: "get"}, RiskMedium},
	} {
		c := &candidate.Candidate{RequiredSecrets: []string{"API_TOKEN"}, SideEffects: []trace.SideEffect{tt.se}}
		if got := riskOf(c, KindCandidate); got != tt.want {
			t.Errorf("%s: risk %s, want %s", tt.name, got, tt.want)
		}
	}
}
