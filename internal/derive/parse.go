package derive

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
)

// Parse reads an expression in the form Expr.String prints: terms joined
// by "+", each a double-quoted string or a parameter name followed by
// any of .lower(), .upper(), .split("sep")[i] and .replace("old", "new").
// Anything else is an error naming the offset, so an expression stored in
// a candidate can only ever be one of this package's.
func Parse(src string) (Expr, error) {
	p := &parser{src: src}
	var parts []Expr
	for {
		t, err := p.term()
		if err != nil {
			return nil, err
		}
		parts = append(parts, t)
		p.space()
		if p.eof() {
			break
		}
		if !p.consume("+") {
			return nil, p.errorf("want \"+\" or the end of the expression")
		}
	}
	if len(parts) == 1 {
		return parts[0], nil
	}
	return concatExpr{parts}, nil
}

type parser struct {
	src string
	pos int
}

func (p *parser) errorf(format string, args ...any) error {
	return fmt.Errorf("expression %q: offset %d: %s", p.src, p.pos, fmt.Sprintf(format, args...))
}

func (p *parser) eof() bool { return p.pos >= len(p.src) }

func (p *parser) space() {
	for !p.eof() && (p.src[p.pos] == ' ' || p.src[p.pos] == '\t') {
		p.pos++
	}
}

// consume skips spaces and then tok, reporting whether tok was there.
func (p *parser) consume(tok string) bool {
	p.space()
	if strings.HasPrefix(p.src[p.pos:], tok) {
		p.pos += len(tok)
		return true
	}
	return false
}

func (p *parser) want(tok string) error {
	if !p.consume(tok) {
		return p.errorf("want %q", tok)
	}
	return nil
}

func (p *parser) term() (Expr, error) {
	p.space()
	if p.eof() {
		return nil, p.errorf("want a string or a parameter name")
	}
	var x Expr
	if p.src[p.pos] == '"' {
		s, err := p.str()
		if err != nil {
			return nil, err
		}
		x = litExpr{s}
	} else {
		name := p.ident()
		if name == "" {
			return nil, p.errorf("want a string or a parameter name")
		}
		x = refExpr{name}
	}
	for p.consume(".") {
		switch method := p.ident(); method {
		case "lower", "upper":
			if err := p.want("("); err != nil {
				return nil, err
			}
			if err := p.want(")"); err != nil {
				return nil, err
			}
			if method == "lower" {
				x = lowerExpr{x}
			} else {
				x = upperExpr{x}
			}
		case "split":
			if err := p.want("("); err != nil {
				return nil, err
			}
			sep, err := p.str()
			if err != nil {
				return nil, err
			}
			if sep == "" {
				return nil, p.errorf("split needs a separator")
			}
			if err := p.want(")"); err != nil {
				return nil, err
			}
			if err := p.want("["); err != nil {
				return nil, err
			}
			i, err := p.int()
			if err != nil {
				return nil, err
			}
			if err := p.want("]"); err != nil {
				return nil, err
			}
			x = splitExpr{x, sep, i}
		case "replace":
			if err := p.want("("); err != nil {
				return nil, err
			}
			old, err := p.str()
			if err != nil {
				return nil, err
			}
			if err := p.want(","); err != nil {
				return nil, err
			}
			repl, err := p.str()
			if err != nil {
				return nil, err
			}
			if err := p.want(")"); err != nil {
				return nil, err
			}
			x = replaceExpr{x, old, repl}
		default:
			return nil, p.errorf("unknown method %q", method)
		}
	}
	return x, nil
}

func (p *parser) ident() string {
	p.space()
	start := p.pos
	for !p.eof() {
		c := rune(p.src[p.pos])
		if c == '_' || c < 0x80 && (unicode.IsLetter(c) || p.pos > start && unicode.IsDigit(c)) {
			p.pos++
			continue
		}
		break
	}
	return p.src[start:p.pos]
}

// str reads a double-quoted string with Go's escapes, which is what
// strconv.Quote (and so Expr.String) writes and Starlark reads.
func (p *parser) str() (string, error) {
	p.space()
	if p.eof() || p.src[p.pos] != '"' {
		return "", p.errorf("want a string")
	}
	end := p.pos + 1
	for ; end < len(p.src); end++ {
		if p.src[end] == '\\' {
			end++
			continue
		}
		if p.src[end] == '"' {
			break
		}
	}
	if end >= len(p.src) {
		return "", p.errorf("unterminated string")
	}
	s, err := strconv.Unquote(p.src[p.pos : end+1])
	if err != nil {
		return "", p.errorf("malformed string: %v", err)
	}
	p.pos = end + 1
	return s, nil
}

func (p *parser) int() (int, error) {
	p.space()
	start := p.pos
	if !p.eof() && p.src[p.pos] == '-' {
		p.pos++
	}
	for !p.eof() && p.src[p.pos] >= '0' && p.src[p.pos] <= '9' {
		p.pos++
	}
	i, err := strconv.Atoi(p.src[start:p.pos])
	if err != nil {
		p.pos = start
		return 0, p.errorf("want an index")
	}
	return i, nil
}

// Rename returns e with every reference to a key of names replaced by
// its value: the generated code's identifier for a parameter may differ
// from the parameter's name.
func Rename(e Expr, names map[string]string) Expr {
	switch x := e.(type) {
	case refExpr:
		if n, ok := names[x.name]; ok {
			return refExpr{n}
		}
		return x
	case lowerExpr:
		return lowerExpr{Rename(x.x, names)}
	case upperExpr:
		return upperExpr{Rename(x.x, names)}
	case splitExpr:
		return splitExpr{Rename(x.x, names), x.sep, x.i}
	case replaceExpr:
		return replaceExpr{Rename(x.x, names), x.old, x.new}
	case concatExpr:
		parts := make([]Expr, len(x.parts))
		for i, p := range x.parts {
			parts[i] = Rename(p, names)
		}
		return concatExpr{parts}
	}
	return e
}
