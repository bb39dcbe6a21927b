package source

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/trace"
	"github.com/crystallize-dev/crystallize/internal/tracetest"
)

// TestRereadSpool: a load with Options.Summarize reads its sessions back
// from its spool, not from their logs: once the logs are gone, Reread
// still returns every session as the whole load decoded it, after
// ReleaseThin too, for sessions of every agent.
func TestRereadSpool(t *testing.T) {
	ctx := context.Background()
	for _, format := range []tracetest.AgentFormat{tracetest.FormatClaude, tracetest.FormatCodex} {
		t.Run(string(format), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "logs")
			if err := tracetest.GenerateAgents(tracetest.AgentConfig{Sessions: 12, Seed: 5, Calls: 15}).Write(dir, format); err != nil {
				t.Fatal(err)
			}
			whole, err := Load(ctx, dir, Options{})
			if err != nil {
				t.Fatal(err)
			}
			thin, err := Load(ctx, dir, Options{Summarize: func(tr *trace.Trace) any { return len(tr.Actions) }})
			if err != nil {
				t.Fatal(err)
			}
			if err := os.RemoveAll(dir); err != nil {
				t.Fatal(err)
			}
			thin.ReleaseThin()
			if thin.Summaries != nil {
				t.Errorf("ReleaseThin kept %d summaries", len(thin.Summaries))
			}
			idx := make([]int, len(thin.Traces))
			for i := range idx {
				idx[len(idx)-1-i] = i // in another order than the load's
			}
			got, err := thin.Reread(ctx, idx)
			if err != nil {
				t.Fatalf("Reread with the logs gone: %v", err)
			}
			for k, i := range idx {
				if len(thin.Traces[i].Actions) != 0 {
					t.Errorf("thin trace %s keeps %d actions after ReleaseThin", thin.Traces[i].ID, len(thin.Traces[i].Actions))
				}
				if !reflect.DeepEqual(got[k], whole.Traces[i]) {
					t.Errorf("session %s read back differs from the whole load's", whole.Traces[i].ID)
				}
			}
		})
	}
}

// TestThinCopies: a thin load tells the sessions that repeat another's
// calls apart as the whole load does, from its thin calls' ids and
// digests: a session that only repeats another's calls is dropped with
// the same note, and one whose last call has the id of another's with
// other parameters is cut to that call, which a thin load reports as
// ErrThinChanged.
func TestThinCopies(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name string
		edit func([]byte) []byte
		code string
	}{
		{"copy", func(b []byte) []byte { return b }, NoteCopy},
		{"last-call-differs", func(b []byte) []byte {
			at := bytes.LastIndex(b, []byte(`"type":"tool_use"`))
			in := at + bytes.Index(b[at:], []byte(`"input":{"`)) + len(`"input":{"`)
			value := in + bytes.Index(b[in:], []byte(`":"`)) + len(`":"`)
			return slices.Concat(b[:value], []byte("changed "), b[value:])
		}, NoteRepeats},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := tracetest.GenerateAgents(tracetest.AgentConfig{Sessions: 3, Seed: 9, Calls: 10}).Write(dir, tracetest.FormatClaude); err != nil {
				t.Fatal(err)
			}
			var logs []string
			err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					logs = append(logs, p)
				}
				return err
			})
			if err != nil || len(logs) == 0 {
				t.Fatalf("%d logs: %v", len(logs), err)
			}
			// The session again under another id, as a compaction
			// replays a conversation.
			data, err := os.ReadFile(logs[0])
			if err != nil {
				t.Fatal(err)
			}
			id := strings.TrimSuffix(filepath.Base(logs[0]), ".jsonl")
			data = c.edit(bytes.ReplaceAll(data, []byte(id), []byte("z-"+id)))
			if err := os.WriteFile(filepath.Join(filepath.Dir(logs[0]), "z-"+id+".jsonl"), data, 0o644); err != nil {
				t.Fatal(err)
			}
			whole, err := Load(ctx, dir, Options{})
			if err != nil {
				t.Fatal(err)
			}
			var codes []string
			for _, n := range whole.Notes {
				codes = append(codes, n.Code)
			}
			if !slices.Equal(codes, []string{c.code}) {
				t.Fatalf("whole load notes %v, want [%s]", codes, c.code)
			}
			thin, err := Load(ctx, dir, Options{Summarize: func(tr *trace.Trace) any { return len(tr.Actions) }})
			if c.code == NoteRepeats {
				if !errors.Is(err, ErrThinChanged) {
					t.Fatalf("thin load: %v, want ErrThinChanged", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(thin.Notes, whole.Notes) || len(thin.Traces) != len(whole.Traces) {
				t.Fatalf("thin load: notes %+v, %d sessions; want %+v, %d", thin.Notes, len(thin.Traces), whole.Notes, len(whole.Traces))
			}
			for i := range thin.Traces {
				if thin.Traces[i].ID != whole.Traces[i].ID {
					t.Errorf("thin load kept %s at %d, want %s", thin.Traces[i].ID, i, whole.Traces[i].ID)
				}
			}
		})
	}
}
