package cli

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/crystallize-dev/crystallize/internal/pipeline"
	"github.com/crystallize-dev/crystallize/internal/source"
)

// Values of --progress.
const (
	progressAuto = "auto"
	progressBar  = "bar"
	progressJSON = "json"
	progressNone = "none"
)

// progressInterval is how often a pass reports progress as JSON: often
// enough for a CI log to show a run is alive, rarely enough that a long
// run's log stays short.
const progressInterval = 500 * time.Millisecond

// mineProgress reports how a mining run advances, pass by pass: reading
// the corpus (traces, bytes, their rates and the time left) and building
// candidates (repeats looked at of those that may be). On a terminal it
// draws a bar per pass on stderr; with --progress json it writes one JSON
// object per line on stderr (see progressEvent); otherwise nothing.
type mineProgress struct {
	e     *env
	mode  string
	now   func() time.Time
	pass  string
	start time.Time
	last  time.Time
	bar   *progressbar.ProgressBar
	// reread counts the traces read a second time, to build candidates.
	rereadTraces int
	// final is the last event of the current pass, written when it ends.
	final *progressEvent
}

// progressEvent is one line of --progress json. Event is "progress" while
// a pass runs and "done" when it ends. Pass is "read" (decoding the corpus)
// or "build" (building candidates, which may read examples again). Fields
// that do not apply to a pass are left out.
type progressEvent struct {
	Event          string  `json:"event"`
	Pass           string  `json:"pass"`
	Traces         int     `json:"traces,omitempty"`
	Bytes          int64   `json:"bytes,omitempty"`
	TotalBytes     int64   `json:"total_bytes,omitempty"`
	Done           int     `json:"done,omitempty"`
	Total          int     `json:"total,omitempty"`
	TracesReread   int     `json:"traces_reread,omitempty"`
	ElapsedSeconds float64 `json:"elapsed_seconds"`
	TracesPerSec   float64 `json:"traces_per_second,omitempty"`
	BytesPerSec    float64 `json:"bytes_per_second,omitempty"`
	ETASeconds     float64 `json:"eta_seconds,omitempty"`
}

func newMineProgress(e *env, f *mineFlags) *mineProgress {
	mode := f.progress
	if mode == progressAuto || mode == "" {
		mode = progressNone
		if e.stderrTTY && !f.asJSON {
			mode = progressBar
		}
	}
	if mode == progressBar && !e.stderrTTY {
		// A bar drawn into a file or a pipe is noise.
		mode = progressNone
	}
	return &mineProgress{e: e, mode: mode, now: time.Now}
}

// begin starts pass name, ending the one before.
func (p *mineProgress) begin(name string) {
	if p.pass == name {
		return
	}
	p.end()
	p.pass, p.start, p.last = name, p.now(), time.Time{}
}

// end finishes the current pass: its bar is cleared and its last event
// is written as "done".
func (p *mineProgress) end() {
	if p.pass == "" {
		return
	}
	if p.bar != nil {
		p.bar.Finish()
		p.bar = nil
	}
	if p.final != nil && p.mode == progressJSON {
		ev := *p.final
		ev.Event = "done"
		ev.ETASeconds = 0
		if ev.Pass == "build" {
			ev.TracesReread = p.rereadTraces
		}
		p.emit(ev)
	}
	p.final, p.pass = nil, ""
}

func (p *mineProgress) emit(ev progressEvent) {
	b, err := json.Marshal(ev)
	if err != nil {
		return
	}
	fmt.Fprintf(p.e.stderr, "%s\n", b)
}

// due reports whether a JSON event is due now.
func (p *mineProgress) due(t time.Time) bool {
	if t.Sub(p.last) < progressInterval {
		return false
	}
	p.last = t
	return true
}

