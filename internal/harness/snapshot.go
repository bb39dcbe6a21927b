package harness

import (
	"context"
	"encoding/json"
	"time"

	"github.com/crystallize-dev/crystallize/internal/store"
)

// Snapshot stores a profile and the observations of its changed files
// that the tool does not own. now stamps the rows (the profile itself
// keeps its own CreatedAt, which may be unset).
func Snapshot(ctx context.Context, db *store.DB, p *RepoProfile, now time.Time) error {
	body, err := json.Marshal(p)
	if err != nil {
		return err
	}
	stamp := now.UTC().Format(time.RFC3339)
	if _, err := db.PutProfile(ctx, store.ProfileRow{ProfileID: p.ProfileID, ProjectHash: p.ProjectHash, CreatedAt: stamp, Body: string(body)}); err != nil {
		return err
	}
	var obs []store.Observation
	for _, o := range p.Git.ChangedFiles {
		if o.Ownership == OwnGenerated {
			continue
		}
		h := ""
		if o.ContentHash != nil {
			h = *o.ContentHash
		}
		obs = append(obs, store.Observation{ProjectHash: p.ProjectHash, Path: o.Path, GitStatus: o.GitStatus, Ownership: o.Ownership,
			ContentHash: h, SizeBytes: o.SizeBytes, FirstSeenAt: stamp, LastSeenAt: stamp})
	}
	return db.ObserveFiles(ctx, obs)
}
