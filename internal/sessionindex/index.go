// Package sessionindex keeps the derived index of session logs in the
// embedded store: which sessions a directory holds, their frontmatter and
// their callouts, for "crystallize session list|search|inbox".
//
// The index is a cache of the files. Update makes it match a directory
// again: a file whose sha256 changed is parsed again, a file gone is
// removed, an unchanged file is not read past its hash. A file that does
// not parse is left out of the index, so the index never holds a session
// that session lint would reject.
package sessionindex

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/crystallize-dev/crystallize/internal/capped"
	"github.com/crystallize-dev/crystallize/internal/session"
	"github.com/crystallize-dev/crystallize/internal/store"
	"github.com/crystallize-dev/crystallize/internal/toon"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// Actionable are the callout types the inbox gathers: the ones that ask a
// person for something or tell them something is done or broken.
var Actionable = []string{
	session.CalloutDecisionNeeded,
	session.CalloutApprovalRequired,
	session.CalloutTaskComplete,
	session.CalloutError,
}

// finished are the statuses of a session that asks nothing any more: a
// run that completed, failed, was cancelled or rejected is past every
// question it asked.
var finished = []string{"completed", "failed", "cancelled", "rejected"}

// Inbox returns the actionable callouts of the indexed sessions (see
// Actionable), newest session first and in document order, without the
// questions that were answered: a [!decision_needed] or
// [!approval_required] is answered when a [!decision] or [!user]
// callout follows it in the same phase (how crystallize run records the
// choice, and how a person notes one in a log), or when its session has
// finished. Errors and completions stay: they tell, and ask nothing.
//
// A session the registry of the same database knows (a crystallize run,
// whose log is indexed as it is written) posted its questions and
// completions to the registry's inbox as items that can be answered and
// dismissed; its callouts of those types are the same messages and are
// left to the items, so that nothing shows twice. Its errors, which only
// the log holds, stay.
func Inbox(ctx context.Context, db *store.DB) ([]store.Item, error) {
	items, err := db.Callouts(ctx, append(slices.Clone(Actionable), session.CalloutDecision, session.CalloutUser))
	if err != nil {
		return nil, err
	}
	live, err := db.LiveSessions(ctx)
	if err != nil {
		return nil, err
	}
	registered := map[string]bool{}
	for _, l := range live {
		registered[l.SessionID] = true
	}
	out := []store.Item{}
	for i, it := range items {
		c := it.Callout
		if registered[it.Session.SessionID] && c.Type != session.CalloutError {
			continue
		}
		switch c.Type {
		case session.CalloutDecision, session.CalloutUser:
			continue
		case session.CalloutDecisionNeeded, session.CalloutApprovalRequired:
			if slices.Contains(finished, it.Session.Status) || answered(items[i+1:], it) {
				continue
			}
		}
		out = append(out, it)
	}
	return out, nil
}

// answered reports whether a [!decision] or [!user] callout among later,
// the items after q, follows q in its session and phase.
func answered(later []store.Item, q store.Item) bool {
	for _, it := range later {
		if it.Session.Path != q.Session.Path {
			return false // a session's callouts are consecutive
		}
		if it.Callout.Phase == q.Callout.Phase && (it.Callout.Type == session.CalloutDecision || it.Callout.Type == session.CalloutUser) {
			return true
		}
	}
	return false
}

// Headline is the line the inbox shows for a callout: its title, or
// when it has none (the format's own callouts put their text in the
// body, "> [!decision]" then "> Use JWT.") its first line of text.
func Headline(c store.Callout) string {
	if t := strings.TrimSpace(c.Title); t != "" {
		return t
	}
	for _, l := range strings.Split(c.Body, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			return l
		}
	}
	return ""
}

// Result counts what Update did. Problems holds the parse problems of the
// Failed files, each with its file (as given, under dir) and line.
type Result struct {
	Added     int `json:"added"`
	Updated   int `json:"updated"`
	Unchanged int `json:"unchanged"`
	Removed   int `json:"removed"`
	Failed    int `json:"failed"`

	Problems trace.ErrorList `json:"-"`
}

// MaxSessionBytes bounds a session log Update reads; a larger file is a
// problem of that file. Session logs are text a person reads: a run's
// session.md holds one clipped line per step.
const MaxSessionBytes = 32 << 20

// Update brings the index in db up to date with the *.md files under dir
// (recursively). Index paths are relative to dir, with "/". A file whose
// content hash is unchanged is skipped; a changed or new one is parsed and
// replaces its entry; an indexed path with no file is removed, and so is
// one whose file no longer parses, is not a regular file or is larger
// than MaxSessionBytes: those are Problems. Other errors (an unreadable
// file, the database) stop Update.
func Update(ctx context.Context, db *store.DB, dir string) (Result, error) {
	var r Result
	old, err := db.Hashes(ctx)
	if err != nil {
		return r, err
	}
	var files []string
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(d.Name(), ".md") {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return r, fmt.Errorf("reading %s: %w", dir, err)
	}
	seen := map[string]bool{}
	for _, file := range files {
		if err := ctx.Err(); err != nil {
			return r, err
		}
		rel, err := filepath.Rel(dir, file)
		if err != nil {
			return r, err
		}
		rel = filepath.ToSlash(rel)
		seen[rel] = true
		outcome, err := indexFile(ctx, db, &r, file, rel, old)
		if err != nil {
			return r, err
		}
		switch outcome {
		case added:
			r.Added++
		case updated:
			r.Updated++
		case unchanged:
			r.Unchanged++
		case failed:
			r.Failed++
		}
	}
	gone := make([]string, 0, len(old))
	for p := range old {
		if !seen[p] {
			gone = append(gone, p)
		}
	}
	sort.Strings(gone)
	for _, p := range gone {
		if err := db.Delete(ctx, p); err != nil {
			return r, err
		}
		r.Removed++
	}
	return r, nil
}

