package store

// This file is the harness ledger: the tables of the second migration.
// Package harness decides what goes in; the store only keeps it, so the
// bodies of profiles, calibrations and lessons are opaque JSON here and
// the columns are the ones a query selects or orders on.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// ProfileRow is a stored repository profile snapshot.
type ProfileRow struct {
	Seq         int64
	ProfileID   string
	ProjectHash string
	CreatedAt   string
	Accepted    bool
	Body        string
}

// PutProfile stores a profile snapshot and returns its sequence number.
func (s *DB) PutProfile(ctx context.Context, r ProfileRow) (int64, error) {
	res, err := s.db.ExecContext(ctx, `INSERT INTO harness_profiles (profile_id, project_hash, created_at, accepted, body) VALUES (?, ?, ?, ?, ?)`,
		r.ProfileID, r.ProjectHash, r.CreatedAt, r.Accepted, r.Body)
	if err != nil {
		return 0, fmt.Errorf("storing profile %s: %w", r.ProfileID, err)
	}
	return res.LastInsertId()
}

// AcceptProfile marks the newest snapshot of profileID as accepted: the
// baseline that drift is measured against.
func (s *DB) AcceptProfile(ctx context.Context, projectHash, profileID string) error {
	_, err := s.db.ExecContext(ctx, `UPDATE harness_profiles SET accepted = 1 WHERE seq = (
		SELECT MAX(seq) FROM harness_profiles WHERE project_hash = ? AND profile_id = ?)`, projectHash, profileID)
	if err != nil {
		return fmt.Errorf("accepting profile %s: %w", profileID, err)
	}
	return nil
}

// LastProfile returns the newest snapshot of the project, only accepted
// ones when accepted is true; ok is false when there is none.
func (s *DB) LastProfile(ctx context.Context, projectHash string, accepted bool) (r ProfileRow, ok bool, err error) {
	q := `SELECT seq, profile_id, project_hash, created_at, accepted, body FROM harness_profiles WHERE project_hash = ?`
	if accepted {
		q += ` AND accepted = 1`
	}
	q += ` ORDER BY seq DESC LIMIT 1`
	err = s.db.QueryRowContext(ctx, q, projectHash).Scan(&r.Seq, &r.ProfileID, &r.ProjectHash, &r.CreatedAt, &r.Accepted, &r.Body)
	if errors.Is(err, sql.ErrNoRows) {
		return r, false, nil
	}
	if err != nil {
		return r, false, fmt.Errorf("reading profiles: %w", err)
	}
	return r, true, nil
}

// Observation is what was last seen of a file the tool does not own.
type Observation struct {
	ProjectHash string
	Path        string
	GitStatus   string
	Ownership   string
	ContentHash string
	SizeBytes   int64
	FirstSeenAt string
	LastSeenAt  string
}

// ObserveFiles upserts observations: a path seen before keeps its
// first_seen_at and gets the new status, hash, size and last_seen_at.
func (s *DB) ObserveFiles(ctx context.Context, obs []Observation) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		for _, o := range obs {
			_, err := tx.ExecContext(ctx, `INSERT INTO harness_observations
				(project_hash, path, git_status, ownership, content_hash, size_bytes, first_seen_at, last_seen_at)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?)
				ON CONFLICT (project_hash, path) DO UPDATE SET git_status = excluded.git_status,
					ownership = excluded.ownership, content_hash = excluded.content_hash,
					size_bytes = excluded.size_bytes, last_seen_at = excluded.last_seen_at`,
				o.ProjectHash, o.Path, o.GitStatus, o.Ownership, o.ContentHash, o.SizeBytes, o.FirstSeenAt, o.LastSeenAt)
			if err != nil {
				return fmt.Errorf("storing observation %s: %w", o.Path, err)
			}
		}
		return nil
	})
}

