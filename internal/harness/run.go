package harness

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/crystallize-dev/crystallize/internal/atomicfile"
	"github.com/crystallize-dev/crystallize/internal/capped"
	"github.com/crystallize-dev/crystallize/internal/harness/memory"
	"github.com/crystallize-dev/crystallize/internal/proc"
	"github.com/crystallize-dev/crystallize/internal/redact"
	"github.com/crystallize-dev/crystallize/internal/store"
)

// ReportsDir is where run reports and command logs go: large outputs
// live in files, and the ledger keeps their paths.
const ReportsDir = StateDir + "/reports"

// ErrEmptyPhase is returned by Run when --phase selects no command and
// no suite.
var ErrEmptyPhase = errors.New("no command or eval suite in this phase")

// ExitNotEvidence is the exit code by which a gate says it could not
// check anything (its browser, tool or input is missing): 77, the
// "skipped" of automake and meson. Such a gate is not evidence, never
// a pass; it blocks the run only in CI mode, where a harness that
// cannot run is a broken harness.
const ExitNotEvidence = 77

// EvidenceEnv names the variable that gives a gate its evidence
// directory: files it writes there (screenshots, diff images,
// recordings) are listed in the run report as the gate's evidence.
const EvidenceEnv = "CRYSTALLIZE_EVIDENCE_DIR"

// defaultCaseTimeout bounds a case's command when it names no timeout.
const defaultCaseTimeout = 60 * time.Second

// RunOptions configures Run.
type RunOptions struct {
	// Phase limits the run to commands of that phase and to suites of
	// that phase or of none; "" runs everything.
	Phase string
	// Judge decides model-judged assertions; nil leaves them failed
	// and advisory.
	Judge Judge
	// Promoted reports whether the judge is calibrated and promoted for
	// a suite; nil promotes none.
	Promoted func(suiteID string) bool
	// Now is the clock; nil is time.Now.
	Now func() time.Time
	// Environ is the environment the run was started in ("KEY=value").
	// Gates and case commands get only its proc.BaseEnv variables and
	// those PassEnv names: the judge's API key and the tokens of whoever
	// runs the harness are not the repository's to read.
	Environ []string
	// PassEnv names further variables of Environ the commands get.
	PassEnv []string
	// CI makes a gate that is not evidence (ExitNotEvidence) block the
	// run like a failed one.
	CI bool
}

// RunReport is a run's full report, written to a file; the ledger holds
// its summary.
type RunReport struct {
	RunID        string        `json:"runId"`
	ProfileID    string        `json:"profileId"`
	ManifestHash string        `json:"manifestHash"`
	Phase        string        `json:"phase"`
	StartedAt    string        `json:"startedAt"`
	FinishedAt   string        `json:"finishedAt"`
	Passed       bool          `json:"passed"`
	Gates        []GateResult  `json:"gates"`
	Suites       []SuiteResult `json:"suites"`
	ReportPath   string        `json:"reportPath"`
	// ProposedMemories are memories RunRecorded proposes from the failed
	// gates (ProposeMemories), for a person to rewrite and record. They
	// are advice, not evidence: report.json, written before, leaves them
	// out, and nothing records them.
	ProposedMemories []memory.Entry `json:"proposedMemories,omitempty"`
}

// GateResult is one manifest command as run.
type GateResult struct {
	ID         string `json:"id"`
	Command    string `json:"command"`
	Phase      string `json:"phase"`
	Blocks     bool   `json:"blocks"`
	ExitCode   int    `json:"exitCode"`
	TimedOut   bool   `json:"timedOut"`
	DurationMS int64  `json:"durationMs"`
	Passed     bool   `json:"passed"`
	// NotEvidence is set when the gate exited ExitNotEvidence: it
	// checked nothing, so it did not pass either.
	NotEvidence bool   `json:"notEvidence,omitempty"`
	OutputPath  string `json:"outputPath"`
	// Evidence are the files the gate wrote to its evidence directory,
	// relative to the root.
	Evidence []string `json:"evidence,omitempty"`
	// OutputBytes and OutputSHA256 are the size and digest of the log
	// at OutputPath, the gate's whole output redacted: the report keeps
	// only its Tail, and the digest ties the report to the file.
	OutputBytes  int64  `json:"outputBytes"`
	OutputSHA256 string `json:"outputSha256"`
	Tail         string `json:"tail"`
}

