package source

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"

	"github.com/crystallize-dev/crystallize/internal/trace"
)

// writeTree creates files under dir; a name ending in "/" is a directory.
func writeTree(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if strings.HasSuffix(name, "/") {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

const (
	okTrace = `{"id": %q, "actions": [{"kind": "tool_call", "name": "ticket.read", "parameters": {"ticket_id": "OPS-1"}}]}`
	record  = `{"_type": "workflow_run", "id": "run_1", "stages": [{"id": "s", "node_id": "plan", "started_at": "2025-01-01T00:00:02Z"}],
		"tool_recordings": [{"tool_use_id": "t", "tool_name": "git.fetch", "timestamp": "2025-01-01T00:00:01Z", "args": {"remote": "origin"}}]}`
)

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	jsonlLine1 := `{"actions": [{"kind": "model_call", "name": "summarize", "capabilities": ["b", "a", "b"]}]}`
	jsonlLine3 := `{"id": "nightly_b", "actions": [{"kind": "tool_call", "name": "x"}]}`
	files := map[string]string{
		"a.json":          `{"actions": [{"kind": "tool_call", "name": "ticket.read"}]}`,
		"sub/b.jsonl":     jsonlLine1 + "\r\n   \n" + jsonlLine3, // blank line 2, no final newline
		"run/record.json": record,
		"README.md":       "not a trace",
		"notes.txt":       "{",
		"empty/":          "",
	}
	writeTree(t, dir, files)

	var progress [][2]int
	res, err := Load(context.Background(), dir, Options{Progress: func(done, total int) {
		progress = append(progress, [2]int{done, total})
	}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Files != 3 || len(res.Skipped) != 0 {
		t.Errorf("Files = %d, Skipped = %v; want 3 files, none skipped", res.Files, res.Skipped)
	}
	if diff := cmp.Diff([][2]int{{1, 3}, {2, 3}, {3, 3}}, progress); diff != "" {
		t.Errorf("progress calls (-want +got):\n%s", diff)
	}

	type summary struct {
		ID, Source, Hash string
		Origin           trace.Origin
		Signatures       []string
	}
	var got []summary
	for _, tr := range res.Traces {
		s := summary{ID: tr.ID, Source: tr.Source, Hash: tr.SourceHash, Origin: tr.Origin}
		for i := range tr.Actions {
			s.Signatures = append(s.Signatures, tr.Actions[i].Signature())
		}
		got = append(got, s)
	}
	want := []summary{
		{ID: "a", Source: "a.json", Hash: trace.HashBytes([]byte(files["a.json"])), Origin: trace.Origin{Path: "a.json"},
			Signatures: []string{"tool_call:ticket.read:"}},
		{ID: "run_1", Source: "run/record.json", Hash: trace.HashBytes([]byte(record)), Origin: trace.Origin{Path: "run/record.json"},
			Signatures: []string{"tool_call:git.fetch:remote", "stage:plan:"}},
		{ID: "sub/b_L1", Source: "sub/b.jsonl:1", Hash: trace.HashBytes([]byte(jsonlLine1)), Origin: trace.Origin{Path: "sub/b.jsonl", Line: 1},
			Signatures: []string{"model_call:summarize:"}},
		{ID: "nightly_b", Source: "sub/b.jsonl:3", Hash: trace.HashBytes([]byte(jsonlLine3)), Origin: trace.Origin{Path: "sub/b.jsonl", Line: 3},
			Signatures: []string{"tool_call:x:"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Load traces (-want +got):\n%s", diff)
	}

	// Every trace is normalized.
	summarize := res.Traces[2].Actions[0]
	if diff := cmp.Diff([]string{"a", "b"}, summarize.Capabilities); diff != "" {
		t.Errorf("capabilities not normalized (-want +got):\n%s", diff)
	}
	if summarize.Cost == nil || summarize.Cost.ModelCalls != 1 || res.Traces[2].Usage == nil || res.Traces[2].Usage.ModelCalls != 1 {
		t.Errorf("model call not normalized: cost %+v usage %+v", summarize.Cost, res.Traces[2].Usage)
	}
	if p := res.Traces[1].Actions[0].Parameters; !cmp.Equal(p, map[string]any{"remote": "origin"}) {
		t.Errorf("run record tool parameters = %v", p)
	}
}

// TestLoadFixedOrder checks that output order follows sorted paths and
// not the walk or the workers: "a.json" sorts before "a/b.json" although
// a directory walk visits "a/" first.
func TestLoadFixedOrder(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{}
	var want []string
	for i := range 40 {
		name := fmt.Sprintf("t%02d.json", i)
		files[name] = fmt.Sprintf(okTrace, fmt.Sprintf("id%02d", i))
		want = append(want, name)
	}
	files["a/b.json"] = fmt.Sprintf(okTrace, "nested")
	files["a.json"] = fmt.Sprintf(okTrace, "top")
	want = append([]string{"a.json", "a/b.json"}, want...)
	writeTree(t, dir, files)
	for range 3 {
		res, err := Load(context.Background(), dir, Options{})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, tr := range res.Traces {
			got = append(got, tr.Source)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("order (-want +got):\n%s", diff)
		}
	}
}

func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		setup func(t *testing.T, dir string) // extra setup, e.g. symlinks
		opts  Options
		want  string // with DIR standing for the directory
	}{
		{
			name:  "malformed JSON",
			files: map[string]string{"a.json": "{\n  \"actions\": [\n    {\"kind\": \"k\" \"name\": \"n\"}\n  ]\n}"},
			want:  "DIR/a.json:3:18: invalid JSON: invalid character '\"' after object key:value pair",
		},
		{
			name:  "not an object",
			files: map[string]string{"a.json": `[1, 2]`},
			want:  "DIR/a.json: $: expected object, got array",
		},
		{
			name:  "neither format",
			files: map[string]string{"a.json": `{"steps": []}`},
			want:  `DIR/a.json: $: neither a crystallization trace (no "actions"), a workflow run record (no "stages") nor a composition report (no "run" and "calls"), and the file is no session log of claude-code, codex, otel, otel-logs, gemini-cli, gemini-cli-chat (by its first records)`,
		},
		{
			name:  "nested type error",
			files: map[string]string{"runs/a.json": `{"actions": [{"kind": "k", "name": "a"}, {"kind": "k", "name": "b"}, {"kind": "k", "name": "c", "side_effects": "x"}]}`},
			want:  "DIR/runs/a.json: $.actions[2].side_effects: expected array, got string",
		},
		{
			name:  "bad JSON Lines record",
			files: map[string]string{"a.jsonl": fmt.Sprintf(okTrace, "x") + "\n" + `{"actions": 3}` + "\n"},
			want:  "DIR/a.jsonl:2: $.actions: expected array, got number",
		},
		{
			name:  "JSON Lines syntax error column",
			files: map[string]string{"a.jsonl": "\n\n" + `{"actions": [}`},
			want:  "DIR/a.jsonl:3:14: invalid JSON: invalid character '}' looking for beginning of value",
		},
		{
			name:  "run record type errors",
			files: map[string]string{"r.json": `{"stages": [{"node_id": 1}]}`},
			want:  "DIR/r.json: $.stages[0].node_id: expected string, got number",
		},
		{
			name:  "duplicate trace ids",
			files: map[string]string{"a.json": fmt.Sprintf(okTrace, "same"), "b.jsonl": "\n" + fmt.Sprintf(okTrace, "same")},
			want:  `DIR/b.jsonl:2: $.id: duplicate trace id "same" (first in DIR/a.json)`,
		},
		{
			name:  "derived id collides with a declared one",
			files: map[string]string{"x/a.json": `{"actions": []}`, "y.json": `{"id": "x/a", "actions": []}`},
			want:  `DIR/y.json: $.id: duplicate trace id "x/a" (first in DIR/x/a.json)`,
		},
		{
			name:  "oversized file",
			files: map[string]string{"big.json": `{"actions": [], "padding": "` + strings.Repeat("x", 200) + `"}`},
			opts:  Options{MaxFileBytes: 100},
			want:  "DIR/big.json: file is 230 bytes, over the 100-byte limit",
		},
		{
			name:  "empty directory",
			files: map[string]string{"sub/": "", "README.md": "x"},
			want:  "no *.json or *.jsonl trace files under DIR",
		},
		{
			name:  "only blank JSON Lines",
			files: map[string]string{"a.jsonl": "\n  \n"},
			want:  "no traces in the *.json or *.jsonl files under DIR",
		},
		{
			name:  "symlink escaping the directory",
			files: map[string]string{"ok.json": fmt.Sprintf(okTrace, "ok")},
			setup: func(t *testing.T, dir string) {
				outside := filepath.Join(filepath.Dir(dir), "outside.json")
				writeFile(t, outside, fmt.Sprintf(okTrace, "secret"))
				symlink(t, outside, filepath.Join(dir, "evil.json"))
			},
			want: "DIR/evil.json: symlink target PARENT/outside.json is outside DIR",
		},
		{
			name:  "relative symlink escaping the directory",
			files: map[string]string{"ok.json": fmt.Sprintf(okTrace, "ok")},
			setup: func(t *testing.T, dir string) {
				writeFile(t, filepath.Join(filepath.Dir(dir), "outside.json"), fmt.Sprintf(okTrace, "secret"))
				symlink(t, "../../outside.json", filepath.Join(dir, "sub", "evil.json"))
			},
			want: "DIR/sub/evil.json: symlink target PARENT/outside.json is outside DIR",
		},
		{
			name:  "directory symlink",
			files: map[string]string{"ok.json": fmt.Sprintf(okTrace, "ok"), "real/b.json": fmt.Sprintf(okTrace, "b")},
			setup: func(t *testing.T, dir string) { symlink(t, "real", filepath.Join(dir, "loop")) },
			want:  "DIR/loop: symlink to a directory, not followed",
		},
		{
			name:  "broken symlink",
			files: map[string]string{"ok.json": fmt.Sprintf(okTrace, "ok")},
			setup: func(t *testing.T, dir string) { symlink(t, "missing.json", filepath.Join(dir, "gone.json")) },
			want:  "DIR/gone.json: broken symlink: no such file or directory",
		},
		{
			name:  "unsupported version",
			files: map[string]string{"v.json": `{"version": 9, "actions": []}`},
			want:  "DIR/v.json: $.version: unsupported trace version 9",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "runs")
			writeTree(t, dir, tt.files)
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if tt.setup != nil {
				tt.setup(t, dir)
			}
			res, err := Load(context.Background(), dir, tt.opts)
			if err == nil {
				t.Fatalf("Load = %d traces, want error", len(res.Traces))
			}
			want := strings.NewReplacer("DIR", dir, "PARENT", filepath.Dir(dir)).Replace(tt.want)
			if got := err.Error(); got != want {
				t.Errorf("Load error:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

func writeFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Skipf("symlinks unavailable: %v", err)
	}
}

func TestLoadDirectory(t *testing.T) {
	base := t.TempDir()
	missing := filepath.Join(base, "nope")
	_, err := Load(context.Background(), missing, Options{})
	if err == nil || err.Error() != "trace directory "+missing+" does not exist" || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Load(missing) = %v, want a does-not-exist error matching fs.ErrNotExist", err)
	}
	// One trace file is read as if it were the only file of its
	// directory; another file is refused.
	file := filepath.Join(base, "a.json")
	writeFile(t, file, fmt.Sprintf(okTrace, "a"))
	if res, err := Load(context.Background(), file, Options{}); err != nil || len(res.Traces) != 1 || res.Traces[0].Source != "a.json" {
		t.Errorf("Load(file) = %v, %v", res, err)
	}
	other := filepath.Join(base, "notes.txt")
	writeFile(t, other, "x")
	if _, err := Load(context.Background(), other, Options{}); err == nil || err.Error() != "trace directory "+other+" is neither a directory nor a *.json or *.jsonl file" {
		t.Errorf("Load(notes.txt) = %v", err)
	}

	// A directory named through a symlink is followed, and files inside
	// its target are inside.
	real := filepath.Join(base, "real")
	writeFile(t, filepath.Join(real, "t.json"), fmt.Sprintf(okTrace, "t"))
	symlink(t, "t.json", filepath.Join(real, "alias.json.link"))
	link := filepath.Join(base, "link")
	symlink(t, real, link)
	res, err := Load(context.Background(), link, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Traces) != 1 || res.Traces[0].Source != "t.json" {
		t.Errorf("Load(symlinked dir) = %v", res.Traces)
	}

	// A symlink inside the directory to a trace inside it is read.
	symlink(t, "t.json", filepath.Join(real, "again.json"))
	_, err = Load(context.Background(), real, Options{})
	want := `REAL/t.json: $.id: duplicate trace id "t" (first in REAL/again.json)`
	if err == nil || err.Error() != strings.ReplaceAll(want, "REAL", real) {
		t.Errorf("Load with inner symlink = %v, want %s", err, want)
	}
}

// TestLoadReportsEveryBadFile checks that one load reports every problem
// of every file, sorted by file and line.
func TestLoadReportsEveryBadFile(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"a.json":      fmt.Sprintf(okTrace, "a"),
		"b.json":      `{"actions": [{"kind": 1, "name": 2}]}`,
		"c/d.jsonl":   fmt.Sprintf(okTrace, "d1") + "\n{oops\n" + fmt.Sprintf(okTrace, "a") + "\n[]\n",
		"e.json":      `{"stages": "none"}`,
		"z.json":      "",
		"ok/f.jsonl":  fmt.Sprintf(okTrace, "f"),
		"notes/x.txt": "ignored",
	})
	_, err := Load(context.Background(), dir, Options{})
	var list trace.ErrorList
	if !errors.As(err, &list) {
		t.Fatalf("Load error %T %v, want a trace.ErrorList", err, err)
	}
	want := strings.ReplaceAll(strings.Join([]string{
		"DIR/b.json: $.actions[0].kind: expected string, got number",
		"DIR/b.json: $.actions[0].name: expected string, got number",
		"DIR/c/d.jsonl:2:2: invalid JSON: invalid character 'o' looking for beginning of object key string",
		`DIR/c/d.jsonl:3: $.id: duplicate trace id "a" (first in DIR/a.json)`,
		"DIR/c/d.jsonl:4: $: expected object, got array",
		"DIR/e.json: $.stages: expected array, got string",
		"DIR/z.json:1:1: invalid JSON: empty document",
	}, "\n"), "DIR", dir)
	if got := err.Error(); got != want {
		t.Errorf("Load error:\n%s\nwant:\n%s", got, want)
	}
}

func TestLoadSkipInvalid(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"a.json":    fmt.Sprintf(okTrace, "a"),
		"b.json":    `{"actions": [{"kind": 1, "name": 2}]}`,
		"c.jsonl":   fmt.Sprintf(okTrace, "c1") + "\n{oops\n" + fmt.Sprintf(okTrace, "a") + "\n",
		"d/e.json":  fmt.Sprintf(okTrace, "e"),
		"big.jsonl": strings.Repeat(" ", 2048),
	})
	symlink(t, "d", filepath.Join(dir, "dirlink"))
	res, err := Load(context.Background(), dir, Options{SkipInvalid: true, MaxFileBytes: 1024})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, tr := range res.Traces {
		ids = append(ids, tr.ID)
	}
	if diff := cmp.Diff([]string{"a", "c1", "e"}, ids); diff != "" {
		t.Errorf("traces (-want +got):\n%s", diff)
	}
	j := func(rel string) string { return filepath.Join(dir, rel) }
	want := []Skipped{
		{Path: j("b.json"), Errors: []string{
			j("b.json") + ": $.actions[0].kind: expected string, got number",
			j("b.json") + ": $.actions[0].name: expected string, got number",
		}},
		// The limit is per line for JSON Lines, and an oversized line is
		// an error even if blank: it is not read to find out.
		{Path: j("big.jsonl"), Line: 1, Errors: []string{j("big.jsonl") + ":1: line is 2048 bytes, over the 1024-byte limit"}},
		{Path: j("c.jsonl"), Line: 2, Errors: []string{j("c.jsonl") + ":2:2: invalid JSON: invalid character 'o' looking for beginning of object key string"}},
		{Path: j("c.jsonl"), Line: 3, Errors: []string{j("c.jsonl") + `:3: $.id: duplicate trace id "a" (first in ` + j("a.json") + ")"}},
		{Path: j("dirlink"), Errors: []string{j("dirlink") + ": symlink to a directory, not followed"}},
	}
	if diff := cmp.Diff(want, res.Skipped); diff != "" {
		t.Errorf("Skipped (-want +got):\n%s", diff)
	}
	if res.Files != 5 {
		t.Errorf("Files = %d, want 5", res.Files)
	}
}

