package servicesview

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	clusterv1beta2 "github.com/flotilla-io/flotilla/api/cluster/v1beta2"
	mcsv1alpha1 "github.com/flotilla-io/flotilla/api/mcs/v1alpha1"
)

func exportWith(conds ...metav1.Condition) *mcsv1alpha1.ExportedService {
	return &mcsv1alpha1.ExportedService{ObjectMeta: metav1.ObjectMeta{Namespace: "c1", Name: "shop.web"},
		Spec:   mcsv1alpha1.ExportedServiceSpec{Namespace: "shop", Name: "web"},
		Status: mcsv1alpha1.ExportedServiceStatus{Conditions: conds}}
}

func TestExportState(t *testing.T) {
	for _, tt := range []struct {
		conds    []metav1.Condition
		state    State
		conflict string
		advice   []string
	}{
		{nil, StatePending, Pending, []string{"has not judged"}},
		{[]metav1.Condition{{Type: "Conflict", Status: "False", Reason: "NoConflicts"}}, StateValid, "none", nil},
		{[]metav1.Condition{{Type: "Conflict", Status: "True", Reason: "PortConflict,LabelsConflict,NewConflict"}}, StateConflict, "PortConflict,LabelsConflict,NewConflict",
			[]string{"PortConflict: make the ports", "LabelsConflict: make the ServiceExport's spec.exportedLabels", "NewConflict: make the property NewConflict names", "delete ServiceExport shop/web there"}},
		{[]metav1.Condition{{Type: "InClusterSet", Status: "False", Reason: "NotInClusterSet"}, {Type: "Conflict", Status: "False"}}, StateNotInClusterSet, "-",
			[]string{"`flotilla clusterset set SET --clusters c1`"}},
	} {
		es := exportWith(tt.conds...)
		if got := ExportState(es); got != tt.state {
			t.Errorf("%v: state %s, want %s", tt.conds, got, tt.state)
		}
		if got := ConflictColumn(es); got != tt.conflict {
			t.Errorf("%v: conflict column %q, want %q", tt.conds, got, tt.conflict)
		}
		advice := strings.Join(Advice(es), "\n")
		if len(tt.advice) == 0 && advice != "" {
			t.Errorf("%v: advice %q, want none", tt.conds, advice)
		}
		for _, want := range tt.advice {
			if !strings.Contains(advice, want) {
				t.Errorf("%v: advice %q lacks %q", tt.conds, advice, want)
			}
		}
	}
}

func TestMembersOnlyOfExclusiveSets(t *testing.T) {
	sets := []clusterv1beta2.ManagedClusterSet{{ObjectMeta: metav1.ObjectMeta{Name: "prod"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "all"}, Spec: clusterv1beta2.ManagedClusterSetSpec{ClusterSelector: clusterv1beta2.ManagedClusterSelector{SelectorType: clusterv1beta2.LabelSelector, LabelSelector: &metav1.LabelSelector{}}}}}
	var clusters []clusterv1.ManagedCluster
	for name, set := range map[string]string{"b": "prod", "a": "prod", "c": "all", "d": "gone"} {
		clusters = append(clusters, clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{clusterv1beta2.ClusterSetLabel: set}}})
	}
	if got := strings.Join(Members("prod", sets, clusters), ","); got != "a,b" {
		t.Errorf("members of prod: %s", got)
	}
	if got := Members("all", sets, clusters); len(got) != 0 {
		t.Errorf("a label-selector set has members %v", got)
	}
	for _, mc := range clusters {
		want := map[string]string{"a": "prod", "b": "prod"}[mc.Name]
		if got := ClusterSetOf(&mc, sets); got != want {
			t.Errorf("set of %s: %q, want %q", mc.Name, got, want)
		}
	}
}

func TestColumns(t *testing.T) {
	ports := []mcsv1alpha1.ServicePort{{Name: "http", Port: 80}, {Protocol: "UDP", Port: 53}}
	if got := PortsColumn(ports); got != "http:80/TCP,53/UDP" {
		t.Errorf("ports %q", got)
	}
	if got := PortsColumn(nil); got != None {
		t.Errorf("no ports %q", got)
	}
	groups := []mcsv1alpha1.EndpointGroup{{Endpoints: []mcsv1alpha1.Endpoint{{}, {}}}, {Ready: []string{"10.0.0.1", "10.0.0.2"}, Endpoints: []mcsv1alpha1.Endpoint{{}}}}
	groups[0].Endpoints[1].Conditions.Ready = ptr.To(false)
	if got := EndpointsColumn(groups); got != "4/5" {
		t.Errorf("endpoints %q: the ready list and unknown readiness count as ready", got)
	}
	is := &mcsv1alpha1.ImportedService{Spec: mcsv1alpha1.ImportedServiceSpec{Clusters: []mcsv1alpha1.ImportedCluster{{Name: "a", Available: true, Endpoints: groups}, {Name: "b"}}}}
	if got := strings.Join(ExportersColumn(is), ","); got != "a,b(unavailable)" {
		t.Errorf("exporters %q", got)
	}
	if got := ImportEndpointsColumn(is); got != "4/5" {
		t.Errorf("import endpoints %q", got)
	}
}
