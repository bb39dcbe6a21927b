package source

import (
	"strings"
	"unicode/utf8"

	"github.com/crystallize-dev/crystallize/internal/trace"
)

// maxPromptRunes bounds each logged prompt: it describes a procedure in a
// skill's description and a report, where a pasted document is noise.
const maxPromptRunes = 500

// promptLog collects a session's prompts with their times.
type promptLog struct {
	list []any
}

// add logs text typed at ts. A prompt with no time cannot be placed
// among the actions and is left out.
func (l *promptLog) add(ts, text string) {
	text = strings.TrimSpace(text)
	if ts == "" || text == "" {
		return
	}
	if utf8.RuneCountInString(text) > maxPromptRunes {
		r := []rune(text)
		text = string(r[:maxPromptRunes]) + "…"
	}
	l.list = append(l.list, map[string]any{"timestamp": ts, "text": text})
}

// put records the log in meta, when there is one.
func (l *promptLog) put(meta map[string]any) {
	if len(l.list) > 0 {
		meta[trace.MetaPrompts] = l.list
	}
}