// SuiteResult is one eval suite as run.
type SuiteResult struct {
	ID        string       `json:"id"`
	Path      string       `json:"path"`
	Threshold float64      `json:"threshold"`
	Score     float64      `json:"score"`
	Passed    bool         `json:"passed"`
	Blocking  bool         `json:"blocking"`
	Error     string       `json:"error,omitempty"`
	Cases     []CaseResult `json:"cases"`
}

// fails reports whether the gate fails its run: a blocking gate that
// did not pass, unless it checked nothing outside CI mode (not evidence
// is a failure only where a run must prove something).
func (g *GateResult) fails(ci bool) bool {
	return !g.Passed && g.Blocks && (!g.NotEvidence || ci)
}

// fails reports whether the suite fails its run: a blocking suite that
// did not pass.
func (s *SuiteResult) fails() bool { return !s.Passed && s.Blocking }

// Failures says what made a run fail, one line a gate or suite in the
// order they ran (none when it passed); ci is the RunOptions.CI the run
// had. A person reading "the run failed" needs to know whether a gate
// broke, a gate proved nothing, or a suite scored too low.
func (r *RunReport) Failures(ci bool) []string {
	var out []string
	for i := range r.Gates {
		g := &r.Gates[i]
		switch {
		case !g.fails(ci):
		case g.NotEvidence:
			out = append(out, fmt.Sprintf("gate %s checked nothing (exit %d), which is not evidence, and CI mode needs evidence", g.ID, ExitNotEvidence))
		case g.TimedOut:
			out = append(out, fmt.Sprintf("gate %s timed out", g.ID))
		default:
			out = append(out, fmt.Sprintf("gate %s exited %d", g.ID, g.ExitCode))
		}
	}
	for i := range r.Suites {
		s := &r.Suites[i]
		switch {
		case !s.fails():
		case s.Error != "":
			out = append(out, fmt.Sprintf("suite %s: %s", s.ID, s.Error))
		case len(s.Cases) == 0:
			out = append(out, fmt.Sprintf("suite %s has no case", s.ID))
		default:
			out = append(out, fmt.Sprintf("suite %s scored %.2f, below its threshold %.2f", s.ID, s.Score, s.Threshold))
		}
	}
	return out
}

// CaseResult is one case as run.
type CaseResult struct {
	ID       string   `json:"id"`
	Passed   bool     `json:"passed"`
	Blocking bool     `json:"blocking"`
	Error    string   `json:"error,omitempty"`
	Results  []Result `json:"results"`
	// JudgeOutputs reference the judge's answers, stored as files of
	// the run's report directory.
	JudgeOutputs []JudgeOutput `json:"judgeOutputs,omitempty"`
}