func TestLoadCancel(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{}
	for i := range 50 {
		files[fmt.Sprintf("t%02d.json", i)] = fmt.Sprintf(okTrace, fmt.Sprint(i))
	}
	writeTree(t, dir, files)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Load(ctx, dir, Options{}); !errors.Is(err, context.Canceled) {
		t.Errorf("Load(cancelled) = %v, want context.Canceled", err)
	}

	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	calls := 0
	res, err := Load(ctx, dir, Options{Progress: func(done, total int) {
		calls++
		if done == 3 {
			cancel()
		}
	}})
	if !errors.Is(err, context.Canceled) || res != nil {
		t.Errorf("Load cancelled midway = %v, %v; want nil, context.Canceled", res, err)
	}
	if calls >= 50 {
		t.Errorf("progress called %d times after cancellation at 3", calls)
	}
}

// jsonlTrace is a small JSON Lines record with the id "L<n>", padded to
// about size bytes.
func jsonlTrace(n, size int) string {
	rec := fmt.Sprintf(`{"id": "L%d", "actions": [{"kind": "tool_call", "name": "step", "parameters": {"pad": ""}}]}`, n)
	return strings.Replace(rec, `"pad": ""`, `"pad": "`+strings.Repeat("p", max(0, size-len(rec)))+`"`, 1)
}

