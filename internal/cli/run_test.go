package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// runCmd runs "crystallize run args..." in-process, with the run command
// under a root of its own (cli.go registers it in the real tree), and
// returns the exit code, stdout and stderr.
func runCmd(t *testing.T, getenv func(string) string, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	e := &env{stdout: &stdout, stderr: &stderr, getenv: getenv}
	root := &cobra.Command{Use: "crystallize", SilenceUsage: true, SilenceErrors: true}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	root.AddCommand(newRunCmd(e))
	root.SetArgs(append([]string{"run"}, args...))
	root.SetOut(&stdout)
	root.SetErr(&stderr)
	code := exitOK
	if err := root.ExecuteContext(context.Background()); err != nil {
		printError(&stderr, err)
		code = exitFailure
		var ue usageError
		if asUsage(err, &ue) || isCobraUsage(err) {
			code = exitUsage
		}
	}
	return code, stdout.String(), stderr.String()
}

func asUsage(err error, ue *usageError) bool {
	u, ok := err.(usageError)
	if ok {
		*ue = u
	}
	return ok
}

// copyDir copies the regular files under src into dst, keeping modes.
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, info.Mode().Perm())
	})
	if err != nil {
		t.Fatal(err)
	}
}

type reportCandidate struct {
	Name             string `json:"name"`
	Steps            []any  `json:"steps"`
	Support          int    `json:"support"`
	RejectionReasons []struct {
		Code string `json:"code"`
	} `json:"rejection_reasons"`
}