// Run runs the manifest's gates and eval suites in root and writes the
// report and command logs under root/.crystallize/reports/<run id>/.
// Passed is false when a blocking gate or a blocking suite failed. The
// error is for a run that could not take place at all.
func Run(ctx context.Context, root string, m *Manifest, manifestHash, profileID string, opts RunOptions) (*RunReport, error) {
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	start := now().UTC()
	var rnd [4]byte
	rand.Read(rnd[:])
	rep := &RunReport{
		RunID:     "run_" + start.Format("20060102T150405") + "_" + hex.EncodeToString(rnd[:]),
		ProfileID: profileID, ManifestHash: manifestHash, Phase: opts.Phase,
		StartedAt: start.Format(time.RFC3339), Passed: true, Gates: []GateResult{}, Suites: []SuiteResult{},
	}
	dir := filepath.Join(root, filepath.FromSlash(ReportsDir), rep.RunID)
	if err := atomicfile.MkdirUntracked(filepath.Join(root, StateDir)); err != nil {
		return nil, fmt.Errorf("run report directory: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("run report directory: %w", err)
	}
	env := proc.Environ(opts.Environ, opts.PassEnv)
	rel := func(p string) string {
		r, _ := filepath.Rel(root, p)
		return filepath.ToSlash(r)
	}
	for _, c := range m.Commands {
		if opts.Phase != "" && c.Phase != opts.Phase {
			continue
		}
		g := runGate(ctx, root, dir, c, env)
		g.OutputPath = rel(g.OutputPath)
		for i, e := range g.Evidence {
			if abs, err := filepath.Abs(root); err == nil {
				if r, err := filepath.Rel(abs, e); err == nil {
					g.Evidence[i] = filepath.ToSlash(r)
				}
			}
		}
		if g.fails(opts.CI) {
			rep.Passed = false
		}
		rep.Gates = append(rep.Gates, g)
	}
	for _, s := range m.EvalSuites {
		if opts.Phase != "" && s.Phase != "" && s.Phase != opts.Phase {
			continue
		}
		eng := &Engine{Judge: opts.Judge, Promoted: opts.Promoted != nil && opts.Promoted(s.ID)}
		sr := runSuite(ctx, root, s, eng, env, filepath.Join(dir, "judge", strconv.Itoa(len(rep.Suites))))
		if sr.fails() {
			rep.Passed = false
		}
		rep.Suites = append(rep.Suites, sr)
	}
	if opts.Phase != "" && len(rep.Gates) == 0 && len(rep.Suites) == 0 {
		// A phase that selects nothing is a typo or a missing gate, not
		// a pass.
		os.Remove(dir)
		return nil, fmt.Errorf("phase %q: %w", opts.Phase, ErrEmptyPhase)
	}
	rep.FinishedAt = now().UTC().Format(time.RFC3339)
	rep.ReportPath = rel(filepath.Join(dir, "report.json"))
	data, _ := json.MarshalIndent(rep, "", "  ")
	// The report is what the ledger's evidence links point at: written
	// whole and durably, so a crash never leaves a link to half a report.
	if err := atomicfile.Write(filepath.Join(dir, "report.json"), append(data, '\n'), 0o644); err != nil {
		return nil, fmt.Errorf("writing run report: %w", err)
	}
	return rep, nil
}

// tailLines and tailBytes bound how much of a gate's output the report
// and ledger keep inline: the last lines, and of them no more than
// tailBytes (a gate that prints 300 MB without a newline has one line).
// The whole output is in the gate's log file.
const (
	tailLines = 20
	tailBytes = 4 << 10
)

// maxEvidenceBytes bounds the output of a case's command, or the file it
// names, that is kept as evidence for its assertions and its judge: the
// bound command bindings have on what they print.
const maxEvidenceBytes = 8 << 20

func runGate(ctx context.Context, root, dir string, c Command, env []string) GateResult {
	g := GateResult{ID: c.ID, Command: c.Command, Phase: c.Phase, Blocks: c.Blocks, OutputPath: filepath.Join(dir, c.ID+".log")}
	timeout := time.Duration(c.TimeoutSeconds) * time.Second
	if timeout == 0 {
		timeout = 24 * time.Hour
	}
	f, err := os.OpenFile(g.OutputPath, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		g.Tail = "writing log: " + err.Error()
		return g
	}
	defer f.Close()
	// A gate prints what its commands print, tokens included, and as
	// much as it likes: the output streams through the redactor into the
	// log, hashed on the way, and memory holds none of it. The report
	// keeps the log's tail, size and digest.
	sum := sha256.New()
	red := redact.NewWriter(io.MultiWriter(f, sum))
	out := &capped.Buffer{Spill: red}
	// The gate runs in root: its evidence directory must not depend on
	// the working directory it was named from.
	evDir, err := filepath.Abs(filepath.Join(dir, c.ID+".evidence"))
	if err == nil {
		err = os.Mkdir(evDir, 0o755)
	}
	if err != nil {
		g.Tail = "evidence directory: " + err.Error()
		return g
	}
	env = append(slices.Clip(env), EvidenceEnv+"="+evDir)
	code, timedOut, d := execute(ctx, root, []string{"sh", "-c", c.Command}, env, timeout, out)
	g.ExitCode, g.TimedOut, g.DurationMS = code, timedOut, d.Milliseconds()
	g.Passed = code == 0 && !timedOut
	g.NotEvidence = code == ExitNotEvidence && !timedOut
	g.Evidence = evidenceFiles(evDir)
	err = out.Err()
	if err == nil {
		err = red.Close()
	}
	if err == nil {
		g.OutputBytes, err = f.Seek(0, io.SeekCurrent)
	}
	if err == nil {
		g.Tail, err = fileTail(f, g.OutputBytes)
	}
	if err != nil {
		g.Passed = false
		g.Tail = "writing log: " + err.Error()
		return g
	}
	g.OutputSHA256 = "sha256:" + hex.EncodeToString(sum.Sum(nil))
	return g
}

// evidenceFiles lists the regular files under dir, sorted, and removes
// dir when the gate left it empty.
func evidenceFiles(dir string) []string {
	var list []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			list = append(list, p)
		}
		return nil
	})
	if len(list) == 0 {
		os.RemoveAll(dir)
	}
	return list
}

