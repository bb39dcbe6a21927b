package harness

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/crystallize-dev/crystallize/internal/harness/memory"
	"github.com/crystallize-dev/crystallize/internal/store"
)

// OpenRepo resolves the repository root of dir (Root) and opens its
// database: dbPath, or store.DefaultPath under the root when dbPath is
// empty. The caller closes the database.
func OpenRepo(ctx context.Context, dir, dbPath string) (string, *store.DB, error) {
	root, err := Root(ctx, dir)
	if err != nil {
		return "", nil, err
	}
	if dbPath == "" {
		dbPath = filepath.Join(root, filepath.FromSlash(store.DefaultPath))
	}
	db, err := store.Open(ctx, dbPath)
	if err != nil {
		return "", nil, err
	}
	return root, db, nil
}

// LoadManifest reads and checks the manifest of root, returning it with
// its bytes (for ManifestHash); a repository without one gives nil, nil,
// nil, which planning and drift read as "no harness yet".
func LoadManifest(root string) (*Manifest, []byte, error) {
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(ManifestPath)))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	m, err := ParseManifest(data, ManifestPath)
	if err != nil {
		return nil, nil, err
	}
	return m, data, nil
}

// ProfileStored profiles root and stores the snapshot in db, its rows
// stamped now. stamp also stamps the profile itself (createdAt and the
// observations' seen times); without it the profile is deterministic.
func ProfileStored(ctx context.Context, root string, db *store.DB, now time.Time, stamp bool) (*RepoProfile, error) {
	var opts ProfileOptions
	if stamp {
		opts.Now = now
	}
	p, err := Profile(ctx, root, opts)
	if err != nil {
		return nil, err
	}
	if err := Snapshot(ctx, db, p, now); err != nil {
		return nil, err
	}
	return p, nil
}

// Accept profiles root as it is now, stores the snapshot and marks it
// accepted: the baseline drift is measured against, taken after a kit is
// written.
func Accept(ctx context.Context, root string, db *store.DB, now time.Time) error {
	p, err := ProfileStored(ctx, root, db, now, false)
	if err != nil {
		return err
	}
	return db.AcceptProfile(ctx, p.ProjectHash, p.ProfileID)
}

