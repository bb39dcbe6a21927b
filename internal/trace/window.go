package trace

import "github.com/crystallize-dev/crystallize/internal/jsontext"

// A Window is the actions [Lo, Hi) of a trace: what checking one example
// of a procedure needs of the trace that holds it.
type Window struct{ Lo, Hi int }

// Window returns the trace t cut to the actions of w: a shallow copy that
// shares t's values, with Usage unset (a window's actions do not add up
// to the trace's usage, and nothing that reads a window uses it). It is
// what DecodeWindow returns for t's document.
func (t *Trace) Window(w Window) *Trace {
	sub := *t
	sub.Actions = t.Actions[w.Lo:w.Hi:w.Hi]
	sub.Usage = nil
	return &sub
}

// DecodeWindow decodes the actions of w and the trace's own members (id,
// metadata, replay run and allowlist, ...) of data, and only finds the
// ends of the other actions: a second pass that checks one example of a
// procedure against each of many traces reads a few of their fifty
// actions, and building the others' parameters and outputs was most of
// its time and nearly all of its garbage. The result equals
// DecodeDirect's trace cut by Window (FuzzDecodeWindow checks it), with
// the actions normalized as Normalize does; ok is false when DecodeDirect
// would decline, or the document has fewer than w.Hi actions, and the
// caller then decodes the document whole.
//
// DecodeWindow checks what it decodes as DecodeDirect does, but trusts
// the actions outside the window: call it only on bytes known to decode,
// such as a document whose source hash equals that of one decoded before.
func (p *Parser) DecodeWindow(data []byte, file string, line int, w Window) (t *Trace, ok bool) {
	if w.Lo < 0 || w.Hi < w.Lo {
		return nil, false
	}
	p.window = &w
	defer func() { p.window = nil }()
	t, ok = p.DecodeDirect(data, file, line)
	if !ok {
		return nil, false
	}
	t.Usage = nil
	for i := range t.Actions {
		normalizeAction(&t.Actions[i])
	}
	return t, true
}

// inWindow reports whether the i-th action of the document is built: all
// of them outside DecodeWindow.
func (p *Parser) inWindow(i int) bool {
	return p.window == nil || i >= p.window.Lo && i < p.window.Hi
}

// skipTrusted moves p.pos past the JSON value there, which it does not
// check: only its strings and brackets are followed. The document must be
// known to be valid (see DecodeWindow).
func (p *Parser) skipTrusted() bool {
	p.skipSpace()
	end, err := jsontext.SkipValue(p.data, p.pos)
	if err != nil {
		return false
	}
	p.pos = end
	return true
}
