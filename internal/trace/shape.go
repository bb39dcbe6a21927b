package trace

import (
	"bytes"
	"encoding/json"
)

// A Shape says which parts of a JSON document its reader uses, so that
// ParseShaped can check the rest without building it. A session log
// record carries much that an importer never reads (a tool's output
// repeated in structured form, the model's reasoning, request ids), and
// building it as maps and strings only for the garbage collector to take
// back was most of the cost of importing a log.
//
// A nil *Shape keeps a value whole. A Shape applies to a value of the JSON
// type it describes (Members and Only to an object, Elems to an array);
// a value of another type is kept whole, so that a reader that checks
// types sees what ParseJSON would have given it.
type Shape struct {
	// Members are the shapes of an object's members by name; a nil
	// entry keeps the member whole.
	Members map[string]*Shape
	// Only drops the members of an object that Members does not name:
	// they are checked but are not in the map.
	Only bool
	// Elems is the shape of each element of an array.
	Elems *Shape
	// Stub replaces a string, object or array by the empty value of its
	// type ("", an empty map, an empty slice), for a member whose reader
	// looks only at its presence or type. Numbers, booleans and null are
	// kept, being small.
	Stub bool
	// Unique marks a string or number that seldom repeats (an id, a
	// timestamp, a token count): it is not looked up in or entered into
	// the Parser's table, where it would cost a lookup and an entry and
	// push out the values that do repeat.
	Unique bool
}

// ParseShaped parses data as Parse does, except that the parts of the
// document that s leaves out are not built (see Shape). What it reports
// about data is exactly what Parse reports: the same syntax errors and
// the same duplicate members, wherever they are.
func (p *Parser) ParseShaped(data []byte, file string, line int, s *Shape) (any, error) {
	var v any
	if !p.readWhole(data, func() (ok bool) { v, ok = p.shaped(0, s); return ok }) {
		return parseStd(data, file, line)
	}
	if p.dup {
		return nil, Duplicates(data, file, line)
	}
	return v, nil
}

// shaped parses the value at p.pos with shape s.
func (p *Parser) shaped(depth int, s *Shape) (any, bool) {
	if s == nil {
		return p.value(depth)
	}
	p.skipSpace()
	if p.pos >= len(p.data) {
		return nil, false
	}
	switch p.data[p.pos] {
	case '{':
		if s.Stub {
			return map[string]any{}, p.skip(depth)
		}
		if s.Members == nil && !s.Only {
			return p.object(depth + 1)
		}
		return p.shapedObject(depth+1, s)
	case '[':
		if s.Stub {
			return []any{}, p.skip(depth)
		}
		if s.Elems == nil {
			return p.array(depth + 1)
		}
		return p.shapedArray(depth+1, s.Elems)
	case '"':
		if s.Stub {
			_, ok := p.str()
			return "", ok
		}
		if s.Unique {
			text, ok := p.str()
			if !ok {
				return nil, false
			}
			return string(text), true
		}
	default:
		if c := p.data[p.pos]; s.Unique && (c == '-' || '0' <= c && c <= '9') {
			end, ok := p.numberEnd()
			if !ok {
				return nil, false
			}
			lit := p.data[p.pos:end]
			p.pos = end
			return json.Number(lit), true
		}
	}
	return p.value(depth)
}

// shapedObject is object with the members' shapes. The names of all
// its members are collected on p.skipped by objectMembers, which finds a
// name that comes twice, as Parse finds it; the members it keeps go in
// the map.
func (p *Parser) shapedObject(depth int, s *Shape) (any, bool) {
	if depth > maxDepth {
		return nil, false
	}
	base := len(p.members)
	ok := p.objectMembers(func(name []byte) bool {
		child, named := s.Members[string(name)]
		if !named && s.Only {
			return p.skip(depth)
		}
		key := p.key(name)
		v, ok := p.shaped(depth, child)
		p.members = append(p.members, member{key, v})
		return ok
	})
	if !ok {
		return nil, false
	}
	members := p.members[base:]
	m := make(map[string]any, len(members))
	for _, e := range members {
		m[e.key] = e.val
	}
	clear(members)
	p.members = p.members[:base]
	return m, true
}

