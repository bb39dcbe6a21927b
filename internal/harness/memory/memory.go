// Package memory keeps a repository's durable harness memories: lessons a
// person, a failed gate or a drift finding taught, each with the scope
// it applies to, recalled before work (harness plan) when the plan
// touches that scope.
//
// The store is one file, harness/memory.jsonl, one memory a line, beside
// the harness manifest and outside the run ledger (.crystallize/state.db).
// The ledger is local operational evidence: it is derived, it can be
// deleted and rebuilt by running the harness again, and it does not
// travel. A memory is the opposite: it is knowledge someone decided to
// keep, so it must outlive the ledger, be reviewed like code before the
// team relies on it, show in a diff when it changes, and reach every
// clone with the repository. A tracked JSON Lines file does all four; a
// second database file would do none of the last three. One line a
// memory, in a fixed order with fixed key order, keeps the diff of an
// added or forgotten memory one line.
//
// The main invariant: what is in the file was checked. Load refuses a
// file with any bad line, naming the file, line and JSON path of every
// problem, and Add and Forget write the whole file through atomicfile
// only after the result was checked, so a failure leaves the file as it
// was. Text and scope are printed to terminals and, one day, shown to
// agents: control characters, bidirectional overrides and markup are
// refused, not escaped, and the size of each field is bounded.
package memory

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/crystallize-dev/crystallize/internal/atomicfile"
	"github.com/crystallize-dev/crystallize/internal/capped"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// File is where a repository keeps its memories, relative to its root
// and slash-separated.
const File = "harness/memory.jsonl"

// Scope kinds: what part of a plan a scope entry names. A scope entry is
// "kind:value"; path values are globs, the others exact names.
const (
	ScopePath   = "path"   // a glob over the paths the plan is about ("db/migrations/**")
	ScopeGate   = "gate"   // a gate or eval suite id of the manifest or of a proposed kit
	ScopeKit    = "kit"    // a template kit the manifest applied or the plan proposes
	ScopeFamily = "family" // a risk family the profile shows
	ScopeStack  = "stack"  // a stack the profile shows ("go", "node")
)

// ScopeKinds are the scope kinds, in the order recall reports them.
var ScopeKinds = []string{ScopePath, ScopeGate, ScopeKit, ScopeFamily, ScopeStack}

// Source kinds: who or what recorded a memory. A source is "kind" or
// "kind:detail" ("person", "gate:go-vet", "drift:stale_gate").
var SourceKinds = []string{"person", "gate", "case", "drift", "review"}

// Bounds on a memory. A memory is a short lesson read before work, not
// a report: a text longer than maxText belongs in a document the memory
// points to.
const (
	maxText    = 2000 // bytes of text
	maxScopes  = 32   // scope entries
	maxScope   = 256  // bytes of one scope entry
	maxSource  = 200  // bytes of source
	maxID      = 64   // bytes of id
	maxFile    = 8 << 20
	maxEntries = 10000
)

// Entry is one memory: a line of the file.
type Entry struct {
	// ID names the memory for forget: "mem_" and 12 hex digits of the
	// hash of its text and scope, so the same lesson for the same scope
	// is the same memory on every machine.
	ID string `json:"id"`
	// Text is the lesson, one line of plain text.
	Text string `json:"text"`
	// Scope lists where the lesson applies, sorted: "path:db/**",
	// "gate:go-vet", "kit:go-service", "family:database", "stack:go".
	Scope []string `json:"scope"`
	// Source says who or what recorded it.
	Source string `json:"source"`
	// Created is when it was recorded, RFC 3339 in UTC.
	Created string `json:"created"`
}

// Sentinel errors of Add and Forget.
var (
	// ErrExists: the memory to add is already in the file (same text and
	// scope).
	ErrExists = errors.New("memory already recorded")
	// ErrUnknown: no memory of the file has the id to forget.
	ErrUnknown = errors.New("no such memory")
)

