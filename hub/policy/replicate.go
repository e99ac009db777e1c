package policy

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1 "github.com/flotilla-io/flotilla/api/policy/v1"
	"github.com/flotilla-io/flotilla/internal/parallel"
)

// missingNamespaceRetry is how soon a root is propagated again when a chosen
// cluster's hub namespace does not exist yet (it comes with acceptance).
const missingNamespaceRetry = 10 * time.Second

// copyWriters is how many copies of one root are written at once.
const copyWriters = 16

// findTargets finds the bindings and clusters of the root; a disabled root,
// or one whose name is too long, is copied nowhere.
func (r *Reconciler) findTargets(ctx context.Context, s *scope) (ctrl.Result, error) {
	ts, err := r.targets(ctx, s.root)
	if err != nil {
		return ctrl.Result{}, err
	}
	s.placements = ts.placements
	s.decided, s.grace = ts.decided, ts.grace
	if !s.root.Spec.Disabled && !nameTooLong(s.root) {
		s.clusters = ts.clusters
	}
	return ctrl.Result{}, nil
}

// nameTooLong says whether a root's copies would have a name longer than
// a label value may be.
func nameTooLong(root *policyv1.Policy) bool {
	return len(root.Namespace)+len(root.Name) > maxRootNameLength
}

// replicate creates or updates a copy of the root in the namespace of each
// target cluster and deletes the copies of other clusters.
func (r *Reconciler) replicate(ctx context.Context, s *scope) (ctrl.Result, error) {
	name := rootName(s.root.Namespace, s.root.Name)
	existing, err := r.listCopies(ctx, name)
	if err != nil {
		return ctrl.Result{}, err
	}
	s.copies = map[string]*policyv1.Policy{}
	var result ctrl.Result
	base := s.root.DeepCopy()
	if err := r.expandSetDependencies(ctx, s.root, &base.Spec); err != nil {
		return ctrl.Result{}, err
	}
	// Templates resolve one cluster after another (they share what they
	// read); the copies are written in parallel.
	type write struct {
		cluster   string
		want, cur *policyv1.Policy
		notes     []string
		written   *policyv1.Policy
	}
	writes := make([]*write, 0, len(s.clusters))
	for _, cluster := range s.clusters {
		want := replicaOf(base, cluster)
		notes, err := r.resolveHubTemplates(ctx, s, want, existing[cluster], cluster)
		if err != nil {
			return ctrl.Result{}, err
		}
		writes = append(writes, &write{cluster: cluster, want: want, cur: existing[cluster], notes: notes})
	}
	jobs := make([]func(context.Context) error, len(writes))
	for i, w := range writes {
		jobs[i] = func(ctx context.Context) (err error) {
			w.written, err = r.writeCopy(ctx, w.want, w.cur)
			return err
		}
	}
	errs := parallel.Run(ctx, copyWriters, jobs)
	var failed []error
	for i, w := range writes {
		switch err := errs[i]; {
		case apierrors.IsNotFound(err):
			klog.FromContext(ctx).V(1).Info("Cluster namespace does not exist yet", "policy", klog.KObj(s.root), "cluster", w.cluster)
			result.RequeueAfter = missingNamespaceRetry
			continue
		case err != nil:
			failed = append(failed, err)
			continue
		}
		// The event describes the copy just written, not the root's status:
		// it goes now, so that a later failure of this pass cannot lose it.
		// One event per copy, naming it as related: the recorder folds
		// events that differ only in their note into one series, which
		// would keep one error and drop the others.
		if len(w.notes) > 0 {
			r.Recorder.Eventf(s.root, w.written, corev1.EventTypeWarning, reasonHubTemplateError, "Resolve", "%s", hubTemplateEventNote(strings.Join(w.notes, "; "), w.written))
		}
		s.copies[w.cluster] = w.written
		delete(existing, w.cluster)
	}
	if len(failed) > 0 {
		return ctrl.Result{}, errors.Join(failed...)
	}
	// The copies left in existing belong to clusters no longer chosen:
	// those the hub tainted for health stay for failover.
	wait, err := r.keepForFailover(ctx, s, existing)
	if err != nil {
		return ctrl.Result{}, err
	}
	if wait > 0 && (result.RequeueAfter == 0 || wait < result.RequeueAfter) {
		result.RequeueAfter = wait
	}
	if err := r.deleteCopies(ctx, name, existing); err != nil {
		return ctrl.Result{}, err
	}
	// Only a pass that resolved for every cluster knows all that is read.
	r.refs.track(client.ObjectKeyFromObject(s.root), s.hubTemplates, s.refs)
	return result, nil
}

// listCopies returns the copies of a root, by namespace.
func (r *Reconciler) listCopies(ctx context.Context, name string) (map[string]*policyv1.Policy, error) {
	list := &policyv1.PolicyList{}
	if err := r.Client.List(ctx, list, client.MatchingLabels{policyv1.RootPolicyLabel: name}); err != nil {
		return nil, fmt.Errorf("list the replicated policies of %s: %w", name, err)
	}
	out := make(map[string]*policyv1.Policy, len(list.Items))
	for i := range list.Items {
		out[list.Items[i].Namespace] = &list.Items[i]
	}
	return out, nil
}

// deleteCopies deletes the given copies of a root, or all of them when
// copies is nil.
func (r *Reconciler) deleteCopies(ctx context.Context, name string, copies map[string]*policyv1.Policy) error {
	if copies == nil {
		var err error
		if copies, err = r.listCopies(ctx, name); err != nil {
			return err
		}
	}
	for _, ns := range slices.Sorted(maps.Keys(copies)) {
		if err := r.Client.Delete(ctx, copies[ns]); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("delete replicated policy %s/%s: %w", ns, name, err)
		}
	}
	return nil
}

// writeCopy creates the copy want, or updates cur to match.
func (r *Reconciler) writeCopy(ctx context.Context, want, cur *policyv1.Policy) (*policyv1.Policy, error) {
	if cur == nil {
		if err := r.Client.Create(ctx, want); err != nil {
			// NotFound (the cluster namespace is missing) stays recognisable.
			return nil, fmt.Errorf("create replicated policy %s/%s: %w", want.Namespace, want.Name, err)
		}
		return want, nil
	}
	if maps.Equal(cur.Labels, want.Labels) && maps.Equal(cur.Annotations, want.Annotations) && equality.Semantic.DeepEqual(cur.Spec, want.Spec) {
		return cur, nil
	}
	upd := cur.DeepCopy()
	upd.Labels, upd.Annotations, upd.Spec = want.Labels, want.Annotations, want.Spec
	if err := r.Client.Update(ctx, upd); err != nil {
		return nil, fmt.Errorf("update replicated policy %s/%s: %w", upd.Namespace, upd.Name, err)
	}
	return upd, nil
}

// replicaOf builds the copy of root for cluster: the root's labels,
// annotations and spec, in the cluster's namespace, named <ns>.<name>.
func replicaOf(root *policyv1.Policy, cluster string) *policyv1.Policy {
	labels := maps.Clone(root.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	labels[policyv1.ClusterNameLabel] = cluster
	labels[policyv1.ClusterNamespaceLabel] = cluster
	labels[policyv1.RootPolicyLabel] = rootName(root.Namespace, root.Name)
	annotations := maps.Clone(root.Annotations)
	delete(annotations, corev1.LastAppliedConfigAnnotation)
	if len(annotations) == 0 {
		annotations = nil
	}
	return &policyv1.Policy{
		ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: rootName(root.Namespace, root.Name), Labels: labels, Annotations: annotations},
		Spec:       *root.Spec.DeepCopy(),
	}
}
