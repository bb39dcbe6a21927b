package web

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path"
	"regexp"
	"strings"

	"github.com/crystallize-dev/crystallize/internal/trace"
)

// Scenario is a replayable browser session with its checks: a file
// under harness/web/ in the repository.
type Scenario struct {
	// Name names the scenario in reports and its baselines' directory.
	Name string `json:"name"`
	// Serve is a directory, relative to the repository root, served on a
	// loopback port for the run: a static front end needs no server of
	// its own. Empty when URL is absolute.
	Serve string `json:"serve,omitempty"`
	// URL is the first page: an absolute http(s) URL (a dev server the
	// gate started), or a path under Serve.
	URL      string    `json:"url"`
	Viewport *Viewport `json:"viewport,omitempty"`
	Steps    []Step    `json:"steps"`
	// Budgets are checked on every page load: the first one and each
	// navigate step.
	Budgets *Budgets `json:"budgets,omitempty"`
}

// Viewport is the page's size in CSS pixels. Screenshots are taken at
// device scale 1, so their pixels are these.
type Viewport struct {
	Width  int64 `json:"width"`
	Height int64 `json:"height"`
}

// DefaultViewport is the viewport of a scenario that names none.
var DefaultViewport = Viewport{Width: 800, Height: 600}

// Step is one action or check; exactly one of its action fields is set.
type Step struct {
	// Navigate opens a URL, resolved against the first page's.
	Navigate string `json:"navigate,omitempty"`
	// Click dispatches a mouse click at the centre of the target.
	Click *Target `json:"click,omitempty"`
	// Type focuses the target and types Text as key events.
	Type *Target `json:"type,omitempty"`
	Text string  `json:"text,omitempty"`
	// Press dispatches one named key (Enter, Tab, Escape, Backspace,
	// ArrowDown, ...) to the focused element.
	Press string `json:"press,omitempty"`
	// Expect waits until each node is on the screen; Absent until none
	// is. Both give up after the timeout and fail with the screen.
	Expect []Target `json:"expect,omitempty"`
	Absent []Target `json:"absent,omitempty"`
	// Screen waits until the whole screen (Screen.Text) is this text:
	// the semantic snapshot a replayed recording checks after each
	// action.
	Screen string `json:"screen,omitempty"`
	// Audit runs the accessibility rules (all of them when Rules is
	// empty) on the current page.
	Audit *Audit `json:"audit,omitempty"`
	// Screenshot compares the viewport with the baseline of this name
	// under the policy's thresholds.
	Screenshot string       `json:"screenshot,omitempty"`
	Policy     *PixelPolicy `json:"policy,omitempty"`
	TimeoutMS  int          `json:"timeoutMs,omitempty"`
	action     string       // the action field that is set
}

// Target names a node of the accessibility tree, as a screen reader
// would: its role and accessible name (exact, after collapsing spaces,
// or a substring with NameContains). Nth picks among several matches;
// without it, two matches are an error, not a guess.
type Target struct {
	Role         string `json:"role,omitempty"`
	Name         string `json:"name,omitempty"`
	NameContains string `json:"nameContains,omitempty"`
	Value        string `json:"value,omitempty"`
	Nth          *int   `json:"nth,omitempty"`
}

func (t Target) String() string {
	var b strings.Builder
	b.WriteString(t.Role)
	if b.Len() == 0 {
		b.WriteString("node")
	}
	if t.Name != "" {
		fmt.Fprintf(&b, " %q", t.Name)
	}
	if t.NameContains != "" {
		fmt.Fprintf(&b, " containing %q", t.NameContains)
	}
	if t.Value != "" {
		fmt.Fprintf(&b, " value=%q", t.Value)
	}
	if t.Nth != nil {
		fmt.Fprintf(&b, " #%d", *t.Nth)
	}
	return b.String()
}

// Audit selects accessibility rules.
type Audit struct {
	Rules []string `json:"rules,omitempty"`
}

// PixelPolicy decides when a screenshot differs from its baseline. A
// pixel differs when one of its channels is off by more than Tolerance
// (0–255; 0 means DefaultTolerance), which absorbs the anti-aliasing
// noise of font rendering; the screenshot blocks when more than
// MaxDiffRatio of its pixels differ (DefaultMaxDiffRatio when unset).
type PixelPolicy struct {
	Tolerance    int      `json:"tolerance,omitempty"`
	MaxDiffRatio *float64 `json:"maxDiffRatio,omitempty"`
}

// Pixel policy defaults.
const (
	DefaultTolerance    = 32
	DefaultMaxDiffRatio = 0.001
)

// Budgets are performance budgets in milliseconds and bytes; a zero
// field is not checked.
type Budgets struct {
	// LCPMS bounds largest contentful paint.
	LCPMS float64 `json:"lcpMs,omitempty"`
	// DOMContentLoadedMS and LoadMS bound the navigation timing events
	// from the start of the navigation.
	DOMContentLoadedMS float64 `json:"domContentLoadedMs,omitempty"`
	LoadMS             float64 `json:"loadMs,omitempty"`
	// TransferBytes bounds the bytes the page and its resources moved.
	TransferBytes float64 `json:"transferBytes,omitempty"`
}

var nameRe = regexp.MustCompile(`^[a-z0-9][a-z0-9_.-]*$`)

// keys are the named keys Press accepts.
var keys = map[string]bool{"Enter": true, "Tab": true, "Escape": true, "Backspace": true, "Delete": true, "Space": true,
	"ArrowUp": true, "ArrowDown": true, "ArrowLeft": true, "ArrowRight": true, "Home": true, "End": true, "PageUp": true, "PageDown": true}

