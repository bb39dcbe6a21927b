package source

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/trace"
)

// TestSummarizeRereads: a load with Options.Summarize keeps thin traces
// and their summaries, made of the traces as a whole load returns them,
// and Reread decodes each again into the whole load's trace; a load in
// which a session was cut to its own calls or named as a part fails with
// ErrThinChanged, its summary being of the session before.
func TestSummarizeRereads(t *testing.T) {
	ctx := context.Background()
	summarize := func(tr *trace.Trace) any { return len(tr.Actions) }
	for _, dir := range []string{"testdata/agents", "testdata/wild", "testdata/agents/claude"} {
		t.Run(dir, func(t *testing.T) {
			whole, err := Load(ctx, dir, Options{SkipInvalid: true})
			if err != nil {
				t.Fatal(err)
			}
			changed := false
			for _, n := range whole.Notes {
				changed = changed || n.Code == NoteRepeats
			}
			for _, tr := range whole.Traces {
				changed = changed || strings.Contains(tr.ID, ".part-")
			}
			thin, err := Load(ctx, dir, Options{SkipInvalid: true, Summarize: summarize})
			if changed {
				if !errors.Is(err, ErrThinChanged) {
					t.Fatalf("a session was cut or renamed: err %v, want ErrThinChanged", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(thin.Traces) != len(whole.Traces) || len(thin.Summaries) != len(thin.Traces) {
				t.Fatalf("%d thin traces, %d summaries; want %d", len(thin.Traces), len(thin.Summaries), len(whole.Traces))
			}
			if !reflect.DeepEqual(thin.Notes, whole.Notes) || !reflect.DeepEqual(thin.SkippedSessions, whole.SkippedSessions) || !reflect.DeepEqual(thin.Skipped, whole.Skipped) {
				t.Errorf("notes, skipped sessions or skipped lines differ from the whole load's")
			}
			idx := make([]int, len(thin.Traces))
			sessions := 0
			for i := range idx {
				idx[i] = i
				if thin.Summaries[i] != nil {
					sessions++
					if got, want := thin.Summaries[i], len(whole.Traces[i].Actions); got != want {
						t.Errorf("%s: summary %v, want %v", whole.Traces[i].ID, got, want)
					}
					if reflect.DeepEqual(thin.Traces[i], whole.Traces[i]) {
						t.Errorf("%s: kept whole, want thin", whole.Traces[i].ID)
					}
				}
			}
			if sessions == 0 {
				t.Fatal("no session summarized")
			}
			back, err := thin.Reread(ctx, idx)
			if err != nil {
				t.Fatal(err)
			}
			for i := range back {
				if !reflect.DeepEqual(back[i], whole.Traces[i]) {
					t.Errorf("%s read back differs from the whole load's", whole.Traces[i].ID)
				}
			}
		})
	}
}
