package memory

import (
	"path"
	"slices"
	"strings"
)

// Subject is one thing a plan is about that a scope entry can name: a
// path the plan touches, a gate, a kit, a risk family or a stack. Why
// says how the plan came to it ("changed file", "manifest gate"), so a
// recalled memory can say why it was recalled.
type Subject struct {
	Kind  string // one of ScopeKinds
	Value string // the path or name
	Why   string
}

// Match is one scope entry of a recalled memory and the subject it
// matched.
type Match struct {
	Scope   string `json:"scope"`
	Matched string `json:"matched"`
}

// Recalled is a memory that applies to a plan, with the scope entries
// that matched.
type Recalled struct {
	Entry
	Matches []Match `json:"matches"`
}

// Recall returns the memories of entries that apply to the subjects, the
// most relevant first.
//
// The rule is meant to be explained in one sentence: a memory applies
// when at least one of its scope entries names a subject of the plan
// (a path glob matching one of its paths, or the exact name of one of
// its gates, kits, risk families or stacks), and memories are ranked by
// how many of their scope entries matched, then newest first, then by
// id. A memory whose scope matches nothing is not returned. Each scope
// entry reports the first subject it matched, in the order subjects
// were given, so the caller's order decides which reason is shown.
//
// The cost is one glob match per scope entry and subject of its kind;
// both are small (a plan has tens of subjects, a file hundreds of
// memories), so no index is built.
func Recall(entries []Entry, subjects []Subject) []Recalled {
	byKind := map[string][]Subject{}
	for _, s := range subjects {
		byKind[s.Kind] = append(byKind[s.Kind], s)
	}
	out := []Recalled{}
	for _, e := range entries {
		r := Recalled{Entry: e, Matches: []Match{}}
		for _, sc := range e.Scope {
			kind, value, _ := strings.Cut(sc, ":")
			for _, s := range byKind[kind] {
				if matches(kind, value, s.Value) {
					r.Matches = append(r.Matches, Match{Scope: sc, Matched: s.Why + " " + s.Value})
					break
				}
			}
		}
		if len(r.Matches) > 0 {
			out = append(out, r)
		}
	}
	slices.SortStableFunc(out, func(a, b Recalled) int {
		if len(a.Matches) != len(b.Matches) {
			return len(b.Matches) - len(a.Matches)
		}
		if c := strings.Compare(b.Created, a.Created); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out
}

// matches says whether the scope value of kind names subject.
func matches(kind, value, subject string) bool {
	if kind != ScopePath {
		return value == subject
	}
	return MatchPath(value, subject)
}

// MatchPath reports whether the slash-separated path p matches glob:
// segments match as path.Match matches them, "**" matches any number of
// segments (none included), and a glob without wildcards also matches
// everything under it, so "db/migrations" and "db/migrations/**" name
// the same files.
func MatchPath(glob, p string) bool {
	if !strings.ContainsAny(glob, "*?[") && strings.HasPrefix(p, glob+"/") {
		return true
	}
	return matchSegments(strings.Split(glob, "/"), strings.Split(p, "/"))
}

// matchSegments matches glob segments against path segments by dynamic
// programming over (glob, path) suffixes: O(len(glob) × len(p)) steps
// whatever the number of "**", where backtracking would be exponential
// in it.
func matchSegments(glob, p []string) bool {
	// ok[j] says whether glob[i:] matches p[j:], for the i of the loop,
	// from the end of glob back to its start.
	ok := make([]bool, len(p)+1)
	ok[len(p)] = true
	for i := len(glob) - 1; i >= 0; i-- {
		next := make([]bool, len(p)+1)
		if glob[i] == "**" {
			// "**" matches none of p[j:] (ok[j]) or one more segment
			// (next[j+1]).
			for j := len(p); j >= 0; j-- {
				next[j] = ok[j] || (j < len(p) && next[j+1])
			}
		} else {
			for j := 0; j < len(p); j++ {
				m, err := path.Match(glob[i], p[j])
				next[j] = err == nil && m && ok[j+1]
			}
		}
		ok = next
	}
	return ok[0]
}
