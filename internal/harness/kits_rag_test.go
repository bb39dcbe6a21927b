package harness

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRAGSystemKit writes the rag-system kit into a repository with a
// retriever and runs its suite: unconnected, the retriever fails every
// case; connected to a retriever that answers the near miss with the
// wrong document, the metrics say so, and block once calibrated.
func TestRAGSystemKit(t *testing.T) {
	ctx := context.Background()
	dir := makeRepo(t, repo{name: "rag", tracked: map[string]string{
		"pyproject.toml":          "[project]\nname = \"rag\"\ndependencies = [\"chromadb>=0.5\"]\n",
		"rag/retriever.py":        "def search(q):\n    return []\n",
		"docs/architecture.md":    "# Gateway\nThe gateway owns failover routing.\n",
		"docs/portal.md":          "# Status\nThe portal shows the failover status page.\n",
		"tests/test_retriever.py": "def test_search():\n    assert True\n",
	}})
	p, err := Profile(ctx, dir, ProfileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	kit, _ := KitByID("rag-system")
	if !kit.Applies(p) {
		t.Fatalf("rag-system does not apply; hints %+v", p.RiskHints)
	}
	res, err := Write(dir, "rag-system", p, true)
	if err != nil {
		t.Fatal(err)
	}
	run := func() *SuiteResult {
		t.Helper()
		rep, err := Run(ctx, dir, res.Manifest, "sha256:m", p.ProfileID, RunOptions{Environ: os.Environ()})
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Suites) != 1 || rep.Suites[0].ID != "rag-retrieval" {
			t.Fatalf("suites %+v", rep.Suites)
		}
		return &rep.Suites[0]
	}
	message := func(s *SuiteResult, caseID, typ string) (bool, string) {
		for _, c := range s.Cases {
			for _, r := range c.Results {
				if c.ID == caseID && r.Type == typ {
					return r.Passed, r.Message
				}
			}
		}
		t.Fatalf("no %s result for %s", typ, caseID)
		return false, ""
	}

	// The skeleton's retriever is not connected: nothing passes.
	s := run()
	if s.Passed || s.Score != 0 {
		t.Fatalf("unconnected retriever: suite passed=%t score %v, want failed with score 0", s.Passed, s.Score)
	}
	if ok, msg := message(s, "rag-routing-owner-001", TypeExitCode); ok || msg != "exit code 77, want 0" {
		t.Errorf("exit_code = %t %q", ok, msg)
	}

	// A retriever that finds the gateway for both questions: right for
	// the first, the near miss for the second.
	retriever := "#!/bin/sh\necho '[{\"id\":\"docs/architecture.md#gateway\",\"text\":\"The gateway owns failover routing.\"},{\"id\":\"docs/runbook.md\",\"text\":\"Restart the gateway.\"}]'\n"
	if err := os.WriteFile(filepath.Join(dir, "harness/rag/retrieve.sh"), []byte(retriever), 0o755); err != nil {
		t.Fatal(err)
	}
	s = run()
	for _, tc := range []struct {
		caseID, typ string
		pass        bool
		msg         string
	}{
		{"rag-routing-owner-001", TypeRecallAtK, true, "recall@5 = 1"},
		{"rag-routing-owner-001", TypeContextRecall, true, "context recall (1 of 1 claims in the retrieved contexts) = 1"},
		{"rag-routing-owner-near-miss-001", TypeRecallAtK, false, "recall@5 = 0"},
		{"rag-routing-owner-near-miss-001", TypeMRR, false, "reciprocal rank = 0"},
		{"rag-routing-owner-near-miss-001", TypeContextRecall, false, `first unsupported: "The portal shows the failover status page."`},
	} {
		if ok, msg := message(s, tc.caseID, tc.typ); ok != tc.pass || !strings.Contains(msg, tc.msg) {
			t.Errorf("%s %s = %t %q, want %t %q", tc.caseID, tc.typ, ok, msg, tc.pass, tc.msg)
		}
	}
	// Uncalibrated, the metrics advise: the suite passes on exit codes.
	if !s.Passed {
		t.Errorf("uncalibrated metrics blocked the suite")
	}
	// Calibrated, the near miss blocks.
	path := filepath.Join(dir, "harness/evals/rag/retrieval.jsonl")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data = []byte(strings.ReplaceAll(string(data), `"type":"context_recall"`, `"calibrated":true,"type":"context_recall"`))
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if s = run(); s.Passed || s.Score != 0.5 {
		t.Errorf("calibrated context_recall: suite passed=%t score %v, want failed at 0.5", s.Passed, s.Score)
	}
}