// Observations returns the observations of a project, by path.
func (s *DB) Observations(ctx context.Context, projectHash string) ([]Observation, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT project_hash, path, git_status, ownership, content_hash, size_bytes, first_seen_at, last_seen_at
		FROM harness_observations WHERE project_hash = ? ORDER BY path`, projectHash)
	if err != nil {
		return nil, fmt.Errorf("reading observations: %w", err)
	}
	defer rows.Close()
	list := []Observation{}
	for rows.Next() {
		var o Observation
		if err := rows.Scan(&o.ProjectHash, &o.Path, &o.GitStatus, &o.Ownership, &o.ContentHash, &o.SizeBytes, &o.FirstSeenAt, &o.LastSeenAt); err != nil {
			return nil, fmt.Errorf("reading observations: %w", err)
		}
		list = append(list, o)
	}
	return list, rows.Err()
}

// Run is one harness run of the ledger.
type Run struct {
	Seq          int64
	RunID        string
	ProjectHash  string
	ProfileID    string
	ManifestHash string
	Phase        string
	StartedAt    string
	FinishedAt   string
	Passed       bool
	ReportPath   string
}

// CaseRow is one eval case of a run.
type CaseRow struct {
	SuiteID  string
	CaseID   string
	Passed   bool
	Blocking bool
}

// ResultRow is one checked assertion or gate command of a run. Subject
// is the gate id or "<suite>/<case>"; Position orders a subject's
// results.
type ResultRow struct {
	Subject    string
	Position   int
	Type       string
	Passed     bool
	Blocking   bool
	Score      float64
	Message    string
	OutputPath string
}

// PutRun stores a run with its cases and results in one transaction and
// returns the run's sequence number.
func (s *DB) PutRun(ctx context.Context, r Run, cases []CaseRow, results []ResultRow) (int64, error) {
	var seq int64
	err := s.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO harness_runs (run_id, project_hash, profile_id, manifest_hash, phase, started_at, finished_at, passed, report_path)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			r.RunID, r.ProjectHash, r.ProfileID, r.ManifestHash, r.Phase, r.StartedAt, r.FinishedAt, r.Passed, r.ReportPath)
		if err != nil {
			return err
		}
		if seq, err = res.LastInsertId(); err != nil {
			return err
		}
		for _, c := range cases {
			if _, err := tx.ExecContext(ctx, `INSERT INTO harness_cases (run_id, suite_id, case_id, passed, blocking) VALUES (?, ?, ?, ?, ?)`,
				r.RunID, c.SuiteID, c.CaseID, c.Passed, c.Blocking); err != nil {
				return err
			}
		}
		for _, x := range results {
			if _, err := tx.ExecContext(ctx, `INSERT INTO harness_results (run_id, subject, position, type, passed, blocking, score, message, output_path)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
				r.RunID, x.Subject, x.Position, x.Type, x.Passed, x.Blocking, x.Score, x.Message, x.OutputPath); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("storing run %s: %w", r.RunID, err)
	}
	return seq, nil
}

// Runs returns the runs of a project, oldest first.
func (s *DB) Runs(ctx context.Context, projectHash string) ([]Run, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT seq, run_id, project_hash, profile_id, manifest_hash, phase, started_at, finished_at, passed, report_path
		FROM harness_runs WHERE project_hash = ? ORDER BY seq`, projectHash)
	if err != nil {
		return nil, fmt.Errorf("reading runs: %w", err)
	}
	defer rows.Close()
	list := []Run{}
	for rows.Next() {
		var r Run
		if err := rows.Scan(&r.Seq, &r.RunID, &r.ProjectHash, &r.ProfileID, &r.ManifestHash, &r.Phase, &r.StartedAt, &r.FinishedAt, &r.Passed, &r.ReportPath); err != nil {
			return nil, fmt.Errorf("reading runs: %w", err)
		}
		list = append(list, r)
	}
	return list, rows.Err()
}

// RunResults returns the results of a run, by subject and position.
func (s *DB) RunResults(ctx context.Context, runID string) ([]ResultRow, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT subject, position, type, passed, blocking, score, message, output_path
		FROM harness_results WHERE run_id = ? ORDER BY subject, position`, runID)
	if err != nil {
		return nil, fmt.Errorf("reading results: %w", err)
	}
	defer rows.Close()
	list := []ResultRow{}
	for rows.Next() {
		var x ResultRow
		if err := rows.Scan(&x.Subject, &x.Position, &x.Type, &x.Passed, &x.Blocking, &x.Score, &x.Message, &x.OutputPath); err != nil {
			return nil, fmt.Errorf("reading results: %w", err)
		}
		list = append(list, x)
	}
	return list, rows.Err()
}

// Passed returns the subjects (gate ids and suite ids) that passed in at
// least one run of the project: a suite passes in a run when none of its
// cases failed a blocking assertion and it raised no error.
func (s *DB) Passed(ctx context.Context, projectHash string) (map[string]bool, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT r.subject FROM harness_results r JOIN harness_runs u ON u.run_id = r.run_id
		WHERE u.project_hash = ?1 AND r.type = 'exit_code' AND r.passed = 1 AND instr(r.subject, '/') = 0
		UNION
		SELECT c.suite_id FROM harness_cases c JOIN harness_runs u ON u.run_id = c.run_id
		WHERE u.project_hash = ?1
		GROUP BY c.run_id, c.suite_id HAVING MIN(c.passed) = 1
			AND NOT EXISTS (SELECT 1 FROM harness_results e WHERE e.run_id = c.run_id AND e.subject = c.suite_id AND e.type = 'suite')`, projectHash)
	if err != nil {
		return nil, fmt.Errorf("reading evidence: %w", err)
	}
	defer rows.Close()
	m := map[string]bool{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("reading evidence: %w", err)
		}
		m[id] = true
	}
	return m, rows.Err()
}

// RunCases returns the eval cases of a run, by suite and case id.
func (s *DB) RunCases(ctx context.Context, runID string) ([]CaseRow, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT suite_id, case_id, passed, blocking FROM harness_cases WHERE run_id = ? ORDER BY suite_id, case_id`, runID)
	if err != nil {
		return nil, fmt.Errorf("reading cases: %w", err)
	}
	defer rows.Close()
	list := []CaseRow{}
	for rows.Next() {
		var c CaseRow
		if err := rows.Scan(&c.SuiteID, &c.CaseID, &c.Passed, &c.Blocking); err != nil {
			return nil, fmt.Errorf("reading cases: %w", err)
		}
		list = append(list, c)
	}
	return list, rows.Err()
}

