package memory

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/crystallize-dev/crystallize/internal/trace"
)

var t0 = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

func mustNew(t *testing.T, text string, scope []string, source string, at time.Time) Entry {
	t.Helper()
	e, err := New(text, scope, source, at)
	if err != nil {
		t.Fatalf("New(%q, %q) = %v", text, scope, err)
	}
	return e
}

func TestNewNormalizes(t *testing.T) {
	e := mustNew(t, "  run migrations down before up  ", []string{" path:db/** ", "gate:go-test", "path:db/**"}, "", t0)
	want := Entry{ID: e.ID, Text: "run migrations down before up", Scope: []string{"gate:go-test", "path:db/**"}, Source: "person", Created: "2026-11-01T12:00:00Z"}
	if diff := cmp.Diff(want, e); diff != "" {
		t.Errorf("New (-want +got):\n%s", diff)
	}
	// The id depends on text and scope only: the same lesson is the same
	// memory whoever records it, whenever.
	if again := mustNew(t, "run migrations down before up", []string{"path:db/**", "gate:go-test"}, "gate:go-test", t0.Add(time.Hour)); again.ID != e.ID {
		t.Errorf("id changed with source and time: %s, want %s", again.ID, e.ID)
	}
	if other := mustNew(t, "run migrations down before up", []string{"path:db/**"}, "", t0); other.ID == e.ID {
		t.Errorf("id %s does not depend on scope", e.ID)
	}
}

func TestNewRefusesBadInput(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		scope      []string
		source     string
		want       string
	}{
		{"no scope", "a lesson", nil, "", "$.scope: no scope"},
		{"empty text", " ", []string{"gate:x"}, "", "$.text: empty text"},
		{"huge text", strings.Repeat("a", maxText+1), []string{"gate:x"}, "", "$.text: text of 2001 bytes, at most 2000"},
		{"newline", "one\ntwo", []string{"gate:x"}, "", "$.text: text holds the control or formatting character U+000A at byte 3"},
		{"escape", "red \x1b[31m", []string{"gate:x"}, "", "$.text: text holds the control or formatting character U+001B"},
		{"bidi override", "ok \u202etxt.exe", []string{"gate:x"}, "", "$.text: text holds the control or formatting character U+202E"},
		{"markup", "see <script>alert(1)</script>", []string{"gate:x"}, "", "$.text: text holds markup"},
		{"unknown scope kind", "a lesson", []string{"file:x"}, "", `$.scope[0]: scope "file:x" is not kind:value`},
		{"scope without value", "a lesson", []string{"gate:"}, "", `$.scope[0]: scope "gate:" has no value`},
		{"absolute path", "a lesson", []string{"path:/etc/**"}, "", `$.scope[0]: scope "path:/etc/**": a path glob is relative`},
		{"dotdot path", "a lesson", []string{"path:../x"}, "", `$.scope[0]: scope "path:../x": empty, "." or ".." path segment`},
		{"bad glob", "a lesson", []string{"path:db/[x"}, "", `$.scope[0]: scope "path:db/[x": bad glob segment "[x"`},
		{"gate with space", "a lesson", []string{"gate:go test"}, "", `$.scope[0]: scope "gate:go test": a gate is a name`},
		{"unknown source", "a lesson", []string{"gate:x"}, "robot", `$.source: source "robot" is not kind or kind:detail`},
		{"markup in source", "a lesson", []string{"gate:x"}, "person:<b>me", `$.source: source "person:<b>me": the detail`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(tc.text, tc.scope, tc.source, t0)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("New = %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestParseNamesFileLineAndPath(t *testing.T) {
	good := `{"id":"mem_1","text":"ok","scope":["gate:go-vet"],"source":"person","created":"2026-11-01T12:00:00Z"}`
	data := strings.Join([]string{
		good,
		``,
		`{"id":"mem_2","text":"ok","scope":["gate:go-vet"],"source":"person","created":"2026-11-01T12:00:00Z","weight":3}`,
		`{"id":"mem_3","text":"ok", "scope":`,
		`{"id":"mem_4","text":"bad <img src=x>","scope":["gate:a","nope:b"],"source":"person","created":"yesterday"}`,
		`["not an object"]`,
		`{"id":"mem_1","text":"again","scope":["gate:a"],"source":"person","created":"2026-11-01T12:00:00Z"}`,
		`{"id":"mem_6","Text":"case","text":"x","scope":["gate:a"],"source":"person","created":"2026-11-01T12:00:00Z"}`,
		`{"id":"mem_7","text":"x","scope":"gate:a","source":"person","created":"2026-11-01T12:00:00Z"}`,
	}, "\n")
	entries, err := Parse([]byte(data), "harness/memory.jsonl")
	if entries != nil {
		t.Errorf("Parse returned %d entries from a bad file, want none", len(entries))
	}
	var list trace.ErrorList
	if !errors.As(err, &list) {
		t.Fatalf("Parse = %v, want an ErrorList", err)
	}
	var got []string
	for _, e := range list {
		got = append(got, e.Error())
	}
	want := []string{
		`harness/memory.jsonl:3: $.weight: unknown field "weight" (a memory has id, text, scope, source, created)`,
		`harness/memory.jsonl:4:`,
		`harness/memory.jsonl:5: $.text: text holds markup`,
		`harness/memory.jsonl:5: $.scope[1]: scope "nope:b" is not kind:value`,
		`harness/memory.jsonl:5: $.created: created "yesterday" is not an RFC 3339 time`,
		`harness/memory.jsonl:6: $: a memory line is a JSON object`,
		`harness/memory.jsonl:7: $.id: id mem_1 is used by line 1 too`,
		`harness/memory.jsonl:8: $.Text: unknown field "Text"`,
		`harness/memory.jsonl:9: $.scope: scope is not an array of strings`,
	}
	if len(got) != len(want) {
		t.Fatalf("Parse errors:\n%s\nwant %d errors like:\n%s", strings.Join(got, "\n"), len(want), strings.Join(want, "\n"))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("error %d = %q, want it to start with %q", i, got[i], want[i])
		}
	}
}

func TestAddForgetRoundTrip(t *testing.T) {
	root := t.TempDir()
	a := mustNew(t, "vet flags shadowed errors here; fix, do not silence", []string{"gate:go-vet"}, "gate:go-vet", t0)
	b := mustNew(t, "migrations run on SQLite & Postgres: test both", []string{"path:db/migrations/**", "family:database"}, "person:reviewer", t0.Add(time.Hour))
	for _, e := range []Entry{b, a} {
		if _, err := Add(root, e); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := Add(root, a); !errors.Is(err, ErrExists) {
		t.Errorf("Add of a recorded memory = %v, want ErrExists", err)
	}
	data, err := os.ReadFile(filepath.Join(root, File))
	if err != nil {
		t.Fatal(err)
	}
	// Oldest first, one line each, "&" left as it is.
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `"id":"`+a.ID+`"`) || !strings.Contains(lines[1], "SQLite & Postgres") {
		t.Errorf("file =\n%s", data)
	}
	got, err := Load(root)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]Entry{a, b}, got); diff != "" {
		t.Errorf("Load (-want +got):\n%s", diff)
	}
	gone, err := Forget(root, a.ID)
	if err != nil || gone.ID != a.ID {
		t.Fatalf("Forget = %+v, %v", gone, err)
	}
	if _, err := Forget(root, a.ID); !errors.Is(err, ErrUnknown) {
		t.Errorf("Forget of a forgotten memory = %v, want ErrUnknown", err)
	}
	got, _ = Load(root)
	if diff := cmp.Diff([]Entry{b}, got); diff != "" {
		t.Errorf("Load after Forget (-want +got):\n%s", diff)
	}
}