// TestLoadJSONLinesLimitPerLine checks that the size limit applies to each
// line of a JSON Lines file, not to the file, both for a file one worker
// reads and for one the feeder streams in chunks: a file far above the
// limit loads, and an oversized line is an error at its line, after which
// the next lines load.
func TestLoadJSONLinesLimitPerLine(t *testing.T) {
	const limit = 1024
	for _, lines := range []int{50, 3 * chunkBytes / 200} {
		t.Run(fmt.Sprint(lines, " lines"), func(t *testing.T) {
			dir := t.TempDir()
			var b strings.Builder
			var want []string
			for n := 1; n <= lines; n++ {
				if n == 7 {
					// Over the limit by its line ending only if it
					// were counted; it is not.
					b.WriteString(jsonlTrace(n, limit) + "\r\n")
					want = append(want, fmt.Sprintf("L%d", n))
					continue
				}
				if n == 20 {
					b.WriteString(strings.Repeat("x", 5*limit) + "\r\n")
					continue
				}
				b.WriteString(jsonlTrace(n, 200) + "\n")
				want = append(want, fmt.Sprintf("L%d", n))
			}
			writeFile(t, filepath.Join(dir, "big.jsonl"), b.String())
			if b.Len() < 10*limit {
				t.Fatalf("file is %d bytes, not far over the limit", b.Len())
			}

			_, err := Load(context.Background(), dir, Options{MaxFileBytes: limit})
			wantErr := filepath.Join(dir, "big.jsonl") + ":20: line is 5120 bytes, over the 1024-byte limit"
			if err == nil || err.Error() != wantErr {
				t.Fatalf("Load error = %v, want %s", err, wantErr)
			}
			res, err := Load(context.Background(), dir, Options{MaxFileBytes: limit, SkipInvalid: true})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, tr := range res.Traces {
				got = append(got, tr.ID)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("trace ids (-want +got):\n%s", diff)
			}
			wantSkipped := []Skipped{{Path: filepath.Join(dir, "big.jsonl"), Line: 20, Errors: []string{wantErr}}}
			if diff := cmp.Diff(wantSkipped, res.Skipped); diff != "" {
				t.Errorf("Skipped (-want +got):\n%s", diff)
			}
			if tr := res.Traces[6]; tr.Origin.Line != 7 || tr.SourceHash != trace.HashBytes([]byte(jsonlTrace(7, limit))) {
				t.Errorf("line 7: origin %v, hash %s; want line 7 hashed without its line ending", tr.Origin, tr.SourceHash)
			}
		})
	}
}