// DriftRow is one drift event.
type DriftRow struct {
	ProjectHash string
	DetectedAt  string
	Kind        string
	Subject     string
	Detail      string
}

// PutDrift stores drift events.
func (s *DB) PutDrift(ctx context.Context, events []DriftRow) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		for _, d := range events {
			if _, err := tx.ExecContext(ctx, `INSERT INTO harness_drift (project_hash, detected_at, kind, subject, detail) VALUES (?, ?, ?, ?, ?)`,
				d.ProjectHash, d.DetectedAt, d.Kind, d.Subject, d.Detail); err != nil {
				return fmt.Errorf("storing drift: %w", err)
			}
		}
		return nil
	})
}

// Drift returns the drift events of a project, oldest first.
func (s *DB) Drift(ctx context.Context, projectHash string) ([]DriftRow, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT project_hash, detected_at, kind, subject, detail FROM harness_drift WHERE project_hash = ? ORDER BY seq`, projectHash)
	if err != nil {
		return nil, fmt.Errorf("reading drift: %w", err)
	}
	defer rows.Close()
	list := []DriftRow{}
	for rows.Next() {
		var d DriftRow
		if err := rows.Scan(&d.ProjectHash, &d.DetectedAt, &d.Kind, &d.Subject, &d.Detail); err != nil {
			return nil, fmt.Errorf("reading drift: %w", err)
		}
		list = append(list, d)
	}
	return list, rows.Err()
}

// CalibrationRow is one judge calibration of a suite under a pinned
// judge configuration (ConfigHash).
type CalibrationRow struct {
	SuiteID    string
	ConfigHash string
	CreatedAt  string
	Promoted   bool
	Body       string
}

// PutCalibration stores a calibration.
func (s *DB) PutCalibration(ctx context.Context, c CalibrationRow) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO harness_calibrations (suite_id, config_hash, created_at, promoted, body) VALUES (?, ?, ?, ?, ?)`,
		c.SuiteID, c.ConfigHash, c.CreatedAt, c.Promoted, c.Body)
	if err != nil {
		return fmt.Errorf("storing calibration of %s: %w", c.SuiteID, err)
	}
	return nil
}

// LastCalibration returns the newest calibration of a suite; ok is false
// when the suite was never calibrated.
func (s *DB) LastCalibration(ctx context.Context, suiteID string) (c CalibrationRow, ok bool, err error) {
	err = s.db.QueryRowContext(ctx, `SELECT suite_id, config_hash, created_at, promoted, body FROM harness_calibrations
		WHERE suite_id = ? ORDER BY seq DESC LIMIT 1`, suiteID).Scan(&c.SuiteID, &c.ConfigHash, &c.CreatedAt, &c.Promoted, &c.Body)
	if errors.Is(err, sql.ErrNoRows) {
		return c, false, nil
	}
	if err != nil {
		return c, false, fmt.Errorf("reading calibrations: %w", err)
	}
	return c, true, nil
}

// LessonRow is a retained lesson or anti-pattern.
type LessonRow struct {
	ID          string
	ProjectHash string
	Body        string
}

// PutLesson inserts or replaces a lesson.
func (s *DB) PutLesson(ctx context.Context, l LessonRow) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO harness_lessons (id, project_hash, body) VALUES (?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET project_hash = excluded.project_hash, body = excluded.body`, l.ID, l.ProjectHash, l.Body)
	if err != nil {
		return fmt.Errorf("storing lesson %s: %w", l.ID, err)
	}
	return nil
}

// Lessons returns the lessons of a project, by id.
func (s *DB) Lessons(ctx context.Context, projectHash string) ([]LessonRow, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, project_hash, body FROM harness_lessons WHERE project_hash = ? ORDER BY id`, projectHash)
	if err != nil {
		return nil, fmt.Errorf("reading lessons: %w", err)
	}
	defer rows.Close()
	list := []LessonRow{}
	for rows.Next() {
		var l LessonRow
		if err := rows.Scan(&l.ID, &l.ProjectHash, &l.Body); err != nil {
			return nil, fmt.Errorf("reading lessons: %w", err)
		}
		list = append(list, l)
	}
	return list, rows.Err()
}
