package trace

import (
	"sort"
	"strconv"
	"strings"
)

// Error is a problem in input, located as precisely as the input allows:
// the file, the 1-based line (and byte column) when known, and the JSON
// path of the offending value. Its text reads
//
//	runs/a.json: $.actions[2].side_effects: expected array, got string
//	runs/a.jsonl:3: $.actions: missing required field
//	runs/b.json:14:7: invalid JSON: invalid character '}' looking for beginning of value
//
// A zero Line leaves out the line, a zero Col the column, and an empty Path
// the path, so that each message carries exactly what is known.
type Error struct {
	File string // file name as the user should see it; may be empty
	Line int    // 1-based line, or 0 when the whole file is one document
	Col  int    // 1-based byte column, set only for syntax errors
	Path string // JSON path such as $.actions[2].side_effects, or ""
	Msg  string // what is wrong, lowercase, without trailing punctuation
}

// Error formats e as file:line:col: path: msg, leaving out unknown parts.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		if b.Len() > 0 {
			b.WriteByte(':')
		}
		b.WriteString(strconv.Itoa(e.Line))
		if e.Col > 0 {
			b.WriteByte(':')
			b.WriteString(strconv.Itoa(e.Col))
		}
	}
	if b.Len() > 0 {
		b.WriteString(": ")
	}
	if e.Path != "" {
		b.WriteString(e.Path)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// ErrorList is every problem found in one pass over some input. Decoders
// return it (as an error) instead of stopping at the first problem, so a
// user fixes a file in one round instead of one error per run.
//
// Use errors.As(err, &list) to get the entries; because ErrorList also
// implements Unwrap() []error, errors.As(err, &e) with e of type *Error
// finds the first entry.
type ErrorList []*Error

// Error returns the entries' messages, one per line.
func (l ErrorList) Error() string {
	switch len(l) {
	case 0:
		return "no errors"
	case 1:
		return l[0].Error()
	}
	var b strings.Builder
	for i, e := range l {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(e.Error())
	}
	return b.String()
}

// Sort orders the list by file, line and column. The sort is stable, so
// errors at the same position (all errors of one JSON document share its
// file and line) keep the order in which they were found, which is the
// order of the document.
func (l ErrorList) Sort() {
	sort.SliceStable(l, func(i, j int) bool {
		a, b := l[i], l[j]
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Col < b.Col
	})
}

// Err returns l as an error, or nil when l is empty. Returning a nil
// ErrorList as an error would give a non-nil interface; Err avoids that.
func (l ErrorList) Err() error {
	if len(l) == 0 {
		return nil
	}
	return l
}

// Unwrap returns the entries, so that errors.Is and errors.As see them.
func (l ErrorList) Unwrap() []error {
	errs := make([]error, len(l))
	for i, e := range l {
		errs[i] = e
	}
	return errs
}
