package replay

import (
	"testing"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

func TestIndexSources(t *testing.T) {
	a := &trace.Trace{ID: "t1", SourceHash: "sha256:a"}
	dup := &trace.Trace{ID: "t1", SourceHash: "sha256:a"}
	other := &trace.Trace{ID: "t1", SourceHash: "sha256:b"}
	ix := IndexSources([]*trace.Trace{nil, a, dup, other})
	for _, tc := range []struct {
		name     string
		id, hash string
		want     *trace.Trace
	}{
		{"first of two with one id and hash", "t1", "sha256:a", a},
		{"same id, other hash", "t1", "sha256:b", other},
		{"unknown hash", "t1", "sha256:c", nil},
		{"unknown id", "t2", "sha256:a", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ix.Example(&candidate.Example{TraceID: tc.id, SourceHash: tc.hash}); got != tc.want {
				t.Errorf("Example(%s, %s) = %p, want %p", tc.id, tc.hash, got, tc.want)
			}
		})
	}
}