// TestRunExamplesEndToEnd mines the shipped examples, runs the bump
// workflow for real against the stand-in tools in a temporary workspace,
// and mines the examples plus the run's trace: the procedure is still
// found, now in one more trace.
func TestRunExamplesEndToEnd(t *testing.T) {
	tmp := t.TempDir()
	epoch := func(k string) string {
		if k == "SOURCE_DATE_EPOCH" {
			return sourceDateEpoch
		}
		return ""
	}
	var out, errb bytes.Buffer
	e := &env{stdout: &out, stderr: &errb, getenv: epoch}
	if code := run(context.Background(), e, []string{"mine", "--from", "../../examples/traces", "--out-dir", filepath.Join(tmp, "wf"), "--bundle", filepath.Join(tmp, "bundle")}); code != exitOK {
		t.Fatalf("mine exit %d: %s", code, errb.String())
	}

	ws := filepath.Join(tmp, "ws")
	copyDir(t, "../../examples/tools", filepath.Join(ws, "tools"))
	data, err := os.ReadFile("../../examples/crystallize.toml")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(ws, "crystallize.toml"), data, 0o644)

	star := filepath.Join(tmp, "wf", "bump.star")
	cfg := filepath.Join(ws, "crystallize.toml")
	state := filepath.Join(ws, ".crystallize")
	code, stdout, stderr := runCmd(t, nil, star, "--config", cfg, "--check", "--json")
	if code != exitOK || !strings.Contains(stdout, `"unbound": []`) {
		t.Fatalf("run --check = %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, stderr = runCmd(t, nil, star, "--config", cfg, "--state-dir", state, "--json",
		"--param", "branch=deps/x-crypto-v0.31.0", "--param", "module=golang.org/x/crypto",
		// Shell syntax in a value reaches the tool as one argument; the
		// commit message is derived from module and version.
		"--param", "version=v0.31.0",
		"--param", "title=Bump x/crypto; run $(tests) \"now\"")
	if code != exitOK {
		t.Fatalf("run = %d\n%s%s", code, stdout, stderr)
	}
	var sum struct {
		RunID     string `json:"run_id"`
		Status    string `json:"status"`
		Steps     int    `json:"steps"`
		ToolCalls int    `json:"tool_calls"`
		Receipts  int    `json:"receipts"`
		Dir       string `json:"dir"`
	}
	if err := json.Unmarshal([]byte(stdout), &sum); err != nil {
		t.Fatalf("run --json: %v\n%s", err, stdout)
	}
	if sum.Status != "completed" || sum.Steps != 6 || sum.ToolCalls != 6 || sum.Receipts != 6 {
		t.Errorf("summary = %+v, want 6 completed steps with receipts", sum)
	}
	log, _ := os.ReadFile(filepath.Join(ws, ".stand-in", "log"))
	for _, want := range []string{
		`git.create_branch "deps/x-crypto-v0.31.0" "/srv/checkout/payments"`,
		`git.commit "deps: bump golang.org/x/crypto to v0.31.0" "/srv/checkout/payments"`,
		`github.open_pr "acme/payments" "deps/x-crypto-v0.31.0" "Bump x/crypto; run $(tests) \"now\""`,
	} {
		if !strings.Contains(string(log), want) {
			t.Errorf("stand-in log lacks %s:\n%s", want, log)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "go.mod")); string(b) != "require golang.org/x/crypto v0.31.0\n" {
		t.Errorf("go.mod = %q", b)
	}
	session, err := os.ReadFile(filepath.Join(sum.Dir, "session.md"))
	if err != nil || !strings.Contains(string(session), "status: completed") || strings.Count(string(session), "\n## Step ") != 6 {
		t.Errorf("session.md (%v):\n%s", err, session)
	}

	// The run's trace is mined with the examples: bump is found in five
	// traces.
	corpus := filepath.Join(tmp, "corpus")
	copyDir(t, "../../examples/traces", corpus)
	tr, err := os.ReadFile(filepath.Join(sum.Dir, "trace.json"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(corpus, "10-run.json"), tr, 0o644)
	out.Reset()
	errb.Reset()
	report := filepath.Join(tmp, "report.json")
	if code := run(context.Background(), e, []string{"mine", "--from", corpus, "--report", report}); code != exitOK && code != exitFailure {
		t.Fatalf("mine with the run = %d: %s", code, errb.String())
	}
	var rep struct {
		Candidates         []reportCandidate `json:"candidates"`
		RejectedCandidates []reportCandidate `json:"rejected_candidates"`
	}
	b, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatalf("report.json: %v", err)
	}
	// The run closes the loop: its trace is one more example of the
	// procedure, and the candidate stays safe.
	found := false
	for _, c := range rep.Candidates {
		if c.Name != "bump" || len(c.Steps) != 6 {
			continue
		}
		found = true
		if c.Support != 5 {
			t.Errorf("bump support = %d, want 5 (the examples and the run)", c.Support)
		}
	}
	if !found {
		t.Errorf("mining the examples and the run did not find bump as a safe candidate:\n%s", b)
	}

	// A dry run of the bundle (not ready, which a dry run allows) calls no
	// stand-in and answers from the fixtures.
	before, _ := os.ReadFile(filepath.Join(ws, ".stand-in", "log"))
	code, stdout, stderr = runCmd(t, nil, filepath.Join(tmp, "bundle"), "--config", cfg, "--state-dir", state, "--dry-run",
		"--param", "branch=b", "--param", "module=m", "--param", "version=v", "--param", "title=t")
	after, _ := os.ReadFile(filepath.Join(ws, ".stand-in", "log"))
	if code != exitOK || !bytes.Equal(before, after) || !strings.Contains(stdout, "(dry run)") {
		t.Errorf("dry run = %d, called tools: %v\n%s%s", code, !bytes.Equal(before, after), stdout, stderr)
	}
}

