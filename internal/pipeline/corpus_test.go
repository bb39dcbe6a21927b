package pipeline

import "testing"

func TestMemoryLimit(t *testing.T) {
	tests := []struct {
		input int64
		want  int64
	}{
		{0, 896 << 20},
		{220 << 20, 896 << 20},
		{2200 << 20, 4 * (2200 << 20)},
	}
	for _, tt := range tests {
		if got := MemoryLimit(tt.input); got != tt.want {
			t.Errorf("MemoryLimit(%d) = %d, want %d", tt.input, got, tt.want)
		}
	}
}
