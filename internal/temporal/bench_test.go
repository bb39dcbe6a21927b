package temporal

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/crystallize-dev/crystallize/internal/runner"
)

// BenchmarkLocalRun is the baseline: the 5-step workflow run in-process
// with runner.Run.
func BenchmarkLocalRun(b *testing.B) {
	w := load(b, "testdata/five.star")
	opts := runOptions(b.TempDir(), &effects{})
	b.ResetTimer()
	for i := range b.N {
		opts.RunID = fmt.Sprintf("local-%d", i)
		if _, err := runner.Run(context.Background(), w, runner.Params{"n": "x"}, opts); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/5/1000, "ms/step")
}

// BenchmarkTemporalRun runs the same workflow on Temporal, one run at a
// time on one worker: the difference of ms/step with BenchmarkLocalRun
// is the latency Temporal adds per step (an activity round trip and a
// workflow task).
func BenchmarkTemporalRun(b *testing.B) {
	c, queue, w := benchWorkers(b, 1)
	b.ResetTimer()
	for range b.N {
		benchRun(b, c, queue, w)
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/5/1000, "ms/step")
}

// BenchmarkTemporalThroughput starts b.N runs of the 5-step workflow at
// once on 4 workers and reports how many end per second.
func BenchmarkTemporalThroughput(b *testing.B) {
	c, queue, w := benchWorkers(b, 4)
	b.ResetTimer()
	var wg sync.WaitGroup
	sem := make(chan struct{}, 64)
	for range b.N {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			benchRun(b, c, queue, w)
		}()
	}
	wg.Wait()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "runs/s")
}

func benchWorkers(b *testing.B, n int) (client.Client, string, *runner.Workflow) {
	b.Helper()
	c, err := Dial(DialOptions{Address: temporalAddress(b)})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(c.Close)
	w := load(b, "testdata/five.star")
	queue := fmt.Sprintf("bench-%d-%s", n, runner.NewRunID(time.Now()))
	e := &effects{}
	state := b.TempDir()
	for range n {
		startWorker(b, c, queue, w, runOptions(state, e))
	}
	benchRun(b, c, queue, w) // warm up: the workers poll, the queue exists
	return c, queue, w
}

func benchRun(b *testing.B, c client.Client, queue string, w *runner.Workflow) {
	id := runner.NewRunID(time.Now())
	ctx := context.Background()
	if _, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: queue}, WorkflowType,
		RunInput{RunID: id, Workflow: w.Name, WorkflowSHA256: w.SHA256, Params: runner.Params{"n": "x"}}); err != nil {
		b.Error(err)
		return
	}
	if _, err := Wait(ctx, c, id); err != nil {
		b.Error(err)
	}
}