func TestRunUsage(t *testing.T) {
	dir := t.TempDir()
	star := filepath.Join(dir, "w.star")
	os.WriteFile(star, []byte("def wf(ctx, a, b):\n    ctx.tool(\"x.y\")\n    ctx.tool(\"z\")\n"), 0o644)
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{star, "--param", "a=1", "--state-dir", dir}, exitUsage, "crystallize: workflow wf: missing parameters b (it takes: a, b)\n"},
		{[]string{star, "--param", "a", "--state-dir", dir}, exitUsage, "crystallize: --param \"a\": want name=value\n"},
		{[]string{star, "--check"}, exitFailure, "crystallize: unbound tools \"x.y\", \"z\": bind each in crystallize.toml under [tools.\"name\"]\n"},
		{[]string{star, "--param", "a=1", "--param", "b=2", "--state-dir", dir}, exitFailure, "crystallize: unbound tools \"x.y\", \"z\": bind each in crystallize.toml under [tools.\"name\"]\n"},
		{[]string{}, exitUsage, "crystallize: accepts 1 arg(s), received 0\n"},
	} {
		code, _, stderr := runCmd(t, nil, tc.args...)
		if code != tc.code || stderr != tc.want {
			t.Errorf("run %q = %d, %q; want %d, %q", tc.args, code, stderr, tc.code, tc.want)
		}
	}
}

// resumeCmd runs "crystallize args..." with the run and resume commands
// under a root of their own.
func resumeCmd(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	e := &env{stdout: &stdout, stderr: &stderr, getenv: func(string) string { return "" }}
	root := &cobra.Command{Use: "crystallize", SilenceUsage: true, SilenceErrors: true}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	root.AddCommand(newRunCmd(e), newResumeCmd(e))
	root.SetArgs(args)
	root.SetIn(strings.NewReader("y\n")) // not a terminal: never asked
	root.SetOut(&stdout)
	root.SetErr(&stderr)
	code := exitOK
	if err := root.ExecuteContext(context.Background()); err != nil {
		printError(&stderr, err)
		code = exitFailure
		var ue usageError
		if asUsage(err, &ue) || isCobraUsage(err) {
			code = exitUsage
		}
	}
	return code, stdout.String(), stderr.String()
}

func TestRunPendingResume(t *testing.T) {
	ws := t.TempDir()
	os.WriteFile(filepath.Join(ws, "crystallize.toml"), []byte(`[tools."mark"]
command = ["sh", "-c", "echo \"$0\" >> marks.txt; echo '{\"marked\": \"'$0'\"}'", "{step}"]
capability = "fs.write"
[grants]
capabilities = ["fs.write"]
`), 0o644)
	star := filepath.Join(ws, "w.star")
	os.WriteFile(star, []byte(`# capabilities: fs.write · secrets: none
def wf(ctx, name):
    a = ctx.tool("mark", step = "before-" + name)
    ctx.approve("merge", prompt = "Merge " + a["marked"] + "?")
    return ctx.tool("mark", step = "after-" + name)
`), 0o644)
	cfg := filepath.Join(ws, "crystallize.toml")
	state := filepath.Join(ws, ".crystallize")
	marks := func() string { b, _ := os.ReadFile(filepath.Join(ws, "marks.txt")); return string(b) }

	start := func(name string) string {
		t.Helper()
		code, stdout, stderr := resumeCmd(t, "run", star, "--config", cfg, "--state-dir", state, "--param", "name="+name, "--json")
		var sum struct {
			RunID   string `json:"run_id"`
			Status  string `json:"status"`
			Pending struct {
				Step     int    `json:"step"`
				Boundary string `json:"boundary"`
				Prompt   string `json:"prompt"`
			} `json:"pending"`
		}
		if err := json.Unmarshal([]byte(stdout), &sum); err != nil {
			t.Fatalf("run --json: %v\n%s", err, stdout)
		}
		if code != exitFailure || sum.Status != "pending_approval" || sum.Pending.Boundary != "merge" || sum.Pending.Prompt != "Merge before-"+name+"?" {
			t.Fatalf("run = %d, %+v\n%s", code, sum, stderr)
		}
		// The state directory is not the default, so the hint names it.
		want := "crystallize: approval pending: boundary merge; continue with crystallize resume " + sum.RunID + " --state-dir " + state + " --approve merge (or --reject merge)\n"
		if stderr != want {
			t.Errorf("stderr = %q, want %q", stderr, want)
		}
		return sum.RunID
	}

	id := start("one")
	if got := marks(); got != "before-one\n" {
		t.Fatalf("marks after suspending = %q", got)
	}
	code, stdout, stderr := resumeCmd(t, "resume", id, "--state-dir", state, "--approve", "merge")
	if code != exitOK || !strings.Contains(stdout, "of wf: completed") {
		t.Fatalf("resume --approve = %d\n%s%s", code, stdout, stderr)
	}
	if got := marks(); got != "before-one\nafter-one\n" {
		t.Errorf("marks after resuming = %q, want each step once", got)
	}
	code, _, stderr = resumeCmd(t, "resume", id, "--state-dir", state, "--approve", "merge")
	if code != exitFailure || !strings.Contains(stderr, "cannot resume: run "+id+" is completed, not pending_approval") {
		t.Errorf("second resume = %d, %q", code, stderr)
	}

	id = start("two")
	code, stdout, stderr = resumeCmd(t, "resume", id, "--state-dir", state, "--reject", "merge")
	if code != exitFailure || !strings.Contains(stdout, "of wf: rejected") || !strings.Contains(stderr, "approval rejected: boundary merge (--reject merge)") {
		t.Errorf("resume --reject = %d\n%s%s", code, stdout, stderr)
	}
	if got := marks(); got != "before-one\nafter-one\nbefore-two\n" {
		t.Errorf("marks after rejecting = %q", got)
	}

	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"resume", "nope", "--state-dir", state}, exitFailure, "crystallize: cannot resume: no run nope in " + filepath.Join(state, "runs") + "\n"},
		{[]string{"resume", id, "--approve", "m", "--reject", "m"}, exitUsage, "crystallize: boundary m is both approved and rejected\n"},
		{[]string{"resume"}, exitUsage, "crystallize: accepts 1 arg(s), received 0\n"},
	} {
		code, _, stderr := resumeCmd(t, tc.args...)
		if code != tc.code || stderr != tc.want {
			t.Errorf("%q = %d, %q; want %d, %q", tc.args, code, stderr, tc.code, tc.want)
		}
	}
}

