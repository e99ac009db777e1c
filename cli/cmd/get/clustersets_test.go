package get

import (
	"reflect"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	clusterv1beta1 "github.com/flotilla-io/flotilla/api/cluster/v1beta1"
	clusterv1beta2 "github.com/flotilla-io/flotilla/api/cluster/v1beta2"
)

func TestClusterSetTable(t *testing.T) {
	now := time.Now()
	created := metav1.NewTime(now.Add(-2 * time.Hour))
	sets := []clusterv1beta2.ManagedClusterSet{
		{ObjectMeta: metav1.ObjectMeta{Name: "prod", CreationTimestamp: created}},
		{ObjectMeta: metav1.ObjectMeta{Name: "eu", CreationTimestamp: created}, Spec: clusterv1beta2.ManagedClusterSetSpec{ClusterSelector: clusterv1beta2.ManagedClusterSelector{
			SelectorType: clusterv1beta2.LabelSelector, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"region": "eu"}}}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "global", CreationTimestamp: created}, Spec: clusterv1beta2.ManagedClusterSetSpec{ClusterSelector: clusterv1beta2.ManagedClusterSelector{
			SelectorType: clusterv1beta2.LabelSelector, LabelSelector: &metav1.LabelSelector{}}}},
	}
	bindings := []clusterv1beta2.ManagedClusterSetBinding{
		{ObjectMeta: metav1.ObjectMeta{Namespace: "web", Name: "prod"}, Spec: clusterv1beta2.ManagedClusterSetBindingSpec{ClusterSet: "prod"}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "api", Name: "prod"}, Spec: clusterv1beta2.ManagedClusterSetBindingSpec{ClusterSet: "prod"}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "odd", Name: "eu"}, Spec: clusterv1beta2.ManagedClusterSetBindingSpec{ClusterSet: "prod"}},
	}
	var clusters []clusterv1.ManagedCluster
	for _, n := range []string{"c6", "c5", "c4", "c3", "c2", "c1"} {
		clusters = append(clusters, clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: n, Labels: map[string]string{clusterv1beta2.ClusterSetLabel: "prod"}}})
	}
	clusters[0].Labels["region"] = "eu"

	header, rows := clusterSetTable(sets, bindings, clusters, now, false)
	if !reflect.DeepEqual(header, []string{"NAME", "SELECTOR", "BOUND NAMESPACES", "CLUSTERS", "MEMBERS", "AGE"}) {
		t.Errorf("header %v", header)
	}
	want := [][]string{
		{"prod", "clusterset label", "api,web", "6", "c1,c2,c3,c4,c5,+1 more", "120m"},
		{"eu", "region=eu", "<none>", "1", "c6", "120m"},
		{"global", "<all clusters>", "<none>", "6", "c1,c2,c3,c4,c5,+1 more", "120m"},
	}
	if !reflect.DeepEqual(rows, want) {
		t.Errorf("rows\n%v\nwant\n%v", rows, want)
	}
	_, rows = clusterSetTable(sets[:1], nil, clusters, now, true)
	if rows[0][4] != "c1,c2,c3,c4,c5,c6" {
		t.Errorf("wide members %q", rows[0][4])
	}
}

func TestPlacementTable(t *testing.T) {
	now := time.Now()
	p := clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "web", CreationTimestamp: metav1.NewTime(now.Add(-time.Minute))},
		Spec: clusterv1beta1.PlacementSpec{NumberOfClusters: ptr.To[int32](3)},
		Status: clusterv1beta1.PlacementStatus{
			DecisionGroups: []clusterv1beta1.DecisionGroupStatus{{DecisionGroupIndex: 0, DecisionGroupName: "canary", ClustersCount: 1}, {DecisionGroupIndex: 1, ClustersCount: 1}},
			Conditions: []metav1.Condition{{Type: clusterv1beta1.PlacementConditionSatisfied, Status: metav1.ConditionFalse,
				Reason: clusterv1beta1.ReasonNotAllDecisionsScheduled, Message: "2 of 3 requested clusters selected: ..."}}},
	}
	misconfigured := *p.DeepCopy()
	misconfigured.Name = "bad"
	misconfigured.Spec.NumberOfClusters = nil
	misconfigured.Status.Conditions = append(misconfigured.Status.Conditions, metav1.Condition{Type: clusterv1beta1.PlacementConditionMisconfigured,
		Status: metav1.ConditionTrue, Message: "fix spec.predicates[0]"})

	header, rows := placementTable([]clusterv1beta1.Placement{p, misconfigured}, [][]string{{"c1", "c2"}, nil}, now, false, true)
	if !reflect.DeepEqual(header, []string{"NAMESPACE", "NAME", "SELECTED", "SATISFIED", "CLUSTERS", "AGE", "MESSAGE"}) {
		t.Errorf("header %v", header)
	}
	want := [][]string{
		{"apps", "web", "2/3", "False", "c1,c2", "60s", "2 of 3 requested clusters selected: ..."},
		{"apps", "bad", "0", "False", "<none>", "60s", "Misconfigured: fix spec.predicates[0]"},
	}
	if !reflect.DeepEqual(rows, want) {
		t.Errorf("rows\n%v\nwant\n%v", rows, want)
	}
	header, rows = placementTable([]clusterv1beta1.Placement{p}, [][]string{{"c1", "c2"}}, now, true, false)
	if header[0] != "NAME" || header[4] != "GROUPS" || rows[0][4] != "0:canary=1,1=1" {
		t.Errorf("wide: %v %v", header, rows)
	}
}
