package harness

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/crystallize-dev/crystallize/internal/store"
)

// Drift kinds.
const (
	DriftStaleGate      = "stale_gate"
	DriftStaleSuite     = "stale_suite"
	DriftStaleFile      = "stale_file"
	DriftEditedFile     = "edited_file"
	DriftNewRisk        = "new_risk"
	DriftRemovedRisk    = "removed_risk"
	DriftProfileChanged = "profile_changed"
)

// DriftEvent is one difference between the repository and its harness,
// with the follow-up work it calls for. Drift never changes a file; it
// proposes.
type DriftEvent struct {
	Kind     string `json:"kind"`
	Subject  string `json:"subject"`
	Detail   string `json:"detail"`
	Proposal string `json:"proposal"`
}

// DriftReport compares the current profile with the accepted baseline
// and the manifest with the repository.
type DriftReport struct {
	ProfileID         string       `json:"profileId"`
	BaselineProfileID string       `json:"baselineProfileId"`
	Events            []DriftEvent `json:"events"`
}

// Drift compares; baseline and m may be nil (no accepted profile, no
// manifest).
func Drift(root string, current, baseline *RepoProfile, m *Manifest) *DriftReport {
	r := &DriftReport{ProfileID: current.ProfileID, Events: []DriftEvent{}}
	add := func(kind, subject, detail, proposal string) {
		r.Events = append(r.Events, DriftEvent{Kind: kind, Subject: subject, Detail: detail, Proposal: proposal})
	}
	exists := func(rel string) bool {
		_, err := os.Stat(filepath.Join(root, filepath.FromSlash(rel)))
		return err == nil
	}
	if m != nil {
		for _, c := range m.Commands {
			if s := scriptOf(c.Command); s != "" && !exists(s) {
				proposal := fmt.Sprintf("restore %s, or remove command %s from %s", s, c.ID, ManifestPath)
				if c.Kit != "" {
					proposal = fmt.Sprintf("rerun \"crystallize harness write --kit %s\" to restore %s, or remove command %s from %s", c.Kit, s, c.ID, ManifestPath)
				}
				add(DriftStaleGate, c.ID, fmt.Sprintf("command %q runs %s, which no longer exists", c.Command, s), proposal)
			}
		}
		for _, s := range m.EvalSuites {
			if !exists(s.Path) {
				add(DriftStaleSuite, s.ID, fmt.Sprintf("suite file %s no longer exists", s.Path), "restore it or remove the suite from "+ManifestPath)
			}
		}
		for _, f := range m.Files {
			data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(f.Path)))
			switch {
			case err != nil:
				if !slices.ContainsFunc(r.Events, func(e DriftEvent) bool {
					return e.Kind == DriftStaleGate && scriptOf(commandOf(m, e.Subject)) == f.Path
				}) &&
					!slices.ContainsFunc(m.EvalSuites, func(s EvalSuite) bool { return s.Path == f.Path }) {
					add(DriftStaleFile, f.Path, "written by kit "+f.Kit+", now missing", "rewrite the kit or drop the file from "+ManifestPath)
				}
			case hashBytes(data) != f.SHA256:
				add(DriftEditedFile, f.Path, "edited since kit "+f.Kit+" wrote it; it is now the user's and will not be overwritten",
					"review the edit and adopt it by updating its hash in "+ManifestPath+", or restore the kit's version")
			}
		}
	}
	now := families(current)
	var guarded []string
	if m != nil {
		guarded = m.RiskFamilies
	}
	var before []string
	if baseline != nil {
		r.BaselineProfileID = baseline.ProfileID
		before = families(baseline)
		if baseline.ProfileID != current.ProfileID {
			add(DriftProfileChanged, current.ProfileID, "the tree differs from the accepted profile "+baseline.ProfileID, "run \"crystallize harness plan\" and review its proposals")
		}
	}
	for _, f := range now {
		if !slices.Contains(before, f) && !slices.Contains(guarded, f) {
			add(DriftNewRisk, f, "risk family "+f+" shows signals the harness does not cover", "run \"crystallize harness plan\" for the kit or gates that cover "+f)
		}
	}
	for _, f := range guarded {
		if !slices.Contains(now, f) {
			add(DriftRemovedRisk, f, "the manifest guards "+f+" but the repository no longer shows it", "review whether the "+f+" gates are still needed")
		}
	}
	return r
}

func commandOf(m *Manifest, id string) string {
	for _, c := range m.Commands {
		if c.ID == id {
			return c.Command
		}
	}
	return ""
}

func families(p *RepoProfile) []string {
	var list []string
	for _, r := range Classify(p) {
		list = append(list, r.Family)
	}
	return list
}

// RecordDrift stores drift events in the ledger.
func RecordDrift(ctx context.Context, db *store.DB, project string, r *DriftReport, now time.Time) error {
	var rows []store.DriftRow
	for _, e := range r.Events {
		rows = append(rows, store.DriftRow{ProjectHash: project, DetectedAt: now.UTC().Format(time.RFC3339), Kind: e.Kind, Subject: e.Subject, Detail: e.Detail})
	}
	return db.PutDrift(ctx, rows)
}
