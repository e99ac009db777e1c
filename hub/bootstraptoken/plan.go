package bootstraptoken

import (
	"fmt"
	"time"
)

// Rotation is how long the hub's bootstrap tokens live and overlap.
type Rotation struct {
	// Lifetime is how long a new token is valid; 0 turns rotation off.
	Lifetime time.Duration
	// Overlap is how long the newest token has left when the next one is
	// created: a token handed out is valid at least this long.
	Overlap time.Duration
}

// DefaultRotation is a token a day, each handed out at least 6 hours before
// it expires.
var DefaultRotation = Rotation{Lifetime: 24 * time.Hour, Overlap: 6 * time.Hour}

// Validate explains a rotation that cannot work.
func (r Rotation) Validate() error {
	switch {
	case r.Lifetime < 0:
		return fmt.Errorf("--bootstrap-token-lifetime %s is negative: give a duration such as 24h, or 0 to stop rotating", r.Lifetime)
	case r.Lifetime == 0:
		return nil
	case r.Lifetime < time.Minute:
		return fmt.Errorf("--bootstrap-token-lifetime %s is under a minute: an agent could not join with the token in time (e.g. 24h)", r.Lifetime)
	case r.Overlap <= 0 || r.Overlap >= r.Lifetime:
		return fmt.Errorf("--bootstrap-token-overlap %s must be positive and shorter than --bootstrap-token-lifetime %s (e.g. 6h for 24h)", r.Overlap, r.Lifetime)
	}
	return nil
}

// token is what the plan needs to know of a bootstrap token Secret.
type token struct {
	name    string
	expires time.Time
}

// plan is what one reconcile does.
type plan struct {
	// create is set when a new token is needed, valid until its value.
	create time.Time
	// remove lists expired tokens.
	remove []string
	// wake is how long until the plan changes.
	wake time.Duration
}

// decide plans a reconcile at now over the hub's tokens.
func (r Rotation) decide(now time.Time, tokens []token) plan {
	var p plan
	var newest time.Time
	for _, t := range tokens {
		if !t.expires.After(now) {
			p.remove = append(p.remove, t.name)
			continue
		}
		if t.expires.After(newest) {
			newest = t.expires
		}
	}
	if newest.Sub(now) <= r.Overlap {
		p.create = now.Add(r.Lifetime)
		newest = p.create
	}
	// Wake to rotate the newest, or to remove the next that expires.
	p.wake = newest.Sub(now) - r.Overlap
	for _, t := range tokens {
		if left := t.expires.Sub(now); left > 0 && left < p.wake {
			p.wake = left
		}
	}
	return p
}

// decideClosed plans a reconcile at now while the join path is closed:
// remove the expired tokens, create none, and wake when the next expires.
func decideClosed(now time.Time, tokens []token) plan {
	var p plan
	for _, t := range tokens {
		left := t.expires.Sub(now)
		if left <= 0 {
			p.remove = append(p.remove, t.name)
			continue
		}
		if p.wake == 0 || left < p.wake {
			p.wake = left
		}
	}
	return p
}
