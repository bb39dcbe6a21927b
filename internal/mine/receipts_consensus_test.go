package mine

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// receiptTraces is one trace per receipts JSON ("" records none), each
// with the allowlist rules.
func receiptTraces(rules []string, receipts ...string) []*trace.Trace {
	var out []*trace.Trace
	for i, r := range receipts {
		t := mk(fmt.Sprintf("t%d", i))
		for _, p := range rules {
			t.ReplayAllowlist = append(t.ReplayAllowlist, trace.AllowlistRule{Path: p, Reason: "per run"})
		}
		if r != "" {
			t.ReplayRun = decodeMap(`{"effect_receipts":` + r + `}`)
		}
		out = append(out, t)
	}
	return out
}

// TestConsensusReceipts checks which effect receipts a candidate expects:
// what every example recorded alike, with values and members the replay
// allowlist says change on every run masked or left out, and nothing,
// with the disagreement named, when the examples recorded different
// receipts in any other way.
func TestConsensusReceipts(t *testing.T) {
	cases := []struct {
		name     string
		rules    []string
		receipts []string
		want     string // expected receipts as JSON
		problem  *candidate.Problem
	}{
		{
			name:     "alike",
			receipts: []string{`[{"kind":"tag","name":"v1"}]`, `[{"kind":"tag","name":"v1"}]`},
			want:     `[{"kind":"tag","name":"v1"}]`,
		},
		{
			name:     "none recorded",
			receipts: []string{``, ``},
			want:     `[]`,
		},
		{
			name:     "a value allowlisted",
			rules:    []string{"/effect_receipts/*/id"},
			receipts: []string{`[{"kind":"tag","id":"a"}]`, `[{"kind":"tag","id":"b"}]`},
			want:     `[{"kind":"tag","id":"<allowlisted>"}]`,
		},
		{
			name:     "a member some lack, allowlisted",
			rules:    []string{"/effect_receipts/*/id"},
			receipts: []string{`[{"kind":"tag","id":"a"}]`, `[{"kind":"tag"}]`},
			want:     `[{"kind":"tag"}]`,
		},
		{
			name:     "a member some lack",
			rules:    []string{"/effect_receipts/*/other"},
			receipts: []string{`[{"kind":"tag","id":"a"}]`, `[{"kind":"tag"}]`},
			want:     `[]`,
			problem: &candidate.Problem{Code: candidate.CodeReceiptDisagreement, Path: "/effect_receipts/0/id",
				Message: "examples disagree on receipt field /effect_receipts/0/id and no replay_allowlist rule covers it; no expected receipts are derived"},
		},
		{
			name:     "a member named with a slash",
			receipts: []string{`[{"a/b~c":"x"}]`, `[{"a/b~c":"y"}]`},
			want:     `[]`,
			problem: &candidate.Problem{Code: candidate.CodeReceiptDisagreement, Path: "/effect_receipts/0/a~1b~0c",
				Message: "examples disagree on receipt field /effect_receipts/0/a~1b~0c and no replay_allowlist rule covers it; no expected receipts are derived"},
		},
		{
			name:     "lists of different lengths",
			receipts: []string{`[{"files":["a","b"]}]`, `[{"files":["a"]}]`},
			want:     `[]`,
			problem: &candidate.Problem{Code: candidate.CodeReceiptDisagreement, Path: "/effect_receipts/0/files",
				Message: "examples disagree on receipt field /effect_receipts/0/files and no replay_allowlist rule covers it; no expected receipts are derived"},
		},
		{
			name:     "different numbers of receipts",
			receipts: []string{`[{"kind":"tag"}]`, `[{"kind":"tag"}]`, `[{"kind":"tag"},{"kind":"tag"}]`},
			want:     `[]`,
			problem: &candidate.Problem{Code: candidate.CodeReceiptDisagreement, Path: "/effect_receipts",
				Message: "examples recorded different numbers of effect receipts; no expected receipts are derived"},
		},
		{
			name:     "five recorded none",
			receipts: []string{`[{"kind":"tag"}]`, ``, ``, ``, ``, ``},
			want:     `[]`,
			problem: &candidate.Problem{Code: candidate.CodeReceiptsMissing,
				Message: "5 of 6 examples recorded no effect receipts (t1, t2, t3, t4, t5); no expected receipts are derived"},
		},
		{
			name:     "more recorded none",
			receipts: []string{`[{"kind":"tag"}]`, ``, ``, ``, ``, ``, ``, ``},
			want:     `[]`,
			problem: &candidate.Problem{Code: candidate.CodeReceiptsMissing,
				Message: "7 of 8 examples recorded no effect receipts (t1, t2, t3, t4, t5, and 2 more); no expected receipts are derived"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, problems := consensusReceipts(receiptTraces(tc.rules, tc.receipts...))
			if diff := cmp.Diff(decodeAny(tc.want), got); diff != "" {
				t.Errorf("expected receipts (-want +got):\n%s", diff)
			}
			var want []candidate.Problem
			if tc.problem != nil {
				want = []candidate.Problem{*tc.problem}
			}
			if diff := cmp.Diff(want, problems); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}
