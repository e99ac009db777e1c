package services

import "maps"

// Small helpers both sides may use (H2's export side wrote them; see
// /work/briefs/h2-notes.md).

// clonePtr returns a copy of *p in a new variable, or nil.
func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// deref returns *p, or the zero value for nil.
func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// cloneMap returns a copy of m, or nil for an empty map.
func cloneMap(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	return maps.Clone(m)
}
