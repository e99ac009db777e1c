package bootstraptoken

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestDecide(t *testing.T) {
	r := Rotation{Lifetime: 24 * time.Hour, Overlap: 6 * time.Hour}
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return now.Add(d) }
	cases := []struct {
		name   string
		tokens []token
		want   plan
	}{
		{
			name: "no token: create one, wake when it is due for rotation",
			want: plan{create: at(24 * time.Hour), wake: 18 * time.Hour},
		},
		{
			name:   "a fresh token: nothing to do until it has the overlap left",
			tokens: []token{{"a", at(20 * time.Hour)}},
			want:   plan{wake: 14 * time.Hour},
		},
		{
			name:   "the newest has just the overlap left: rotate, wake when the old one expires",
			tokens: []token{{"a", at(6 * time.Hour)}},
			want:   plan{create: at(24 * time.Hour), wake: 6 * time.Hour},
		},
		{
			name:   "the old one expired: remove it",
			tokens: []token{{"a", now}, {"b", at(18 * time.Hour)}},
			want:   plan{remove: []string{"a"}, wake: 12 * time.Hour},
		},
		{
			name:   "every token expired: remove them and create one",
			tokens: []token{{"a", at(-time.Hour)}, {"b", at(-time.Minute)}},
			want:   plan{create: at(24 * time.Hour), remove: []string{"a", "b"}, wake: 18 * time.Hour},
		},
		{
			name:   "a token that outlives the newest rotation point is kept, and woken for",
			tokens: []token{{"a", at(10 * time.Hour)}, {"b", at(3 * time.Hour)}},
			want:   plan{wake: 3 * time.Hour},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := r.decide(now, tc.tokens)
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(plan{})); diff != "" {
				t.Errorf("decide (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecideClosed(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	got := decideClosed(now, []token{{"a", now.Add(-time.Hour)}, {"b", now.Add(3 * time.Hour)}, {"c", now.Add(time.Hour)}})
	want := plan{remove: []string{"a"}, wake: time.Hour}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(plan{})); diff != "" {
		t.Errorf("decideClosed (-want +got):\n%s", diff)
	}
	if got := decideClosed(now, nil); !cmp.Equal(got, plan{}, cmp.AllowUnexported(plan{})) {
		t.Errorf("no token: %+v, want nothing to do and no wake-up", got)
	}
}

func TestRotationValidate(t *testing.T) {
	cases := []struct {
		r  Rotation
		ok bool
	}{
		{DefaultRotation, true},
		{Rotation{}, true}, // off
		{Rotation{Lifetime: -time.Hour}, false},
		{Rotation{Lifetime: time.Second, Overlap: time.Millisecond}, false},
		{Rotation{Lifetime: time.Hour}, false},
		{Rotation{Lifetime: time.Hour, Overlap: time.Hour}, false},
		{Rotation{Lifetime: time.Hour, Overlap: 10 * time.Minute}, true},
	}
	for _, tc := range cases {
		if err := tc.r.Validate(); (err == nil) != tc.ok {
			t.Errorf("%+v: Validate() = %v, want ok=%t", tc.r, err, tc.ok)
		}
	}
}