// outcome is what indexFile did with a file.
type outcome int

const (
	unchanged outcome = iota
	added
	updated
	failed
)

// indexFile brings the entry of file, indexed as rel, up to date: old
// holds the hashes of the indexed paths. A file that cannot be indexed
// (not regular, too large, not parsing) has its problems added to r and
// its old entry removed.
func indexFile(ctx context.Context, db *store.DB, r *Result, file, rel string, old map[string]string) (outcome, error) {
	prev, indexed := old[rel]
	// Only a regular file, and only up to MaxSessionBytes: a FIFO
	// named *.md would hang the index and a link to /dev/zero fill
	// memory. Either is a problem of that file, like one that does
	// not parse.
	data, err := capped.ReadFile(file, MaxSessionBytes)
	if errors.Is(err, capped.ErrNotRegular) || errors.Is(err, capped.ErrTooLarge) {
		r.Problems = append(r.Problems, &trace.Error{File: file, Msg: strings.TrimPrefix(err.Error(), file+": ")})
		if indexed {
			if err := db.Delete(ctx, rel); err != nil {
				return failed, err
			}
		}
		return failed, nil
	}
	if err != nil {
		return failed, err
	}
	sum := sha256.Sum256(data)
	hash := hex.EncodeToString(sum[:])
	if indexed && prev == hash {
		return unchanged, nil
	}
	s, err := session.Parse(file, data)
	if err != nil {
		var list trace.ErrorList
		if !errors.As(err, &list) {
			return failed, err
		}
		r.Problems = append(r.Problems, list...)
		if indexed {
			if err := db.Delete(ctx, rel); err != nil {
				return failed, err
			}
		}
		return failed, nil
	}
	var mtime int64
	if fi, err := os.Stat(file); err == nil {
		mtime = fi.ModTime().UnixNano()
	}
	row, callouts := rows(s, rel, hash, mtime)
	if err := db.Put(ctx, row, callouts); err != nil {
		return failed, err
	}
	if indexed {
		return updated, nil
	}
	return added, nil
}

// Sync indexes the one session log file, under dir, as Update would:
// the index is synced when a log is written (crystallize run syncs each
// run's session.md), not only when a person runs session index. It
// leaves every other entry as it is. A file that is gone has its entry
// removed; one with problems is left out, and its problems are the error.
func Sync(ctx context.Context, db *store.DB, dir, file string) error {
	rel, err := filepath.Rel(dir, file)
	if err != nil || !filepath.IsLocal(rel) {
		return fmt.Errorf("indexing %s: not under %s", file, dir)
	}
	rel = filepath.ToSlash(rel)
	old, err := db.Hashes(ctx)
	if err != nil {
		return err
	}
	if _, err := os.Lstat(file); errors.Is(err, fs.ErrNotExist) {
		if _, indexed := old[rel]; indexed {
			return db.Delete(ctx, rel)
		}
		return nil
	}
	var r Result
	outcome, err := indexFile(ctx, db, &r, file, rel, old)
	if err != nil {
		return err
	}
	if outcome == failed {
		return fmt.Errorf("indexing %s: %w", file, r.Problems)
	}
	return nil
}

// rows converts a parsed session to its index rows. Callout types are
// lowercased, as Callout.Is compares them without case.
func rows(s *session.Session, path, hash string, mtime int64) (store.Session, []store.Callout) {
	row := store.Session{
		Path: path, SHA256: hash, MTime: mtime,
		SessionID: s.Meta.SessionID, Status: s.Meta.Status,
		Started: s.Meta.Started, Ended: s.Meta.Ended,
		Model: s.Meta.Model, Tokens: s.Meta.TokensUsed, Title: s.Title,
	}
	var callouts []store.Callout
	add := func(phase string, blocks []session.Block) {
		for _, b := range blocks {
			c, ok := b.(session.Callout)
			if !ok {
				continue
			}
			callouts = append(callouts, store.Callout{
				SessionPath: path, Position: len(callouts), Phase: phase,
				Type: strings.ToLower(c.Type), Title: strings.TrimSpace(c.Title),
				Body: strings.TrimSpace(strings.Join(c.Body, "\n")),
			})
		}
	}
	add("", s.Blocks)
	ids := s.PhaseIDs()
	for i, p := range s.Phases {
		add(ids[i], p.Blocks)
	}
	return row, callouts
}

// TOON returns sessions as a TOON document: one field, sessions, a tabular
// array with the columns path, session_id, status, started, ended, model,
// tokens and title. The hash and mtime are left out: they say nothing to a
// reader, and the mtime would make the output depend on when a file was
// written.
func TOON(sessions []store.Session) ([]byte, error) {
	list := make([]any, len(sessions))
	for i, s := range sessions {
		list[i] = toon.Object{
			{Key: "path", Value: s.Path},
			{Key: "session_id", Value: s.SessionID},
			{Key: "status", Value: s.Status},
			{Key: "started", Value: s.Started},
			{Key: "ended", Value: s.Ended},
			{Key: "model", Value: s.Model},
			{Key: "tokens", Value: s.Tokens},
			{Key: "title", Value: s.Title},
		}
	}
	return toon.Encode(toon.Object{{Key: "sessions", Value: list}}, toon.EncodeOptions{})
}
