package toolexec

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/crystallize-dev/crystallize/internal/runconfig"
	"github.com/crystallize-dev/crystallize/internal/stepvalue"
)

// ErrEdit is returned by fs.edit when a replacement does not apply: its
// old text is not in the file, or is there more than once and the edit
// does not replace every occurrence. The file is then left as it was.
var ErrEdit = errors.New("edit does not apply")

// FileMutation is the mutation the receipt of a file-writing built-in
// records, the word normalization gives agents' edits of the same kind,
// so that a run's side effects compare equal to the traces'.
var FileMutation = map[string]string{runconfig.ToolFSWrite: "write", runconfig.ToolFSEdit: "edit"}

// textEdit is one exact replacement of fs.edit.
type textEdit struct {
	old, new   string
	replaceAll bool
}

// editArgs reads fs.edit's arguments: path and either old and new (and
// replace_all) for one replacement, or edits, a list of {old, new,
// replace_all?}, for several.
func editArgs(args map[string]any) ([]textEdit, error) {
	_, hasList := args["edits"]
	_, hasOld := args["old"]
	_, hasNew := args["new"]
	switch {
	case hasList && (hasOld || hasNew):
		return nil, fmt.Errorf("%w: give either edits or old and new, not both", ErrEdit)
	case !hasList:
		e, err := editOf(args, "")
		if err != nil {
			return nil, err
		}
		return []textEdit{e}, nil
	}
	list, ok := args["edits"].([]any)
	if !ok || len(list) == 0 {
		return nil, fmt.Errorf("%w: edits is %s, want a non-empty list of {old, new, replace_all?}", ErrEdit, describeValue(args["edits"]))
	}
	edits := make([]textEdit, len(list))
	for i, el := range list {
		m, ok := el.(map[string]any)
		where := fmt.Sprintf("edits[%d].", i)
		if !ok {
			return nil, fmt.Errorf("%w: edits[%d] is %s, want {old, new, replace_all?}", ErrEdit, i, describeValue(el))
		}
		for k := range m {
			if k != "old" && k != "new" && k != "replace_all" {
				return nil, fmt.Errorf("%w: %s%s is not old, new or replace_all", ErrEdit, where, k)
			}
		}
		e, err := editOf(m, where)
		if err != nil {
			return nil, err
		}
		edits[i] = e
	}
	return edits, nil
}

// editOf reads one replacement from m, whose keys are named with the
// prefix where in messages.
func editOf(m map[string]any, where string) (textEdit, error) {
	old, ok := m["old"].(string)
	if !ok || old == "" {
		return textEdit{}, fmt.Errorf("%w: %sold is %s, want the non-empty text to replace", ErrEdit, where, describeValue(m["old"]))
	}
	nw, ok := m["new"].(string)
	if !ok {
		return textEdit{}, fmt.Errorf("%w: %snew is %s, want the text to put in its place", ErrEdit, where, describeValue(m["new"]))
	}
	e := textEdit{old: old, new: nw}
	if v, present := m["replace_all"]; present {
		b, ok := v.(bool)
		if !ok {
			return textEdit{}, fmt.Errorf("%w: %sreplace_all is %s, want true or false", ErrEdit, where, describeValue(v))
		}
		e.replaceAll = b
	}
	return e, nil
}

// describeValue names a bad argument's value in a message.
func describeValue(v any) string {
	switch v := v.(type) {
	case nil:
		return "missing"
	case string:
		return fmt.Sprintf("%q", excerpt(v))
	}
	return fmt.Sprintf("a %T", v)
}

// excerpt shortens text quoted in a message to its first 60
// characters; %q then shows its line breaks as \n.
func excerpt(s string) string {
	if utf8.RuneCountInString(s) > 60 {
		return string([]rune(s)[:60]) + "…"
	}
	return s
}

// applyEdits applies edits to content in order, each to the result of
// the ones before, as an agent's successive edits would. p names the
// file in messages. It fails on the first edit that does not apply.
func applyEdits(content string, edits []textEdit, p string) (string, error) {
	for i, e := range edits {
		n := strings.Count(content, e.old)
		which := "the edit"
		if len(edits) > 1 {
			which = fmt.Sprintf("edits[%d]", i)
		}
		switch {
		case n == 0:
			return "", fmt.Errorf("%w: old_not_found: %s of %s: the old text %q is not in the file; nothing was written", ErrEdit, which, p, excerpt(e.old))
		case n > 1 && !e.replaceAll:
			return "", fmt.Errorf("%w: old_ambiguous: %s of %s: the old text %q occurs %d times; give more context, or replace_all = True to replace each; nothing was written", ErrEdit, which, p, excerpt(e.old), n)
		case e.replaceAll:
			content = strings.ReplaceAll(content, e.old, e.new)
		default:
			content = strings.Replace(content, e.old, e.new, 1)
		}
	}
	return content, nil
}

// fsEdit is the built-in fs.edit(path=…, old=…, new=…, replace_all=…) or
// fs.edit(path=…, edits=[…]), named name: exact replacements in an
// existing file, all or none. Every edit is applied to the file's text in
// memory first; the file is written, through the road fs.write takes,
// only when each applied, so a failed edit leaves the file untouched.
// It returns {"path", "bytes"}, as fs.write does. Confinement is
// fs.write's: the workspace roots, the protected set (checked before
// the call, as for every file built-in) and the run's pinned root.
func (h *Executor) fsEdit(name string, args map[string]any) (any, error) {
	p := stepvalue.ArgString(args["path"])
	chk := h.takeChecked(p)
	edits, err := editArgs(args)
	if err != nil {
		return nil, err
	}
	c, rel, err := h.openRoot(p, chk)
	if err != nil {
		return nil, err
	}
	info, err := regularFile(c.root, rel, p)
	if err != nil {
		return nil, err
	}
	if info == nil {
		return nil, fmt.Errorf("%w: no_such_file: %s does not exist; fs.edit changes an existing file (fs.write creates one)", ErrEdit, p)
	}
	edit := func() (any, error) {
		read, err := readFileIn(c.root, rel, p)
		if err != nil {
			return nil, err
		}
		before := read.(map[string]any)["content"].(string)
		after, err := applyEdits(before, edits, p)
		if err != nil {
			return nil, err
		}
		if len(after) > MaxFileBytes {
			return nil, fmt.Errorf("%w: file_too_large: the edits make %s %d bytes, more than %d, the most fs.edit writes", ErrTooLarge, p, len(after), MaxFileBytes)
		}
		return writeFileIn(c.root, rel, p, after)
	}
	if c.writesInline(rel, info) {
		return edit()
	}
	return h.withTimeout(name, edit)
}