// A change to a file that does not load writes nothing: the bad line is
// named, and the file keeps every byte.
func TestAddLeavesBadFileAlone(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "harness"), 0o755)
	bad := []byte(`{"id":"mem_1","text":"ok","scope":["gate:a"],"source":"person","created":"2026-11-01T12:00:00Z"}` + "\n" + `{"id":` + "\n")
	name := filepath.Join(root, File)
	if err := os.WriteFile(name, bad, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Add(root, mustNew(t, "a lesson", []string{"gate:b"}, "", t0))
	if err == nil || !strings.HasPrefix(err.Error(), "harness/memory.jsonl:2:") {
		t.Errorf("Add to a bad file = %v, want an error at harness/memory.jsonl:2", err)
	}
	if _, err := Forget(root, "mem_1"); err == nil {
		t.Error("Forget in a bad file succeeded")
	}
	if data, _ := os.ReadFile(name); string(data) != string(bad) {
		t.Errorf("the bad file changed:\n%s", data)
	}
	entries, _ := os.ReadDir(filepath.Join(root, "harness"))
	if len(entries) != 1 {
		t.Errorf("harness/ holds %d entries, want the memory file only (no temporary file left)", len(entries))
	}
}

func TestLoadRefusesLinks(t *testing.T) {
	root := t.TempDir()
	outside := filepath.Join(t.TempDir(), "memory.jsonl")
	os.WriteFile(outside, nil, 0o644)
	os.MkdirAll(filepath.Join(root, "harness"), 0o755)
	if err := os.Symlink(outside, filepath.Join(root, File)); err != nil {
		t.Skip("no symbolic links here")
	}
	if _, err := Load(root); err == nil {
		t.Error("Load read a memory file linked from outside the repository")
	}
	if _, err := Add(root, mustNew(t, "a lesson", []string{"gate:b"}, "", t0)); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("Add through a link = %v, want a refusal", err)
	}
}

func TestLoadMissingIsEmpty(t *testing.T) {
	got, err := Load(t.TempDir())
	if err != nil || got == nil || len(got) != 0 {
		t.Errorf("Load of a repository without memories = %v, %v, want an empty list", got, err)
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"id":"mem_1","text":"ok","scope":["path:db/**"],"source":"person","created":"2026-11-01T12:00:00Z"}`))
	f.Add([]byte(`{"id":1}` + "\n" + `[`))
	f.Fuzz(func(t *testing.T, data []byte) {
		entries, err := Parse(data, "m.jsonl")
		if err != nil {
			return
		}
		// What parses encodes to a file that parses to the same entries.
		again, err := Parse(Encode(entries), "m.jsonl")
		if err != nil {
			t.Fatalf("re-encoded file does not parse: %v", err)
		}
		if len(again) != len(entries) {
			t.Fatalf("round trip kept %d of %d entries", len(again), len(entries))
		}
	})
}
