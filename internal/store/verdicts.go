package store

import (
	"context"
	"database/sql"
	"fmt"
)

// Verdicts of examples, kept across mines: mining a grown corpus builds
// the same candidates again, and an example that passed against a
// candidate with the same content passes again, so it need not be read.
// What a verdict means, and the example row it carries, are package
// tracestore's (candidate.ExampleVerdicts); this only keeps them.

// StoredVerdict is the verdict of one example of one candidate.
type StoredVerdict struct {
	// Candidate is the candidate's content fingerprint; SourceHash the
	// example trace's source hash; StartIndex where the example starts.
	Candidate  string
	SourceHash string
	StartIndex int
	Passed     bool
	// Example is the example as the report lists it, opaque here.
	Example []byte
}

// VerdictAt names an example of a known candidate.
type VerdictAt struct {
	SourceHash string
	StartIndex int
}

// PassedVerdicts returns the examples recorded as passing against the
// candidate with fingerprint candidate, by trace and start.
func (s *DB) PassedVerdicts(ctx context.Context, candidate string) (map[VerdictAt][]byte, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT source_hash, start_index, example FROM trace_verdicts WHERE candidate = ? AND passed = 1`, candidate)
	if err != nil {
		return nil, fmt.Errorf("reading verdicts: %w", err)
	}
	defer rows.Close()
	m := map[VerdictAt][]byte{}
	for rows.Next() {
		var at VerdictAt
		var ex []byte
		if err := rows.Scan(&at.SourceHash, &at.StartIndex, &ex); err != nil {
			return nil, fmt.Errorf("reading verdicts: %w", err)
		}
		m[at] = ex
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading verdicts: %w", err)
	}
	return m, nil
}

// PutVerdicts records verdicts in one transaction, each replacing the one
// recorded under its key.
func (s *DB) PutVerdicts(ctx context.Context, list []StoredVerdict) error {
	if len(list) == 0 {
		return nil
	}
	err := s.tx(ctx, func(tx *sql.Tx) error {
		put, err := tx.PrepareContext(ctx, `INSERT OR REPLACE INTO trace_verdicts (candidate, source_hash, start_index, passed, example) VALUES (?, ?, ?, ?, ?)`)
		if err != nil {
			return err
		}
		defer put.Close()
		for _, v := range list {
			if _, err := put.ExecContext(ctx, v.Candidate, v.SourceHash, v.StartIndex, v.Passed, v.Example); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("storing verdicts: %w", err)
	}
	return nil
}

// CountVerdicts returns how many verdicts are recorded.
func (s *DB) CountVerdicts(ctx context.Context) (int, error) {
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM trace_verdicts`).Scan(&n); err != nil {
		return 0, fmt.Errorf("counting verdicts: %w", err)
	}
	return n, nil
}