// TestLoadLargestLimit checks that the largest limit, which a caller may
// use to mean none, does not overflow into refusing everything.
func TestLoadLargestLimit(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"a.json":  fmt.Sprintf(okTrace, "a"),
		"b.jsonl": fmt.Sprintf(okTrace, "b1") + "\n" + fmt.Sprintf(okTrace, "b2"),
	})
	res, err := Load(context.Background(), dir, Options{MaxFileBytes: math.MaxInt64})
	if err != nil || len(res.Traces) != 3 {
		t.Fatalf("Load with MaxFileBytes = MaxInt64: %v, want 3 traces", err)
	}
}

// TestLoadJSONLinesOrder checks that the records of a JSON Lines file
// decoded by many workers come back in file order, then line order, with
// their line numbers and hashes, and that progress counts up to its total.
func TestLoadJSONLinesOrder(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(8)) // several workers even on one CPU
	dir := t.TempDir()
	type origin struct {
		Source, Hash string
	}
	var want []origin
	add := func(src, rec string) { want = append(want, origin{src, trace.HashBytes([]byte(rec))}) }

	a := fmt.Sprintf(okTrace, "a")
	writeFile(t, filepath.Join(dir, "a.json"), a)
	add("a.json", a)
	var b strings.Builder
	for n := 1; n <= 20000; n++ {
		rec := jsonlTrace(n, 60+n%200)
		switch {
		case n == 1:
			rec = "\ufeff" + rec // a byte order mark: hashed, not parsed
		case n%97 == 0:
			b.WriteString(" \t\r\n") // blank: skipped, but counted
			continue
		}
		b.WriteString(rec)
		if n%3 == 0 {
			b.WriteByte('\r')
		}
		b.WriteByte('\n')
		add(fmt.Sprintf("m.jsonl:%d", n), rec)
	}
	writeFile(t, filepath.Join(dir, "m.jsonl"), b.String())
	small := jsonlTrace(1, 10) + "\n" + jsonlTrace(2, 10)
	small = strings.ReplaceAll(small, `"L`, `"s`)
	writeFile(t, filepath.Join(dir, "n.jsonl"), small)
	add("n.jsonl:1", strings.Split(small, "\n")[0])
	add("n.jsonl:2", strings.Split(small, "\n")[1])
	z := fmt.Sprintf(okTrace, "z")
	writeFile(t, filepath.Join(dir, "z.json"), z)
	add("z.json", z)

	var progress [][2]int
	res, err := Load(context.Background(), dir, Options{Progress: func(done, total int) {
		progress = append(progress, [2]int{done, total})
	}})
	if err != nil {
		t.Fatal(err)
	}
	var got []origin
	for _, tr := range res.Traces {
		got = append(got, origin{tr.Source, tr.SourceHash})
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("traces (-want +got):\n%s", diff)
	}
	// m.jsonl is some 3 MB: three or four units, the others one each.
	total := 3 + int((int64(b.Len())+progressBytes-1)/progressBytes)
	if len(progress) == 0 || progress[len(progress)-1] != [2]int{total, total} {
		t.Fatalf("progress = %v, want it to end at %d of %d", progress, total, total)
	}
	for i, p := range progress {
		if p[1] != total || i > 0 && p[0] <= progress[i-1][0] {
			t.Fatalf("progress = %v, want a growing count out of %d", progress, total)
		}
	}
}

