package template

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	"github.com/flotilla-io/flotilla/internal/addon"
)

// health sets Available from the deploy works (WorkloadAvailability: every
// Deployment and DaemonSet), once ManifestApplied exists and while the
// cluster's availability is known (the add-on manager copies an Unknown).
func (r *Reconciler) health(_ context.Context, s *state) (bool, error) {
	if meta.FindStatusCondition(s.mca.Status.Conditions, addon.ConditionManifestApplied) == nil {
		return true, nil
	}
	if c := meta.FindStatusCondition(s.cluster.Status.Conditions, clusterv1.ManagedClusterConditionAvailable); c == nil || c.Status == metav1.ConditionUnknown {
		return true, nil
	}
	var works []*workv1.ManifestWork
	for _, d := range s.deploy {
		switch w := s.works[d.Name]; {
		case s.written[d.Name]:
			// Written in this pass: it exists, and has no status of its
			// own yet, as the next pass will find it.
			works = append(works, d)
		case w != nil:
			works = append(works, w)
		}
	}
	status, reason, msg := available(s.mca.Name, len(s.deploy), works, probesOf(s.objs))
	meta.SetStatusCondition(&s.mca.Status.Conditions, metav1.Condition{
		Type: addon.ConditionAvailable, Status: status, Reason: reason, Message: msg, ObservedGeneration: s.mca.Generation,
	})
	return false, nil
}

// probe is a workload whose health is probed.
type probe struct {
	kind string
	id   workv1.ResourceIdentifier
}

func probesOf(objs []object) []probe {
	var out []probe
	for _, o := range objs {
		if _, ok := workload(o.obj); ok && !o.hook {
			out = append(out, probe{kind: o.obj.GetKind(), id: identifier(o.obj)})
		}
	}
	return out
}

// available is the add-on's Available condition from its deploy works
// (want of them rendered, works those the cache holds): docs/addons.md,
// section 7.
func available(a string, want int, works []*workv1.ManifestWork, probes []probe) (metav1.ConditionStatus, string, string) {
	if want == 0 || len(works) < want {
		return metav1.ConditionUnknown, ReasonWorkNotFound, "the add-on's ManifestWorks are not found"
	}
	for _, w := range works {
		c := meta.FindStatusCondition(w.Status.Conditions, workv1.WorkAvailable)
		if c == nil {
			return metav1.ConditionUnknown, ReasonWorkNotApplied, fmt.Sprintf("ManifestWork %s has not reported Available yet", w.Name)
		}
		if c.Status == metav1.ConditionFalse {
			return metav1.ConditionFalse, ReasonWorkNotApplied, fmt.Sprintf("ManifestWork %s is not Available: %s", w.Name, c.Message)
		}
	}
	for _, p := range probes {
		values := probed(works, p.id)
		if len(values) == 0 {
			return metav1.ConditionUnknown, ReasonNoProbeResult, fmt.Sprintf("%s %s/%s has reported no status yet", p.kind, p.id.Namespace, p.id.Name)
		}
		if why := unhealthy(p.kind, values); why != "" {
			return metav1.ConditionFalse, ReasonProbeUnavailable, fmt.Sprintf("%s %s/%s is not available: %s", p.kind, p.id.Namespace, p.id.Name, why)
		}
	}
	return metav1.ConditionTrue, ReasonProbeAvailable, a + " add-on is available."
}

// probed are the feedback values the works report for id.
func probed(works []*workv1.ManifestWork, id workv1.ResourceIdentifier) []workv1.FeedbackValue {
	for _, w := range works {
		for _, m := range w.Status.ResourceStatus.Manifests {
			rm := m.ResourceMeta
			if rm.Group == id.Group && rm.Resource == id.Resource && rm.Name == id.Name && rm.Namespace == id.Namespace {
				return m.StatusFeedback.Values
			}
		}
	}
	return nil
}

// unhealthy says why a workload with these values is not healthy, "" when
// it is: a Deployment with a ready replica or none wanted, a DaemonSet
// with every scheduled pod ready.
func unhealthy(kind string, values []workv1.FeedbackValue) string {
	n := func(name string) (int64, bool) {
		v := feedback(values, name)
		if v == nil || v.Integer == nil {
			return 0, false
		}
		return *v.Integer, true
	}
	switch kind {
	case "Deployment":
		if ready, _ := n("ReadyReplicas"); ready >= 1 {
			return ""
		}
		if replicas, ok := n("Replicas"); ok && replicas == 0 {
			return ""
		}
		return "no replica is ready"
	case "DaemonSet":
		ready, _ := n("NumberReady")
		desired, _ := n("DesiredNumberScheduled")
		if ready == desired {
			return ""
		}
		return fmt.Sprintf("%d of %d scheduled pods are ready", ready, desired)
	}
	return ""
}
