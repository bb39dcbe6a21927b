package tracestore

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
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
