package scheduler

import (
	"time"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	clusterv1beta1 "github.com/flotilla-io/flotilla/api/cluster/v1beta1"
)

// tolerates says whether toleration t matches taint, whatever its seconds.
// An empty key (with Exists) matches every key; an empty effect every effect.
func tolerates(t clusterv1beta1.Toleration, taint clusterv1.Taint) bool {
	if t.Effect != "" && t.Effect != taint.Effect {
		return false
	}
	if t.Key != "" && t.Key != taint.Key {
		return false
	}
	switch t.Operator {
	case "", clusterv1beta1.TolerationOpEqual:
		return t.Value == taint.Value
	case clusterv1beta1.TolerationOpExists:
		return true
	}
	return false
}

// toleratedUntil says whether tolerations tolerate taint at now and, when
// they do only for a while (tolerationSeconds from the taint's timeAdded),
// until when; a zero time means for good.
func toleratedUntil(tolerations []clusterv1beta1.Toleration, taint clusterv1.Taint, now time.Time) (bool, time.Time) {
	var until time.Time
	tolerated := false
	for _, t := range tolerations {
		if !tolerates(t, taint) {
			continue
		}
		if t.TolerationSeconds == nil {
			return true, time.Time{}
		}
		expiry := taint.TimeAdded.Add(time.Duration(*t.TolerationSeconds) * time.Second)
		if now.Before(expiry) {
			tolerated = true
			if expiry.After(until) {
				until = expiry
			}
		}
	}
	return tolerated, until
}

// taintVerdict is what a cluster's taints say about selecting it.
type taintVerdict struct {
	// excludedBy is the first taint that keeps the cluster out, if any.
	excludedBy *clusterv1.Taint
	// avoid counts untolerated PreferNoSelect taints.
	avoid int
	// changesAt is the soonest time a toleration in use runs out (zero: never).
	changesAt time.Time
}

// checkTaints applies tolerations to a cluster's taints: NoSelect excludes
// an untolerated cluster; NoSelectIfNew too, unless the cluster is already
// chosen; PreferNoSelect only makes it less preferred. Unknown effects are
// ignored, as OCM does.
func checkTaints(taints []clusterv1.Taint, tolerations []clusterv1beta1.Toleration, chosen bool, now time.Time) taintVerdict {
	var v taintVerdict
	for i := range taints {
		taint := taints[i]
		switch taint.Effect {
		case clusterv1.TaintEffectNoSelect, clusterv1.TaintEffectPreferNoSelect:
		case clusterv1.TaintEffectNoSelectIfNew:
			if chosen {
				continue
			}
		default:
			continue
		}
		ok, until := toleratedUntil(tolerations, taint, now)
		if ok {
			if !until.IsZero() && (v.changesAt.IsZero() || until.Before(v.changesAt)) {
				v.changesAt = until
			}
			continue
		}
		if taint.Effect == clusterv1.TaintEffectPreferNoSelect {
			v.avoid++
			continue
		}
		v.excludedBy = &taints[i]
		return v
	}
	return v
}
