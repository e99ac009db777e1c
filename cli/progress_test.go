package cli

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"
)

func TestPollUntil(t *testing.T) {
	ctx := context.Background()
	boom := errors.New("boom")
	tests := []struct {
		name     string
		deadline time.Time
		results  []bool // what cond returns on each call; then it fails with boom
		want     error
		calls    int
	}{
		{name: "done at once", deadline: time.Now().Add(time.Hour), results: []bool{true}, calls: 1},
		{name: "past deadline: one look, then timed out", deadline: time.Now(), results: []bool{false}, want: errTimedOut, calls: 1},
		{name: "a failure ends the wait", deadline: time.Now().Add(time.Hour), want: boom, calls: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls := 0
			err := pollUntil(ctx, tt.deadline, func(context.Context) (bool, error) {
				calls++
				if calls > len(tt.results) {
					return false, boom
				}
				return tt.results[calls-1], nil
			})
			if !errors.Is(err, tt.want) || calls != tt.calls {
				t.Fatalf("err = %v after %d calls, want %v after %d", err, calls, tt.want, tt.calls)
			}
		})
	}
}

func TestProgressPrintsChangesOnly(t *testing.T) {
	var out bytes.Buffer
	p := newProgress(&out)
	for _, s := range []string{"a", "a", "b", "b", "a"} {
		p.report("state %s", s)
	}
	if want := "state a\nstate b\nstate a\n"; out.String() != want {
		t.Fatalf("printed %q, want %q", out.String(), want)
	}
}
