package memlimit

import "testing"

func TestParseLimit(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"max\n", 0, false},
		{"", 0, false},
		{"4294967296\n", 4 << 30, true},
		{"9223372036854771712\n", 0, false}, // cgroup v1: no limit
		{"garbage", 0, false},
		{"0", 0, false},
	}
	for _, tt := range tests {
		got, ok := parseLimit(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("parseLimit(%q) = %d, %t; want %d, %t", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}
