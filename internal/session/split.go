package session

import (
	"errors"
	"fmt"
	"path"
	"regexp"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/crystallize-dev/crystallize/internal/trace"
)

// Estimator names the token estimate EstimateTokens makes, as SplitPlan
// records it. Four bytes a token is the usual rule of thumb for English
// text and code with BPE tokenizers; it overestimates dense prose a little
// and underestimates non-Latin scripts. A real tokenizer was rejected:
// each model family has its own, and a split needs a stable, cheap and
// model-independent estimate, not an exact count.
const Estimator = "ceil(bytes/4) of the phase's markdown"

// EstimateTokens estimates the tokens of phase p: ceil(bytes/4) of its
// markdown as Format writes it, from the "## " heading to the end of its
// last block, with a final newline.
func EstimateTokens(p Phase) int {
	n := len(renderPhase(p))
	return (n + 3) / 4
}

// renderPhase is p in canonical form, as Format writes it inside a session.
func renderPhase(p Phase) string {
	var w bodyWriter
	w.part("## ", heading(p))
	w.blocks(p.Blocks)
	w.b.WriteByte('\n')
	return w.b.String()
}

// Route is a set of routing rules: which model tier a phase needs. Its
// zero value routes every phase to the tier "" with no rules; use
// DefaultRoute for the documented default.
type Route struct {
	// Default is the tier of a phase no rule matches; "" means the first
	// tier.
	Default string `toml:"default"`
	// Tiers are ordered from weakest (cheapest) to strongest; a group
	// gets the strongest tier any of its phases needs.
	Tiers []Tier `toml:"tiers"`
	Rules []Rule `toml:"rules"`
}

// Tier is a model tier. Model is optional: a tier may only be a name the
// caller maps to a model itself.
type Tier struct {
	Name  string `toml:"name"`
	Model string `toml:"model"`
}

// Rule sends a phase to Tier when every condition it sets holds: the
// phase has a callout of type Callout (ignoring case), its agent matches
// Agent, and one of its tool calls has a tool matching Tool. Agent and
// Tool are path.Match patterns, so "kubectl*" or "*" work. A rule sets at
// least one condition.
type Rule struct {
	Tier    string `toml:"tier"`
	Callout string `toml:"callout"`
	Agent   string `toml:"agent"`
	Tool    string `toml:"tool"`
}

// The tiers of DefaultRoute.
const (
	TierFast   = "fast"
	TierStrong = "strong"
)

// DefaultRoute is the routing used without a route file: phases with a
// [!decision], [!decision_needed], [!error] or [!approval_required]
// callout go to tier "strong", every other phase to tier "fast". Neither
// tier names a model.
func DefaultRoute() *Route {
	r := &Route{
		Default: TierFast,
		Tiers:   []Tier{{Name: TierFast}, {Name: TierStrong}},
	}
	for _, c := range []string{CalloutDecision, CalloutDecisionNeeded, CalloutError, CalloutApprovalRequired} {
		r.Rules = append(r.Rules, Rule{Tier: TierStrong, Callout: c})
	}
	return r
}

