// Package price turns the tokens an agent's model calls used into dollars,
// so that the savings of a mined workflow are priced when the logs carry
// model names and token counts but no cost (Claude Code and Codex logs
// today).
//
// The table is maintained by hand: each entry names its model family, its
// prices per million tokens, where each figure was read and whether that
// was the vendor's own pricing page (Confirmed) or a third party's copy of
// it. Checked is the day the table was last compared with its sources.
// crystallize.toml's [prices."model"] entries override it (Table.With).
//
// A model is matched to an entry deterministically: the name is
// normalized (lower case; a provider prefix such as "anthropic/" or
// "models/", a Bedrock region and "anthropic." prefix, a "-v1:0" or
// "@20250929" version and a "[1m]" context suffix removed), then the
// longest entry that is the whole name, or the name without a date suffix
// ("-20250929", "-2025-08-07") or "-latest", is chosen. So
// "claude-sonnet-4-5-20250929" is Claude Sonnet 4.5, and a model the
// table does not know ("claude-sonnet-4-7", "gpt-5.5") is not priced as
// its neighbour: it is unpriced, and callers list it rather than count it
// as free.
package price

import (
	"regexp"
	"sort"
	"strings"
)

// Checked is the day the built-in table was last compared with its
// sources.
const Checked = "2026-11-28"

// Price is what a model charges, in US dollars per million tokens.
// CacheRead prices input tokens read from the prompt cache, CacheWrite
// input tokens written to it (Anthropic's five-minute cache write;
// OpenAI and Google do not charge a write, which is then the input
// price).
type Price struct {
	Input      float64 `toml:"input" json:"input"`
	Output     float64 `toml:"output" json:"output"`
	CacheRead  float64 `toml:"cache_read" json:"cache_read"`
	CacheWrite float64 `toml:"cache_write" json:"cache_write"`
}

// Usage is the tokens of some model calls. Input counts every input
// token, the cached ones included; CacheRead and CacheWrite say how many
// of them were read from or written to the prompt cache.
type Usage struct {
	Input, Output, CacheRead, CacheWrite int64
}

// Cost is the dollars u costs at p. Cache reads and writes are taken out
// of Input and priced at their own rates; counts that do not add up
// (more cached than input) are priced as given, never negative.
func (p Price) Cost(u Usage) float64 {
	plain := max(u.Input-u.CacheRead-u.CacheWrite, 0)
	return (float64(plain)*p.Input + float64(u.Output)*p.Output +
		float64(u.CacheRead)*p.CacheRead + float64(u.CacheWrite)*p.CacheWrite) / 1e6
}

// Entry is one model family of the built-in table.
type Entry struct {
	// Model is the family's name as logs write it without a date:
	// "claude-sonnet-4-5", "gpt-5-codex", "gemini-2.5-pro".
	Model string
	Price
	// Source is where the figures were read.
	Source string
	// Confirmed is true when Source is the vendor's own documentation;
	// false for a figure only a third party's copy of it gave.
	Confirmed bool
}

// Table is a price table: the built-in entries and a project's overrides.
// The zero value knows no model.
type Table struct {
	prices map[string]Price
	// families are the keys of prices, longest first, for the match.
	families []string
}

// Default returns the built-in table.
func Default() *Table {
	t := &Table{prices: make(map[string]Price, len(builtin))}
	for _, e := range builtin {
		t.prices[e.Model] = e.Price
	}
	t.sort()
	return t
}

// Entries returns the built-in table, in its order.
func Entries() []Entry { return append([]Entry(nil), builtin...) }

// With returns a copy of t in which every model of overrides has its
// price: a name given in full replaces the entry of that family or adds
// one ("my-finetune" is priced as given). Names are normalized as in
// Lookup. t is not changed.
func (t *Table) With(overrides map[string]Price) *Table {
	out := &Table{prices: make(map[string]Price, len(t.prices)+len(overrides))}
	for k, v := range t.prices {
		out.prices[k] = v
	}
	for k, v := range overrides {
		out.prices[normalize(k)] = v
	}
	out.sort()
	return out
}

func (t *Table) sort() {
	t.families = t.families[:0]
	for k := range t.prices {
		t.families = append(t.families, k)
	}
	sort.Slice(t.families, func(i, j int) bool {
		a, b := t.families[i], t.families[j]
		if len(a) != len(b) {
			return len(a) > len(b)
		}
		return a < b
	})
}

// Lookup returns the price of model and the family it was matched to;
// ok is false for a model the table does not know.
func (t *Table) Lookup(model string) (p Price, family string, ok bool) {
	if t == nil || model == "" {
		return Price{}, "", false
	}
	name := normalize(model)
	if p, ok := t.prices[name]; ok {
		return p, name, true
	}
	for _, f := range t.families {
		rest, found := strings.CutPrefix(name, f)
		if found && datedSuffix.MatchString(rest) {
			return t.prices[f], f, true
		}
	}
	return Price{}, "", false
}

// Dollars is what model calls of model that used u cost: logged, the
// dollars their log recorded, when positive (a provider's bill wins over
// any table); nothing for calls that used no tokens; else u priced by
// model's entry. ok is false when u has tokens and t knows no price for
// model: the dollars are then unknown, and a caller lists the model
// rather than count them as $0.
func (t *Table) Dollars(model string, u Usage, logged float64) (usd float64, ok bool) {
	switch p, _, known := t.Lookup(model); {
	case logged > 0:
		return logged, true
	case u.Input == 0 && u.Output == 0:
		return 0, true
	case known:
		return p.Cost(u), true
	}
	return 0, false
}

// datedSuffix is what may follow a family's name in a model id that is
// still that family: a snapshot date or "-latest".
var datedSuffix = regexp.MustCompile(`^-(?:\d{8}|\d{4}-\d{2}-\d{2}|latest)$`)

// version is a Bedrock model version ("-v1:0") or a Vertex AI snapshot
// ("@20250929"), which name the same family.
var version = regexp.MustCompile(`(?:-v\d+(?::\d+)?|@\d{8}|@latest)$`)

// normalize returns the name of a model as the table keys it.
func normalize(model string) string {
	s := strings.ToLower(strings.TrimSpace(model))
	if i := strings.LastIndexByte(s, '/'); i >= 0 {
		s = s[i+1:]
	}
	// Bedrock: "anthropic.claude-…" and "us.anthropic.claude-…".
	if i := strings.Index(s, "anthropic."); i >= 0 {
		s = s[i+len("anthropic."):]
	}
	s = strings.TrimSuffix(s, "[1m]")
	s = version.ReplaceAllString(s, "")
	return s
}
