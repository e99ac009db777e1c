package workreplicaset

import (
	"testing"
)

func TestPausedIf(t *testing.T) {
	tests := []struct {
		name        string
		in          rolloutResult
		pause       bool
		wantPush    int
		wantStopped bool
	}{
		{"not paused", rolloutResult{push: []string{"a"}}, false, 1, false},
		{"paused pushes nothing and stops", rolloutResult{push: []string{"a", "b"}, inFlight: 1}, true, 0, true},
		{"a finished rollout stays finished", rolloutResult{complete: true, succeeded: 2}, true, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.in.pausedIf(tt.pause)
			if len(got.push) != tt.wantPush || got.stopped != tt.wantStopped {
				t.Fatalf("pausedIf(%v) = push %v stopped %v, want %d pushed, stopped %v", tt.pause, got.push, got.stopped, tt.wantPush, tt.wantStopped)
			}
			if tt.wantStopped && got.stopReason != pausedReason {
				t.Errorf("stopReason = %q, want %q", got.stopReason, pausedReason)
			}
		})
	}
}