// ParseRoute reads a route file (TOML). Keys it leaves out keep
// DefaultRoute's values: no [[tiers]] means the tiers fast and strong, no
// [[rules]] the default rules, no default the first tier. For example:
//
//	default = "fast"
//
//	[[tiers]]
//	name = "fast"
//	model = "claude-haiku"
//
//	[[tiers]]
//	name = "strong"
//	model = "claude-opus"
//
//	[[rules]]
//	tier = "strong"
//	callout = "error"
//
//	[[rules]]
//	tier = "strong"
//	tool = "kubectl"
//
// The error, when not nil, is a trace.ErrorList with name as File: a TOML
// syntax error at its line and column, or every problem in the document
// at its path ($.rules[1].tier): unknown keys, empty or repeated tier
// names, rules naming no tier or an unknown one, rules without a
// condition, bad patterns.
func ParseRoute(name string, data []byte) (*Route, error) {
	var r Route
	md, err := toml.Decode(string(data), &r)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return nil, trace.ErrorList{{File: name, Line: pe.Position.Line, Col: pe.Position.Col, Msg: "invalid TOML: " + pe.Message}}
		}
		// A type mismatch: BurntSushi/toml puts its line and key only in
		// the message, as "toml: line N (last key "k"): msg".
		msg := strings.TrimPrefix(err.Error(), "toml: ")
		e := &trace.Error{File: name, Msg: msg}
		if m := decodeErrorRE.FindStringSubmatch(msg); m != nil {
			e.Line, _ = strconv.Atoi(m[1])
			e.Path, e.Msg = "$."+m[2], m[3]
		}
		return nil, trace.ErrorList{e}
	}
	var errs trace.ErrorList
	for _, k := range md.Undecoded() {
		errs = append(errs, &trace.Error{File: name, Path: "$." + k.String(), Msg: "unknown key"})
	}
	def := DefaultRoute()
	if !md.IsDefined("tiers") {
		r.Tiers = def.Tiers
	}
	if !md.IsDefined("rules") {
		r.Rules = def.Rules
	}
	for _, e := range r.validate() {
		e.File = name
		errs = append(errs, e)
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return &r, nil
}

// decodeErrorRE matches the message of a BurntSushi/toml decoding error.
var decodeErrorRE = regexp.MustCompile(`^line (\d+) \(last key "([^"]*)"\): (.*)$`)

// validate returns every problem of r, each at its path.
func (r *Route) validate() trace.ErrorList {
	var errs trace.ErrorList
	add := func(p, format string, args ...any) {
		errs = append(errs, &trace.Error{Path: p, Msg: fmt.Sprintf(format, args...)})
	}
	if len(r.Tiers) == 0 {
		add("$.tiers", "no tiers")
	}
	seen := map[string]bool{}
	for i, t := range r.Tiers {
		p := fmt.Sprintf("$.tiers[%d].name", i)
		switch {
		case t.Name == "":
			add(p, "empty tier name")
		case seen[t.Name]:
			add(p, "tier %q defined twice", t.Name)
		}
		seen[t.Name] = true
	}
	if r.Default != "" && !seen[r.Default] {
		add("$.default", "unknown tier %q", r.Default)
	}
	for i, rule := range r.Rules {
		p := fmt.Sprintf("$.rules[%d]", i)
		switch {
		case rule.Tier == "":
			add(p+".tier", "missing tier")
		case !seen[rule.Tier]:
			add(p+".tier", "unknown tier %q", rule.Tier)
		}
		if rule.Callout == "" && rule.Agent == "" && rule.Tool == "" {
			add(p, "rule without callout, agent or tool")
		}
		if _, err := path.Match(rule.Agent, ""); err != nil {
			add(p+".agent", "bad pattern %q", rule.Agent)
		}
		if _, err := path.Match(rule.Tool, ""); err != nil {
			add(p+".tool", "bad pattern %q", rule.Tool)
		}
	}
	return errs
}

// match reports whether rule matches p, and if so why, such as
// "[!error]" or "@deployer tool kubectl".
func (rule Rule) match(p Phase) (string, bool) {
	var why []string
	if rule.Callout != "" {
		found := false
		for _, b := range p.Blocks {
			if c, ok := b.(Callout); ok && c.Is(rule.Callout) {
				found = true
				break
			}
		}
		if !found {
			return "", false
		}
		why = append(why, "[!"+strings.ToLower(rule.Callout)+"]")
	}
	if rule.Agent != "" {
		if ok, _ := path.Match(rule.Agent, p.Agent); !ok {
			return "", false
		}
		why = append(why, "@"+p.Agent)
	}
	if rule.Tool != "" {
		tool := ""
	calls:
		for _, b := range p.Blocks {
			if tc, ok := b.(ToolCalls); ok {
				for _, c := range tc.Calls {
					if ok, _ := path.Match(rule.Tool, c.Tool); ok {
						tool = c.Tool
						break calls
					}
				}
			}
		}
		if tool == "" {
			return "", false
		}
		why = append(why, "tool "+tool)
	}
	return strings.Join(why, " "), true
}

