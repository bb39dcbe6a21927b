package runrecord

import (
	"fmt"
	"strings"
	"testing"
)

// TestClipShares: a value with nothing to clip is recorded as it
// is, and one with a long string is copied, the original left whole.
func TestClipShares(t *testing.T) {
	short := map[string]any{"a": "x", "b": []any{"y", map[string]any{"c": 1}}}
	if got := Clip(short).(map[string]any); fmt.Sprintf("%p", got) != fmt.Sprintf("%p", short) {
		t.Error("a value with nothing to clip was copied")
	}
	long := strings.Repeat("z", MaxString+10)
	v := map[string]any{"a": "x", "b": []any{"y", map[string]any{"c": long}}}
	got := Clip(v).(map[string]any)
	if s := got["b"].([]any)[1].(map[string]any)["c"].(string); !strings.HasSuffix(s, "…[10 more bytes not recorded]") {
		t.Errorf("the long string was not clipped: %d bytes", len(s))
	}
	if v["b"].([]any)[1].(map[string]any)["c"] != long {
		t.Error("clipping changed the original value")
	}
}
