package runner

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crystallize-dev/crystallize/internal/toolexec"
)

// TestResumeOnce: three resumes of one suspended run started together
// run the step after the boundary once. The others are refused: while
// the first runs, as already being resumed; after it, as resumed
// meanwhile (each holds the journal it read before any of them ran).
func TestResumeOnce(t *testing.T) {
	state := t.TempDir()
	w := workflow(t, approvalWorkflow)
	models := 0
	if _, err := Run(context.Background(), w, Params{"branch": "b1"}, approvalOpts(t, state, counter{}, &models)); !errors.Is(err, ErrPendingApproval) {
		t.Fatal(err)
	}
	var merges atomic.Int32
	tools := map[string]toolexec.Tool{"effect": {Func: func(_ context.Context, args map[string]any) (any, error) {
		if args["step"] == "merge" {
			merges.Add(1)
			time.Sleep(100 * time.Millisecond) // the window two resumes raced in
		}
		return args, nil
	}}}
	const n = 3
	journals := make([]*Journal, n)
	for i := range journals {
		j, err := ReadJournal(state, "run-test")
		if err != nil {
			t.Fatal(err)
		}
		journals[i] = j
	}
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var calls int
			o := approvalOpts(t, state, counter{}, &calls)
			o.Tools = tools
			o.Approve = []string{"merge"}
			_, errs[i] = Resume(context.Background(), w, journals[i], o)
		}()
	}
	wg.Wait()
	if got := merges.Load(); got != 1 {
		t.Errorf("the step after the approval ran %d times, want once", got)
	}
	resumed := 0
	for _, err := range errs {
		switch {
		case errors.Is(err, ErrPendingApproval): // the one that ran, now at release
			resumed++
		case errors.Is(err, ErrJournal) && (strings.Contains(err.Error(), "already being resumed") || strings.Contains(err.Error(), "resumed meanwhile")):
		default:
			t.Errorf("Resume = %v, want the run resumed once and the others refused", err)
		}
	}
	if resumed != 1 {
		t.Errorf("%d resumes ran, want 1: %v", resumed, errs)
	}
}
