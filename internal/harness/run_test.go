package harness

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/crystallize-dev/crystallize/internal/atomicfile"
	"github.com/crystallize-dev/crystallize/internal/store"
)

// TestGoServiceKitRunsIntoLedger writes the go-service kit into a Go
// repository, runs its gates with the real go command, and checks that
// the ledger holds the passing run, then the failing one.
func TestGoServiceKitRunsIntoLedger(t *testing.T) {
	ctx := context.Background()
	r := repo{name: "svc", tracked: map[string]string{
		"go.mod":      "module example.com/svc\n\ngo 1.22\n",
		"svc.go":      "package svc\n\n// Add adds.\nfunc Add(a, b int) int { return a + b }\n",
		"svc_test.go": "package svc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(1, 2) != 3 {\n\t\tt.Fatal(\"add\")\n\t}\n}\n",
		"evals/api.jsonl": `{"id":"version","kind":"cli","input":{"command":["go","version"]},"assert":[{"type":"exit_code"},{"type":"contains","value":"go version"}]}` + "\n" +
			`{"id":"source-shape","kind":"code","input":{"output_file":"svc.go"},"assert":[{"type":"ast_match","pattern":"a + b"},{"type":"llm_rubric","rubric":"idiomatic"}]}` + "\n",
	}}
	dir := makeRepo(t, r)
	p, err := Profile(ctx, dir, ProfileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := Write(dir, "go-service", p, true)
	if err != nil {
		t.Fatal(err)
	}
	m := res.Manifest
	m.EvalSuites = append(m.EvalSuites, EvalSuite{ID: "api", Path: "evals/api.jsonl", Runner: RunnerEval, Threshold: 1})
	db, err := store.Open(ctx, filepath.Join(dir, ".crystallize", "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()

	rep, err := Run(ctx, dir, m, "sha256:m", p.ProfileID, RunOptions{Environ: os.Environ()})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Passed {
		t.Fatalf("first run failed: %+v", rep)
	}
	if _, err := Record(ctx, db, p.ProjectHash, rep); err != nil {
		t.Fatal(err)
	}
	results, err := db.RunResults(ctx, rep.RunID)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, x := range results {
		got = append(got, x.Subject+" "+x.Type+" "+map[bool]string{true: "pass", false: "fail"}[x.Passed]+" "+map[bool]string{true: "blocking", false: "advisory"}[x.Blocking])
	}
	want := []string{
		"api/source-shape ast_match pass blocking",
		"api/source-shape llm_rubric fail advisory",
		"api/version exit_code pass blocking",
		"api/version contains pass blocking",
		"go-test exit_code pass blocking",
		"go-vet exit_code pass blocking",
	}
	if !slices.Equal(got, want) {
		t.Errorf("ledger results:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	cases, err := db.RunCases(ctx, rep.RunID)
	if err != nil || len(cases) != 2 || !cases[0].Passed || !cases[1].Passed {
		t.Errorf("ledger cases = %+v, %v, want two passing cases", cases, err)
	}
	if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(rep.ReportPath))); err != nil {
		t.Errorf("report file: %v", err)
	}

	// Break the code: go test fails, the run is blocked, and the ledger
	// holds the failure with the gate's log.
	writeTree(t, dir, map[string]string{"svc.go": "package svc\n\n// Add adds.\nfunc Add(a, b int) int { return a - b }\n"})
	rep, err = Run(ctx, dir, m, "sha256:m", p.ProfileID, RunOptions{Environ: os.Environ()})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Passed {
		t.Fatal("a failing go test did not block the run")
	}
	if _, err := Record(ctx, db, p.ProjectHash, rep); err != nil {
		t.Fatal(err)
	}
	runs, err := db.Runs(ctx, p.ProjectHash)
	if err != nil || len(runs) != 2 || !runs[0].Passed || runs[1].Passed {
		t.Fatalf("ledger runs = %+v, %v, want a passed run then a failed one", runs, err)
	}
	results, err = db.RunResults(ctx, runs[1].RunID)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(results, func(x store.ResultRow) bool { return x.Subject == "go-test" })
	if i < 0 || results[i].Passed || results[i].Message != "exit 1" {
		t.Fatalf("ledger go-test result = %+v", results)
	}
	log, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(results[i].OutputPath)))
	if err != nil || !strings.Contains(string(log), "FAIL") {
		t.Errorf("go-test log %s: %v\n%s", results[i].OutputPath, err, log)
	}
	// The ast_match case now fails too: the code lost its shape.
	j := slices.IndexFunc(results, func(x store.ResultRow) bool { return x.Subject == "api/source-shape" && x.Type == TypeASTMatch })
	if j < 0 || results[j].Passed {
		t.Errorf("ast_match after the change = %+v", results[j])
	}
}

func TestGateTimeoutKillsTheGate(t *testing.T) {
	dir := t.TempDir()
	m := &Manifest{Commands: []Command{{ID: "slow", Command: "sleep 30; echo done", Phase: "p", Blocks: true, TimeoutSeconds: 1}}}
	rep, err := Run(context.Background(), dir, m, "", "", RunOptions{Environ: os.Environ()})
	if err != nil {
		t.Fatal(err)
	}
	g := rep.Gates[0]
	if rep.Passed || !g.TimedOut || g.DurationMS > 10000 || strings.Contains(g.Tail, "done") {
		t.Errorf("slow gate = %+v, want a timed-out failure within seconds", g)
	}
}

// TestThisRepository profiles the repository this package lives in.
func TestThisRepository(t *testing.T) {
	p, err := Profile(context.Background(), "../..", ProfileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(p.Stacks, func(s Signal) bool {
		return s.Kind == "go" && s.Detail == "github.com/crystallize-dev/crystallize"
	}) {
		t.Errorf("stacks = %+v, want the go module", p.Stacks)
	}
	if !slices.ContainsFunc(p.Entrypoints, func(s Signal) bool { return s.Kind == "go-main" && s.Path == "cmd/crystallize" }) {
		t.Errorf("entry points = %+v, want cmd/crystallize", p.Entrypoints)
	}
	pl := MakePlan("../..", p, nil, nil)
	var fams, kits []string
	for _, r := range pl.Risks {
		fams = append(fams, r.Family)
	}
	for _, k := range pl.Proposed {
		kits = append(kits, k.Kit)
	}
	for _, f := range []string{FamilyAgent, FamilyDatabase, FamilyPerformance} {
		if !slices.Contains(fams, f) {
			t.Errorf("risk families %v lack %s", fams, f)
		}
	}
	for _, k := range []string{"agent-runtime", "go-service"} {
		if !slices.Contains(kits, k) {
			t.Errorf("proposals %v lack %s", kits, k)
		}
	}
}

// TestGateOutputRedacted checks that a token a gate prints reaches
// neither its log file nor the tail the report and ledger keep.
func TestGateOutputRedacted(t *testing.T) {
	dir := t.TempDir()
	const token = "ghp_" + "Aa1Bb2Cc3Dd4Ee5Ff6Gg7Hh8Ii9Jj0KkLlMm"
	g := runGate(context.Background(), dir, dir, Command{ID: "leak", Command: "echo token=" + token}, os.Environ())
	log, err := os.ReadFile(g.OutputPath)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(log), token) || strings.Contains(g.Tail, token) {
		t.Errorf("gate output keeps the token:\nlog: %s\ntail: %s", log, g.Tail)
	}
	if !g.Passed {
		t.Errorf("gate failed: %+v", g)
	}
}

// TestGateOutputSpilled: a gate that prints much more than a report
// should hold (NUL bytes, which JSON writes six bytes each, without a
// newline) leaves it all in its log, and the report keeps a tail of at
// most tailBytes, the log's size and its digest.
func TestGateOutputSpilled(t *testing.T) {
	dir := t.TempDir()
	const size = 3 << 20
	g := runGate(context.Background(), dir, dir, Command{ID: "big", Command: fmt.Sprintf("head -c %d /dev/zero; echo; echo last line", size)}, os.Environ())
	if !g.Passed {
		t.Fatalf("gate failed: %.200s", g.Tail)
	}
	log, err := os.ReadFile(g.OutputPath)
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(size + len("\nlast line\n")); g.OutputBytes != want || int64(len(log)) != want {
		t.Errorf("OutputBytes = %d, log has %d bytes, want %d", g.OutputBytes, len(log), want)
	}
	sum := sha256.Sum256(log)
	if want := "sha256:" + hex.EncodeToString(sum[:]); g.OutputSHA256 != want {
		t.Errorf("OutputSHA256 = %s, want the log's digest %s", g.OutputSHA256, want)
	}
	if len(g.Tail) > tailBytes || !strings.HasSuffix(g.Tail, "last line") {
		t.Errorf("Tail has %d bytes ending %q, want at most %d ending with the last line", len(g.Tail), g.Tail[max(0, len(g.Tail)-20):], tailBytes)
	}
}

// TestRunReportDurable: a run's report.json is written through
// atomicfile, synced before Run returns, with no temporary file left.
func TestRunReportDurable(t *testing.T) {
	var synced []string
	sync := atomicfile.SyncFile
	atomicfile.SyncFile = func(f *os.File) error { synced = append(synced, filepath.Base(f.Name())); return sync(f) }
	t.Cleanup(func() { atomicfile.SyncFile = sync })

	root := t.TempDir()
	m := &Manifest{Commands: []Command{{ID: "ok", Command: "true", Blocks: true}}}
	rep, err := Run(context.Background(), root, m, "sha256:m", "p", RunOptions{Environ: os.Environ()})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(synced, func(s string) bool { return strings.HasPrefix(s, ".report.json.tmp") }) {
		t.Errorf("synced %v, want report.json synced before it is renamed into place", synced)
	}
	dir := filepath.Dir(filepath.Join(root, filepath.FromSlash(rep.ReportPath)))
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if want := []string{"ok.log", "report.json"}; !slices.Equal(names, want) {
		t.Errorf("report directory holds %v, want %v", names, want)
	}
}

// TestGateNotEvidence: a gate that exits ExitNotEvidence checked
// nothing. It never counts as passed; it blocks the run in CI mode only.
// A gate's files in its evidence directory are listed in the report.
func TestGateNotEvidence(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	m := &Manifest{Schema: ManifestSchema, Owner: Owner, Commands: []Command{
		{ID: "browser", Command: "echo no browser; exit 77", Phase: "pre_merge", Blocks: true, TimeoutSeconds: 10},
		{ID: "shot", Command: `echo png > "$CRYSTALLIZE_EVIDENCE_DIR/home.diff.png"`, Phase: "pre_merge", Blocks: true, TimeoutSeconds: 10},
	}}
	for _, ci := range []bool{false, true} {
		rep, err := Run(ctx, dir, m, "sha256:m", "p", RunOptions{Environ: os.Environ(), CI: ci})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Passed == ci {
			t.Errorf("CI=%t: run passed=%t, want %t", ci, rep.Passed, !ci)
		}
		g := rep.Gates[0]
		if g.Passed || !g.NotEvidence {
			t.Errorf("CI=%t: gate %s passed=%t notEvidence=%t, want not evidence and not passed", ci, g.ID, g.Passed, g.NotEvidence)
		}
		want := ReportsDir + "/" + rep.RunID + "/shot.evidence/home.diff.png"
		if g := rep.Gates[1]; !g.Passed || len(g.Evidence) != 1 || g.Evidence[0] != want {
			t.Errorf("CI=%t: gate shot passed=%t evidence %v, want %s", ci, g.Passed, g.Evidence, want)
		}
		if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(want))); err != nil {
			t.Error(err)
		}
	}
}

