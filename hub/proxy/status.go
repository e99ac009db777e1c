package proxy

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/source"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	"github.com/flotilla-io/flotilla/internal/tunnel"
)

// The condition the hub keeps on each ManagedCluster about its tunnel.
const (
	ConditionTunnelConnected = tunnel.ConditionConnected
	// ReasonAgentConnected: the agent's tunnel is open.
	ReasonAgentConnected = "AgentConnected"
	// ReasonAgentNotConnected: no tunnel is open (yet, or any more).
	ReasonAgentNotConnected = "AgentNotConnected"
	// ReasonHubClusterAdminDenied: the hub does not accept the cluster,
	// so it opens no tunnel.
	ReasonHubClusterAdminDenied = clusterv1.ReasonHubClusterAdminDenied
	// ReasonAgentLeaseUpdateStopped: a tunnel is open, but its agent
	// stopped renewing its lease (the hub set Available Unknown), as a
	// frozen agent does whose TCP connection the kernel keeps open.
	ReasonAgentLeaseUpdateStopped = "AgentLeaseUpdateStopped"
)

// StatusReconciler closes the tunnels of clusters the hub no longer
// accepts and keeps the TunnelConnected condition of every cluster in step
// with the tunnel server.
type StatusReconciler struct {
	Client client.Client
	Server *Server
	events chan event.TypedGenericEvent[*clusterv1.ManagedCluster]
}

// Setup wires the cluster proxy into the hub manager: the handler learns
// from its cache which clusters are accepted, and the reconciler runs.
func Setup(mgr manager.Manager, s *Server, h *Handler) error {
	r := &StatusReconciler{Client: mgr.GetClient(), Server: s, events: make(chan event.TypedGenericEvent[*clusterv1.ManagedCluster], 1024)}
	s.mu.Lock()
	s.changed = r.notify
	s.mu.Unlock()
	h.Accepted = func(ctx context.Context, cluster string) (bool, error) {
		var mc clusterv1.ManagedCluster
		if err := mgr.GetClient().Get(ctx, types.NamespacedName{Name: cluster}, &mc); err != nil {
			if apierrors.IsNotFound(err) {
				return false, nil
			}
			return false, err
		}
		return mc.Spec.HubAcceptsClient && mc.DeletionTimestamp.IsZero(), nil
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named("cluster-proxy-status").
		For(&clusterv1.ManagedCluster{}).
		WatchesRawSource(source.Channel(r.events, &handler.TypedEnqueueRequestForObject[*clusterv1.ManagedCluster]{})).
		Complete(r)
}

// notify queues cluster after its tunnel came or went. It never blocks
// the tunnel server: a full queue is caught up by the next resync.
func (r *StatusReconciler) notify(cluster string) {
	select {
	case r.events <- event.TypedGenericEvent[*clusterv1.ManagedCluster]{Object: &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: cluster}}}:
	default:
	}
}

// Reconcile closes the tunnel of a cluster that is gone or denied, then
// writes TunnelConnected.
func (r *StatusReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var mc clusterv1.ManagedCluster
	if err := r.Client.Get(ctx, req.NamespacedName, &mc); err != nil {
		if apierrors.IsNotFound(err) {
			r.Server.Close(req.Name)
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	accepted := mc.Spec.HubAcceptsClient && mc.DeletionTimestamp.IsZero()
	if !accepted && r.Server.Close(mc.Name) {
		klog.FromContext(ctx).Info("Closed the tunnel of a cluster the hub does not accept", "cluster", mc.Name)
	}
	t, open := r.Server.Lookup(mc.Name)
	available := meta.FindStatusCondition(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable)
	want, write := tunnelConditionUpdate(meta.FindStatusCondition(mc.Status.Conditions, ConditionTunnelConnected), accepted, available, t, open)
	if !write {
		return ctrl.Result{}, nil
	}
	orig := mc.DeepCopy()
	meta.SetStatusCondition(&mc.Status.Conditions, want)
	err := r.Client.Status().Patch(ctx, &mc, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{}))
	switch {
	case apierrors.IsNotFound(err):
		return ctrl.Result{}, nil
	case apierrors.IsConflict(err):
		return ctrl.Result{RequeueAfter: 100 * time.Millisecond}, nil
	}
	return ctrl.Result{}, err
}

// tunnelConditionUpdate returns the TunnelConnected condition of a
// cluster whose condition is current (nil: none yet), and whether it is
// to be written. available is the cluster's Available condition, nil
// until its agent has reported.
func tunnelConditionUpdate(current *metav1.Condition, accepted bool, available *metav1.Condition, t *Tunnel, open bool) (metav1.Condition, bool) {
	want := tunnelCondition(accepted, available, t, open)
	reported := available != nil
	switch {
	case current == nil && !accepted:
		// A cluster never accepted has no tunnel to speak of: a fleet
		// joining would cost a write per cluster to say so.
		return want, false
	case current == nil && !open && !reported:
		// Nor has a cluster whose agent has not reported yet: its agent
		// opens the tunnel about when it first reports, so saying "not
		// connected" first would be a second write per joining cluster.
		// The agent's first status brings the cluster back here.
		return want, false
	case current != nil && current.Status == want.Status && current.Reason == want.Reason && current.Message == want.Message:
		return want, false
	}
	return want, true
}

// tunnelCondition is the TunnelConnected condition of a cluster. It
// carries no observedGeneration: it follows the tunnel, not the spec, and
// was never rewritten when the spec changed, so a generation in it only
// went stale. An open tunnel whose agent stopped renewing its lease
// follows the lease: a frozen agent's connection stays open, but nothing
// answers through it.
func tunnelCondition(accepted bool, available *metav1.Condition, t *Tunnel, open bool) metav1.Condition {
	c := metav1.Condition{Type: ConditionTunnelConnected}
	switch {
	case !accepted:
		c.Status, c.Reason = metav1.ConditionFalse, ReasonHubClusterAdminDenied
		c.Message = "The hub does not accept the cluster, so it keeps no tunnel to it."
	case open && leaseStopped(available):
		c.Status, c.Reason = metav1.ConditionUnknown, ReasonAgentLeaseUpdateStopped
		c.Message = fmt.Sprintf("Agent %s still holds a tunnel open to the hub, but it stopped renewing its lease %s (the cluster is Available Unknown): "+
			"it may be frozen or cut off, and requests through the tunnel may not be answered.", t.AgentID, clusterv1.ManagedClusterLeaseName)
	case open:
		c.Status, c.Reason = metav1.ConditionTrue, ReasonAgentConnected
		c.Message = fmt.Sprintf("Agent %s keeps a tunnel open to the hub: the cluster is reachable at %s.", t.AgentID, "/apis/proxy.flotilla.io/v1/clusters/"+t.Cluster+"/proxy")
	default:
		c.Status, c.Reason = metav1.ConditionFalse, ReasonAgentNotConnected
		c.Message = "The cluster's agent has no tunnel open to the hub."
	}
	return c
}

// leaseStopped says whether the hub found that the cluster's agent stopped
// renewing its lease, after the registration controller's grace period.
func leaseStopped(available *metav1.Condition) bool {
	return available != nil && available.Status == metav1.ConditionUnknown && available.Reason == clusterv1.ReasonManagedClusterLeaseUpdateStopped
}