// TestLoadJSONLinesCancel checks that cancelling a load stops it in the
// middle of a streamed JSON Lines file.
func TestLoadJSONLinesCancel(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	for n := 1; b.Len() < 6*progressBytes; n++ {
		b.WriteString(jsonlTrace(n, 500) + "\n")
	}
	writeFile(t, filepath.Join(dir, "big.jsonl"), b.String())

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var calls [][2]int
	res, err := Load(ctx, dir, Options{Progress: func(done, total int) {
		calls = append(calls, [2]int{done, total})
		cancel()
	}})
	if !errors.Is(err, context.Canceled) || res != nil {
		t.Errorf("Load cancelled midway = %v, %v; want nil, context.Canceled", res, err)
	}
	if len(calls) != 1 || calls[0][0] >= calls[0][1] {
		t.Errorf("progress calls = %v, want one, before the end", calls)
	}
}

// TestLoadSharesStrings checks that the strings that repeat between
// traces are stored once: the named fields of every action, and the member
// names and values of their generic values, point to the same bytes in
// every trace that one worker decoded.
func TestLoadSharesStrings(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1)) // one worker, one table
	const doc = `{"id": %q, "actions": [{"kind": "tool_call", "name": "git.push", "parameters": {"remote": "origin"},
		"capabilities": ["git.write"], "required_secrets": ["GIT_TOKEN"],
		"side_effects": [{"kind": "git_ref", "target": "main", "capability": "git.write", "mutation": "update"}],
		"approval": {"required": true, "boundary": "push"}, "cost": {"model": "m-large"}}]}`
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"a.json":  fmt.Sprintf(doc, "a"),
		"b.json":  fmt.Sprintf(doc, "b"),
		"c.jsonl": strings.ReplaceAll(fmt.Sprintf(doc, "c1"), "\n", "") + "\n" + strings.ReplaceAll(fmt.Sprintf(doc, "c2"), "\n", ""),
	})
	res, err := Load(context.Background(), dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	strs := func(tr *trace.Trace) map[string]string {
		a := tr.Actions[0]
		se := a.SideEffects[0]
		m := map[string]string{
			"kind": string(a.Kind), "name": a.Name, "capability": a.Capabilities[0], "secret": a.RequiredSecrets[0],
			"side effect kind": se.Kind, "target": se.Target, "side effect capability": se.Capability,
			"mutation": se.Mutation, "boundary": a.Approval.Boundary, "model": a.Cost.Model,
			"parameter value": a.Parameters["remote"].(string),
		}
		for k := range a.Parameters {
			m["parameter name"] = k
		}
		return m
	}
	first := strs(res.Traces[0])
	for _, tr := range res.Traces[1:] {
		for field, s := range strs(tr) {
			if unsafe.StringData(s) != unsafe.StringData(first[field]) {
				t.Errorf("%s: %s %q is a copy, not shared with %s", tr.Source, field, s, res.Traces[0].Source)
			}
		}
	}
}