// TestRunFailures: a failed run says which gate or suite failed it and
// how, with the rule Passed uses: a non-blocking failure and, outside CI
// mode, a gate that checked nothing are not named.
func TestRunFailures(t *testing.T) {
	rep := &RunReport{
		Gates: []GateResult{
			{ID: "vet", Blocks: true, ExitCode: 3},
			{ID: "lint", Blocks: false, ExitCode: 1},
			{ID: "web", Blocks: true, ExitCode: ExitNotEvidence, NotEvidence: true},
			{ID: "slow", Blocks: true, ExitCode: -1, TimedOut: true},
			{ID: "build", Blocks: true, Passed: true},
		},
		Suites: []SuiteResult{
			{ID: "agent", Blocking: true, Score: 0.5, Threshold: 0.8, Cases: []CaseResult{{ID: "a"}}},
			{ID: "empty", Blocking: true},
			{ID: "broken", Blocking: true, Error: "cases.jsonl: line 2: not JSON"},
			{ID: "advisory", Blocking: false, Score: 0, Threshold: 1, Cases: []CaseResult{{ID: "b"}}},
		},
	}
	local := []string{
		"gate vet exited 3",
		"gate slow timed out",
		"suite agent scored 0.50, below its threshold 0.80",
		"suite empty has no case",
		"suite broken: cases.jsonl: line 2: not JSON",
	}
	if diff := cmp.Diff(local, rep.Failures(false)); diff != "" {
		t.Errorf("Failures(ci=false) (-want +got):\n%s", diff)
	}
	ci := slices.Insert(slices.Clone(local), 1, "gate web checked nothing (exit 77), which is not evidence, and CI mode needs evidence")
	if diff := cmp.Diff(ci, rep.Failures(true)); diff != "" {
		t.Errorf("Failures(ci=true) (-want +got):\n%s", diff)
	}
	if got := (&RunReport{Gates: []GateResult{{ID: "ok", Blocks: true, Passed: true}}}).Failures(true); got != nil {
		t.Errorf("Failures of a passing run = %q, want none", got)
	}
}
