package workreplicaset

import (
	"github.com/flotilla-io/flotilla/internal/rollout"
	"testing"
)

func TestPausedIf(t *testing.T) {
	tests := []struct {
		name        string
		in          rollout.Result
		pause       bool
		wantPush    int
		wantStopped bool
	}{
		{"not paused", rollout.Result{Push: []string{"a"}}, false, 1, false},
		{"paused pushes nothing and stops", rollout.Result{Push: []string{"a", "b"}, InFlight: 1}, true, 0, true},
		{"a finished rollout stays finished", rollout.Result{Complete: true, Succeeded: 2}, true, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := pausedIf(tt.in, tt.pause)
			if len(got.Push) != tt.wantPush || got.Stopped != tt.wantStopped {
				t.Fatalf("pausedIf(%v) = push %v stopped %v, want %d pushed, stopped %v", tt.pause, got.Push, got.Stopped, tt.wantPush, tt.wantStopped)
			}
			if tt.wantStopped && got.StopReason != pausedReason {
				t.Errorf("stopReason = %q, want %q", got.StopReason, pausedReason)
			}
		})
	}
}
