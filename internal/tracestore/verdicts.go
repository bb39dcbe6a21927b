package tracestore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/store"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// Verdicts is the store's memory of examples' verdicts across mines
// (candidate.ExampleVerdicts): mining the store again after adding traces
// builds the same candidates, and an example that passed against a
// candidate of the same content is not read again. Each verdict is kept
// with the example's row as the report lists it, under the candidate's
// fingerprint, the example trace's source hash and the example's start;
// store gc removes those of traces no longer stored.
//
// The passing verdicts of a candidate are read once, the first time it is
// asked about, and kept in memory for the run.
//
// A verdict names its trace by source hash, which is not always one
// trace's: the sessions of one agent's log (an OTLP file holds many)
// share their file's. Those of a corpus (Corpus.Verdicts) are checked
// against the traces it holds now: a verdict is used only when its source
// hash is one stored trace's, the one the kept row names, and that row
// then says where the trace is now, as a fresh read would; a verdict of a
// hash several traces share is neither used nor kept, and those examples
// are read every time.
type Verdicts struct {
	db     *store.DB
	passed map[string]map[store.VerdictAt][]byte
	// traces are the stored traces by source hash; nil trusts every
	// verdict as kept (NewVerdicts).
	traces map[string][]*store.TraceRow
}

var _ candidate.ExampleVerdicts = (*Verdicts)(nil)

// NewVerdicts returns the verdicts kept in db.
func NewVerdicts(db *store.DB) *Verdicts {
	return &Verdicts{db: db, passed: map[string]map[store.VerdictAt][]byte{}}
}

// Passed returns the example recorded as passing under each key, or nil.
func (v *Verdicts) Passed(ctx context.Context, keys []candidate.VerdictKey) ([]*candidate.Example, error) {
	out := make([]*candidate.Example, len(keys))
	for i, k := range keys {
		m, err := v.candidate(ctx, k.Candidate)
		if err != nil {
			return nil, err
		}
		row, ok := m[store.VerdictAt{SourceHash: k.SourceHash, StartIndex: k.StartIndex}]
		if !ok {
			continue
		}
		var ex candidate.Example
		if err := json.Unmarshal(row, &ex); err != nil {
			return nil, fmt.Errorf("stored verdict of candidate %s, trace %s at %d: %w", k.Candidate, k.SourceHash, k.StartIndex, err)
		}
		if v.traces != nil {
			rows := v.traces[k.SourceHash]
			if len(rows) != 1 || rows[0].TraceID != ex.TraceID {
				continue
			}
			ex.SourceHash = rows[0].SourceHash
			ex.Source = trace.Origin{Path: rows[0].OriginPath, Line: rows[0].OriginLine}.String()
		}
		out[i] = &ex
	}
	return out, nil
}

// Record keeps the verdicts of the examples a run read, in one
// transaction. A store that cannot be written (store.DB.ReadOnly) keeps
// none, and that is no error: a verdict only saves the next mine some
// reading, and the mine's report is the same without it.
func (v *Verdicts) Record(ctx context.Context, verdicts []candidate.Verdict) error {
	list := make([]store.StoredVerdict, 0, len(verdicts))
	for _, vd := range verdicts {
		if v.traces != nil && len(v.traces[vd.Key.SourceHash]) != 1 {
			continue
		}
		row, err := json.Marshal(vd.Example)
		if err != nil {
			return fmt.Errorf("verdict of candidate %s, trace %s at %d: %w", vd.Key.Candidate, vd.Key.SourceHash, vd.Key.StartIndex, err)
		}
		list = append(list, store.StoredVerdict{Candidate: vd.Key.Candidate, SourceHash: vd.Key.SourceHash, StartIndex: vd.Key.StartIndex, Passed: vd.Passed, Example: row})
	}
	if err := v.db.PutVerdicts(ctx, list); err != nil && !errors.Is(err, store.ErrReadOnly) {
		return err
	}
	for _, sv := range list {
		m, ok := v.passed[sv.Candidate]
		if !ok {
			continue
		}
		at := store.VerdictAt{SourceHash: sv.SourceHash, StartIndex: sv.StartIndex}
		if sv.Passed {
			m[at] = sv.Example
		} else {
			delete(m, at)
		}
	}
	return nil
}

func (v *Verdicts) candidate(ctx context.Context, fingerprint string) (map[store.VerdictAt][]byte, error) {
	if m, ok := v.passed[fingerprint]; ok {
		return m, nil
	}
	m, err := v.db.PassedVerdicts(ctx, fingerprint)
	if err != nil {
		return nil, err
	}
	v.passed[fingerprint] = m
	return m, nil
}