var (
	idRe     = regexp.MustCompile(`^[a-z0-9][a-z0-9_.-]*$`)
	nameRe   = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.+-]*$`)
	markupRe = regexp.MustCompile(`<[A-Za-z/!?]`)
)

// New makes the entry for text with scope, recorded by source at now:
// it trims and sorts the scope, drops repeated entries, fills ID and
// Created, and checks the result as Load would.
func New(text string, scope []string, source string, now time.Time) (Entry, error) {
	e := Entry{Text: strings.TrimSpace(text), Source: strings.TrimSpace(source), Created: now.UTC().Format(time.RFC3339)}
	if e.Source == "" {
		e.Source = "person"
	}
	for _, s := range scope {
		e.Scope = append(e.Scope, strings.TrimSpace(s))
	}
	slices.Sort(e.Scope)
	e.Scope = slices.Compact(e.Scope)
	e.ID = idOf(e.Text, e.Scope)
	var errs trace.ErrorList
	e.check(func(p, msg string) { errs = append(errs, &trace.Error{Path: p, Msg: msg}) })
	return e, errs.Err()
}

// idOf is the id of a memory with text and (sorted) scope.
func idOf(text string, scope []string) string {
	h := sha256.New()
	h.Write([]byte(text))
	for _, s := range scope {
		h.Write([]byte{0})
		h.Write([]byte(s))
	}
	return "mem_" + hex.EncodeToString(h.Sum(nil))[:12]
}

// check reports every problem of e through bad, with the JSON path of the
// field.
func (e *Entry) check(bad func(path, msg string)) {
	switch {
	case e.ID == "":
		bad("$.id", "missing id")
	case len(e.ID) > maxID || !idRe.MatchString(e.ID):
		bad("$.id", fmt.Sprintf("id %q is not lowercase letters, digits, '_', '.' and '-' (at most %d)", clip(e.ID), maxID))
	}
	if msg := checkText(e.Text); msg != "" {
		bad("$.text", msg)
	}
	if len(e.Scope) == 0 {
		bad("$.scope", "no scope: a memory that applies nowhere is never recalled; give kind:value, kind one of "+strings.Join(ScopeKinds, ", "))
	}
	if len(e.Scope) > maxScopes {
		bad("$.scope", fmt.Sprintf("%d scope entries, at most %d", len(e.Scope), maxScopes))
	}
	for i, s := range e.Scope {
		if msg := checkScope(s); msg != "" {
			bad(fmt.Sprintf("$.scope[%d]", i), msg)
		}
	}
	if msg := checkSource(e.Source); msg != "" {
		bad("$.source", msg)
	}
	if e.Created == "" {
		bad("$.created", "missing created time")
	} else if _, err := time.Parse(time.RFC3339, e.Created); err != nil {
		bad("$.created", fmt.Sprintf("created %q is not an RFC 3339 time", clip(e.Created)))
	}
}

// checkText returns what is wrong with a memory's text, or "".
func checkText(s string) string {
	switch {
	case strings.TrimSpace(s) == "":
		return "empty text"
	case len(s) > maxText:
		return fmt.Sprintf("text of %d bytes, at most %d: keep the lesson short and point to a document for the rest", len(s), maxText)
	}
	if msg := plain(s); msg != "" {
		return "text " + msg
	}
	if markupRe.MatchString(s) {
		return "text holds markup (\"<\" before a letter, \"/\", \"!\" or \"?\"): memories are plain text"
	}
	return ""
}

// plain returns what keeps s from being one line of plain text: invalid
// UTF-8, a control character (a newline or an escape sequence would
// rewrite what a terminal shows around it) or a bidirectional or
// invisible formatting character (which makes text read differently
// from what it holds); "" when there is none.
func plain(s string) string {
	if !utf8.ValidString(s) {
		return "is not valid UTF-8"
	}
	for i, r := range s {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			return fmt.Sprintf("holds the control or formatting character %U at byte %d", r, i)
		}
	}
	return ""
}

// checkScope returns what is wrong with one scope entry, or "".
func checkScope(s string) string {
	if len(s) > maxScope {
		return fmt.Sprintf("scope entry of %d bytes, at most %d", len(s), maxScope)
	}
	if msg := plain(s); msg != "" {
		return "scope " + msg
	}
	kind, value, ok := strings.Cut(s, ":")
	if !ok || !slices.Contains(ScopeKinds, kind) {
		return fmt.Sprintf("scope %q is not kind:value with kind one of %s", s, strings.Join(ScopeKinds, ", "))
	}
	if value == "" {
		return fmt.Sprintf("scope %q has no value", s)
	}
	if kind != ScopePath {
		if !nameRe.MatchString(value) {
			return fmt.Sprintf("scope %q: a %s is a name of letters, digits, '_', '.', '+' and '-'", s, kind)
		}
		return ""
	}
	if strings.ContainsAny(value, " \\") || path.IsAbs(value) {
		return fmt.Sprintf("scope %q: a path glob is relative to the repository root, slash-separated, without spaces", s)
	}
	for _, seg := range strings.Split(value, "/") {
		switch seg {
		case "", ".", "..":
			return fmt.Sprintf("scope %q: empty, \".\" or \"..\" path segment", s)
		case "**":
			continue
		}
		if _, err := path.Match(seg, ""); err != nil {
			return fmt.Sprintf("scope %q: bad glob segment %q", s, seg)
		}
	}
	return ""
}

// checkSource returns what is wrong with a source, or "".
func checkSource(s string) string {
	if s == "" {
		return "missing source"
	}
	if len(s) > maxSource {
		return fmt.Sprintf("source of %d bytes, at most %d", len(s), maxSource)
	}
	if msg := plain(s); msg != "" {
		return "source " + msg
	}
	kind, detail, hasDetail := strings.Cut(s, ":")
	if !slices.Contains(SourceKinds, kind) {
		return fmt.Sprintf("source %q is not kind or kind:detail with kind one of %s", s, strings.Join(SourceKinds, ", "))
	}
	if hasDetail && (detail == "" || markupRe.MatchString(detail)) {
		return fmt.Sprintf("source %q: the detail after %q must be plain text", s, kind+":")
	}
	return ""
}

// clip shortens s for an error message.
func clip(s string) string {
	if len(s) <= 40 {
		return s
	}
	return s[:40] + "…"
}

// fields are the keys of a memory line, in the order they are written.
var fields = []string{"id", "text", "scope", "source", "created"}

// Parse reads the memory file data, naming it file in errors. It
// reports every problem of every line (file, line, JSON path), and
// returns no entry when there is one: a store half read would recall
// half of what the team decided to keep. Blank lines are allowed.
func Parse(data []byte, file string) ([]Entry, error) {
	var (
		entries []Entry
		errs    trace.ErrorList
		parser  trace.Parser
		seen    = map[string]int{}
	)
	for i, raw := range bytes.Split(data, []byte("\n")) {
		line := i + 1
		raw = bytes.TrimSpace(raw)
		if len(raw) == 0 {
			continue
		}
		bad := func(p, msg string) {
			errs = append(errs, &trace.Error{File: file, Line: line, Path: p, Msg: msg})
		}
		if len(entries)+len(errs) >= maxEntries {
			bad("", fmt.Sprintf("more than %d memories", maxEntries))
			break
		}
		if !utf8.Valid(raw) {
			bad("$", "line is not valid UTF-8")
			continue
		}
		v, err := parser.Parse(raw, file, line)
		if err != nil {
			var list trace.ErrorList
			if errors.As(err, &list) {
				errs = append(errs, list...)
			} else {
				bad("$", err.Error())
			}
			continue
		}
		e, ok := decode(v, bad)
		if !ok {
			continue
		}
		if first, dup := seen[e.ID]; dup {
			bad("$.id", fmt.Sprintf("id %s is used by line %d too", e.ID, first))
			continue
		}
		seen[e.ID] = line
		entries = append(entries, e)
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return entries, nil
}

// decode turns one parsed line into an entry, reporting through bad
// every field that is unknown, of the wrong type or invalid.
func decode(v any, bad func(path, msg string)) (Entry, bool) {
	obj, ok := v.(map[string]any)
	if !ok {
		bad("$", "a memory line is a JSON object")
		return Entry{}, false
	}
	n := 0
	count := func(p, msg string) { n++; bad(p, msg) }
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if !slices.Contains(fields, k) {
			count("$."+k, fmt.Sprintf("unknown field %q (a memory has %s)", clip(k), strings.Join(fields, ", ")))
		}
	}
	var e Entry
	str := func(k string, dst *string) {
		switch x := obj[k].(type) {
		case nil:
		case string:
			*dst = x
		default:
			count("$."+k, k+" is not a string")
		}
	}
	str("id", &e.ID)
	str("text", &e.Text)
	str("source", &e.Source)
	str("created", &e.Created)
	switch x := obj["scope"].(type) {
	case nil:
	case []any:
		for i, s := range x {
			str, ok := s.(string)
			if !ok {
				count(fmt.Sprintf("$.scope[%d]", i), "scope entry is not a string")
				continue
			}
			e.Scope = append(e.Scope, str)
		}
	default:
		count("$.scope", "scope is not an array of strings")
	}
	if n == 0 {
		e.check(count)
	}
	return e, n == 0
}

// Encode writes entries as the file holds them: one line each, keys in
// a fixed order, oldest first (by created time, then id), so adding a
// memory adds a line at the end.
func Encode(entries []Entry) []byte {
	sorted := slices.Clone(entries)
	slices.SortStableFunc(sorted, func(a, b Entry) int {
		if c := strings.Compare(a.Created, b.Created); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	// Markup is refused in memories, so "&" is the only character HTML
	// escaping would change, and "\u0026" would only blur the diff.
	enc.SetEscapeHTML(false)
	for _, e := range sorted {
		enc.Encode(e) // strings and a slice of strings into a buffer: cannot fail
	}
	return b.Bytes()
}

// Load reads the memories of the repository at root. A repository
// without the file has none; a file with any problem is an error listing
// every problem, and no entry is returned. The file is read within root:
// a symbolic link that leaves the repository is refused.
func Load(root string) ([]Entry, error) {
	data, err := capped.ReadFileInRoot(root, filepath.FromSlash(File), maxFile)
	if errors.Is(err, fs.ErrNotExist) {
		return []Entry{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading memories: %w", err)
	}
	entries, err := Parse(data, File)
	if err != nil {
		return nil, err
	}
	if entries == nil {
		entries = []Entry{}
	}
	return entries, nil
}

// Add records e in the memory file of root and returns it. A memory with
// the same id (the same text and scope) is ErrExists, and the file is
// left alone.
func Add(root string, e Entry) (Entry, error) {
	var errs trace.ErrorList
	e.check(func(p, msg string) { errs = append(errs, &trace.Error{Path: p, Msg: msg}) })
	if len(errs) > 0 {
		return Entry{}, errs
	}
	err := update(root, func(entries []Entry) ([]Entry, error) {
		if i := slices.IndexFunc(entries, func(x Entry) bool { return x.ID == e.ID }); i >= 0 {
			return nil, fmt.Errorf("%s: %w as %s (recorded %s by %s)", File, ErrExists, e.ID, entries[i].Created, entries[i].Source)
		}
		if len(entries) >= maxEntries {
			return nil, fmt.Errorf("%s: %d memories already, at most %d: forget some first", File, len(entries), maxEntries)
		}
		return append(entries, e), nil
	})
	if err != nil {
		return Entry{}, err
	}
	return e, nil
}

// Forget removes the memory id from the file of root and returns it. An
// id the file does not hold is ErrUnknown, and the file is left alone.
func Forget(root, id string) (Entry, error) {
	var gone Entry
	err := update(root, func(entries []Entry) ([]Entry, error) {
		i := slices.IndexFunc(entries, func(x Entry) bool { return x.ID == id })
		if i < 0 {
			return nil, fmt.Errorf("%s: %w %q", File, ErrUnknown, clip(id))
		}
		gone = entries[i]
		return slices.Delete(entries, i, i+1), nil
	})
	if err != nil {
		return Entry{}, err
	}
	return gone, nil
}

// update reads the file of root, changes its entries with change and
// writes the result back in one atomic write. It holds the lock of the
// file's directory from the read to the write, so two changes at once
// cannot lose one of them. The directory is made when missing; a file
// or directory that is a symbolic link is refused, since the write
// would replace the link or go where it points.
func update(root string, change func([]Entry) ([]Entry, error)) error {
	dir := filepath.Join(root, filepath.FromSlash(path.Dir(File)))
	name := filepath.Join(root, filepath.FromSlash(File))
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("writing memories: %w", err)
	}
	if st, err := os.Lstat(dir); err != nil {
		return fmt.Errorf("writing memories: %w", err)
	} else if !st.IsDir() {
		return fmt.Errorf("writing memories: %s is not a directory", path.Dir(File))
	}
	if st, err := os.Lstat(name); err == nil && !st.Mode().IsRegular() {
		return fmt.Errorf("writing memories: %s is not a regular file", File)
	}
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("writing memories: %w", err)
	}
	defer d.Close()
	unlock, err := atomicfile.Lock(d)
	if err != nil {
		return fmt.Errorf("locking %s: %w", path.Dir(File), err)
	}
	defer unlock()
	entries, err := Load(root)
	if err != nil {
		return err
	}
	entries, err = change(entries)
	if err != nil {
		return err
	}
	data := Encode(entries)
	// What is written must read back: a check here keeps a bug in
	// Encode from leaving a file Load refuses.
	if _, err := Parse(data, File); err != nil {
		return fmt.Errorf("writing memories: %w", err)
	}
	if err := atomicfile.Write(name, data, 0o644); err != nil {
		return fmt.Errorf("writing memories: %w", err)
	}
	return nil
}
