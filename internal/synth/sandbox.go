package synth

import (
	"bytes"
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// Sandbox runs capsules in a separate process, so that the limits the
// Starlark interpreter cannot enforce on itself are enforced by the
// kernel: RLIMIT_AS bounds memory (mem_mb), RLIMIT_CPU bounds CPU time
// (time_s), RLIMIT_FSIZE is 0, the process starts in a new network
// namespace where the kernel allows it, with an empty environment and an
// empty working directory, and the parent kills it after a wall-clock
// allowance. Starlark itself has no file, network or clock access; the
// process is the second wall, for what a bug in the interpreter or a host
// module could let through, and the only one that bounds allocation.
//
// The process is the program at Path started with Args (Args[0] is the
// argv[0] it sees) that calls Serve on its standard input and output:
// "crystallize synth capsule-exec" in the command, a test binary in tests.
// One process executes a batch: every input of one experiment, so the
// cost of starting it is paid once, not per execution.
type Sandbox struct {
	Path string
	Args []string
	// WallClock overrides the wall-clock allowance of a batch, which is
	// otherwise 3 × time_s × executions + 10 s: generous, because it
	// only has to catch a process that is not using its CPU time.
	WallClock time.Duration

	// netns records whether new network namespaces work here: 0 not
	// tried, 1 yes, 2 no (the kernel or a container refuses them).
	netns atomic.Int32
}

// Isolation describes the sandbox's network isolation as last observed:
// "network namespace", "none (new network namespaces are not permitted
// here)" or "not yet started".
func (s *Sandbox) Isolation() string {
	switch s.netns.Load() {
	case 1:
		return "network namespace"
	case 2:
		return "none (new network namespaces are not permitted here)"
	}
	return "not yet started"
}

// request is what the parent sends the capsule process; response what it
// answers. They travel as gob, which keeps int64 and float64 apart in
// interface values (JSON would turn 2.0 into 2).
type request struct {
	Capsule Capsule
	Inputs  []any
}

type response struct {
	Results []*Result
	Err     *CapsuleError
}

func init() {
	gob.Register([]any{})
	gob.Register(map[string]any{})
	gob.Register(Metrics{})
}

// stderrCap bounds what is kept of the capsule process's standard error,
// which only the Go runtime writes to (a fatal error, such as running out
// of address space).
const stderrCap = 64 << 10

// Run executes the capsule's entrypoint on each input in one sandboxed
// process and returns one result per input. The first failure stops the
// batch; it is a *CapsuleError.
func (s *Sandbox) Run(ctx context.Context, c *Capsule, inputs []any) ([]*Result, error) {
	// Refuse what can be refused without starting a process.
	if _, err := c.Check(); err != nil {
		return nil, err
	}
	var req bytes.Buffer
	if err := gob.NewEncoder(&req).Encode(request{Capsule: *c, Inputs: inputs}); err != nil {
		return nil, c.errorf(CodeInput, "", "encoding the input: %v", err)
	}
	r := c.Resources.WithDefaults()
	runs := max(len(inputs), 1)
	wall := s.WallClock
	if wall == 0 {
		wall = time.Duration(3*r.TimeS*runs)*time.Second + 10*time.Second
	}
	// The answer holds every execution's printed output and metrics.
	answerCap := int64(r.OutputKB)*1024*int64(runs) + 1<<20

	dir, err := os.MkdirTemp("", "capsule-")
	if err != nil {
		return nil, c.errorf(CodeSandbox, "", "creating the working directory: %v", err)
	}
	defer os.RemoveAll(dir)

	wctx, cancel := context.WithTimeout(ctx, wall)
	defer cancel()
	stdout := &capWriter{limit: answerCap}
	stderr := &capWriter{limit: stderrCap, truncate: true}
	start := func(isolate bool) (*exec.Cmd, error) {
		cmd := exec.CommandContext(wctx, s.Path)
		cmd.Args = append([]string(nil), s.Args...)
		if len(cmd.Args) == 0 {
			cmd.Args = []string{s.Path}
		}
		cmd.Env = []string{}
		cmd.Dir = dir
		cmd.Stdin = bytes.NewReader(req.Bytes())
		cmd.Stdout, cmd.Stderr = stdout, stderr
		cmd.SysProcAttr = sysProcAttr(isolate)
		cmd.Cancel = func() error { return killGroup(cmd) }
		cmd.WaitDelay = time.Second
		return cmd, cmd.Start()
	}
	if !netnsSupported {
		s.netns.Store(2)
	}
	isolate := s.netns.Load() != 2
	cmd, err := start(isolate)
	if err != nil && isolate && isolationRefused(err) {
		s.netns.Store(2)
		isolate = false
		cmd, err = start(false)
	}
	if err != nil {
		return nil, c.errorf(CodeSandbox, "", "starting the capsule process: %v", err)
	}
	if isolate {
		s.netns.Store(1)
	}
	waitErr := cmd.Wait()
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		return nil, c.errorf(CodeSandbox, "", "the capsule process left %d files in its working directory", len(entries))
	}
	return s.answer(ctx, wctx, c, cmd, waitErr, stdout, stderr, wall, runs)
}