// fileTail is the tail of the size bytes of f: its last tailLines lines
// within its last tailBytes, not starting inside a UTF-8 sequence.
func fileTail(f *os.File, size int64) (string, error) {
	n := min(size, tailBytes)
	buf := make([]byte, n)
	if _, err := f.ReadAt(buf, size-n); err != nil && err != io.EOF {
		return "", err
	}
	for len(buf) > 0 && n < size && !utf8.RuneStart(buf[0]) {
		buf = buf[1:]
	}
	return tail(string(buf), tailLines), nil
}

// execute runs argv in dir with the environment env (never nil) and
// stdout and stderr interleaved into out,
// killing the whole process group at the timeout. The exit code is -1
// when the command could not start or was killed.
func execute(ctx context.Context, dir string, argv, env []string, timeout time.Duration, out io.Writer) (int, bool, time.Duration) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = out, out
	// A grandchild that keeps the output pipe open must not hold the run
	// past its timeout.
	cmd.WaitDelay = 2 * time.Second
	start := time.Now()
	// The gate runs in a process group of its own, killed whole at the
	// timeout and when the gate returns: nothing it starts in the
	// background outlives it.
	err := proc.Run(cmd)
	d := time.Since(start)
	if ctx.Err() == context.DeadlineExceeded {
		fmt.Fprintf(out, "\n[timed out after %s]\n", timeout)
		return -1, true, d
	}
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, false, d
	case errors.As(err, &ee) && ee.ExitCode() >= 0:
		return ee.ExitCode(), false, d
	default:
		fmt.Fprintf(out, "\n[%v]\n", err)
		return -1, false, d
	}
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// runSuite runs a suite's cases; the judge's answers go under judgeDir.
func runSuite(ctx context.Context, root string, s EvalSuite, eng *Engine, env []string, judgeDir string) SuiteResult {
	sr := SuiteResult{ID: s.ID, Path: s.Path, Threshold: s.Threshold, Cases: []CaseResult{}, Blocking: true}
	cases, err := LoadSuite(filepath.Join(root, filepath.FromSlash(s.Path)))
	if err != nil {
		// A suite that cannot be read blocks: silence is not a pass.
		sr.Error = err.Error()
		return sr
	}
	sr.Blocking = false
	passed := 0
	for i, c := range cases {
		cr := runCase(ctx, root, c, eng, env, filepath.Join(judgeDir, strconv.Itoa(i)))
		if cr.Blocking {
			sr.Blocking = true
		}
		if cr.Passed {
			passed++
		}
		sr.Cases = append(sr.Cases, cr)
	}
	if len(cases) > 0 {
		sr.Score = float64(passed) / float64(len(cases))
	}
	sr.Passed = len(cases) > 0 && sr.Score >= s.Threshold-1e-9
	if len(cases) == 0 {
		sr.Error = "no cases"
		sr.Blocking = true
	}
	return sr
}

