package web

// The accessibility rules are a small set of WCAG failures that need no
// judgment: a user of a screen reader meets an unnamed image, control,
// button or link as silence, and text below the contrast ratio of WCAG
// 1.4.3 is unreadable for many. Names are read from the accessibility
// tree, so every way of naming (alt, label, aria-label, aria-labelledby,
// title, content) counts; contrast is computed in the page from the
// computed colours, since the tree has none.

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/chromedp"
)

// Rule ids.
const (
	RuleImageAlt      = "image-alt"
	RuleLabel         = "label"
	RuleButtonName    = "button-name"
	RuleLinkName      = "link-name"
	RuleColorContrast = "color-contrast"
)

// Rules lists the accessibility rules an audit runs by default.
var Rules = []string{RuleImageAlt, RuleLabel, RuleButtonName, RuleLinkName, RuleColorContrast}

var ruleNames = map[string]bool{RuleImageAlt: true, RuleLabel: true, RuleButtonName: true, RuleLinkName: true, RuleColorContrast: true}

// Violation is one node that breaks a rule.
type Violation struct {
	Rule    string `json:"rule"`
	Element string `json:"element"`
	Message string `json:"message"`
}

// controlRoles are the form controls that need a name (WCAG 1.3.1,
// 4.1.2): their label is all a screen reader says of them.
var controlRoles = map[string]bool{"textbox": true, "searchbox": true, "combobox": true, "checkbox": true, "radio": true,
	"spinbutton": true, "slider": true, "listbox": true, "switch": true}

// unnamedRule is the rule an unnamed node of this role breaks, or "".
func unnamedRule(role string) string {
	switch {
	case role == "image" || role == "img":
		return RuleImageAlt
	case controlRoles[role]:
		return RuleLabel
	case role == "button":
		return RuleButtonName
	case role == "link":
		return RuleLinkName
	}
	return ""
}

// audit runs the rules on the page whose screen is s.
func audit(ctx context.Context, s *Screen, rules []string) ([]Violation, error) {
	if len(rules) == 0 {
		rules = Rules
	}
	var list []Violation
	for _, n := range s.all() {
		r := unnamedRule(n.Role)
		if r == "" || n.Name != "" || !slices.Contains(rules, r) {
			continue
		}
		list = append(list, Violation{Rule: r, Element: describe(ctx, n.Backend), Message: fmt.Sprintf("%s has no accessible name", n.Role)})
	}
	if slices.Contains(rules, RuleColorContrast) {
		low, err := chromedp.Run(ctx, chromedp.Evaluate[[]Violation](contrastJS))
		if err != nil {
			return nil, fmt.Errorf("computing contrast: %w", err)
		}
		list = append(list, low...)
	}
	return list, nil
}

// describe names a DOM node briefly, as <tag id=… name=…>, so a
// violation can be found in the source.
func describe(ctx context.Context, id cdp.BackendNodeID) string {
	if id == 0 {
		return "(no element)"
	}
	res, err := chromedp.Call(ctx, dom.DescribeNode, dom.DescribeNodeParams{BackendNodeID: id})
	if err != nil || res.Node == nil {
		return fmt.Sprintf("(node %d)", id)
	}
	return describeAttrs(res.Node.LocalName, res.Node.Attributes)
}

// describeAttrs is describe's formatting: the attributes that identify an
// element, in the order given.
func describeAttrs(tag string, attrs []string) string {
	var b strings.Builder
	b.WriteString("<" + tag)
	for i := 0; i+1 < len(attrs); i += 2 {
		switch attrs[i] {
		case "id", "name", "type", "src", "href", "class":
			v := attrs[i+1]
			if len(v) > 60 {
				v = v[:60] + "…"
			}
			fmt.Fprintf(&b, " %s=%q", attrs[i], v)
		}
	}
	b.WriteString(">")
	return b.String()
}

// contrastJS finds the visible text whose contrast with its background
// is below WCAG 1.4.3 (4.5:1, or 3:1 for large text: 24px, or 18.66px
// bold). The background is the first opaque ancestor background, with
// translucent layers blended over it and white under all; text over a
// background image is skipped, since its colour behind the text is
// unknown, and a skip only loses a finding.
const contrastJS = `(() => {
  const parse = c => {
    const m = /rgba?\(([^)]+)\)/.exec(c);
    if (!m) return null;
    const p = m[1].split(/[\s,\/]+/).filter(Boolean).map(Number);
    return {r: p[0], g: p[1], b: p[2], a: p.length > 3 ? p[3] : 1};
  };
  const blend = (top, bottom) => ({
    r: top.r * top.a + bottom.r * (1 - top.a),
    g: top.g * top.a + bottom.g * (1 - top.a),
    b: top.b * top.a + bottom.b * (1 - top.a), a: 1});
  const lum = c => {
    const f = v => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
    return 0.2126 * f(c.r) + 0.7152 * f(c.g) + 0.0722 * f(c.b);
  };
  const background = el => {
    const layers = [];
    for (let e = el; e; e = e.parentElement) {
      const s = getComputedStyle(e);
      if (s.backgroundImage && s.backgroundImage !== 'none') return null;
      const c = parse(s.backgroundColor);
      if (c && c.a > 0) { layers.push(c); if (c.a >= 1) break; }
    }
    let bg = {r: 255, g: 255, b: 255, a: 1};
    for (let i = layers.length - 1; i >= 0; i--) bg = blend(layers[i], bg);
    return bg;
  };
  const name = el => {
    let s = '<' + el.localName;
    for (const a of ['id', 'name', 'class', 'href']) if (el.getAttribute(a)) s += ' ' + a + '="' + el.getAttribute(a) + '"';
    return s + '>';
  };
  const out = [], seen = new Set();
  if (!document.body) return out;
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) {
    const t = walker.currentNode, el = t.parentElement;
    if (!el || seen.has(el) || !t.textContent.trim()) continue;
    seen.add(el);
    const s = getComputedStyle(el);
    if (s.visibility !== 'visible' || s.display === 'none' || parseFloat(s.opacity) === 0) continue;
    const box = el.getBoundingClientRect();
    if (box.width === 0 || box.height === 0) continue;
    const bg = background(el), fg0 = parse(s.color);
    if (!bg || !fg0) continue;
    const fg = blend(fg0, bg);
    const l1 = lum(fg), l2 = lum(bg);
    const ratio = (Math.max(l1, l2) + 0.05) / (Math.min(l1, l2) + 0.05);
    const size = parseFloat(s.fontSize), bold = parseInt(s.fontWeight, 10) >= 700;
    const need = (size >= 24 || (bold && size >= 18.66)) ? 3 : 4.5;
    if (ratio < need) out.push({rule: 'color-contrast', element: name(el),
      message: 'contrast ' + ratio.toFixed(2) + ':1 below ' + need + ':1 for "' + t.textContent.trim().slice(0, 40) + '"'});
  }
  return out;
})()`
