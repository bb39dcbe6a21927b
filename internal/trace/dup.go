package trace

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Duplicates returns an error for every object member of data whose name
// an earlier member of the same object has, at the line of the duplicate
// and with its JSON path: `a.json:7: $.actions[0].name: duplicate key
// "name"`. data must be valid JSON (Duplicates stops at the first syntax
// error without reporting it); line is the line data starts on, as for
// ParseJSON.
//
// encoding/json, and so every decoder built on it, keeps the last of two
// members with the same name. A reviewer reading the first one would then
// approve a different value from the one that is used; inputs that are
// reviewed or run (traces, plans, bundle manifests) refuse them instead.
func Duplicates(data []byte, file string, line int) ErrorList {
	if line <= 0 {
		line = 1
	}
	type frame struct {
		obj       bool
		path      string // the path of the object or array itself
		key       string // the current member's name
		index     int    // the current element's index
		expectKey bool
		seen      map[string]bool
	}
	var (
		stack []*frame
		errs  ErrorList
	)
	// here returns the path of the value about to be read.
	here := func() string {
		if len(stack) == 0 {
			return "$"
		}
		top := stack[len(stack)-1]
		if top.obj {
			return Member(top.path, top.key)
		}
		return Element(top.path, top.index)
	}
	// done moves the innermost frame past the value just read.
	done := func() {
		if len(stack) == 0 {
			return
		}
		top := stack[len(stack)-1]
		if top.obj {
			top.expectKey = true
		} else {
			top.index++
		}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	for {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		if n := len(stack); n > 0 && stack[n-1].obj && stack[n-1].expectKey {
			top := stack[n-1]
			if k, ok := tok.(string); ok {
				if top.seen[k] {
					end := int(dec.InputOffset())
					errs = append(errs, &Error{
						File: file,
						Line: line + bytes.Count(data[:min(end, len(data))], []byte{'\n'}),
						Path: Member(top.path, k),
						Msg:  fmt.Sprintf("duplicate key %q", k),
					})
				}
				top.seen[k] = true
				top.key, top.expectKey = k, false
				continue
			}
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &frame{obj: true, path: here(), expectKey: true, seen: map[string]bool{}})
		case json.Delim('['):
			stack = append(stack, &frame{path: here()})
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
			done()
		default:
			done()
		}
	}
	return errs
}