// SplitOptions configures Split.
type SplitOptions struct {
	// MaxTokens is the most tokens a group holds; it must be positive.
	MaxTokens int
	// Route routes the groups; nil means DefaultRoute.
	Route *Route
}

// SplitPlan is a session split for delegation, Split's result and the --json
// output of session split.
type SplitPlan struct {
	Estimator string  `json:"estimator"`
	MaxTokens int     `json:"max_tokens"`
	Groups    []Group `json:"groups"`
}

// Group is a run of consecutive phases delegated as one unit.
type Group struct {
	Phases []string `json:"phases"` // phase ids, in order
	Tokens int      `json:"tokens"` // sum of the phases' estimates
	Tier   string   `json:"tier"`
	Model  string   `json:"model,omitempty"` // the tier's model, if it names one
	// Reasons say why the group got its tier: one "PHASE: why → tier"
	// per rule that matched one of its phases, or "routine" when none
	// did.
	Reasons []string `json:"reasons"`
	// OverLimit marks a group of one phase estimated above MaxTokens.
	OverLimit bool `json:"over_limit"`
}

// ErrMaxTokens is returned by Split for a MaxTokens that is not positive.
var ErrMaxTokens = errors.New("max tokens must be positive")

// Split splits s into groups of consecutive phases and routes each to a
// model tier. Grouping is greedy, in document order: a phase joins the
// current group while the group's total stays at most MaxTokens, else it
// opens a new one; a phase estimated above MaxTokens on its own is a group
// of its own, marked OverLimit. Greedy grouping gives the fewest groups
// for consecutive phases, in one pass; balancing the groups' sizes was
// rejected because delegation costs per group, not per token spread. The
// preamble before the first phase belongs to no group.
//
// Each phase gets the strongest tier of the rules that match it, or the
// route's default tier; each group the strongest tier of its phases,
// since one model must handle all of them.
func Split(s *Session, opts SplitOptions) (*SplitPlan, error) {
	if opts.MaxTokens <= 0 {
		return nil, ErrMaxTokens
	}
	r := opts.Route
	if r == nil {
		r = DefaultRoute()
	}
	if errs := r.validate(); len(errs) > 0 {
		return nil, fmt.Errorf("route: %w", errs)
	}
	rank := make(map[string]int, len(r.Tiers))
	for i, t := range r.Tiers {
		rank[t.Name] = i
	}
	def := r.Default
	if def == "" {
		def = r.Tiers[0].Name
	}
	ids := s.PhaseIDs()
	plan := &SplitPlan{Estimator: Estimator, MaxTokens: opts.MaxTokens, Groups: []Group{}}
	var cur *Group
	for i, p := range s.Phases {
		tokens := EstimateTokens(p)
		over := tokens > opts.MaxTokens
		if cur == nil || over || cur.OverLimit || cur.Tokens+tokens > opts.MaxTokens {
			plan.Groups = append(plan.Groups, Group{Tier: r.Tiers[rank[def]].Name, Phases: []string{}, Reasons: []string{}})
			cur = &plan.Groups[len(plan.Groups)-1]
			cur.OverLimit = over
		}
		cur.Phases = append(cur.Phases, ids[i])
		cur.Tokens += tokens
		for _, rule := range r.Rules {
			why, ok := rule.match(p)
			if !ok {
				continue
			}
			cur.Reasons = append(cur.Reasons, fmt.Sprintf("%s: %s → %s", ids[i], why, rule.Tier))
			if rank[rule.Tier] > rank[cur.Tier] {
				cur.Tier = rule.Tier
			}
		}
	}
	for i := range plan.Groups {
		g := &plan.Groups[i]
		if len(g.Reasons) == 0 {
			g.Reasons = append(g.Reasons, "routine")
		}
		g.Model = r.Tiers[rank[g.Tier]].Model
	}
	return plan, nil
}