// BenchmarkLoad loads a generated directory of 1000 traces of 50 actions
// each (about 18 MB), split between .json files and .jsonl files. Besides
// time and allocations it reports the live heap per trace after a load.
func BenchmarkLoad(b *testing.B) {
	dir := b.TempDir()
	var size int64
	var jsonl strings.Builder
	for i := range 1000 {
		doc := benchTrace(i)
		if i%4 == 0 {
			jsonl.WriteString(doc)
			jsonl.WriteByte('\n')
			if i%100 == 0 {
				writeFile(b, filepath.Join(dir, fmt.Sprintf("batch%02d.jsonl", i/100)), jsonl.String())
				size += int64(jsonl.Len())
				jsonl.Reset()
			}
			continue
		}
		writeFile(b, filepath.Join(dir, fmt.Sprintf("d%d/t%04d.json", i%10, i)), doc)
		size += int64(len(doc))
	}
	writeFile(b, filepath.Join(dir, "batch_last.jsonl"), jsonl.String())
	size += int64(jsonl.Len())
	b.SetBytes(size)
	b.ReportAllocs()
	var res *Result
	for b.Loop() {
		var err error
		res, err = Load(context.Background(), dir, Options{})
		if err != nil {
			b.Fatal(err)
		}
		if len(res.Traces) != 1000 {
			b.Fatalf("%d traces", len(res.Traces))
		}
	}
	reportLive(b, res)
}

