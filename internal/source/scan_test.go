package source

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/crystallize-dev/crystallize/internal/trace"
)

// scanAll scans dir and reads every trace back from its location.
func scanAll(t *testing.T, dir string, opts Options) ([]*trace.Trace, *ScanResult, error) {
	t.Helper()
	var locs []Location
	var ids []string
	res, err := Scan(context.Background(), dir, opts, func(tr *trace.Trace) string { return tr.ID },
		func(loc Location, id string) error {
			locs = append(locs, loc)
			ids = append(ids, id)
			return nil
		}, nil)
	if err != nil {
		return nil, nil, err
	}
	traces, err := res.Catalog.ReadAt(context.Background(), locs)
	if err != nil {
		t.Fatal(err)
	}
	for i, tr := range traces {
		if tr.ID != ids[i] {
			t.Errorf("trace %d read back as %s, scanned as %s", i, tr.ID, ids[i])
		}
	}
	return traces, res, nil
}

// TestScanMatchesLoad checks that a scan, with its traces read back,
// gives what Load gives: the same traces in the same order, the same
// skipped files and the same errors.
func TestScanMatchesLoad(t *testing.T) {
	big := &strings.Builder{}
	for i := range 3000 {
		fmt.Fprintf(big, `{"id": "big_%d", "actions": [{"kind": "tool_call", "name": "t%d", "parameters": {"n": %d}}]}`+"\n", i, i%7, i)
		if i%500 == 0 {
			big.WriteString("\r\n   \n")
		}
	}
	files := map[string]string{
		"a.json":          "\ufeff" + `{"actions": [{"kind": "tool_call", "name": "ticket.read"}]}`,
		"sub/b.jsonl":     "\ufeff" + fmt.Sprintf(okTrace, "b1") + "\r\n   \n" + fmt.Sprintf(okTrace, "b2"),
		"run/record.json": record,
		"big/many.jsonl":  big.String(),
		"bad/broken.json": `{"actions": [`,
		"bad/lines.jsonl": fmt.Sprintf(okTrace, "l1") + "\n{\n" + fmt.Sprintf(okTrace, "b1") + "\n" + strings.Repeat(" ", 300) + "x\n",
		"README.md":       "not a trace",
	}
	for _, skip := range []bool{false, true} {
		t.Run(fmt.Sprintf("skip-invalid=%v", skip), func(t *testing.T) {
			dir := t.TempDir()
			writeTree(t, dir, files)
			opts := Options{SkipInvalid: skip, MaxFileBytes: 256}
			want, wantErr := Load(context.Background(), dir, opts)
			got, res, gotErr := scanAll(t, dir, opts)
			if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
				t.Fatalf("Scan error:\n%v\nLoad error:\n%v", gotErr, wantErr)
			}
			if wantErr != nil {
				return
			}
			if diff := cmp.Diff(want.Traces, got); diff != "" {
				t.Errorf("traces (-Load +Scan):\n%s", diff)
			}
			if diff := cmp.Diff(want.Skipped, res.Skipped); diff != "" {
				t.Errorf("skipped (-Load +Scan):\n%s", diff)
			}
			if res.Files != want.Files || res.Traces != len(want.Traces) {
				t.Errorf("files %d, traces %d; want %d, %d", res.Files, res.Traces, want.Files, len(want.Traces))
			}
		})
	}
}

// genTraces returns n small crystallization traces, one JSON document
// each, with varied sizes.
func genTraces(n int) []string {
	out := make([]string, n)
	for i := range out {
		var acts []string
		for j := range 1 + i%9 {
			acts = append(acts, fmt.Sprintf(`{"id": "a%d", "kind": "tool_call", "name": "tool.%d", "parameters": {"n": %d, "s": "v%d"}, "output": {"ok": true}}`, j, (i+j)%5, j, i))
		}
		out[i] = fmt.Sprintf(`{"id": "gen_%05d", "metadata": {"goal": "g%d"}, "actions": [%s]}`, i, i%3, strings.Join(acts, ", "))
	}
	return out
}

// writeGenerated writes genTraces(n) as one file per trace or as one
// JSON Lines file.
func writeGenerated(t *testing.T, dir string, n int, jsonl bool) {
	t.Helper()
	files := map[string]string{}
	docs := genTraces(n)
	if jsonl {
		files["traces.jsonl"] = strings.Join(docs, "\n") + "\n"
	} else {
		for i, d := range docs {
			files[fmt.Sprintf("t/%05d.json", i)] = d
		}
	}
	writeTree(t, dir, files)
}

func TestScanGenerated(t *testing.T) {
	for _, jsonl := range []bool{false, true} {
		t.Run(fmt.Sprintf("jsonl=%v", jsonl), func(t *testing.T) {
			dir := t.TempDir()
			// More than a batch of documents either way.
			writeGenerated(t, dir, scanBatchUnits+500, jsonl)
			want, err := Load(context.Background(), dir, Options{})
			if err != nil {
				t.Fatal(err)
			}
			got, _, err := scanAll(t, dir, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want.Traces, got); diff != "" {
				t.Errorf("traces (-Load +Scan):\n%s", diff)
			}
		})
	}
}

func TestScanRefusesSessionLogs(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"s.jsonl": `{"type":"user","sessionId":"s1","uuid":"u1","message":{"role":"user","content":"hi"}}` + "\n",
	})
	if _, ok := detectSessionFile(t, dir); !ok {
		t.Skip("the sample is not recognized as a session log by this build's adapters")
	}
	_, err := Scan(context.Background(), dir, Options{}, func(*trace.Trace) int { return 0 }, func(Location, int) error { return nil }, nil)
	if !errors.Is(err, ErrSessionLog) {
		t.Fatalf("Scan error = %v, want ErrSessionLog", err)
	}
}