// scan reports the first pass over the corpus.
func (p *mineProgress) scan(sp source.ScanProgress) {
	if p.mode == progressNone {
		return
	}
	p.begin("read")
	t := p.now()
	el := t.Sub(p.start).Seconds()
	ev := progressEvent{Event: "progress", Pass: "read", Traces: sp.Traces, Bytes: sp.Bytes, TotalBytes: sp.TotalBytes, ElapsedSeconds: round3(el)}
	// Rates over less than a hundredth of a second say nothing.
	if el >= 0.01 {
		ev.TracesPerSec = round3(float64(sp.Traces) / el)
		ev.BytesPerSec = round3(float64(sp.Bytes) / el)
		if sp.Bytes > 0 {
			ev.ETASeconds = round3(el * float64(sp.TotalBytes-sp.Bytes) / float64(sp.Bytes))
		}
	}
	p.final = &ev
	switch p.mode {
	case progressJSON:
		if p.due(t) {
			p.emit(ev)
		}
	case progressBar:
		if sp.TotalBytes < 1<<20 {
			return // done before anyone could read a bar
		}
		if p.bar == nil {
			p.bar = progressbar.NewOptions64(sp.TotalBytes,
				progressbar.OptionSetWriter(p.e.stderr),
				progressbar.OptionShowBytes(true),
				progressbar.OptionSetPredictTime(true),
				progressbar.OptionClearOnFinish(),
				progressbar.OptionThrottle(100*time.Millisecond),
			)
		}
		p.bar.Describe(fmt.Sprintf("reading traces: %d (%.0f/s)", sp.Traces, ev.TracesPerSec))
		p.bar.Set64(sp.Bytes)
	}
}

// load reports a whole-corpus load, in source.Load's units of work.
func (p *mineProgress) load(done, total int) {
	if p.mode == progressNone {
		return
	}
	p.begin("read")
	t := p.now()
	el := t.Sub(p.start).Seconds()
	ev := progressEvent{Event: "progress", Pass: "read", Done: done, Total: total, ElapsedSeconds: round3(el)}
	if done > 0 {
		ev.ETASeconds = round3(el * float64(total-done) / float64(done))
	}
	p.final = &ev
	p.count("reading traces", done, total, ev, t)
}

// startBuild begins the pass that builds candidates.
func (p *mineProgress) startBuild() {
	if p.mode != progressNone {
		p.begin("build")
	}
}

// reread counts traces read again for the build.
func (p *mineProgress) reread(n int) { p.rereadTraces += n }

// build reports candidate building: done of total ranked repeats looked
// at.
func (p *mineProgress) build(done, total int) {
	if p.mode == progressNone {
		return
	}
	p.begin("build")
	t := p.now()
	el := t.Sub(p.start).Seconds()
	ev := progressEvent{Event: "progress", Pass: "build", Done: done, Total: total, TracesReread: p.rereadTraces, ElapsedSeconds: round3(el)}
	if done > 0 {
		ev.ETASeconds = round3(el * float64(total-done) / float64(done))
	}
	p.final = &ev
	p.count("building candidates", done, total, ev, t)
}

func (p *mineProgress) count(label string, done, total int, ev progressEvent, t time.Time) {
	switch p.mode {
	case progressJSON:
		if p.due(t) {
			p.emit(ev)
		}
	case progressBar:
		if total < 200 {
			return
		}
		if p.bar == nil {
			p.bar = progressbar.NewOptions(total,
				progressbar.OptionSetWriter(p.e.stderr),
				progressbar.OptionSetDescription(label),
				progressbar.OptionShowCount(),
				progressbar.OptionShowIts(),
				progressbar.OptionSetPredictTime(true),
				progressbar.OptionClearOnFinish(),
				progressbar.OptionThrottle(100*time.Millisecond),
			)
		}
		p.bar.Set(done)
	}
}

// finish ends the last pass.
func (p *mineProgress) finish() { p.end() }

// hooks are the pipeline's progress reports, drawn or written by p.
func (p *mineProgress) hooks() pipeline.Progress {
	return pipeline.Progress{Scan: p.scan, Load: p.load, StartBuild: p.startBuild, Build: p.build, Reread: p.reread, Done: p.finish}
}

func round3(v float64) float64 { return float64(int64(v*1000+0.5)) / 1000 }