// reportLive reports the live heap after a load, per trace: what holding
// a corpus costs, which bounds the corpus mining can take.
func reportLive(b *testing.B, res *Result) {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	b.ReportMetric(float64(m.HeapAlloc)/float64(len(res.Traces)), "live-B/trace")
	runtime.KeepAlive(res)
}

// BenchmarkLoadJSONLines loads one JSON Lines file of 1000 traces of 50
// actions (about 18 MB), the layout of a corpus kept in one file, whose
// records the feeder hands out in chunks to every worker.
func BenchmarkLoadJSONLines(b *testing.B) {
	dir := b.TempDir()
	var jsonl strings.Builder
	for i := range 1000 {
		jsonl.WriteString(benchTrace(i))
		jsonl.WriteByte('\n')
	}
	writeFile(b, filepath.Join(dir, "traces.jsonl"), jsonl.String())
	b.SetBytes(int64(jsonl.Len()))
	b.ReportAllocs()
	var res *Result
	for b.Loop() {
		var err error
		res, err = Load(context.Background(), dir, Options{})
		if err != nil {
			b.Fatal(err)
		}
		if len(res.Traces) != 1000 {
			b.Fatalf("%d traces", len(res.Traces))
		}
	}
	reportLive(b, res)
}

func benchTrace(i int) string {
	var b strings.Builder
	fmt.Fprintf(&b, `{"version": 1, "id": "bench_%d", "workflow_id": "release", "metadata": {"goal": "release"}, "actions": [`, i)
	for j := range 50 {
		if j > 0 {
			b.WriteByte(',')
		}
		switch j % 3 {
		case 0:
			fmt.Fprintf(&b, `{"id": "a%d", "kind": "tool_call", "name": "git.checkout_branch", "parameters": {"repo_path": "/work/r%d", "branch_name": "release-%d.%d"}, "capabilities": ["git.write"], "side_effects": [{"kind": "git_ref", "target": "release-branch", "capability": "git.write"}], "duration_ms": %d, "deterministic": true}`, j, i, i, j, 10+j)
		case 1:
			fmt.Fprintf(&b, `{"id": "a%d", "kind": "file_mutation", "name": "update_manifest_version", "parameters": {"version": "0.%d.%d", "path": "harn.toml"}, "inputs": {"path": "harn.toml", "version": "0.%d.%d"}, "capabilities": ["fs.write"], "side_effects": [{"kind": "file_write", "target": "harn.toml", "capability": "fs.write"}], "deterministic": true}`, j, i, j, i, j)
		default:
			fmt.Fprintf(&b, `{"id": "a%d", "kind": "model_call", "name": "release_notes", "parameters": {"version": "0.%d.%d"}, "output": "notes for 0.%d.%d", "cost": {"model": "m", "model_calls": 1, "input_tokens": 1200, "output_tokens": 250, "total_cost_usd": 0.01, "wall_ms": 3000}, "fuzzy": true}`, j, i, j, i, j)
		}
	}
	b.WriteString(`], "replay_allowlist": [{"path": "/run_id", "reason": "run ids are allocated per execution"}], "replay_run": {"run_id": "r"}}`)
	return b.String()
}