func TestLinePrompter(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want bool
	}{{"y\n", true}, {"maybe\nYES\n", true}, {"n\n", false}, {"", false}} {
		var out bytes.Buffer
		p := &linePrompter{in: bufio.NewReader(strings.NewReader(tc.in)), out: &out}
		got, err := p.Ask(context.Background(), "merge", "Merge it?")
		if err != nil || got != tc.want {
			t.Errorf("Ask(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
		if !strings.HasPrefix(out.String(), "approval merge: Merge it? [y/n] ") {
			t.Errorf("Ask(%q) wrote %q", tc.in, out.String())
		}
	}
}

// BenchmarkRunDryRun is the wall-clock time of "crystallize run
// --dry-run" on the bump bundle mined from examples/traces, in-process:
// command setup, loading the bundle and its fixtures, running the
// workflow and writing its records. The target is under 100 ms.
func BenchmarkRunDryRun(b *testing.B) {
	tmp := b.TempDir()
	bundleDir := filepath.Join(tmp, "bundle")
	var out, errb bytes.Buffer
	e := &env{stdout: &out, stderr: &errb, getenv: func(string) string { return "" }}
	if code := run(context.Background(), e, []string{"mine", "--from", "../../examples/traces", "--bundle", bundleDir}); code != exitOK {
		b.Fatalf("mine exit %d: %s", code, errb.String())
	}
	args := []string{"run", bundleDir, "--dry-run", "--config", "../../examples/crystallize.toml", "--state-dir", filepath.Join(tmp, "state"),
		"--param", "branch=deps/x", "--param", "module=golang.org/x/net", "--param", "version=v0.33.0",
		"--param", "title=Bump x/net"}
	for b.Loop() {
		out.Reset()
		errb.Reset()
		if code := run(context.Background(), e, args); code != exitOK {
			b.Fatalf("run exit %d: %s%s", code, out.String(), errb.String())
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/1000, "ms/run")
}
