package pipeline

import (
	"context"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/mine"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// MineTraces mines traces held in memory. One trace takes the
// single-trace path (mine.Single): the trace is the workflow, every
// action a step and every value a literal, and opts.MinExamples does not
// apply. Several are mined with mine.Mine.
func MineTraces(ctx context.Context, traces []*trace.Trace, opts mine.Options) (*candidate.Report, error) {
	if len(traces) == 1 {
		return mine.Single(ctx, traces[0], opts)
	}
	return mine.Mine(ctx, traces, opts)
}

// Screen returns the held-out traces that count as evidence and lists
// the others in r's excluded traces, with role "heldout": a held-out run
// that mining would exclude (an unresolved policy violation, a
// nondeterministic side effect) proves nothing about a procedure, so
// shadow replay does not compare it.
func Screen(r *candidate.Report, heldout []*trace.Trace) []*trace.Trace {
	out := make([]*trace.Trace, 0, len(heldout))
	for _, t := range heldout {
		if screenOut(r, t) {
			continue
		}
		out = append(out, t)
	}
	return out
}

// screenOut lists t in r's excluded traces and reports true when mining
// would exclude it.
func screenOut(r *candidate.Report, t *trace.Trace) bool {
	ex, excluded := mine.Excluded(t)
	if !excluded {
		return false
	}
	ex.Role = candidate.RoleHeldout
	r.ExcludedTraces = append(r.ExcludedTraces, ex)
	r.ExcludedTraceCount++
	return true
}
