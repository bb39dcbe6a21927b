package trace

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// spoolEveryField is a trace with every field of every type set, typed
// nils and empty values beside set ones, and each generic type the spool
// form holds.
func spoolEveryField() *Trace {
	d, yes, no := int64(7), true, false
	return &Trace{
		Version: 1, ID: "t1", Source: "a.jsonl:3", SourceHash: "h", WorkflowID: "w", StartedAt: "s", FinishedAt: "f",
		Origin: Origin{Path: "a.jsonl", Line: 3},
		Flow:   &Flow{TraceID: "ft", AgentRunID: "ar", TranscriptRef: "tr", AtomIDs: []string{"a"}, SliceIDs: []string{}, Extra: map[string]any{"x": 1}},
		Actions: []Action{{
			ID: "a1", Kind: KindToolCall, Name: "Bash", Timestamp: "ts",
			Parameters: map[string]any{"cmd": "go test", "n": json.Number("1.50"), "nested": []any{map[string]any{}, []any{}, nil, true, false}},
			Inputs:     map[string]any(nil), Output: []any(nil), ObservedOutput: "out",
			Capabilities: []string{"fs"}, SideEffects: []SideEffect{{Kind: "file", Target: "x", Capability: "c", Mutation: "m", Metadata: map[string]any{}, Extra: map[string]any{"e": "v"}}},
			RequiredSecrets: []string{}, Approval: &Approval{Prompt: "p", Approver: "a", Required: true, Boundary: "b", Extra: map[string]any{}},
			Cost:       &Cost{Model: "m", ModelCalls: 1, InputTokens: 2, OutputTokens: 3, CacheReadTokens: 4, CacheWriteTokens: 5, TotalCostUSD: 0.25, WallMS: 6, Extra: map[string]any{"c": json.Number("2")}},
			DurationMS: &d, Deterministic: &yes, Fuzzy: &no,
			Metadata: map[string]any{"agent_tool": "Bash", "exit_code": 1, "big": int64(-1 << 40), "f": 1.5, "ss": []string{"a"}, "nss": []string(nil), "sm": map[string]string{"k": "v"}, "nsm": map[string]string(nil)},
			Extra:    map[string]any{"unknown": map[string]any{"deep": []any{"x"}}},
		}, {ID: "a2", Kind: KindObservation, Name: "Read"}},
		ReplayRun:       map[string]any{},
		ReplayAllowlist: []AllowlistRule{{Path: "/p", Reason: "r", Replacement: json.Number("0"), Extra: map[string]any{}}, {Path: "/q"}},
		Usage:           &Usage{ModelCalls: 1, InputTokens: 2, OutputTokens: 3, TotalCostUSD: 4.5, WallMS: 5, Extra: map[string]any{}},
		Metadata:        map[string]any{"agent": "claude-code"},
		Extra:           map[string]any{"z": nil},
	}
}

// TestSpoolRoundTrip checks that DecodeSpool(AppendSpool(t)) equals t for
// a trace with every field set and for every valid trace of testdata,
// as the loader that reads traces back from its spool must return what
// it decoded.
func TestSpoolRoundTrip(t *testing.T) {
	traces := map[string]*Trace{"every field": spoolEveryField(), "empty": {}, "no actions": {ID: "x", Actions: []Action{}}}
	files, err := filepath.Glob("testdata/valid/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("testdata: %v, %d files", err, len(files))
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		tr, err := Decode(data, f, 0)
		if err != nil {
			t.Fatal(err)
		}
		tr.Origin = Origin{Path: f}
		traces[f] = tr
	}
	for name, tr := range traces {
		data, err := AppendSpool([]byte("prefix"), tr)
		if err != nil {
			t.Fatalf("AppendSpool(%s): %v", name, err)
		}
		got, err := DecodeSpool(data[len("prefix"):])
		if err != nil {
			t.Fatalf("DecodeSpool(AppendSpool(%s)): %v", name, err)
		}
		if diff := cmp.Diff(tr, got); diff != "" || !reflect.DeepEqual(tr, got) {
			t.Errorf("round trip of %s (-want +got):\n%s", name, diff)
		}
		// Every prefix is an error, never a panic or a trace.
		body := data[len("prefix"):]
		for n := range len(body) {
			if got, err := DecodeSpool(body[:n]); err == nil {
				t.Fatalf("DecodeSpool(%s cut to %d of %d bytes) = %v, want an error", name, n, len(body), got.ID)
			}
		}
	}
}

// TestSpoolFields fails when a type the spool form writes field by field
// gains a field, which the spool form would then drop.
func TestSpoolFields(t *testing.T) {
	for _, c := range []struct {
		v    any
		want int
	}{{Trace{}, 15}, {Action{}, 18}, {Flow{}, 6}, {SideEffect{}, 6}, {Approval{}, 5}, {Cost{}, 9}, {Usage{}, 6}, {AllowlistRule{}, 4}, {Origin{}, 2}} {
		if got := reflect.TypeOf(c.v).NumField(); got != c.want {
			t.Errorf("%T has %d fields, the spool form writes %d: add the new ones to AppendSpool and DecodeSpool", c.v, got, c.want)
		}
	}
}

// TestSpoolUnknownType checks that a generic value of a type the spool
// form does not hold is an error, not a value read back otherwise.
func TestSpoolUnknownType(t *testing.T) {
	tr := &Trace{Actions: []Action{{Output: struct{}{}}}}
	if _, err := AppendSpool(nil, tr); !errors.Is(err, ErrSpoolType) {
		t.Fatalf("AppendSpool(output struct{}{}) = %v, want ErrSpoolType", err)
	}
}