// runCase gathers a case's evidence and checks its assertions. The case
// passes when every blocking assertion passes; an error gathering the
// evidence fails every assertion that needed it.
// The judge's answer on the assertion at index i is stored as
// judgeDir-i.txt and referenced from the case's result.
func runCase(ctx context.Context, root string, c Case, eng *Engine, env []string, judgeDir string) CaseResult {
	cr := CaseResult{ID: c.ID, Passed: true, Results: []Result{}}
	ev, err := gather(ctx, root, c.Input, env)
	if err != nil {
		cr.Error = err.Error()
	}
	caseEng := *eng
	var rec *recordingJudge
	if eng.Judge != nil {
		caseEng.Judge, rec = record(eng.Judge)
	}
	for i, a := range c.Assert {
		var r Result
		if err != nil {
			r = Result{Type: a.Type, Blocking: BlocksByDefault(a, eng.Promoted), Message: "evidence: " + err.Error()}
		} else {
			if rec != nil {
				rec.raw = nil
			}
			r = caseEng.Check(ctx, a, ev)
			if rec != nil && rec.raw != nil {
				// The report keeps the judge's reason, which may quote
				// the output it judged: it leaves redacted, as the
				// stored answer does.
				r.Message, _ = redact.Text(r.Message)
				out, werr := storeJudgeOutput(root, judgeDir+"-"+strconv.Itoa(i)+".txt", i, rec.raw)
				if werr != nil {
					// The verdict has no evidence behind it: it cannot count.
					r.Passed = false
					r.Message = "judge output not stored: " + werr.Error()
				} else {
					cr.JudgeOutputs = append(cr.JudgeOutputs, out)
				}
			}
		}
		if r.Blocking {
			cr.Blocking = true
			if !r.Passed {
				cr.Passed = false
			}
		}
		cr.Results = append(cr.Results, r)
	}
	return cr
}

// gather produces a case's evidence.
func gather(ctx context.Context, root string, in CaseInput, env []string) (Evidence, error) {
	ev := Evidence{Input: in, Retrieved: in.RetrievedDocuments, Contexts: in.RetrievedContexts}
	argv, err := in.Argv()
	if err != nil {
		return ev, err
	}
	switch {
	case argv != nil:
		timeout := defaultCaseTimeout
		if in.TimeoutSeconds > 0 {
			timeout = time.Duration(in.TimeoutSeconds) * time.Second
		}
		out := &capped.Buffer{Max: maxEvidenceBytes}
		code, timedOut, _ := execute(ctx, root, argv, env, timeout, out)
		ev.Output = out.String()
		if !timedOut {
			ev.ExitCode = &code
		}
	case in.Output != nil:
		ev.Output = *in.Output
	case in.OutputFile != "":
		out, err := readEvidence(filepath.Join(root, filepath.FromSlash(in.OutputFile)))
		if err != nil {
			return ev, err
		}
		ev.Output = out
	}
	if ev.Retrieved == nil && ev.Output != "" {
		// A command may print its ranking as a JSON list of ids, or of
		// passages {"id", "text"} whose texts context_recall reads.
		var ids []string
		var passages []struct {
			ID   string `json:"id"`
			Text string `json:"text"`
		}
		out := []byte(strings.TrimSpace(ev.Output))
		if json.Unmarshal(out, &ids) == nil {
			ev.Retrieved = ids
		} else if json.Unmarshal(out, &passages) == nil {
			ev.Retrieved = []string{}
			for _, p := range passages {
				ev.Retrieved = append(ev.Retrieved, p.ID)
				if ev.Contexts == nil || len(in.RetrievedContexts) == 0 {
					ev.Contexts = append(ev.Contexts, p.Text)
				}
			}
		}
	}
	ev.Trajectory, err = trajectoryOf(root, in)
	return ev, err
}

