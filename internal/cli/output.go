package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// writeFiles writes every file or none: each is first written to a
// temporary file beside its destination, and only when all of them are
// complete are they renamed into place. A failure removes the temporary
// files, so an interrupted run never leaves a half-written workflow or
// report that a later step could mistake for a finished one.
func writeFiles(files map[string][]byte) error {
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	temps := make(map[string]string, len(paths))
	cleanup := func() {
		for _, t := range temps {
			os.Remove(t)
		}
	}
	for _, p := range paths {
		dir := filepath.Dir(p)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			cleanup()
			return fmt.Errorf("writing %s: %w", p, err)
		}
		f, err := os.CreateTemp(dir, "."+filepath.Base(p)+".tmp*")
		if err != nil {
			cleanup()
			return fmt.Errorf("writing %s: %w", p, err)
		}
		temps[p] = f.Name()
		_, werr := f.Write(files[p])
		cerr := f.Close()
		if werr == nil {
			werr = cerr
		}
		if werr == nil {
			werr = os.Chmod(f.Name(), 0o644)
		}
		if werr != nil {
			cleanup()
			return fmt.Errorf("writing %s: %w", p, werr)
		}
	}
	for _, p := range paths {
		if err := os.Rename(temps[p], p); err != nil {
			cleanup()
			return fmt.Errorf("writing %s: %w", p, err)
		}
		delete(temps, p)
	}
	return nil
}

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
