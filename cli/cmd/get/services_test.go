package get

import (
	"reflect"
	"testing"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	clusterv1beta2 "github.com/flotilla-io/flotilla/api/cluster/v1beta2"
	mcsv1alpha1 "github.com/flotilla-io/flotilla/api/mcs/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/mcs"
)

func endpoints(ready, notReady int) []mcsv1alpha1.EndpointGroup {
	g := mcsv1alpha1.EndpointGroup{AddressType: "IPv4"}
	for i := 0; i < ready+notReady; i++ {
		if i < ready {
			g.Ready = append(g.Ready, "10.0.0.1")
			continue
		}
		g.Endpoints = append(g.Endpoints, mcsv1alpha1.Endpoint{Addresses: []string{"10.0.0.1"}, Conditions: conditions(false)})
	}
	return []mcsv1alpha1.EndpointGroup{g}
}

func conditions(ready bool) discoveryv1.EndpointConditions {
	return discoveryv1.EndpointConditions{Ready: ptr.To(ready)}
}

func export(cluster, ns, name string, created time.Time, status mcsv1alpha1.ExportedServiceStatus) mcsv1alpha1.ExportedService {
	return mcsv1alpha1.ExportedService{
		ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: mcs.ObjectName(ns, name)},
		Spec: mcsv1alpha1.ExportedServiceSpec{Namespace: ns, Name: name, ExportCreationTimestamp: metav1.NewTime(created),
			ServiceProperties: mcsv1alpha1.ServiceProperties{Type: mcsv1alpha1.ClusterSetIP, Ports: []mcsv1alpha1.ServicePort{{Name: "http", Protocol: "TCP", Port: 80}, {Protocol: "UDP", Port: 53}}},
			Endpoints:         endpoints(2, 1)},
		Status: status,
	}
}

func TestExportTable(t *testing.T) {
	now := time.Now()
	items := []mcsv1alpha1.ExportedService{
		export("cluster2", "shop", "web", now.Add(-time.Minute), mcsv1alpha1.ExportedServiceStatus{ClusterSet: "shop", Conditions: []metav1.Condition{
			{Type: mcsv1alpha1.ConditionConflict, Status: metav1.ConditionTrue, Reason: "PortConflict,TypeConflict"}}}),
		export("cluster1", "shop", "web", now.Add(-time.Minute), mcsv1alpha1.ExportedServiceStatus{ClusterSet: "shop", Conditions: []metav1.Condition{
			{Type: mcsv1alpha1.ConditionConflict, Status: metav1.ConditionFalse, Reason: "NoConflicts"}}}),
		export("cluster3", "shop", "db", now.Add(-time.Minute), mcsv1alpha1.ExportedServiceStatus{Conditions: []metav1.Condition{
			{Type: mcsv1alpha1.ConditionInClusterSet, Status: metav1.ConditionFalse, Reason: "NotInClusterSet"}}}),
		export("cluster3", "other", "web", now.Add(-time.Minute), mcsv1alpha1.ExportedServiceStatus{}),
	}
	got := filterExports(items, nil, serviceFilter{})
	header, rows := exportTable(got, now)
	if !reflect.DeepEqual(header, []string{"CLUSTER", "NAMESPACE", "NAME", "TYPE", "PORTS", "ENDPOINTS", "CLUSTERSET", "CONFLICT", "AGE"}) {
		t.Errorf("header %v", header)
	}
	want := [][]string{
		{"cluster1", "shop", "web", "ClusterSetIP", "http:80/TCP,53/UDP", "2/3", "shop", "none", "60s"},
		{"cluster2", "shop", "web", "ClusterSetIP", "http:80/TCP,53/UDP", "2/3", "shop", "PortConflict,TypeConflict", "60s"},
		{"cluster3", "other", "web", "ClusterSetIP", "http:80/TCP,53/UDP", "2/3", "<pending>", "<pending>", "60s"},
		{"cluster3", "shop", "db", "ClusterSetIP", "http:80/TCP,53/UDP", "2/3", "<none>", "-", "60s"},
	}
	if !reflect.DeepEqual(rows, want) {
		t.Errorf("rows\n%v\nwant\n%v", rows, want)
	}

	names, err := parseServiceNames([]string{"web"}, "shop")
	if err != nil {
		t.Fatal(err)
	}
	if got := filterExports(items, names, serviceFilter{namespace: "shop", clusters: []string{"cluster2", "cluster3"}}); len(got) != 1 || got[0].Namespace != "cluster2" {
		t.Errorf("web -n shop --clusters cluster2,cluster3: %v", got)
	}
	names, _ = parseServiceNames([]string{"web"}, "")
	if got := filterExports(items, names, serviceFilter{clusterSets: []string{"shop"}}); len(got) != 2 {
		t.Errorf("web --clusterset shop: %d exports, want 2", len(got))
	}
	if _, err := parseServiceNames([]string{"a/web"}, "b"); err == nil {
		t.Error("a/web -n b was accepted")
	}
}

