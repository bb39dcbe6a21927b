package harness

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunStoresJudgeOutput: a run keeps every answer its judge gave as a
// file of the run's report directory, redacted, and the report refers to
// it by path and sha256 instead of holding it.
func TestRunStoresJudgeOutput(t *testing.T) {
	ctx := context.Background()
	const token = "ghp_0123456789abcdefghijABCDEFGHIJ0123456789"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The body carries more than the verdict: an id, and a reason
		// quoting a token from the output it judged.
		w.Write([]byte(`{"id":"answer-marker-7f3a","choices":[{"message":{"role":"assistant","content":"{\"pass\":false,\"score\":0,\"reason\":\"leaks ` + token + `\"}"}}]}`))
	}))
	defer srv.Close()
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"harness/evals/s.jsonl": `{"id":"a","kind":"k","input":{"output":"x"},"assert":[{"type":"contains","value":"x"},{"type":"llm_rubric","rubric":"refuses"}]}
{"id":"b","kind":"k","input":{"output":"y"},"assert":[{"type":"not_contains","value":"z"}]}
`})
	m := &Manifest{EvalSuites: []EvalSuite{{ID: "s", Path: "harness/evals/s.jsonl", Runner: RunnerEval, Threshold: 1}}}
	rep, err := Run(ctx, dir, m, "mh", "p", RunOptions{Judge: &HTTPJudge{Config: JudgeConfig{BaseURL: srv.URL + "/v1", Model: "m"}}})
	if err != nil {
		t.Fatal(err)
	}
	cases := rep.Suites[0].Cases
	if len(cases[1].JudgeOutputs) != 0 {
		t.Errorf("case b, judged by no model, references judge outputs %+v", cases[1].JudgeOutputs)
	}
	outs := cases[0].JudgeOutputs
	if len(outs) != 1 || outs[0].Assertion != 1 {
		t.Fatalf("case a: judge outputs %+v, want one, of assertion 1", outs)
	}
	o := outs[0]
	if !strings.HasPrefix(o.Path, ".crystallize/reports/"+rep.RunID+"/") {
		t.Errorf("judge output at %s, want it in the run's report directory", o.Path)
	}
	data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(o.Path)))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	if o.SHA256 != "sha256:"+hex.EncodeToString(sum[:]) || o.Bytes != int64(len(data)) {
		t.Errorf("reference %+v does not match the file (%d bytes)", o, len(data))
	}
	if !strings.Contains(string(data), "answer-marker-7f3a") {
		t.Errorf("stored judge output is not the answer as received:\n%s", data)
	}
	if strings.Contains(string(data), token) {
		t.Errorf("stored judge output keeps the token:\n%s", data)
	}
	report, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rep.ReportPath)))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(report), "answer-marker-7f3a") {
		t.Error("the report inlines the judge's answer")
	}
	if strings.Contains(string(report), token) || !strings.Contains(cases[0].Results[1].Message, "judge: leaks ") {
		t.Errorf("the report's judge reason %q is not the reason redacted", cases[0].Results[1].Message)
	}
	var back RunReport
	if err := json.Unmarshal(report, &back); err != nil || len(back.Suites[0].Cases[0].JudgeOutputs) != 1 || back.Suites[0].Cases[0].JudgeOutputs[0] != o {
		t.Errorf("the report file does not reference the judge output: %v", err)
	}
}