// answer classifies how the capsule process ended and decodes its answer.
func (s *Sandbox) answer(ctx, wctx context.Context, c *Capsule, cmd *exec.Cmd, waitErr error, stdout, stderr *capWriter, wall time.Duration, runs int) ([]*Result, error) {
	r := c.Resources.WithDefaults()
	state := cmd.ProcessState
	switch {
	case ctx.Err() != nil:
		return nil, c.errorf(CodeCancelled, "", "run cancelled")
	case wctx.Err() != nil:
		return nil, c.errorf(CodeWallClock, fmt.Sprintf("wall clock %s", wall), "the capsule process was killed after %s", wall)
	case stdout.exceeded:
		return nil, c.errorf(CodeOutput, fmt.Sprintf("output_kb = %d", r.OutputKB), "the capsule process's answer exceeded %d bytes", stdout.limit)
	case state != nil && cpuKilled(state, float64(cpuLimit(r, runs))):
		return nil, c.errorf(CodeCPU, fmt.Sprintf("time_s = %d (RLIMIT_CPU %d s for %d executions)", r.TimeS, cpuLimit(r, runs), runs), "the capsule process used its CPU time")
	case outOfMemory(stderr.String()):
		return nil, c.errorf(CodeMemory, fmt.Sprintf("mem_mb = %d", r.MemMB), "the capsule process ran out of its address space")
	case waitErr != nil:
		return nil, c.errorf(CodeSandbox, "", "the capsule process failed: %v: %s", waitErr, firstLine(stderr.String()))
	}
	var resp response
	if err := gob.NewDecoder(bytes.NewReader(stdout.buf.Bytes())).Decode(&resp); err != nil {
		return nil, c.errorf(CodeSandbox, "", "reading the capsule process's answer: %v", err)
	}
	if resp.Err != nil {
		return resp.Results, resp.Err
	}
	return resp.Results, nil
}

func cpuLimit(r Resources, runs int) int { return r.TimeS*runs + 1 }

// outOfMemory recognizes the Go runtime's fatal errors when RLIMIT_AS
// refuses it memory: the heap cannot grow, or a thread stack cannot be
// mapped.
func outOfMemory(stderr string) bool {
	for _, s := range []string{"out of memory", "cannot allocate memory", "failed to create new OS thread"} {
		if strings.Contains(stderr, s) {
			return true
		}
	}
	return false
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if s == "" {
		return "no diagnostic"
	}
	return s
}

// capWriter keeps at most limit bytes. Past the limit it either fails
// the write (the capsule's answer: a truncated answer is useless and the
// process is stopped) or drops the rest (stderr: its head says why).
type capWriter struct {
	buf      bytes.Buffer
	limit    int64
	truncate bool
	exceeded bool
}

var errAnswerTooLarge = errors.New("answer too large")

func (w *capWriter) Write(p []byte) (int, error) {
	room := w.limit - int64(w.buf.Len())
	if int64(len(p)) > room {
		w.exceeded = true
		if !w.truncate {
			return 0, errAnswerTooLarge
		}
		w.buf.Write(p[:max(room, 0)])
		return len(p), nil
	}
	return w.buf.Write(p)
}

func (w *capWriter) String() string { return w.buf.String() }

// Serve is the capsule process: it reads one request from r, puts the
// process under the request's limits, executes the batch in-process and
// writes the answer to w. It returns an error only when it cannot talk to
// its parent; a capsule's failure is part of the answer.
func Serve(r io.Reader, w io.Writer) error {
	var req request
	if err := gob.NewDecoder(r).Decode(&req); err != nil {
		return fmt.Errorf("reading the capsule request: %w", err)
	}
	c := &req.Capsule
	if err := applyLimits(c.Resources.WithDefaults(), max(len(req.Inputs), 1)); err != nil {
		return gob.NewEncoder(w).Encode(response{Err: c.errorf(CodeSandbox, "", "setting limits: %v", err)})
	}
	resp := response{}
	ctx := context.Background()
	prog, err := c.Compile(ctx)
	if err != nil {
		resp.Err = asCapsuleError(c, err)
		return gob.NewEncoder(w).Encode(resp)
	}
	for _, in := range req.Inputs {
		res, err := prog.Exec(ctx, in)
		if err != nil {
			resp.Err = asCapsuleError(c, err)
			break
		}
		resp.Results = append(resp.Results, res)
	}
	return gob.NewEncoder(w).Encode(resp)
}

func asCapsuleError(c *Capsule, err error) *CapsuleError {
	var ce *CapsuleError
	if errors.As(err, &ce) {
		return ce
	}
	return c.errorf(CodeRuntime, "", "%v", err)
}

// isolationRefused reports whether starting with a new user and network
// namespace failed because they are not permitted here.
func isolationRefused(err error) bool {
	return errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EINVAL) ||
		errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EACCES) || errors.Is(err, syscall.ENOSYS)
}