func TestImportTable(t *testing.T) {
	now := time.Now()
	v := &importsView{
		Sets: []clusterv1beta2.ManagedClusterSet{{ObjectMeta: metav1.ObjectMeta{Name: "shop"}},
			{ObjectMeta: metav1.ObjectMeta{Name: "global"}, Spec: clusterv1beta2.ManagedClusterSetSpec{ClusterSelector: clusterv1beta2.ManagedClusterSelector{SelectorType: clusterv1beta2.LabelSelector, LabelSelector: &metav1.LabelSelector{}}}}},
		Imports: []mcsv1alpha1.ImportedService{{
			ObjectMeta: metav1.ObjectMeta{Namespace: mcs.SetNamespace("shop"), Name: "shop.web", CreationTimestamp: metav1.NewTime(now.Add(-time.Minute))},
			Spec: mcsv1alpha1.ImportedServiceSpec{ClusterSet: "shop", Namespace: "shop", Name: "web",
				ServiceProperties: mcsv1alpha1.ServiceProperties{Type: mcsv1alpha1.Headless, Ports: []mcsv1alpha1.ServicePort{{Port: 8080}}},
				Clusters:          []mcsv1alpha1.ImportedCluster{{Name: "cluster1", Available: true, Endpoints: endpoints(1, 1)}, {Name: "cluster2", Endpoints: endpoints(3, 0)}}},
		}},
	}
	for _, n := range []string{"cluster1", "cluster2", "cluster3"} {
		v.Clusters = append(v.Clusters, clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: n, Labels: map[string]string{clusterv1beta2.ClusterSetLabel: "shop"}}})
	}
	v.Clusters = append(v.Clusters, clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "cluster4", Labels: map[string]string{clusterv1beta2.ClusterSetLabel: "global"}}})
	header, rows := v.Table(v.Filter(nil, serviceFilter{}), now, false)
	if !reflect.DeepEqual(header, []string{"CLUSTERSET", "NAMESPACE", "NAME", "TYPE", "PORTS", "EXPORTED BY", "IMPORTED BY", "ENDPOINTS", "AGE"}) {
		t.Errorf("header %v", header)
	}
	want := [][]string{{"shop", "shop", "web", "Headless", "8080/TCP", "cluster1,cluster2(unavailable)", "cluster1,cluster2,cluster3", "4/5", "60s"}}
	if !reflect.DeepEqual(rows, want) {
		t.Errorf("rows\n%v\nwant\n%v", rows, want)
	}
	if got := v.Filter(nil, serviceFilter{clusters: []string{"cluster4"}}); len(got) != 0 {
		t.Errorf("cluster4 is in no exclusive set, but imports %v", got)
	}
	if got := v.Filter(nil, serviceFilter{clusters: []string{"cluster3"}}); len(got) != 1 {
		t.Errorf("cluster3 imports %d services, want 1", len(got))
	}
}
