package tracestore

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"sync/atomic"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/trace"
	"github.com/crystallize-dev/crystallize/internal/tracetest"
	"github.com/google/go-cmp/cmp"
)

// TestStoredDocumentsDecodeDirect checks that every document import
// stores, from generated corpora (files and JSON Lines), every agent
// session format and the examples, is read by trace.Parser.DecodeDirect,
// not declined to the generic decode, and into the trace the generic
// decode (Parse, FromValue) gives.
func TestStoredDocumentsDecodeDirect(t *testing.T) {
	ctx := context.Background()
	tmp := t.TempDir()
	dirs := map[string]string{"examples": "../../examples/traces", "agents": "../source/testdata/agents"}
	for _, jsonl := range []bool{false, true} {
		dir := filepath.Join(tmp, "generated", map[bool]string{false: "files", true: "jsonl"}[jsonl])
		writeCorpus(t, dir, 120, 7, jsonl)
		dirs[filepath.Base(dir)] = dir
	}
	for _, f := range tracetest.AgentFormats {
		dir := filepath.Join(tmp, "sessions", string(f))
		if err := tracetest.GenerateAgents(tracetest.AgentConfig{Sessions: 12, Seed: 5}).Write(dir, f); err != nil {
			t.Fatal(err)
		}
		dirs[string(f)] = dir
	}
	for name, dir := range dirs {
		t.Run(name, func(t *testing.T) {
			if _, err := os.Stat(dir); err != nil {
				t.Fatal(err)
			}
			db := openDB(t, filepath.Join(t.TempDir(), "state.db"))
			if _, err := Import(ctx, db, dir, ImportOptions{SkipInvalid: true}); err != nil {
				t.Fatal(err)
			}
			c, err := Open(ctx, db)
			if err != nil {
				t.Fatal(err)
			}
			if c.Len() == 0 {
				t.Fatal("nothing stored")
			}
			ids := make([]int64, c.Len())
			for i := range ids {
				ids[i] = c.Row(i).BodyID
			}
			bodies, err := db.TraceBodies(ctx, ids)
			if err != nil {
				t.Fatal(err)
			}
			var p trace.Parser
			for i, body := range bodies {
				row := c.Row(i)
				got, ok := p.DecodeDirect(body, row.OriginPath, row.OriginLine)
				if !ok {
					t.Fatalf("stored trace %s (%s) is declined by DecodeDirect", row.TraceID, row.OriginPath)
				}
				v, err := p.Parse(body, row.OriginPath, row.OriginLine)
				if err != nil {
					t.Fatal(err)
				}
				want, err := trace.FromValue(v.(map[string]any), row.OriginPath, row.OriginLine)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("stored trace %s: DecodeDirect differs (-generic +direct):\n%s", row.TraceID, cmp.Diff(want, got))
				}
			}
		})
	}
}

// TestDecodedPerCorpus: each Corpus counts what it decoded, apart from
// every other, while others decode at the same time: all of one store,
// three traces of another, and a mine of a third, whose count is what its
// read backs reported.
func TestDecodedPerCorpus(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	open := func(name string, n int) (*Corpus, string) {
		tmp := t.TempDir()
		dir := filepath.Join(tmp, name)
		writeCorpus(t, dir, n, 2, false)
		db := openDB(t, filepath.Join(tmp, "state.db"))
		if _, err := Import(ctx, db, dir, ImportOptions{}); err != nil {
			t.Fatal(err)
		}
		c, err := Open(ctx, db)
		if err != nil {
			t.Fatal(err)
		}
		return c, dir
	}
	all, _ := open("all", 60)
	some, _ := open("some", 40)
	mined, _ := open("mined", 80)
	var reread atomic.Int64
	errs := make(chan error, 3)
	go func() { _, err := all.All(ctx); errs <- err }()
	go func() { _, err := some.Read(ctx, []int{0, 5, 7}); errs <- err }()
	go func() {
		_, err := mined.Mine(ctx, opts, func(n int) { reread.Add(int64(n)) })
		errs <- err
	}()
	for range 3 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if got := all.Decoded(); got != 60 {
		t.Errorf("a corpus that decoded its 60 traces counts %d", got)
	}
	if got := some.Decoded(); got != 3 {
		t.Errorf("a corpus that decoded 3 traces counts %d", got)
	}
	if got, want := mined.Decoded(), reread.Load(); got != want || got == 0 {
		t.Errorf("a mine that read back %d traces counts %d decoded", want, got)
	}
}
