package trace

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestMarshalJSONEscaping: the trace format's own encoder quotes strings
// as every other writer of the module does (no HTML escaping), in typed
// fields, generic values, map keys and Extra members alike, so that a
// stored trace, an imported one and a run's trace.json say < and & the
// same way; and what it writes decodes to the same trace.
func TestMarshalJSONEscaping(t *testing.T) {
	const s = "a < b && c > d \u2028 \"q\" \\ \x01"
	d := int64(3)
	tr := Trace{Version: 1, ID: s, Actions: []Action{{
		ID: "a1", Kind: KindToolCall, Name: s, Parameters: map[string]any{s: s, "n": json.Number("1.5"), "l": []any{s, true, nil}},
		Capabilities: []string{s}, SideEffects: []SideEffect{{Kind: "file_write", Target: s}},
		Cost: &Cost{Model: s, TotalCostUSD: 0.25}, DurationMS: &d, Extra: map[string]any{"x_" + s: s},
	}}, Metadata: map[string]any{"k": s}}
	got, err := tr.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(got, []byte(`\u003c`)) || bytes.Contains(got, []byte(`\u0026`)) || bytes.Contains(got, []byte(`\u003e`)) {
		t.Errorf("MarshalJSON escapes HTML:\n%s", got)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		t.Fatal(err)
	}
	quoted := strings.TrimSpace(buf.String())
	if n := bytes.Count(got, []byte(quoted)); n != 10 {
		t.Errorf("MarshalJSON writes %s %d times, want 10 (every string):\n%s", quoted, n, got)
	}
	back, err := Decode(got, "t.json", 0)
	if err != nil {
		t.Fatal(err)
	}
	again, err := back.MarshalJSON()
	if err != nil || !bytes.Equal(again, got) {
		t.Errorf("decode and encode again = %s, %v; want %s", again, err, got)
	}
}
