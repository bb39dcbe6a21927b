package toon

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// DecodeOptions configures Decode. The zero value is the spec's default:
// two-space indentation, strict mode.
type DecodeOptions struct {
	// Indent is the number of spaces per level; 0 means 2.
	Indent int
	// NonStrict turns off the strict-mode checks of §14 (the package
	// comment lists what non-strict mode does instead). It is a negative
	// flag so that the zero value is strict, as the spec's default is.
	NonStrict bool
}

// maxErrors bounds the errors one Decode collects: past that many, the
// document is not worth reading further.
const maxErrors = 100

// Decode parses a TOON document into Object, []any, string, json.Number,
// bool and nil. The error, when not nil, is an ErrorList.
//
// The decoder is a recursive descent over lines: a lexical pass splits the
// input, drops comment lines and measures depths, then each construct
// reads the lines at its content depth and stops at the first shallower
// one. Every line is looked at a constant number of times, so decoding is
// linear in the input apart from duplicate-key checks, which use a map
// per object.
func Decode(data []byte, opts DecodeOptions) (any, error) {
	if opts.Indent <= 0 {
		opts.Indent = 2
	}
	d := &decoder{strict: !opts.NonStrict, indent: opts.Indent}
	d.split(data)
	v := d.root()
	if len(d.errs) > 0 {
		return nil, d.errs.sorted()
	}
	return v, nil
}

// line is one non-comment line of the document.
type line struct {
	num   int    // 1-based line number in the input
	depth int    // indentation level
	text  string // content after the indentation, trailing spaces removed
	blank bool
}

type decoder struct {
	strict  bool
	indent  int
	lines   []line
	pos     int // index of the first line not yet taken
	spans   int // array spans open: their first item has been taken (§12)
	errs    ErrorList
	stopped bool // a fatal error was found; unwind
}

// errorf records a problem after which the structure is still readable.
func (d *decoder) errorf(num int, format string, args ...any) {
	d.errs = append(d.errs, &Error{Line: num, Msg: fmt.Sprintf(format, args...)})
	if len(d.errs) >= maxErrors {
		d.stopped = true
	}
}

// fatalf records a problem that leaves the rest of the document without a
// reliable structure, and stops decoding.
func (d *decoder) fatalf(num int, format string, args ...any) {
	d.errorf(num, format, args...)
	d.stopped = true
}

// split is the lexical pre-pass: UTF-8 check, line splitting with CR
// removal (§12), comment removal (§5.1) and depth computation.
func (d *decoder) split(data []byte) {
	if !utf8.Valid(data) {
		if d.strict {
			bad := 0
			for bad < len(data) {
				r, size := utf8.DecodeRune(data[bad:])
				if r == utf8.RuneError && size <= 1 {
					break
				}
				bad += size
			}
			d.errorf(1+bytes.Count(data[:bad], []byte("\n")), "invalid UTF-8")
		}
		data = bytes.ToValidUTF8(data, []byte("\uFFFD"))
	}
	for i, s := range strings.Split(string(data), "\n") {
		num := i + 1
		s = strings.TrimSuffix(s, "\r")
		rest := strings.TrimLeft(s, " ")
		spaces := len(s) - len(rest)
		if strings.HasPrefix(rest, "#") {
			continue
		}
		if strings.Trim(rest, " \t") == "" {
			d.lines = append(d.lines, line{num: num, blank: true})
			continue
		}
		if rest[0] == '\t' {
			if d.strict {
				d.errorf(num, "tab in indentation")
			}
			rest = strings.TrimLeft(rest, " \t")
			spaces = strings.Count(s[:len(s)-len(rest)], " ")
		}
		if d.strict && spaces%d.indent != 0 {
			d.errorf(num, "indentation of %d spaces is not a multiple of %d", spaces, d.indent)
		}
		d.lines = append(d.lines, line{num: num, depth: spaces / d.indent, text: strings.TrimRight(rest, " ")})
	}
}

