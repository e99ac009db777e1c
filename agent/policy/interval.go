package policy

import (
	"fmt"
	"strings"
	"time"

	policyv1 "github.com/flotilla-io/flotilla/api/policy/v1"
)

// interval is an evaluationInterval for one compliance state.
type interval struct {
	// watch: evaluate whenever an object the template read changes.
	watch bool
	// never: evaluate once per generation of the template.
	never bool
	// every is the least time between evaluations otherwise.
	every time.Duration
}

// parseInterval reads "watch" (or empty), "never" or a duration.
func parseInterval(s string) (interval, error) {
	switch strings.TrimSpace(s) {
	case "", "watch":
		return interval{watch: true}, nil
	case "never":
		return interval{never: true}, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return interval{}, fmt.Errorf("invalid evaluationInterval %q: use watch, never or a duration such as 10m", s)
	}
	return interval{every: d}, nil
}

// intervalFor is the interval that applies after an evaluation with
// compliance state: noncompliant's for anything but Compliant.
func intervalFor(ei policyv1.EvaluationInterval, state policyv1.ComplianceState) (interval, error) {
	if state == policyv1.Compliant {
		return parseInterval(ei.Compliant)
	}
	return parseInterval(ei.NonCompliant)
}

// due says whether a template evaluated last at last (zero: never) for
// generation lastGen must be evaluated now for generation gen, and if not,
// how long until it must.
func (iv interval) due(now, last time.Time, lastGen, gen int64) (bool, time.Duration) {
	if last.IsZero() || lastGen != gen || iv.watch {
		return true, 0
	}
	if iv.never {
		return false, 0
	}
	if wait := last.Add(iv.every).Sub(now); wait > 0 {
		return false, wait
	}
	return true, 0
}