// shapedArray is array with the elements' shape.
func (p *Parser) shapedArray(depth int, elem *Shape) (any, bool) {
	if depth > maxDepth {
		return nil, false
	}
	base := len(p.elems)
	if !p.arrayElems(func(int) bool {
		v, ok := p.shaped(depth, elem)
		p.elems = append(p.elems, v)
		return ok
	}) {
		return nil, false
	}
	elems := p.elems[base:]
	a := make([]any, len(elems))
	copy(a, elems)
	clear(elems)
	p.elems = p.elems[:base]
	return a, true
}

// skippedName returns the name k of a dropped member, read from the
// string at data[start:]: a slice of the document when the string has no
// escapes (k is then that slice), otherwise a copy, since k is in p.buf
// and the next string overwrites it.
func (p *Parser) skippedName(start int, k []byte) []byte {
	if len(k) > 0 && &k[0] == &p.data[start+1] {
		return k
	}
	if len(k) == 0 {
		return nil
	}
	return bytes.Clone(k)
}

// skip checks the value at p.pos, as value does, without building it;
// depth is the number of arrays and objects around it.
func (p *Parser) skip(depth int) bool {
	p.skipSpace()
	if p.pos >= len(p.data) {
		return false
	}
	switch c := p.data[p.pos]; c {
	case '{':
		return p.skipObject(depth + 1)
	case '[':
		return p.skipArray(depth + 1)
	case '"':
		_, ok := p.str()
		return ok
	case 't':
		return p.literal("true")
	case 'f':
		return p.literal("false")
	case 'n':
		return p.literal("null")
	default:
		if c == '-' || '0' <= c && c <= '9' {
			end, ok := p.numberEnd()
			p.pos = end
			return ok
		}
		return false
	}
}

func (p *Parser) skipObject(depth int) bool {
	return depth <= maxDepth && p.objectMembers(func([]byte) bool { return p.skip(depth) })
}

func (p *Parser) skipArray(depth int) bool {
	return depth <= maxDepth && p.arrayElems(func(int) bool { return p.skip(depth) })
}

// objectMembers reads the object whose '{' is at p.pos, calling member
// for each member with its name once p.pos is at its value; member reads
// the value and returns false to stop. The names are collected on
// p.skipped to tell whether one comes twice, which sets p.dup. It reports
// false when the object is not valid JSON or member stopped. Skipping a
// value (skipObject), reading one member by member (skimObject) and
// reading it with a shape (shapedObject) share it.
func (p *Parser) objectMembers(member func(name []byte) bool) bool {
	p.pos++ // {
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] == '}' {
		p.pos++
		return true
	}
	base := len(p.skipped)
	for {
		p.skipSpace()
		if p.pos >= len(p.data) || p.data[p.pos] != '"' {
			return false
		}
		start := p.pos
		k, ok := p.str()
		if !ok {
			return false
		}
		name := p.skippedName(start, k)
		p.skipped = append(p.skipped, name)
		p.skipSpace()
		if p.pos >= len(p.data) || p.data[p.pos] != ':' {
			return false
		}
		p.pos++
		if !member(name) {
			return false
		}
		p.skipSpace()
		if p.pos >= len(p.data) {
			return false
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
		case '}':
			p.pos++
			p.dup = p.dup || hasDuplicate(p.skipped[base:])
			p.skipped = p.skipped[:base]
			return true
		default:
			return false
		}
	}
}

// arrayElems reads the array whose '[' is at p.pos, calling elem for each
// element with its index once p.pos is at it (after white space); elem
// reads the element and returns false to stop.
func (p *Parser) arrayElems(elem func(i int) bool) bool {
	p.pos++ // [
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] == ']' {
		p.pos++
		return true
	}
	for i := 0; ; i++ {
		p.skipSpace()
		if !elem(i) {
			return false
		}
		p.skipSpace()
		if p.pos >= len(p.data) {
			return false
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
		case ']':
			p.pos++
			return true
		default:
			return false
		}
	}
}

// hasDuplicate reports whether two of names are equal: by comparing each
// pair for the few names an object usually has, with a set beyond.
func hasDuplicate(names [][]byte) bool {
	if len(names) <= 16 {
		for i := 1; i < len(names); i++ {
			for _, prev := range names[:i] {
				if bytes.Equal(names[i], prev) {
					return true
				}
			}
		}
		return false
	}
	seen := make(map[string]struct{}, len(names))
	for _, n := range names {
		if _, ok := seen[string(n)]; ok {
			return true
		}
		seen[string(n)] = struct{}{}
	}
	return false
}
