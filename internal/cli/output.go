package cli

import (
	"os"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

func isTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }

// progress shows a bar on stderr for long work, only when stderr is a
// terminal: logs and CI output stay clean.
type progress struct {
	bar   *progressbar.ProgressBar
	label string
	e     *env
	on    bool
}

func newProgress(e *env, enabled bool, label string) *progress {
	return &progress{e: e, label: label, on: enabled && e.stderrTTY}
}

func (p *progress) update(done, total int) {
	if !p.on || total < 200 {
		return
	}
	if p.bar == nil {
		p.bar = progressbar.NewOptions(total,
			progressbar.OptionSetWriter(p.e.stderr),
			progressbar.OptionSetDescription(p.label),
			progressbar.OptionShowCount(),
			progressbar.OptionClearOnFinish(),
			progressbar.OptionThrottle(100_000_000),
		)
	}
	p.bar.Set(done)
}

func (p *progress) done() {
	if p.bar != nil {
		p.bar.Finish()
	}
}