func TestLoadFound(t *testing.T) {
	dir := t.TempDir()
	docs := map[string]string{
		"a.json":      `{"id": "a", "actions": []}`,
		"sub/b.jsonl": `{"id": "b", "actions": []}` + "\n",
		"notes.txt":   "not a trace",
	}
	var want int64
	for name, body := range docs {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if name != "notes.txt" {
			want += int64(len(body))
		}
	}
	calls := 0
	var gotFiles int
	var gotBytes int64
	_, err := Load(context.Background(), dir, Options{Found: func(files int, bytes int64) {
		calls++
		gotFiles, gotBytes = files, bytes
	}})
	if err != nil {
		t.Fatal(err)
	}
	if calls != 1 || gotFiles != 2 || gotBytes != want {
		t.Errorf("Found called %d times with (%d, %d), want once with (2, %d)", calls, gotFiles, gotBytes, want)
	}
}

// A run directory's journal.json carries the actions of the suspended run
// into the resumed one, whose trace.json records them again: it is not
// read as a trace, so a resumed run counts once. A journal.json anywhere
// else is an ordinary file of the directory.
func TestLoadSkipsRunJournal(t *testing.T) {
	dir := t.TempDir()
	journal := `{"run_id": "r1", "status": "pending_approval", "calls": [], "actions": [{"kind": "tool_call", "name": "ticket.read"}]}`
	writeTree(t, dir, map[string]string{
		"runs/r1/trace.json":     fmt.Sprintf(okTrace, "r1"),
		"runs/r1/journal.json":   journal,
		"runs/r1/journal.mac":    "0123\n",
		"runs/r2/trace.json":     fmt.Sprintf(okTrace, "r2"),
		"elsewhere/journal.json": strings.Replace(journal, `"run_id"`, `"id": "lone", "run_id"`, 1),
		// A user's traces that happen to be named like a run's files,
		// without the journal's MAC: both are read.
		"mine/trace.json":   fmt.Sprintf(okTrace, "mine-t"),
		"mine/journal.json": fmt.Sprintf(okTrace, "mine-j"),
	})
	res, err := Load(context.Background(), dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, tr := range res.Traces {
		ids = append(ids, tr.ID)
	}
	if diff := cmp.Diff([]string{"lone", "mine-j", "mine-t", "r1", "r2"}, ids); diff != "" {
		t.Errorf("Load traces (-want +got):\n%s", diff)
	}
	n := 0
	if _, err := Scan(context.Background(), dir, Options{}, func(*trace.Trace) string { return "" },
		func(Location, string) error { n++; return nil }, nil); err != nil {
		t.Fatal(err)
	}
	if n != 5 {
		t.Errorf("Scan visited %d traces, want 5", n)
	}
}