// peek returns the index of the next non-blank line not yet taken, or -1.
func (d *decoder) peek() int {
	for i := d.pos; i < len(d.lines); i++ {
		if !d.lines[i].blank {
			return i
		}
	}
	return -1
}

// take consumes lines up to and including i. Blank lines skipped while an
// array span is open lie between two lines of that span, which strict mode
// forbids (§12): the line taken belongs to the innermost open construct,
// and the span's first line was taken before.
func (d *decoder) take(i int) line {
	if d.spans > 0 && d.strict {
		for j := d.pos; j < i; j++ {
			d.errorf(d.lines[j].num, "blank line inside array")
		}
	}
	d.pos = i + 1
	return d.lines[i]
}

// root decides the root form (§5).
func (d *decoder) root() any {
	i := d.peek()
	if i < 0 {
		return Object{}
	}
	first := d.lines[i]
	if first.depth != 0 {
		d.fatalf(first.num, "first line is indented")
		return nil
	}
	nonBlank := 0
	for _, l := range d.lines {
		if !l.blank {
			nonBlank++
		}
	}
	if first.text == "[]" {
		d.take(i)
		if j := d.peek(); j >= 0 && d.strict {
			d.fatalf(d.lines[j].num, "unexpected content after the root array")
		}
		return []any{}
	}
	h, rest, isHdr, herr := parseHeader(first.text)
	valid := isHdr && herr == ""
	if valid && h.key == nil {
		d.take(i)
		d.checkFields(h, first.num)
		v := d.arrayValue(h, rest, 0, first.num)
		if j := d.peek(); j >= 0 && d.strict && !d.stopped {
			d.fatalf(d.lines[j].num, "unexpected content after the root array")
		}
		return v
	}
	if nonBlank == 1 {
		if !valid && firstUnquoted(first.text, ':') < 0 {
			d.take(i)
			return d.token(first.text, first.num)
		}
	}
	o := d.object(0, Object{})
	if j := d.peek(); j >= 0 && !d.stopped {
		// Only reachable in non-strict mode, after skipped lines.
		d.take(j)
	}
	return o
}

// object reads the fields at depth into o, which may already hold the
// first field of a list-item object.
func (d *decoder) object(depth int, o Object) Object {
	seen := make(map[string]int, len(o))
	for i, m := range o {
		seen[m.Key] = i
	}
	for !d.stopped {
		i := d.peek()
		if i < 0 || d.lines[i].depth < depth {
			break
		}
		ln := d.take(i)
		if ln.depth > depth {
			if d.strict {
				d.fatalf(ln.num, "unexpected indentation: line is at depth %d, its scope's content is at depth %d", ln.depth, depth)
			}
			continue
		}
		key, v, ok := d.fieldLine(ln.text, ln.num, depth)
		if !ok {
			continue
		}
		o = d.add(o, seen, key, v, ln.num)
	}
	return o
}

// add appends a member, applying §14.3 to duplicate keys: an error in
// strict mode, last write wins (in the first key's position) otherwise.
func (d *decoder) add(o Object, seen map[string]int, key string, v any, num int) Object {
	if j, dup := seen[key]; dup {
		if d.strict {
			d.errorf(num, "duplicate key %q", key)
		}
		o[j].Value = v
		return o
	}
	seen[key] = len(o)
	return append(o, Member{key, v})
}

// fieldLine decodes a key-value or keyed header line standing at depth.
// ok is false when the line was rejected.
func (d *decoder) fieldLine(text string, num, depth int) (key string, v any, ok bool) {
	h, rest, isHdr, herr := parseHeader(text)
	if isHdr {
		if herr == "" && h.key == nil {
			herr = "array header without a key is valid only at the document root"
			if h.fields == nil {
				herr += " or after a list item's \"- \""
			}
		}
		if herr == "" {
			d.checkFields(h, num)
			return *h.key, d.arrayValue(h, rest, depth, num), true
		}
		if d.strict {
			d.fatalf(num, "%s", herr)
			return "", nil, false
		}
		// Non-strict: read the line as key: value with a literal key.
	}
	c := firstUnquoted(text, ':')
	if c < 0 {
		if d.strict {
			d.fatalf(num, "missing \":\" after key")
		}
		return "", nil, false
	}
	key = d.key(strings.Trim(text[:c], " "), num)
	switch val := strings.Trim(text[c+1:], " "); val {
	case "":
		return key, d.object(depth+1, Object{}), true
	case "[]":
		return key, []any{}, true
	default:
		return key, d.token(val, num), true
	}
}

