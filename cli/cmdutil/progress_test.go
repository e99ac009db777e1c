package cmdutil

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
		{name: "past deadline: one look, then timed out", deadline: time.Now(), results: []bool{false}, want: ErrTimedOut, calls: 1},
		{name: "a failure ends the wait", deadline: time.Now().Add(time.Hour), want: boom, calls: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls := 0
			err := PollUntil(ctx, tt.deadline, func(context.Context) (bool, error) {
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
	p := NewProgress(&out)
	for _, s := range []string{"a", "a", "b", "b", "a"} {
		p.Report("state %s", s)
	}
	if want := "state a\nstate b\nstate a\n"; out.String() != want {
		t.Fatalf("printed %q, want %q", out.String(), want)
	}
}

// TestWaitHintsOnlyWhenSlow: a waiting line says what it waits for; its
// hint (what may be wrong, and the command that shows it) comes once,
// only after the same state lasted slowWait.
func TestWaitHintsOnlyWhenSlow(t *testing.T) {
	var out bytes.Buffer
	now := time.Unix(0, 0)
	p := NewProgress(&out)
	p.now = func() time.Time { return now }
	state := "its agent has not joined yet (see `flotilla describe cluster c1`)"

	p.Wait("Waiting for cluster c1", "the hub has not accepted it yet (do the hub controllers run?)")
	now = now.Add(5 * time.Second)
	p.Wait("Waiting for cluster c1", state)
	now = now.Add(slowWait - time.Second)
	p.Wait("Waiting for cluster c1", state)
	if got, want := out.String(), "Waiting for cluster c1: the hub has not accepted it yet\nWaiting for cluster c1: its agent has not joined yet\n"; got != want {
		t.Fatalf("before %s:\n%s\nwant:\n%s", slowWait, got, want)
	}
	now = now.Add(time.Second)
	p.Wait("Waiting for cluster c1", state)
	now = now.Add(time.Minute)
	p.Wait("Waiting for cluster c1", state)
	if got, want := out.String(), "Waiting for cluster c1: the hub has not accepted it yet\nWaiting for cluster c1: its agent has not joined yet\n  Still so after 20s: see `flotilla describe cluster c1`\n"; got != want {
		t.Errorf("after %s:\n%s\nwant:\n%s", slowWait, got, want)
	}
}

func TestSplitHint(t *testing.T) {
	for _, tc := range []struct{ in, what, hint string }{
		{"plain", "plain", ""},
		{"x (a (b) c)", "x", "a (b) c"},
		{"Available=Unknown(x)", "Available=Unknown(x)", ""},
		{"cluster c is not available (Available=False), so wait", "cluster c is not available (Available=False), so wait", ""},
	} {
		if what, hint := SplitHint(tc.in); what != tc.what || hint != tc.hint {
			t.Errorf("splitHint(%q) = %q, %q", tc.in, what, hint)
		}
	}
}