// LoadScenario reads and checks a scenario file.
func LoadScenario(file string) (*Scenario, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	return ParseScenario(data, file)
}

// ParseScenario decodes and checks a scenario, reporting every problem
// with the file and JSON path.
func ParseScenario(data []byte, file string) (*Scenario, error) {
	if _, err := trace.ParseJSON(data, file, 1); err != nil {
		return nil, err
	}
	if errs := trace.CheckNames(data, file, 1, new(Scenario)); len(errs) > 0 {
		return nil, errs
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var s Scenario
	if err := dec.Decode(&s); err != nil {
		return nil, trace.ErrorList{{File: file, Path: "$", Msg: "decoding scenario: " + err.Error()}}
	}
	var errs trace.ErrorList
	bad := func(p, format string, args ...any) {
		errs = append(errs, &trace.Error{File: file, Path: p, Msg: fmt.Sprintf(format, args...)})
	}
	if !nameRe.MatchString(s.Name) {
		bad("$.name", "name %q must be lowercase letters, digits, '.', '_' or '-'", s.Name)
	}
	if s.Serve != "" && (path.IsAbs(s.Serve) || strings.HasPrefix(path.Clean(s.Serve), "..")) {
		bad("$.serve", "serve %q must be a directory inside the repository", s.Serve)
	}
	switch u, err := url.Parse(s.URL); {
	case s.URL == "":
		bad("$.url", "missing url")
	case err != nil:
		bad("$.url", "%v", err)
	case u.IsAbs() && u.Scheme != "http" && u.Scheme != "https":
		bad("$.url", "url scheme %q: only http and https are opened", u.Scheme)
	case !u.IsAbs() && s.Serve == "":
		bad("$.url", "relative url %q needs serve, the directory it is under", s.URL)
	}
	if v := s.Viewport; v != nil && (v.Width < 100 || v.Height < 100 || v.Width > 4000 || v.Height > 4000) {
		bad("$.viewport", "viewport %dx%d outside 100..4000", v.Width, v.Height)
	}
	if len(s.Steps) == 0 {
		bad("$.steps", "no steps")
	}
	shots := map[string]bool{}
	for i := range s.Steps {
		st := &s.Steps[i]
		p := fmt.Sprintf("$.steps[%d]", i)
		var set []string
		for name, on := range map[string]bool{"navigate": st.Navigate != "", "click": st.Click != nil, "type": st.Type != nil,
			"press": st.Press != "", "expect": st.Expect != nil, "absent": st.Absent != nil, "audit": st.Audit != nil, "screenshot": st.Screenshot != "",
			"screen": st.Screen != ""} {
			if on {
				set = append(set, name)
			}
		}
		if len(set) != 1 {
			bad(p, "a step has exactly one of navigate, click, type, press, expect, absent, screen, audit, screenshot; found %d", len(set))
			continue
		}
		st.action = set[0]
		if st.Text != "" && st.action != "type" {
			bad(p+".text", "text is for a type step")
		}
		if st.Policy != nil && st.action != "screenshot" {
			bad(p+".policy", "policy is for a screenshot step")
		}
		switch st.action {
		case "click", "type":
			t := st.Click
			if t == nil {
				t = st.Type
			}
			checkTarget(*t, p+"."+st.action, bad)
		case "expect", "absent":
			list := st.Expect
			if st.action == "absent" {
				list = st.Absent
			}
			if len(list) == 0 {
				bad(p+"."+st.action, "empty list")
			}
			for j, t := range list {
				checkTarget(t, fmt.Sprintf("%s.%s[%d]", p, st.action, j), bad)
			}
		case "press":
			if !keys[st.Press] {
				bad(p+".press", "unknown key %q", st.Press)
			}
		case "audit":
			for j, r := range st.Audit.Rules {
				if !ruleNames[r] {
					bad(fmt.Sprintf("%s.audit.rules[%d]", p, j), "unknown rule %q (known: %s)", r, strings.Join(Rules, ", "))
				}
			}
		case "screenshot":
			if !nameRe.MatchString(st.Screenshot) {
				bad(p+".screenshot", "screenshot name %q must be lowercase letters, digits, '.', '_' or '-'", st.Screenshot)
			} else if shots[st.Screenshot] {
				bad(p+".screenshot", "screenshot %q is taken twice; its baseline would be ambiguous", st.Screenshot)
			}
			shots[st.Screenshot] = true
			if pol := st.Policy; pol != nil {
				if pol.Tolerance < 0 || pol.Tolerance > 255 {
					bad(p+".policy.tolerance", "tolerance %d outside 0..255", pol.Tolerance)
				}
				if r := pol.MaxDiffRatio; r != nil && (*r < 0 || *r > 1) {
					bad(p+".policy.maxDiffRatio", "maxDiffRatio %g outside 0..1", *r)
				}
			}
		}
		if st.TimeoutMS < 0 {
			bad(p+".timeoutMs", "negative timeout")
		}
	}
	if b := s.Budgets; b != nil && (b.LCPMS < 0 || b.LoadMS < 0 || b.DOMContentLoadedMS < 0 || b.TransferBytes < 0) {
		bad("$.budgets", "negative budget")
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return &s, nil
}

func checkTarget(t Target, p string, bad func(p, format string, args ...any)) {
	if t.Role == "" && t.Name == "" && t.NameContains == "" {
		bad(p, "a target needs a role or a name")
	}
	if t.Name != "" && t.NameContains != "" {
		bad(p, "name and nameContains exclude each other")
	}
	if t.Nth != nil && *t.Nth < 0 {
		bad(p+".nth", "negative nth")
	}
}
