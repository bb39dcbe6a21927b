package tracetest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"
)

// agentFile is one file of a written corpus and the sessions it holds.
type agentFile struct {
	path     string // relative to the corpus directory, slash-separated
	sessions []int
}

// otelSessionsPerFile is how many sessions one OTLP/JSON file holds: a
// collector's file exporter appends every batch it receives to one file.
const otelSessionsPerFile = 50

// Files returns the paths, relative to the directory and slash-separated,
// that Write(dir, f) creates, in session order.
func (c *AgentCorpus) Files(f AgentFormat) []string {
	files, _ := c.files(f)
	out := make([]string, len(files))
	for i, af := range files {
		out[i] = af.path
	}
	return out
}

func (c *AgentCorpus) files(f AgentFormat) ([]agentFile, error) {
	var out []agentFile
	switch f {
	case FormatClaude:
		for i, p := range c.plans {
			out = append(out, agentFile{path: claudeProjectDir(p.cwd) + "/" + p.id + ".jsonl", sessions: []int{i}})
		}
	case FormatCodex:
		for i, p := range c.plans {
			t := p.start
			out = append(out, agentFile{path: fmt.Sprintf("%s/rollout-%s-%s.jsonl", t.Format("2006/01/02"), t.Format("2006-01-02T15-04-05"), p.id), sessions: []int{i}})
		}
	case FormatOTel:
		for i := 0; i < len(c.plans); i += otelSessionsPerFile {
			af := agentFile{path: fmt.Sprintf("traces-%04d.jsonl", i/otelSessionsPerFile+1)}
			for j := i; j < min(i+otelSessionsPerFile, len(c.plans)); j++ {
				af.sessions = append(af.sessions, j)
			}
			out = append(out, af)
		}
	default:
		return nil, fmt.Errorf("unknown agent format %q (want claude, codex or otel)", f)
	}
	return out, nil
}

// Write writes every session in format f under dir, creating directories
// as needed and replacing files of the same name; Files lists what it
// writes. The manifest is not written: a miner reading dir would try to
// read it as a session. Files are written in parallel, each session built
// when its file is written; the bytes do not depend on the order.
func (c *AgentCorpus) Write(dir string, f AgentFormat) error {
	files, err := c.files(f)
	if err != nil {
		return err
	}
	errs := make([]error, len(files))
	workers := min(runtime.GOMAXPROCS(0), max(len(files), 1))
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			var buf bytes.Buffer
			for k := w; k < len(files); k += workers {
				buf.Reset()
				for _, i := range files[k].sessions {
					c.encode(&buf, f, i)
				}
				path := filepath.Join(dir, filepath.FromSlash(files[k].path))
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					errs[k] = err
					continue
				}
				errs[k] = os.WriteFile(path, buf.Bytes(), 0o644)
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return fmt.Errorf("writing %s sessions: %w", f, err)
		}
	}
	return nil
}

// encode appends session i in format f to buf, one JSON record per line.
func (c *AgentCorpus) encode(buf *bytes.Buffer, f AgentFormat, i int) {
	s := c.build(i)
	switch f {
	case FormatClaude:
		writeClaude(buf, s)
	case FormatCodex:
		writeCodex(buf, s)
	case FormatOTel:
		writeOTel(buf, s)
	}
}

// jsonLine appends v to buf as one line of compact JSON. HTML characters
// are not escaped, as agents do not escape them. The values are the
// generator's own structs and maps, which always encode.
func jsonLine(buf *bytes.Buffer, v any) {
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(fmt.Sprintf("tracetest: encoding %T: %v", v, err))
	}
}

// jsonString returns v as compact JSON text, for formats that nest JSON in
// a string (Codex arguments, OpenTelemetry attributes).
func jsonString(v any) string {
	var buf bytes.Buffer
	jsonLine(&buf, v)
	return string(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
}

// stamp formats t as agents do: RFC 3339 in UTC with milliseconds.
func stamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// derivedUUID returns the k-th UUID of a session's records: a function of
// the session id and k, so a session's records have the same ids however
// often it is written.
func derivedUUID(session string, k int) string {
	h := fnv.New64a()
	h.Write([]byte(session))
	x := h.Sum64()
	hi := splitmix(x ^ splitmix(uint64(k)+1))
	lo := splitmix(hi ^ uint64(k))
	hi = hi&^0xf000 | 0x4000
	lo = lo&^(0xc<<60) | 0x8<<60
	return fmt.Sprintf("%08x-%04x-%04x-%04x-%012x", hi>>32, hi>>16&0xffff, hi&0xffff, lo>>48, lo&0xffffffffffff)
}
