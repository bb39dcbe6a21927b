package source

import (
	"fmt"

	"github.com/crystallize-dev/crystallize/internal/trace"
)

// textDuplicates returns an error for every object member of the JSON text
// s whose name an earlier member of the same object has, s being the string
// at path of file (at line) that an adapter parses as JSON: a tool call's
// arguments or output, a model's messages. Each error is at path and names
// the member inside the text, as `rollout.jsonl:4:
// $.payload.arguments: JSON text $.path: duplicate key "path"`.
//
// encoding/json keeps the last of two members with the same name, while a
// reviewer reading the trace may read the first, so the formats refuse them
// inside these texts as trace.Duplicates does in the documents themselves.
// s must be valid JSON.
func textDuplicates(s, file string, line int, path string) trace.ErrorList {
	dups := trace.Duplicates([]byte(s), "", 0)
	if len(dups) == 0 {
		return nil
	}
	out := make(trace.ErrorList, len(dups))
	for i, e := range dups {
		out[i] = &trace.Error{File: file, Line: line, Path: path, Msg: fmt.Sprintf("JSON text %s: %s", e.Path, e.Msg)}
	}
	return out
}