// readEvidence reads a case's output file, as much of it as a case's
// command would have kept. Only a regular file is read: a FIFO would
// hang the run and a device would never end.
func readEvidence(name string) (string, error) {
	f, err := capped.Open(name)
	if err != nil {
		return "", err
	}
	defer f.Close()
	out := &capped.Buffer{Max: maxEvidenceBytes}
	if _, err := io.Copy(out, f); err != nil {
		return "", err
	}
	return out.String(), nil
}

// Record stores a run with its cases and results in the ledger and
// returns the run's sequence number.
func Record(ctx context.Context, db *store.DB, projectHash string, rep *RunReport) (int64, error) {
	run := store.Run{RunID: rep.RunID, ProjectHash: projectHash, ProfileID: rep.ProfileID, ManifestHash: rep.ManifestHash,
		Phase: rep.Phase, StartedAt: rep.StartedAt, FinishedAt: rep.FinishedAt, Passed: rep.Passed, ReportPath: rep.ReportPath}
	var cases []store.CaseRow
	var results []store.ResultRow
	for _, g := range rep.Gates {
		msg := fmt.Sprintf("exit %d", g.ExitCode)
		switch {
		case g.TimedOut:
			msg = "timed out"
		case g.NotEvidence:
			msg = fmt.Sprintf("exit %d: not evidence", g.ExitCode)
		}
		score := 0.0
		if g.Passed {
			score = 1
		}
		results = append(results, store.ResultRow{Subject: g.ID, Type: TypeExitCode, Passed: g.Passed, Blocking: g.Blocks, Score: score, Message: msg, OutputPath: g.OutputPath})
	}
	for _, s := range rep.Suites {
		if s.Error != "" {
			results = append(results, store.ResultRow{Subject: s.ID, Type: "suite", Passed: false, Blocking: s.Blocking, Message: s.Error})
		}
		for _, c := range s.Cases {
			cases = append(cases, store.CaseRow{SuiteID: s.ID, CaseID: c.ID, Passed: c.Passed, Blocking: c.Blocking})
			for i, r := range c.Results {
				msg := r.Message
				if r.Judge != "" {
					msg += " [" + r.Judge + "]"
				}
				results = append(results, store.ResultRow{Subject: s.ID + "/" + c.ID, Position: i, Type: r.Type, Passed: r.Passed, Blocking: r.Blocking, Score: r.Score, Message: msg, OutputPath: rep.ReportPath})
			}
		}
	}
	return db.PutRun(ctx, run, cases, results)
}

// storeJudgeOutput writes a judge's answer to the file name, through
// the redactor as a gate's log is (the answer may quote the case's
// output, tokens included), and returns its reference: the path
// relative to root, the size and digest of what was written.
func storeJudgeOutput(root, name string, assertion int, raw []byte) (JudgeOutput, error) {
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return JudgeOutput{}, err
	}
	var buf bytes.Buffer
	red := redact.NewWriter(&buf)
	red.Write(raw)
	if err := red.Close(); err != nil {
		return JudgeOutput{}, err
	}
	if err := os.WriteFile(name, buf.Bytes(), 0o644); err != nil {
		return JudgeOutput{}, err
	}
	sum := sha256.Sum256(buf.Bytes())
	rel, err := filepath.Rel(root, name)
	if err != nil {
		return JudgeOutput{}, err
	}
	return JudgeOutput{Assertion: assertion, Path: filepath.ToSlash(rel), Bytes: int64(buf.Len()), SHA256: "sha256:" + hex.EncodeToString(sum[:])}, nil
}
