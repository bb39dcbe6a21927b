package persona

import (
	"bytes"
	"context"
	"errors"
	"os"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/codegen"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// FuzzDecode checks that Decode never panics, that a failure is always a
// positioned trace.ErrorList, and that whatever decodes can be evaluated
// and, when proposed, yields a patch that checks.
func FuzzDecode(f *testing.F) {
	for _, p := range []string{"../../examples/persona/history.jsonl", "testdata/bad.jsonl"} {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
		for _, l := range bytes.Split(data, []byte("\n")) {
			f.Add(l)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		recs, err := Decode(bytes.NewReader(data), "h.jsonl")
		if err != nil {
			var list trace.ErrorList
			if !errors.As(err, &list) || len(list) == 0 {
				t.Fatalf("Decode error %v is not a trace.ErrorList", err)
			}
			for _, e := range list {
				if e.File != "h.jsonl" || e.Line < 1 {
					t.Fatalf("error %q is not positioned", e)
				}
			}
			return
		}
		for _, r := range recs {
			res, err := Crystallize(context.Background(), recs, Options{Persona: r.Persona, MinExamples: 2, MinHostedHistoryDays: -1})
			if err != nil {
				t.Fatalf("Crystallize: %v", err)
			}
			if p := res.Proposal; p != nil {
				if err := codegen.Check(PatchFile, p.Workflow, p.FuncName); err != nil {
					t.Fatalf("patch does not check: %v", err)
				}
			}
		}
	})
}

func BenchmarkDecode(b *testing.B) {
	data := benchHistory(b, 1000)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := Decode(bytes.NewReader(data), "h.jsonl"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCrystallize(b *testing.B) {
	recs, err := Decode(bytes.NewReader(benchHistory(b, 1000)), "h.jsonl")
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		res, err := Crystallize(context.Background(), recs, Options{Persona: "merge_captain"})
		if err != nil || res.Decision != Proposed {
			b.Fatalf("Crystallize = %v, %v", res, err)
		}
	}
}

// benchHistory is n agreeing records of one persona over n days.
func benchHistory(b *testing.B, n int) []byte {
	b.Helper()
	var buf bytes.Buffer
	for i := range n {
		buf.WriteString(line{day: i % 365}.String())
		buf.WriteByte('\n')
	}
	return buf.Bytes()
}