// WriteStored writes the kit into root for the profile p (Write) and,
// when apply wrote it, accepts the tree with the kit written as the
// baseline drift is measured against (Accept), stamped now. Without apply
// it only reports what would change.
func WriteStored(ctx context.Context, root string, db *store.DB, kit string, p *RepoProfile, apply bool, now time.Time) (*WriteResult, error) {
	res, err := Write(root, kit, p, apply)
	if err != nil {
		return nil, err
	}
	if apply {
		if err := Accept(ctx, root, db, now); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// LessonsStored lists the lessons retained from the recorded runs of the
// repository at root: those of the project its profile names.
func LessonsStored(ctx context.Context, root string, db *store.DB) ([]Lesson, error) {
	p, err := Profile(ctx, root, ProfileOptions{})
	if err != nil {
		return nil, err
	}
	return StoreMemory{DB: db}.Lessons(ctx, p.ProjectHash)
}

// AcceptedProfile returns the last accepted profile of project, or nil
// when none was accepted yet.
func AcceptedProfile(ctx context.Context, db *store.DB, project string) (*RepoProfile, error) {
	row, ok, err := db.LastProfile(ctx, project, true)
	if err != nil || !ok {
		return nil, err
	}
	p := &RepoProfile{}
	if err := json.Unmarshal([]byte(row.Body), p); err != nil {
		return nil, fmt.Errorf("reading accepted profile %s: %w", row.ProfileID, err)
	}
	return p, nil
}

// DriftNow profiles root, stores the snapshot, compares it with the last
// accepted profile and the manifest (Drift) and records the events, all
// stamped now.
func DriftNow(ctx context.Context, root string, db *store.DB, now time.Time) (*DriftReport, error) {
	p, err := Profile(ctx, root, ProfileOptions{})
	if err != nil {
		return nil, err
	}
	baseline, err := AcceptedProfile(ctx, db, p.ProjectHash)
	if err != nil {
		return nil, err
	}
	m, _, err := LoadManifest(root)
	if err != nil {
		return nil, err
	}
	if err := Snapshot(ctx, db, p, now); err != nil {
		return nil, err
	}
	r := Drift(root, p, baseline, m)
	if err := RecordDrift(ctx, db, p.ProjectHash, r, now); err != nil {
		return nil, err
	}
	return r, nil
}

// RunRecorded runs the manifest of root (Run) on a fresh profile, stored
// stamped now, and records the run, its cases and the lessons it teaches
// in db. It proposes, and does not write, a memory for each blocking
// gate that failed and that no memory names yet (ProposeMemories). With judge set, judged assertions go to that endpoint and the
// calibration decides which of them block (PromotedFor).
func RunRecorded(ctx context.Context, root string, db *store.DB, now time.Time, judge *JudgeConfig, opts RunOptions) (*RunReport, error) {
	m, data, err := LoadManifest(root)
	if err != nil {
		return nil, err
	}
	if m == nil {
		return nil, fmt.Errorf("%s: no harness manifest; see \"crystallize harness plan\" and \"harness write\"", ManifestPath)
	}
	p, err := ProfileStored(ctx, root, db, now, false)
	if err != nil {
		return nil, err
	}
	if judge != nil {
		opts.Judge = &HTTPJudge{Config: *judge}
		opts.Promoted = PromotedFor(ctx, db, root, m, *judge)
	}
	rep, err := Run(ctx, root, m, ManifestHash(data), p.ProfileID, opts)
	if err != nil {
		return nil, err
	}
	seq, err := Record(ctx, db, p.ProjectHash, rep)
	if err != nil {
		return nil, err
	}
	if err := Retain(ctx, StoreMemory{DB: db}, p.ProjectHash, seq, rep); err != nil {
		return nil, err
	}
	// A memory file that does not load leaves nothing to compare with,
	// so every failed gate is proposed; the run stays recorded and
	// reported either way, and plan names the bad line.
	known, _ := memory.Load(root)
	rep.ProposedMemories = ProposeMemories(rep, known, now)
	return rep, nil
}

// PlanStored is MakePlan for a profiled repository: its manifest, if it
// has one, and the gates and suites that passed in the runs db recorded,
// with the repository's memories that apply to the plan (Recall). The
// memories come from their own file, not from db.
func PlanStored(ctx context.Context, root string, db *store.DB, p *RepoProfile) (*Plan, error) {
	m, _, err := LoadManifest(root)
	if err != nil {
		return nil, err
	}
	passed, err := db.Passed(ctx, p.ProjectHash)
	if err != nil {
		return nil, err
	}
	pl := MakePlan(root, p, m, passed)
	if pl.Memories, err = Recall(root, p, m, pl); err != nil {
		return nil, err
	}
	return pl, nil
}

// SuitePath resolves the golden set a calibration reads: the path of the
// eval suite with that id in the manifest of root, or suite itself, a
// JSONL file, when the manifest has no such suite.
func SuitePath(root, suite string) (string, error) {
	m, _, err := LoadManifest(root)
	if err != nil || m == nil {
		return suite, err
	}
	if i := slices.IndexFunc(m.EvalSuites, func(s EvalSuite) bool { return s.ID == suite }); i >= 0 {
		return filepath.Join(root, filepath.FromSlash(m.EvalSuites[i].Path)), nil
	}
	return suite, nil
}

// CalibrateStored calibrates the judge cfg on the golden set suite (see
// SuitePath) of the repository root, with one more judge of the same
// endpoint for each model in quorum, and stores the calibration in db
// stamped now. The cases' commands get the variables of environ that
// RunOptions would pass them.
func CalibrateStored(ctx context.Context, root string, db *store.DB, suite string, cfg JudgeConfig, quorum []string, now time.Time, environ, passEnv []string) (*Calibration, error) {
	path, err := SuitePath(root, suite)
	if err != nil {
		return nil, err
	}
	cases, err := LoadSuite(path)
	if err != nil {
		return nil, err
	}
	// The golden set holds the rubrics the judge is pinned to. A judge
	// may come to block on them, so they must be what reviewers read in
	// the repository, not a file only this work tree has.
	name := filepath.ToSlash(path)
	if r, err := filepath.Rel(root, path); err == nil && filepath.IsLocal(r) {
		name = filepath.ToSlash(r)
	}
	if err := checkTracked(ctx, path, name); err != nil {
		return nil, fmt.Errorf("calibrating %s: rubric file %w", suite, err)
	}
	opts := CalibrateOptions{Config: cfg, Root: root, Environ: environ, PassEnv: passEnv}
	for _, q := range quorum {
		c := cfg
		c.Model = q
		opts.Quorum = append(opts.Quorum, c)
	}
	cal, err := Calibrate(ctx, suite, cases, opts)
	if err != nil {
		return nil, err
	}
	cal.GoldenSet = name
	if err := SaveCalibration(ctx, db, cal, now.Format(time.RFC3339)); err != nil {
		return nil, err
	}
	return cal, nil
}