// key decodes a key token (§7.4): a quoted key is unescaped, anything else
// is taken literally.
func (d *decoder) key(tok string, num int) string {
	if !strings.HasPrefix(tok, `"`) {
		return tok
	}
	k, end, err := parseQuoted(tok, 0)
	if err != "" {
		d.errorf(num, "%s", err)
		return tok
	}
	if end != len(tok) {
		d.errorf(num, "unexpected characters after quoted key")
	}
	return k
}

// arrayValue reads the value a header opens; the header stands at depth
// and its rows or items are at depth+1.
func (d *decoder) arrayValue(h *header, rest string, depth, num int) any {
	if h.fields != nil && strings.Trim(rest, " ") != "" && d.strict {
		d.fatalf(num, "unexpected content after tabular header")
		return nil
	}
	switch {
	case h.keyed:
		return d.keyedBody(h, depth, num)
	case h.fields != nil:
		return d.tableBody(h, depth, num)
	}
	if vals := strings.Trim(rest, " "); vals != "" {
		toks := splitDelimited(vals, h.delim)
		out := make([]any, len(toks))
		for i, t := range toks {
			out[i] = d.token(t, num)
		}
		d.count(num, h.n, len(out), "values")
		return out
	}
	return d.listBody(h, depth, num)
}

// count checks a declared length (§14.1).
func (d *decoder) count(num, want, got int, what string) {
	if want != got && d.strict && !d.stopped {
		d.errorf(num, "array declares %d %s, found %d", want, what, got)
	}
}

// openSpan marks an array span open once its first item is taken (§12);
// closeSpan closes it when the array's body ends.
func (d *decoder) openSpan(opened *bool) {
	if !*opened {
		*opened = true
		d.spans++
	}
}

func (d *decoder) closeSpan(opened bool) {
	if opened {
		d.spans--
	}
}

// nextChild returns the next line at depth+1 for a tabular, keyed or list
// body without taking it, or false at the end of the body. Deeper lines
// belong to no scope: an error in strict mode, skipped otherwise.
func (d *decoder) nextChild(depth int) (int, bool) {
	for !d.stopped {
		i := d.peek()
		if i < 0 || d.lines[i].depth <= depth {
			return -1, false
		}
		if d.lines[i].depth == depth+1 {
			return i, true
		}
		ln := d.take(i)
		if d.strict {
			d.fatalf(ln.num, "unexpected indentation: line is at depth %d, its scope's content is at depth %d", ln.depth, depth+1)
		}
	}
	return -1, false
}

// tableBody reads the rows of a tabular array (§9.3).
func (d *decoder) tableBody(h *header, depth, num int) any {
	rows := []any{}
	opened := false
	defer func() { d.closeSpan(opened) }()
	for {
		i, ok := d.nextChild(depth)
		if !ok {
			break
		}
		text := d.lines[i].text
		// §9.3 disambiguation: a colon before any delimiter makes a
		// key-value line, which ends the rows.
		if c := firstUnquoted(text, ':'); c >= 0 {
			if dl := firstUnquoted(text, h.delim); dl < 0 || c < dl {
				break
			}
		}
		ln := d.take(i)
		d.openSpan(&opened)
		rows = append(rows, d.row(h, splitDelimited(text, h.delim), ln.num))
	}
	d.count(num, h.n, len(rows), "rows")
	return rows
}

