package inventory

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	clusterv1beta1 "github.com/flotilla-io/flotilla/api/cluster/v1beta1"
	multiclusterv1alpha1 "github.com/flotilla-io/flotilla/api/multicluster/v1alpha1"
)

// DecisionReconciler writes, for each Placement, the neutral
// PlacementDecisions of the clusters its OCM PlacementDecisions hold.
type DecisionReconciler struct {
	// Client reads from the manager's cache and writes to the API server.
	Client client.Client
	// Scheme knows the Placement, for owner references.
	Scheme *runtime.Scheme
}

// Reconcile brings the neutral decisions of one Placement in line with its
// OCM decisions. Without OCM decisions (not scheduled yet, or
// misconfigured) there are none either; a Placement that chose no cluster
// has one empty slice, as it has one empty OCM decision.
func (r *DecisionReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	p := &clusterv1beta1.Placement{}
	if err := r.Client.Get(ctx, req.NamespacedName, p); err != nil {
		// A deleted Placement's decisions go with it (owner references).
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !p.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	ocm := &clusterv1beta1.PlacementDecisionList{}
	if err := r.Client.List(ctx, ocm, client.InNamespace(p.Namespace), client.MatchingFields{placementLabelIndex: p.Name}); err != nil {
		return ctrl.Result{}, fmt.Errorf("list the PlacementDecisions of Placement %s/%s: %w", p.Namespace, p.Name, err)
	}
	var own []*clusterv1beta1.PlacementDecision
	for i := range ocm.Items {
		if metav1.IsControlledBy(&ocm.Items[i], p) {
			own = append(own, &ocm.Items[i])
		}
	}
	var want []NeutralSlice
	if len(own) > 0 {
		want = Slices(p.Name, p.Namespace, clustersInOrder(own))
	}

	existing := &multiclusterv1alpha1.PlacementDecisionList{}
	if err := r.Client.List(ctx, existing, client.InNamespace(p.Namespace), client.MatchingLabels{clusterv1beta1.PlacementLabel: p.Name}); err != nil {
		return ctrl.Result{}, fmt.Errorf("list the neutral PlacementDecisions of Placement %s/%s: %w", p.Namespace, p.Name, err)
	}
	have := map[string]*multiclusterv1alpha1.PlacementDecision{}
	for i := range existing.Items {
		if metav1.IsControlledBy(&existing.Items[i], p) {
			have[existing.Items[i].Name] = &existing.Items[i]
		}
	}
	for _, s := range want {
		if err := r.write(ctx, p, have[s.Name], s); err != nil {
			return ctrl.Result{}, err
		}
		delete(have, s.Name)
	}
	for _, name := range slices.Sorted(maps.Keys(have)) {
		if err := r.Client.Delete(ctx, have[name]); client.IgnoreNotFound(err) != nil {
			return ctrl.Result{}, fmt.Errorf("delete neutral PlacementDecision %s/%s: %w", p.Namespace, name, err)
		}
	}
	return ctrl.Result{}, nil
}

// write creates or updates one slice; cur is nil when it does not exist.
func (r *DecisionReconciler) write(ctx context.Context, p *clusterv1beta1.Placement, cur *multiclusterv1alpha1.PlacementDecision, s NeutralSlice) error {
	create := cur == nil
	if create {
		cur = &multiclusterv1alpha1.PlacementDecision{ObjectMeta: metav1.ObjectMeta{Namespace: p.Namespace, Name: s.Name}}
	}
	before := cur.DeepCopy()
	if cur.Labels == nil {
		cur.Labels = map[string]string{}
	}
	maps.Copy(cur.Labels, s.Labels)
	if err := controllerutil.SetControllerReference(p, cur, r.Scheme); err != nil {
		return err
	}
	cur.Decisions, cur.SchedulerName = s.Decisions, ClusterManagerName
	if create {
		if err := r.Client.Create(ctx, cur); err != nil {
			if apierrors.IsAlreadyExists(err) {
				// In the cache soon; its event brings the Placement back.
				return nil
			}
			return fmt.Errorf("create neutral PlacementDecision %s/%s: %w", p.Namespace, s.Name, err)
		}
		return nil
	}
	if equality.Semantic.DeepEqual(before, cur) {
		return nil
	}
	if err := r.Client.Update(ctx, cur); err != nil {
		return fmt.Errorf("update neutral PlacementDecision %s/%s: %w", p.Namespace, s.Name, err)
	}
	return nil
}

// clustersInOrder returns the clusters of a placement's OCM decisions in
// the order of the decisions' numbers (<placement>-decision-<n>, groups
// in order), then of their lists.
func clustersInOrder(decisions []*clusterv1beta1.PlacementDecision) []string {
	number := func(d *clusterv1beta1.PlacementDecision) int {
		i := strings.LastIndexByte(d.Name, '-')
		n, err := strconv.Atoi(d.Name[i+1:])
		if err != nil {
			return 0
		}
		return n
	}
	slices.SortFunc(decisions, func(a, b *clusterv1beta1.PlacementDecision) int {
		if na, nb := number(a), number(b); na != nb {
			return na - nb
		}
		return strings.Compare(a.Name, b.Name)
	})
	var out []string
	seen := map[string]bool{}
	for _, d := range decisions {
		for _, c := range d.Status.Decisions {
			if c.ClusterName != "" && !seen[c.ClusterName] {
				seen[c.ClusterName] = true
				out = append(out, c.ClusterName)
			}
		}
	}
	return out
}

// NeutralSlice is one neutral PlacementDecision to write.
type NeutralSlice struct {
	// Name is <placement>-decision-<n>, n from 1.
	Name string
	// Labels are the OCM placement label, the decision key and the
	// placement key, all the Placement's name, and the decision index, the
	// slice's place from 0.
	Labels map[string]string
	// Decisions are at most MaxDecisionsPerSlice ClusterProfile references.
	Decisions []multiclusterv1alpha1.ClusterDecision
}

// Slices cuts clusters, chosen by Placement placement in namespace ns,
// into slices of at most multiclusterv1alpha1.MaxDecisionsPerSlice, each
// naming the clusters' ClusterProfiles in ns. No clusters give one empty
// slice, so that a consumer tells "none chosen" from "not decided".
func Slices(placement, ns string, clusters []string) []NeutralSlice {
	labels := func(index int) map[string]string {
		return map[string]string{
			clusterv1beta1.PlacementLabel:           placement,
			multiclusterv1alpha1.DecisionKeyLabel:   placement,
			multiclusterv1alpha1.PlacementKeyLabel:  placement,
			multiclusterv1alpha1.DecisionIndexLabel: strconv.Itoa(index),
		}
	}
	var out []NeutralSlice
	for start := 0; start == 0 || start < len(clusters); start += multiclusterv1alpha1.MaxDecisionsPerSlice {
		end := min(start+multiclusterv1alpha1.MaxDecisionsPerSlice, len(clusters))
		ds := make([]multiclusterv1alpha1.ClusterDecision, 0, end-start)
		for _, c := range clusters[start:end] {
			ds = append(ds, multiclusterv1alpha1.ClusterDecision{ClusterProfileRef: multiclusterv1alpha1.ClusterProfileReference{Name: c, Namespace: ns}})
		}
		out = append(out, NeutralSlice{Name: fmt.Sprintf("%s-decision-%d", placement, len(out)+1), Labels: labels(len(out)), Decisions: ds})
	}
	return out
}
