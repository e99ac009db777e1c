package workreplicaset

import (
	"cmp"
	"slices"
	"time"
)

// leaver is a cluster that has a work but is no longer chosen.
type leaver struct {
	cluster string
	// unreachableSince is when the hub tainted it unreachable; zero if it
	// is not.
	unreachableSince time.Time
}

// candidate is a chosen cluster that may be a leaver's replacement.
type candidate struct {
	cluster string
	// workCreated is when its work was created; zero if it has none yet.
	workCreated time.Time
	available   bool
}

// keepForFailover decides which leavers keep their work: one that left
// while unreachable keeps it until a replacement reports Available, so that
// an outage never leaves fewer copies than before. A replacement is a
// chosen cluster whose work did not exist before the leaver turned
// unreachable; each replaces one leaver, in name order. A leaver with no
// replacement keeps its work while it stays unreachable (when it comes back
// it is an ordinary leaver). The result maps each kept leaver to its
// replacement, "" when it has none.
func keepForFailover(leavers []leaver, chosen []candidate) map[string]string {
	leavers = slices.Clone(leavers)
	slices.SortFunc(leavers, func(a, b leaver) int { return cmp.Compare(a.cluster, b.cluster) })
	chosen = slices.Clone(chosen)
	slices.SortFunc(chosen, func(a, b candidate) int { return cmp.Compare(a.cluster, b.cluster) })
	taken := map[string]bool{}
	kept := map[string]string{}
	for _, l := range leavers {
		if l.unreachableSince.IsZero() {
			continue
		}
		// Timestamps have whole seconds: a work created in the same second
		// as the taint came after it.
		since := l.unreachableSince.Truncate(time.Second)
		kept[l.cluster] = ""
		for _, c := range chosen {
			if taken[c.cluster] || (!c.workCreated.IsZero() && c.workCreated.Before(since)) {
				continue
			}
			taken[c.cluster] = true
			if c.available {
				delete(kept, l.cluster)
			} else {
				kept[l.cluster] = c.cluster
			}
			break
		}
	}
	return kept
}