// keyedBody reads the entry rows of a keyed tabular object (§9.5).
func (d *decoder) keyedBody(h *header, depth, num int) any {
	o := Object{}
	seen := map[string]int{}
	rows := 0
	opened := false
	defer func() { d.closeSpan(opened) }()
	for {
		i, ok := d.nextChild(depth)
		if !ok {
			break
		}
		ln := d.take(i)
		d.openSpan(&opened)
		rows++
		c := firstUnquoted(ln.text, ':')
		if c < 0 {
			if d.strict {
				d.errorf(ln.num, "entry row without \":\" after its key")
			}
			continue
		}
		key := d.key(strings.Trim(ln.text[:c], " "), ln.num)
		var cells []string
		if rest := strings.Trim(ln.text[c+1:], " "); rest != "" {
			cells = splitDelimited(rest, h.delim)
		}
		o = d.add(o, seen, key, d.row(h, cells, ln.num), ln.num)
	}
	d.count(num, h.n, rows, "entries")
	return o
}

// row builds one tabular element from its cells, checking the width.
func (d *decoder) row(h *header, toks []string, num int) Object {
	if len(toks) != h.leaves && d.strict {
		d.errorf(num, "row has %d values, header declares %d fields", len(toks), h.leaves)
	}
	cells := make([]any, len(toks))
	for i, t := range toks {
		cells[i] = d.token(t, num)
	}
	o, _ := d.build(h.fields, cells, num)
	return o
}

// build walks the field tree depth-first, taking one cell per leaf;
// missing cells are null (non-strict mode only reaches that).
func (d *decoder) build(fields []field, cells []any, num int) (Object, []any) {
	o := make(Object, 0, len(fields))
	seen := make(map[string]int, len(fields))
	for _, f := range fields {
		var v any
		if f.sub != nil {
			v, cells = d.build(f.sub, cells, num)
		} else if len(cells) > 0 {
			v, cells = cells[0], cells[1:]
		}
		if j, dup := seen[f.name]; dup {
			o[j].Value = v // reported once, at the header, by checkFields
			continue
		}
		seen[f.name] = len(o)
		o = append(o, Member{f.name, v})
	}
	return o, cells
}

// checkFields reports duplicate field names within one brace group
// (§9.3, §14.3).
func (d *decoder) checkFields(h *header, num int) {
	if !d.strict {
		return
	}
	var walk func([]field)
	walk = func(fields []field) {
		seen := map[string]bool{}
		for _, f := range fields {
			if seen[f.name] {
				d.errorf(num, "duplicate field %q", f.name)
			}
			seen[f.name] = true
			walk(f.sub)
		}
	}
	walk(h.fields)
}

// listBody reads the items of an expanded list (§9.4).
func (d *decoder) listBody(h *header, depth, num int) any {
	items := []any{}
	opened := false
	defer func() { d.closeSpan(opened) }()
	for {
		i, ok := d.nextChild(depth)
		if !ok {
			break
		}
		ln := d.take(i)
		if ln.text != "-" && !strings.HasPrefix(ln.text, "- ") {
			if d.strict {
				d.fatalf(ln.num, "expected list item \"- \"")
			}
			continue
		}
		d.openSpan(&opened)
		items = append(items, d.item(ln, depth+1))
	}
	d.count(num, h.n, len(items), "items")
	return items
}

// item decodes one list item standing at depth (§9.4, §10): its first
// field, if it is an object, stands at depth+1, and so do its other
// fields.
func (d *decoder) item(ln line, depth int) any {
	rest := ""
	if ln.text != "-" {
		rest = strings.Trim(ln.text[2:], " ")
	}
	switch rest {
	case "":
		return Object{}
	case "[]":
		return []any{}
	}
	h, hrest, isHdr, herr := parseHeader(rest)
	if isHdr && herr == "" && h.key == nil && h.fields == nil {
		return d.arrayValue(h, hrest, depth, ln.num)
	}
	if isHdr || firstUnquoted(rest, ':') >= 0 {
		o := Object{}
		if key, v, ok := d.fieldLine(rest, ln.num, depth+1); ok {
			o = append(o, Member{key, v})
		}
		return d.object(depth+1, o)
	}
	return d.token(rest, ln.num)
}

