package registration

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/client-go/dynamic"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
)

// NodeTransform is the cache transform for Nodes that the status controller needs.
var NodeTransform = stripNode

// statusController writes the ManagedCluster's status from what it sees on
// the spoke. It runs on the spoke's manager, for the whole life of the
// agent, and does nothing while the agent holds no hub credentials.
type statusController struct {
	r     *Registration
	spoke client.Reader
	// about reads the About API's ClusterProperties, where served.
	about *aboutProperties
	// failures counts failed reconciles in a row, for the backoff.
	failures int
	// conflicted says the last write met a newer ManagedCluster: the next
	// read asks the hub, as the session's watch may not have brought it.
	conflicted bool
}

// SetupWithManager adds the status controller to mgr, a manager of the
// spoke whose cache holds Nodes (with NodeTransform) and ClusterClaims.
func (r *Registration) SetupWithManager(mgr ctrl.Manager) error {
	dyn, err := dynamic.NewForConfig(mgr.GetConfig())
	if err != nil {
		return fmt.Errorf("create a dynamic client of the managed cluster: %w", err)
	}
	c := &statusController{r: r, spoke: mgr.GetClient(), about: newAboutProperties(dyn)}
	if err := mgr.Add(c.about); err != nil {
		return err
	}
	toCluster := func(context.Context, client.Object) []reconcile.Request {
		return []reconcile.Request{{NamespacedName: client.ObjectKey{Name: r.cfg.ClusterName}}}
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named("managedcluster-status").
		WatchesRawSource(source.Kind(mgr.GetCache(), &corev1.Node{},
			handler.TypedEnqueueRequestsFromMapFunc(func(ctx context.Context, n *corev1.Node) []reconcile.Request { return toCluster(ctx, n) }),
			predicate.TypedFuncs[*corev1.Node]{UpdateFunc: func(e event.TypedUpdateEvent[*corev1.Node]) bool {
				return nodeInventoryChanged(e.ObjectOld, e.ObjectNew)
			}})).
		WatchesRawSource(source.Kind(mgr.GetCache(), &clusterv1alpha1.ClusterClaim{},
			handler.TypedEnqueueRequestsFromMapFunc(func(ctx context.Context, c *clusterv1alpha1.ClusterClaim) []reconcile.Request {
				return toCluster(ctx, c)
			}))).
		WatchesRawSource(source.Channel(r.wake, handler.EnqueueRequestsFromMapFunc(toCluster))).
		WatchesRawSource(source.Channel(c.about.changed, handler.EnqueueRequestsFromMapFunc(toCluster))).
		Complete(c)
}

// nodeInventoryChanged says whether a node update changes what the
// inventory reads; most updates are heartbeats that do not.
func nodeInventoryChanged(old, updated *corev1.Node) bool {
	return old.Spec.ProviderID != updated.Spec.ProviderID ||
		!equality.Semantic.DeepEqual(old.Status.Capacity, updated.Status.Capacity) ||
		!equality.Semantic.DeepEqual(old.Status.Allocatable, updated.Status.Allocatable)
}

// Reconcile reads the ManagedCluster, works out its status, and patches
// what changed. It runs when the session's watch first sees the cluster
// or a new lease duration, and again every lease period, to notice
// changes on the spoke that no watch reports (the API server's health
// and version).
func (c *statusController) Reconcile(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
	s := c.r.current.Load()
	if s == nil {
		return reconcile.Result{}, nil
	}
	mc, err := c.read(ctx, s)
	if err != nil {
		return c.retry(ctx, "Cannot read the ManagedCluster; retrying", s.hubErr(err))
	}
	if mc == nil {
		// The session's watch wakes the controller once it sees the cluster.
		return reconcile.Result{}, nil
	}
	c.r.leaseSeconds.Store(mc.Spec.LeaseDurationSeconds)
	if err := c.ensureAgentAnnotation(ctx, s, mc); err != nil {
		return c.retry(ctx, "Cannot record the agent id on the ManagedCluster; retrying", s.hubErr(err))
	}

	desired := mc.DeepCopy()
	var errs []error
	for _, phase := range []func(context.Context, *clusterv1.ManagedCluster) error{
		c.joined, c.available, c.inventory,
	} {
		errs = append(errs, phase(ctx, desired))
	}
	if !equality.Semantic.DeepEqual(mc.Status, desired.Status) {
		// The hub writes other conditions of the same list: patch only
		// the version that was read.
		patch := client.MergeFromWithOptions(mc, client.MergeFromWithOptimisticLock{})
		if err := s.client.Status().Patch(ctx, desired, patch); err != nil {
			return c.retry(ctx, "Cannot update the ManagedCluster status; retrying", s.hubErr(err))
		}
		klog.FromContext(ctx).V(1).Info("Updated the ManagedCluster status")
	}
	if err := kerrors.NewAggregate(errs); err != nil {
		return c.retry(ctx, "Cannot read the cluster's state; retrying", err)
	}
	c.failures, c.conflicted = 0, false
	return reconcile.Result{RequeueAfter: c.r.leasePeriod()}, nil
}

// read returns the ManagedCluster as the session's watch last saw it, or
// nil while the watch has not listed it yet: it starts once the hub
// accepted the cluster, and wakes the controller when it first sees it.
// It asks the hub after a conflict, with a quorum read, as the watch may
// not have brought the newer version yet; and when the watch sees no
// cluster, for the hub's answer.
func (c *statusController) read(ctx context.Context, s *session) (*clusterv1.ManagedCluster, error) {
	if !c.conflicted {
		mc, watching := s.cluster.get()
		if !watching || mc != nil {
			return mc, nil
		}
	}
	mc := &clusterv1.ManagedCluster{}
	return mc, s.client.Get(ctx, client.ObjectKey{Name: c.r.cfg.ClusterName}, mc)
}

// retry logs why a reconcile failed in one line and asks to be run again
// after a backoff no longer than the lease period.
func (c *statusController) retry(ctx context.Context, msg string, err error) (reconcile.Result, error) {
	c.conflicted = apierrors.IsConflict(err)
	if c.conflicted {
		// The hub wrote the ManagedCluster since it was read: read it again.
		klog.FromContext(ctx).V(1).Info("The ManagedCluster changed while being updated; retrying")
		return reconcile.Result{RequeueAfter: 100 * time.Millisecond}, nil
	}
	c.failures++
	b := newBackoff(c.r.leasePeriod())
	var d time.Duration
	for range c.failures {
		d = b.Step()
	}
	klog.FromContext(ctx).Info(msg, "reason", err.Error(), "retryIn", d.Round(time.Millisecond))
	return reconcile.Result{RequeueAfter: d}, nil
}

// ensureAgentAnnotation records which agent holds the ManagedCluster, for
// an agent of another cluster or a second agent to see.
func (c *statusController) ensureAgentAnnotation(ctx context.Context, s *session, mc *clusterv1.ManagedCluster) error {
	id := s.creds.Load().AgentID
	if mc.Annotations[AgentIDAnnotation] == id {
		return nil
	}
	// A merge patch of the annotation alone: an update would carry the
	// whole object as read, and the hub refuses an agent's write that
	// differs from the current object in fields only the hub may change
	// (taints the hub wrote since, say) before it could report a conflict.
	before := mc.DeepCopy()
	if mc.Annotations == nil {
		mc.Annotations = map[string]string{}
	}
	mc.Annotations[AgentIDAnnotation] = id
	return s.client.Patch(ctx, mc, client.MergeFrom(before))
}

// joined records that the agent holds hub credentials: a session exists
// only after they were stored.
func (c *statusController) joined(_ context.Context, mc *clusterv1.ManagedCluster) error {
	meta.SetStatusCondition(&mc.Status.Conditions, joinedCondition())
	return nil
}

// available reports the spoke API server's /livez (/healthz where there is
// no /livez). An unhealthy server is an error too, so that the controller
// looks again after a backoff rather than a lease period later: a server
// that is starting fails /livez for a moment, and its cluster would stay
// unavailable for a minute after it serves.
func (c *statusController) available(ctx context.Context, mc *clusterv1.ManagedCluster) error {
	err := c.probe(ctx)
	meta.SetStatusCondition(&mc.Status.Conditions, availableCondition(err))
	if err != nil {
		return fmt.Errorf("the kube-apiserver is not healthy: %w", err)
	}
	return nil
}

func joinedCondition() metav1.Condition {
	return metav1.Condition{
		Type:    clusterv1.ManagedClusterConditionJoined,
		Status:  metav1.ConditionTrue,
		Reason:  clusterv1.ReasonManagedClusterJoined,
		Message: "Managed cluster joined",
	}
}

// availableCondition is ManagedClusterConditionAvailable after a health
// probe of the spoke API server that returned probeErr.
func availableCondition(probeErr error) metav1.Condition {
	if probeErr != nil {
		return metav1.Condition{
			Type:    clusterv1.ManagedClusterConditionAvailable,
			Status:  metav1.ConditionFalse,
			Reason:  clusterv1.ReasonManagedClusterKubeAPIServerUnavailable,
			Message: fmt.Sprintf("The kube-apiserver is not healthy: %v", probeErr),
		}
	}
	return metav1.Condition{
		Type:    clusterv1.ManagedClusterConditionAvailable,
		Status:  metav1.ConditionTrue,
		Reason:  clusterv1.ReasonManagedClusterAvailable,
		Message: "Managed cluster is available",
	}
}

func (c *statusController) probe(ctx context.Context) error {
	rc := c.r.cfg.Spoke.Discovery().RESTClient()
	var err error
	for _, path := range []string{"/livez", "/healthz"} {
		var code int
		var body []byte
		body, err = rc.Get().AbsPath(path).Do(ctx).StatusCode(&code).Raw()
		if code == http.StatusNotFound {
			continue
		}
		if err != nil {
			return healthError(path, err, body)
		}
		return nil
	}
	return err
}

// healthError says why a health endpoint failed: the checks it reports
// failing, once, rather than its whole report (which err repeats).
func healthError(path string, err error, body []byte) error {
	var failing []string
	for _, line := range strings.Split(string(body), "\n") {
		if strings.HasPrefix(line, "[-]") {
			failing = append(failing, strings.TrimPrefix(line, "[-]"))
		}
	}
	if len(failing) == 0 {
		return fmt.Errorf("%s: %w", path, err)
	}
	return fmt.Errorf("%s: %s", path, strings.Join(failing, "; "))
}

// inventory reports the version, the resources summed over nodes and the
// cluster claims, ClusterProperties among them.
func (c *statusController) inventory(ctx context.Context, mc *clusterv1.ManagedCluster) error {
	version, err := c.r.cfg.Spoke.Discovery().ServerVersion()
	if err != nil {
		return fmt.Errorf("read the spoke's version: %w", err)
	}
	nodes := &corev1.NodeList{}
	if err := c.spoke.List(ctx, nodes); err != nil {
		return fmt.Errorf("list nodes: %w", err)
	}
	claims := &clusterv1alpha1.ClusterClaimList{}
	if err := c.spoke.List(ctx, claims); err != nil {
		return fmt.Errorf("list ClusterClaims: %w", err)
	}
	properties, err := c.about.properties(ctx)
	if err != nil {
		return err
	}
	mc.Status.Version.Kubernetes = version.GitVersion
	mc.Status.Capacity, mc.Status.Allocatable = resourceTotals(nodes.Items)
	mc.Status.ClusterClaims = clusterClaims(reservedClaims(c.r.me.clusterID, version.GitVersion, nodes.Items), claims.Items, properties, MaxCustomClusterClaims)
	return nil
}
