package console

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	clusterv1beta1 "github.com/flotilla-io/flotilla/api/cluster/v1beta1"
	clusterv1beta2 "github.com/flotilla-io/flotilla/api/cluster/v1beta2"
	"github.com/flotilla-io/flotilla/hub/placement/scheduler"
)

// "Why not" names what rejected the cluster: the cluster sets with their
// selectors, the predicate and its selector with the cluster's values,
// the CEL expression, or the taint.
func TestWhyNotNamesWhatRejected(t *testing.T) {
	binding := func(set string) *clusterv1beta2.ManagedClusterSetBinding {
		return &clusterv1beta2.ManagedClusterSetBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: set}, Spec: clusterv1beta2.ManagedClusterSetBindingSpec{ClusterSet: set}}
	}
	exclusive := &clusterv1beta2.ManagedClusterSet{ObjectMeta: metav1.ObjectMeta{Name: "prod"}}
	sets := []*clusterv1beta2.ManagedClusterSet{labelSet("global", nil), exclusive}
	cluster := func(lbls map[string]string, claims map[string]string, taints ...clusterv1.Taint) *clusterv1.ManagedCluster {
		mc := managedCluster("c1", true, true, lbls)
		for k, v := range claims {
			mc.Status.ClusterClaims = append(mc.Status.ClusterClaims, clusterv1.ManagedClusterClaim{Name: k, Value: v})
		}
		mc.Spec.Taints = taints
		return mc
	}
	pred := func(s clusterv1beta1.ClusterSelector) clusterv1beta1.ClusterPredicate {
		return clusterv1beta1.ClusterPredicate{RequiredClusterSelector: s}
	}
	envProd := clusterv1beta1.ClusterSelector{LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}}
	regionEU := clusterv1beta1.ClusterSelector{ClaimSelector: clusterv1beta1.ClusterClaimSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
		{Key: "region", Operator: metav1.LabelSelectorOpIn, Values: []string{"eu", "uk"}}}}}
	gold := clusterv1beta1.ClusterSelector{CelSelector: clusterv1beta1.ClusterCelSelector{CelExpressions: []string{
		`managedCluster.metadata.name.startsWith("c")`, `managedCluster.metadata.labels["tier"] == "gold"`}}}
	for _, tt := range []struct {
		name     string
		sets     []string
		preds    []clusterv1beta1.ClusterPredicate
		cluster  *clusterv1.ManagedCluster
		bindings []string
		want     string
	}{{
		name: "label selector", preds: []clusterv1beta1.ClusterPredicate{pred(envProd)}, cluster: cluster(map[string]string{"env": "dev"}, nil),
		want: "matches no predicate (predicate 1: labelSelector env=prod rejects it (the cluster has env=dev))",
	}, {
		name: "claim selector and a missing label, in two predicates", preds: []clusterv1beta1.ClusterPredicate{pred(regionEU), pred(envProd)}, cluster: cluster(nil, map[string]string{"region": "us"}),
		want: "matches no predicate (predicate 1: claimSelector region in (eu,uk) rejects it (the cluster has region=us); predicate 2: labelSelector env=prod rejects it (the cluster has no label env))",
	}, {
		name: "CEL expression", preds: []clusterv1beta1.ClusterPredicate{pred(gold)}, cluster: cluster(map[string]string{"tier": "silver"}, nil),
		want: `matches no predicate (predicate 1: celSelector expression "managedCluster.metadata.labels[\"tier\"] == \"gold\"" is false for it (or fails))`,
	}, {
		name: "taint", preds: []clusterv1beta1.ClusterPredicate{pred(envProd)},
		cluster: cluster(map[string]string{"env": "prod"}, nil, clusterv1.Taint{Key: "gpu", Value: "busy", Effect: clusterv1.TaintEffectPreferNoSelect}, clusterv1.Taint{Key: "maintenance", Effect: clusterv1.TaintEffectNoSelect}),
		want:    "has the taint maintenance:NoSelect, which spec.tolerations do not tolerate",
	}, {
		name: "cluster set", sets: []string{"prod"}, bindings: []string{"global", "prod"}, cluster: cluster(nil, nil),
		want: "not in a cluster set the placement may use (bound to namespace apps and named in spec.clusterSets): ManagedClusterSet prod (members: cluster.open-cluster-management.io/clusterset=prod); the cluster is in global",
	}} {
		t.Run(tt.name, func(t *testing.T) {
			p := &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "p"}, Spec: clusterv1beta1.PlacementSpec{ClusterSets: tt.sets, Predicates: tt.preds}}
			in := scheduler.Input{Placement: p, ClusterSets: sets, Now: time.Now()}
			if tt.bindings == nil {
				tt.bindings = []string{"global"}
			}
			for _, b := range tt.bindings {
				in.Bindings = append(in.Bindings, binding(b))
			}
			if got := whyNotChosen(in, tt.cluster); got != tt.want {
				t.Errorf("why not =\n  %s\nwant\n  %s", got, tt.want)
			}
		})
	}
}