func detectSessionFile(t *testing.T, dir string) (SessionAdapter, bool) {
	files, _, err := find(dir)
	if err != nil || len(files) != 1 {
		t.Fatal(err)
	}
	var p trace.Parser
	a := peekSession(files[0], DefaultMaxFileBytes, &p)
	return a, a != nil
}

// TestReadAtChanged checks that a trace whose file changed between the
// scan and the read is an error, not a silently different trace.
func TestReadAtChanged(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"a.json": fmt.Sprintf(okTrace, "a")})
	var locs []Location
	res, err := Scan(context.Background(), dir, Options{}, func(*trace.Trace) int { return 0 },
		func(l Location, _ int) error { locs = append(locs, l); return nil }, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "a.json"), []byte(fmt.Sprintf(okTrace, "b")), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = res.Catalog.ReadAt(context.Background(), locs)
	if err == nil || !strings.Contains(err.Error(), "changed while it was being mined") {
		t.Fatalf("ReadAt error = %v, want a changed-file error", err)
	}
}

func TestScanCancelled(t *testing.T) {
	dir := t.TempDir()
	writeGenerated(t, dir, 50, false)
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	_, err := Scan(ctx, dir, Options{}, func(*trace.Trace) int { return 0 }, func(Location, int) error {
		if n++; n == 10 {
			cancel()
		}
		return nil
	}, nil)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Scan error = %v, want context.Canceled", err)
	}
}

// TestReadBackMatchesLoad checks that traces read back by location, which
// the second pass decodes with Parser.DecodeDirect, equal the traces Load
// decodes, on the project's own example and test traces.
func TestReadBackMatchesLoad(t *testing.T) {
	for _, dir := range []string{"../../examples/traces", "../../examples/heldout", "../trace/testdata/valid"} {
		t.Run(dir, func(t *testing.T) {
			opts := Options{SkipInvalid: true}
			want, err := Load(context.Background(), dir, opts)
			if err != nil {
				t.Fatal(err)
			}
			if len(want.Traces) == 0 {
				t.Fatalf("no traces under %s", dir)
			}
			got, _, err := scanAll(t, dir, opts)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want.Traces, got); diff != "" {
				t.Errorf("traces (-Load +read back):\n%s", diff)
			}
		})
	}
}

// TestReadWindowsMatchesReadAt checks that reading a window of each trace
// back gives the trace ReadAt gives, cut to the window, for files and
// JSON Lines (with a byte order mark), and that a window past a trace's
// last action or a file changed since the scan is an error.
func TestReadWindowsMatchesReadAt(t *testing.T) {
	for _, dir := range []string{"../../examples/traces", "../trace/testdata/valid"} {
		t.Run(dir, func(t *testing.T) {
			var locs []Location
			res, err := Scan(context.Background(), dir, Options{SkipInvalid: true}, func(*trace.Trace) int { return 0 },
				func(l Location, _ int) error { locs = append(locs, l); return nil }, nil)
			if err != nil {
				t.Fatal(err)
			}
			whole, err := res.Catalog.ReadAt(context.Background(), locs)
			if err != nil {
				t.Fatal(err)
			}
			windows := make([]trace.Window, len(locs))
			for i, tr := range whole {
				n := len(tr.Actions)
				windows[i] = trace.Window{Lo: n / 3, Hi: n/3 + min(2, n-n/3)}
			}
			got, err := res.Catalog.ReadWindows(context.Background(), locs, windows)
			if err != nil {
				t.Fatal(err)
			}
			for i, tr := range whole {
				if diff := cmp.Diff(tr.Window(windows[i]), got[i]); diff != "" {
					t.Errorf("%s window %v (-ReadAt cut +ReadWindows):\n%s", tr.Source, windows[i], diff)
				}
			}
		})
	}
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"a.jsonl": "\ufeff" + fmt.Sprintf(okTrace, "a") + "\n" + fmt.Sprintf(okTrace, "b") + "\n"})
	var locs []Location
	res, err := Scan(context.Background(), dir, Options{}, func(*trace.Trace) int { return 0 },
		func(l Location, _ int) error { locs = append(locs, l); return nil }, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := res.Catalog.ReadWindows(context.Background(), locs, []trace.Window{{Lo: 0, Hi: 1}, {Lo: 1, Hi: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if got[0].ID != "a" || len(got[0].Actions) != 1 || got[1].ID != "b" || len(got[1].Actions) != 0 || got[0].Source != "a.jsonl:1" {
		t.Fatalf("windows read back as %+v, %+v", got[0], got[1])
	}
	_, err = res.Catalog.ReadWindows(context.Background(), locs, []trace.Window{{Lo: 0, Hi: 1}, {Lo: 0, Hi: 9}})
	if err == nil || !strings.Contains(err.Error(), "a.jsonl:2: has 1 actions, read back for actions 0 to 9") {
		t.Fatalf("window past the end: error = %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "a.jsonl"), []byte("\ufeff"+fmt.Sprintf(okTrace, "c")+"\n"+fmt.Sprintf(okTrace, "b")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = res.Catalog.ReadWindows(context.Background(), locs, []trace.Window{{Lo: 0, Hi: 1}, {Lo: 0, Hi: 1}})
	if err == nil || !strings.Contains(err.Error(), "a.jsonl:1: changed while it was being mined") {
		t.Fatalf("changed file: error = %v", err)
	}
}
