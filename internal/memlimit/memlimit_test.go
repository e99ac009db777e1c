package memlimit

import (
	"runtime/debug"
	"testing"
)

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

func TestSetGCPercent(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	tests := []struct {
		name, gogc string
		flag       int
		want       int
		from       string
	}{
		{"the flag wins over GOGC", "200", 75, 75, "flag"},
		{"GOGC without the flag", "200", 0, 200, "GOGC"},
		{"GOGC=off without the flag", "off", 0, -1, "GOGC"},
		{"neither", "", 0, DefaultGCPercent, "default"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("GOGC", tt.gogc)
			// The runtime reads GOGC when the process starts: set what
			// it would have read, then see SetGCPercent keep or replace it.
			switch tt.gogc {
			case "off":
				debug.SetGCPercent(-1)
			case "200":
				debug.SetGCPercent(200)
			default:
				debug.SetGCPercent(100)
			}
			got, from := SetGCPercent(tt.flag)
			if got != tt.want || from != tt.from {
				t.Errorf("SetGCPercent(%d) with GOGC=%q = %d, %q; want %d, %q", tt.flag, tt.gogc, got, from, tt.want, tt.from)
			}
			if now := debug.SetGCPercent(100); now != tt.want {
				t.Errorf("the runtime's percent is %d, want %d", now, tt.want)
			}
		})
	}
}