// token decodes a primitive token (§4), already trimmed.
func (d *decoder) token(s string, num int) any {
	if strings.HasPrefix(s, `"`) {
		str, end, err := parseQuoted(s, 0)
		if err != "" {
			d.errorf(num, "%s", err)
			return s
		}
		if end != len(s) {
			d.errorf(num, "unexpected characters after closing quote")
		}
		return str
	}
	switch s {
	case "true":
		return true
	case "false":
		return false
	case "null":
		return nil
	}
	if isNumberToken(s) && !leadingZero(s) {
		return json.Number(canonicalNumber(s))
	}
	return s
}

// leadingZero reports a forbidden leading zero such as 05 or -007 (§4).
func leadingZero(s string) bool {
	s = strings.TrimPrefix(s, "-")
	return len(s) > 1 && s[0] == '0' && s[1] >= '0' && s[1] <= '9'
}

// header is a parsed array header (§6).
type header struct {
	key    *string // nil for a keyless header
	n      int
	keyed  bool
	delim  byte
	fields []field
	leaves int
}

// parseHeader parses text as an array header. isHeader reports whether the
// line claims to be one – a key (quoted, or matching the unquoted-key
// pattern, or none) directly followed by "[" – and err, when not empty,
// why it is malformed. Lines that do not claim to be headers are key-value
// or scalar lines (§5.2).
func parseHeader(text string) (h *header, rest string, isHeader bool, err string) {
	h = &header{delim: ','}
	i := 0
	if strings.HasPrefix(text, `"`) {
		k, end, qerr := parseQuoted(text, 0)
		if qerr != "" || end >= len(text) || text[end] != '[' {
			return nil, "", false, ""
		}
		h.key, i = &k, end
	} else {
		b := strings.IndexByte(text, '[')
		if b < 0 {
			return nil, "", false, ""
		}
		if k := text[:b]; k != "" {
			if !isIdent(k) {
				return nil, "", false, ""
			}
			h.key = &k
		}
		i = b
	}
	i++ // "["
	j := i
	for j < len(text) && text[j] >= '0' && text[j] <= '9' {
		j++
	}
	length := text[i:j]
	switch {
	case length == "":
		return h, "", true, "missing array length in header"
	case len(length) > 1 && length[0] == '0':
		return h, "", true, fmt.Sprintf("array length %s has a leading zero", length)
	}
	n, cerr := strconv.Atoi(length)
	if cerr != nil {
		return h, "", true, fmt.Sprintf("array length %s is too large", length)
	}
	h.n, i = n, j
	if i < len(text) && text[i] == ':' {
		h.keyed = true
		i++
	}
	if i < len(text) && (text[i] == '\t' || text[i] == '|') {
		h.delim = text[i]
		i++
	}
	if i >= len(text) || text[i] != ']' {
		return h, "", true, "malformed bracket segment in header"
	}
	i++
	if i < len(text) && text[i] == '{' {
		var ferr string
		h.fields, i, ferr = parseFields(text, i, h.delim)
		if ferr != "" {
			return h, "", true, ferr
		}
		h.leaves = leafCount(h.fields)
	}
	switch {
	case i >= len(text):
		return h, "", true, "missing \":\" after array header"
	case text[i] != ':':
		return h, "", true, "unexpected content before \":\" in array header"
	case h.keyed && h.fields == nil:
		return h, "", true, "keyed header without a field list"
	}
	return h, text[i+1:], true, ""
}

