package workreplicaset

import (
	"maps"
	"testing"
	"time"
)

func TestKeepForFailover(t *testing.T) {
	gone := func(name string, at time.Duration) leaver { return leaver{cluster: name, unreachableSince: t0.Add(at)} }
	tests := []struct {
		name    string
		leavers []leaver
		chosen  []candidate
		want    map[string]string
	}{
		{name: "a reachable leaver is not kept",
			leavers: []leaver{{cluster: "c1"}}, chosen: []candidate{{cluster: "c4"}},
			want: map[string]string{}},
		{name: "an unreachable leaver waits for a replacement without a work",
			leavers: []leaver{gone("c1", 0)}, chosen: []candidate{{cluster: "c2", workCreated: t0.Add(-time.Hour), available: true}, {cluster: "c4"}},
			want: map[string]string{"c1": "c4"}},
		{name: "and for a replacement whose new work is not Available yet",
			leavers: []leaver{gone("c1", 0)}, chosen: []candidate{{cluster: "c4", workCreated: t0.Add(time.Minute)}},
			want: map[string]string{"c1": "c4"}},
		{name: "a work created in the taint's second counts as new",
			leavers: []leaver{gone("c1", 500*time.Millisecond)}, chosen: []candidate{{cluster: "c4", workCreated: t0}},
			want: map[string]string{"c1": "c4"}},
		{name: "once the replacement is Available the leaver goes",
			leavers: []leaver{gone("c1", 0)}, chosen: []candidate{{cluster: "c4", workCreated: t0.Add(time.Minute), available: true}},
			want: map[string]string{}},
		{name: "a cluster that had its work before the outage is no replacement: kept until one is chosen",
			leavers: []leaver{gone("c1", 0)}, chosen: []candidate{{cluster: "c2", workCreated: t0.Add(-time.Hour), available: true}},
			want: map[string]string{"c1": ""}},
		{name: "no cluster chosen at all: kept while unreachable",
			leavers: []leaver{gone("c1", 0)},
			want:    map[string]string{"c1": ""}},
		{name: "one replacement per leaver, in name order",
			leavers: []leaver{gone("c9", 0), gone("c1", 0), gone("c5", 0)}, chosen: []candidate{{cluster: "r2"}, {cluster: "r1", available: true}},
			want: map[string]string{"c5": "r2", "c9": ""}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := keepForFailover(tc.leavers, tc.chosen); !maps.Equal(got, tc.want) {
				t.Errorf("kept %v, want %v", got, tc.want)
			}
		})
	}
}
