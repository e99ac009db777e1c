package services

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	mcsv1alpha1 "github.com/flotilla-io/flotilla/api/mcs/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/mcs"
)

// exportStatus is the conditions a ServiceExport should have. A zero
// conflict removes the Conflict condition (an invalid export is compared
// with no other).
type exportStatus struct {
	generation             int64
	valid, ready, conflict metav1.Condition
}

func condition(t mcsv1beta1.ServiceExportConditionType, s metav1.ConditionStatus, r mcsv1beta1.ServiceExportConditionReason, msg string) metav1.Condition {
	return mcsv1beta1.NewServiceExportCondition(t, s, r, msg)
}

// conflictOf is the Conflict condition of a ServiceExport published as
// es: the hub's verdict, or NoConflicts while the hub has given none.
func conflictOf(es *mcsv1alpha1.ExportedService) metav1.Condition {
	if es != nil {
		if c := meta.FindStatusCondition(es.Status.Conditions, mcsv1alpha1.ConditionConflict); c != nil {
			return metav1.Condition{Type: string(mcsv1beta1.ServiceExportConditionConflict), Status: c.Status, Reason: c.Reason, Message: c.Message}
		}
	}
	return condition(mcsv1beta1.ServiceExportConditionConflict, metav1.ConditionFalse, mcsv1beta1.ServiceExportReasonNoConflicts,
		"the hub has reported no conflict with the cluster set's other exports of the service")
}

// readiness is the Ready condition of the export of Service key, published
// as es: True once the ImportedService of the cluster's set lists the
// cluster, else Pending with what it waits for.
func (e *exporter) readiness(ctx context.Context, key types.NamespacedName, es *mcsv1alpha1.ExportedService) metav1.Condition {
	pending := func(format string, args ...any) metav1.Condition {
		return condition(mcsv1beta1.ServiceExportConditionReady, metav1.ConditionFalse, mcsv1beta1.ServiceExportReasonPending, fmt.Sprintf(format, args...))
	}
	published := fmt.Sprintf("ExportedService %s/%s", es.Namespace, es.Name)
	hubSays := ""
	if c := meta.FindStatusCondition(es.Status.Conditions, mcsv1alpha1.ConditionInClusterSet); c != nil && c.Status == metav1.ConditionFalse {
		hubSays = c.Message
	}
	set, state, is := e.sets.get(key.Namespace, key.Name)
	imported := fmt.Sprintf("ImportedService %s/%s", mcs.SetNamespace(set), mcs.ObjectName(key.Namespace, key.Name))
	switch {
	case state == importNoSet:
		msg := fmt.Sprintf("published as %s, but the cluster is in no cluster set: label its ManagedCluster %s with %s=<set> on the hub (the set must exist and select its clusters by that label)",
			published, e.cluster, clusterv1.ClusterSetLabel)
		if hubSays != "" {
			msg += "; the hub says: " + hubSays
		}
		return pending("%s", msg)
	case hubSays != "":
		return pending("published as %s, but the hub imports it into no cluster set: %s", published, hubSays)
	case state == importNotSynced:
		return pending("published as %s; waiting to read the ImportedServices of cluster set %s (hub namespace %s), which the hub allows once the cluster is a member of the set",
			published, set, mcs.SetNamespace(set))
	case state == importMissing:
		return pending("published as %s (generation %d); waiting for the hub to merge it into %s", published, es.Generation, imported)
	}
	// Listed at any generation is Ready: a newer generation (an endpoint
	// change) is merged within moments, and flipping to Pending and back
	// around every one was two more writes in the cluster per change.
	for _, c := range is.Spec.Clusters {
		if c.Name == e.cluster {
			return condition(mcsv1beta1.ServiceExportConditionReady, metav1.ConditionTrue, mcsv1beta1.ServiceExportReasonReady,
				fmt.Sprintf("exported to cluster set %s: %s lists this cluster", set, imported))
		}
	}
	return pending("published as %s (generation %d); waiting for the hub to list this cluster in %s", published, es.Generation, imported)
}

// writeStatus sets the ServiceExport's conditions to st, writing only when
// that changes them.
func (e *exporter) writeStatus(ctx context.Context, se *mcsv1beta1.ServiceExport, st exportStatus) error {
	conds := applyExportStatus(se.Status.Conditions, st)
	if equality.Semantic.DeepEqual(conds, se.Status.Conditions) {
		return nil
	}
	next := se.DeepCopy()
	next.Status.Conditions = conds
	// A merge patch without a resourceVersion: the agent is the only
	// writer of the conditions, and a cache a write behind must not cost
	// a conflict and a second write.
	if err := e.spoke.Status().Patch(ctx, next, client.MergeFrom(se)); err != nil {
		return fmt.Errorf("update the status of ServiceExport %s/%s: %w", se.Namespace, se.Name, err)
	}
	return nil
}

// applyExportStatus returns a copy of conds with st's conditions set: a
// condition's lastTransitionTime stays unless its status changes.
func applyExportStatus(conds []metav1.Condition, st exportStatus) []metav1.Condition {
	out := make([]metav1.Condition, 0, 3)
	for _, c := range conds {
		out = append(out, *c.DeepCopy())
	}
	for _, c := range []metav1.Condition{st.valid, st.ready, st.conflict} {
		if c.Type == "" {
			continue
		}
		c.ObservedGeneration = st.generation
		if old := meta.FindStatusCondition(out, c.Type); old != nil && old.Status == c.Status {
			c.LastTransitionTime = old.LastTransitionTime
		}
		meta.SetStatusCondition(&out, c)
	}
	if st.conflict.Type == "" {
		meta.RemoveStatusCondition(&out, string(mcsv1beta1.ServiceExportConditionConflict))
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