// parseFields parses a fields segment starting at text[i] == '{' with the
// active delimiter delim, recursively for nested groups (§6, §9.3).
func parseFields(text string, i int, delim byte) ([]field, int, string) {
	i++ // "{"
	var fields []field
	for {
		for i < len(text) && text[i] == ' ' {
			i++
		}
		var f field
		if i < len(text) && text[i] == '"' {
			name, end, err := parseQuoted(text, i)
			if err != "" {
				return nil, i, err
			}
			f.name, i = name, end
		} else {
			j := i
			for j < len(text) && text[j] != delim && !strings.ContainsRune("{}:[]\",|\t", rune(text[j])) {
				j++
			}
			if j < len(text) && text[j] != delim && strings.IndexByte(",|\t", text[j]) >= 0 {
				return nil, j, "header delimiter mismatch: fields must be separated by the bracket's delimiter"
			}
			f.name = strings.Trim(text[i:j], " ")
			if f.name == "" {
				if j < len(text) && text[j] == '}' && fields == nil {
					return nil, j, "empty field list in header"
				}
				return nil, j, "empty field name in header"
			}
			i = j
		}
		for i < len(text) && text[i] == ' ' {
			i++
		}
		if i < len(text) && text[i] == '{' {
			var err string
			if f.sub, i, err = parseFields(text, i, delim); err != "" {
				return nil, i, err
			}
		}
		fields = append(fields, f)
		switch {
		case i >= len(text):
			return nil, i, "unmatched \"{\" in header"
		case text[i] == delim:
			i++
		case text[i] == '}':
			return fields, i + 1, ""
		case strings.IndexByte(",|\t", text[i]) >= 0:
			return nil, i, "header delimiter mismatch: fields must be separated by the bracket's delimiter"
		default:
			return nil, i, "malformed field list in header"
		}
	}
}

func leafCount(fields []field) int {
	n := 0
	for _, f := range fields {
		if f.sub != nil {
			n += leafCount(f.sub)
		} else {
			n++
		}
	}
	return n
}

// parseQuoted unescapes the quoted string starting at s[i] == '"' (§7.1)
// and returns it with the index after the closing quote.
func parseQuoted(s string, i int) (string, int, string) {
	var b strings.Builder
	for j := i + 1; j < len(s); j++ {
		c := s[j]
		switch c {
		case '"':
			return b.String(), j + 1, ""
		case '\\':
			if j+1 >= len(s) {
				return "", j, "unterminated string"
			}
			j++
			switch s[j] {
			case '\\':
				b.WriteByte('\\')
			case '"':
				b.WriteByte('"')
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			case 'u':
				if j+4 >= len(s) || !isHex(s[j+1:j+5]) {
					return "", j, "invalid escape: \\u needs four hex digits"
				}
				r, _ := strconv.ParseUint(s[j+1:j+5], 16, 32)
				if r >= 0xD800 && r <= 0xDFFF {
					return "", j, fmt.Sprintf("invalid escape \\u%s: surrogate code point", s[j+1:j+5])
				}
				b.WriteRune(rune(r))
				j += 4
			default:
				r, _ := utf8.DecodeRuneInString(s[j:])
				return "", j, fmt.Sprintf("invalid escape \\%c", r)
			}
		default:
			b.WriteByte(c)
		}
	}
	return "", len(s), "unterminated string"
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// firstUnquoted returns the index of the first c outside double quotes,
// or -1. Inside quotes a backslash escapes the next byte.
func firstUnquoted(s string, c byte) int {
	in := false
	for i := 0; i < len(s); i++ {
		switch {
		case in && s[i] == '\\':
			i++
		case s[i] == '"':
			in = !in
		case !in && s[i] == c:
			return i
		}
	}
	return -1
}

// splitDelimited splits s on unquoted delim, trimming spaces around each
// token (Appendix B.3).
func splitDelimited(s string, delim byte) []string {
	var toks []string
	in, start := false, 0
	for i := 0; i < len(s); i++ {
		switch {
		case in && s[i] == '\\':
			i++
		case s[i] == '"':
			in = !in
		case !in && s[i] == delim:
			toks = append(toks, strings.Trim(s[start:i], " "))
			start = i + 1
		}
	}
	return append(toks, strings.Trim(s[start:], " "))
}
