package console

import (
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1beta2 "github.com/flotilla-io/flotilla/api/cluster/v1beta2"
	mcsv1alpha1 "github.com/flotilla-io/flotilla/api/mcs/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/mcs"
)

func exportedService(cluster, ns, name string, conds ...metav1.Condition) *mcsv1alpha1.ExportedService {
	return &mcsv1alpha1.ExportedService{
		ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: mcs.ObjectName(ns, name)},
		Spec: mcsv1alpha1.ExportedServiceSpec{Namespace: ns, Name: name, ExportCreationTimestamp: metav1.NewTime(time.Now()),
			ServiceProperties: mcsv1alpha1.ServiceProperties{Type: mcsv1alpha1.ClusterSetIP, Ports: []mcsv1alpha1.ServicePort{{Name: "http", Protocol: "TCP", Port: 80}}},
			Endpoints:         []mcsv1alpha1.EndpointGroup{{AddressType: "IPv4", Endpoints: []mcsv1alpha1.Endpoint{{Addresses: []string{"10.0.0.1"}}}}}},
		Status: mcsv1alpha1.ExportedServiceStatus{Conditions: conds},
	}
}

// The cluster view shows the cluster's exports with the hub's verdict, and
// the services of its set, which it imports; a cluster in no exclusive set
// says so and how to put it into one.
func TestClusterViewShowsServices(t *testing.T) {
	inSet := map[string]string{clusterv1beta2.ClusterSetLabel: "shop"}
	web := exportedService("c1", "store", "web", metav1.Condition{Type: mcsv1alpha1.ConditionConflict, Status: metav1.ConditionFalse, Reason: "NoConflicts"})
	web.Status.ClusterSet = "shop"
	api := exportedService("c1", "store", "api", metav1.Condition{Type: mcsv1alpha1.ConditionConflict, Status: metav1.ConditionTrue, Reason: "PortConflict", Message: "port http: 80/TCP of c2, the oldest export"})
	api.Status.ClusterSet = "shop"
	lonely := exportedService("c3", "store", "db", metav1.Condition{Type: mcsv1alpha1.ConditionInClusterSet, Status: metav1.ConditionFalse, Reason: "NotInClusterSet", Message: "c3 is in no exclusive cluster set"})
	imported := &mcsv1alpha1.ImportedService{
		ObjectMeta: metav1.ObjectMeta{Namespace: mcs.SetNamespace("shop"), Name: "store.web"},
		Spec: mcsv1alpha1.ImportedServiceSpec{ClusterSet: "shop", Namespace: "store", Name: "web", ServiceProperties: web.Spec.ServiceProperties,
			Clusters: []mcsv1alpha1.ImportedCluster{{Name: "c1", Available: true, Endpoints: web.Spec.Endpoints}, {Name: "c2", Available: true}}},
	}
	other := imported.DeepCopy()
	other.Namespace, other.Spec.ClusterSet, other.Spec.Name, other.Name = mcs.SetNamespace("elsewhere"), "elsewhere", "hidden", "store.hidden"
	s, session, _ := serverWith(t, nil,
		managedCluster("c1", true, true, inSet), managedCluster("c2", true, true, inSet), managedCluster("c3", true, true, nil),
		&clusterv1beta2.ManagedClusterSet{ObjectMeta: metav1.ObjectMeta{Name: "shop"}},
		web, api, lonely, imported, other)

	w := do(s, "GET", "/clusters/c1", testHost, session, nil, "")
	if w.Code != http.StatusOK {
		t.Fatalf("GET /clusters/c1: %d %s", w.Code, w.Body.String())
	}
	body := w.Body.String()
	for _, want := range []string{
		`<h2 id="services">Multi-cluster services</h2>`,
		"Cluster set <strong>shop</strong>",
		`<tr data-export="store/web"><th scope="row">store/web</th><td>ClusterSetIP</td><td>http:80/TCP</td><td>1/1</td><td class="state"><span class="badge ok"><span aria-hidden="true">✔</span> Valid</span>`,
		`<tr data-export="store/api">`, `<span class="badge bad"><span aria-hidden="true">✖</span> Conflict</span> PortConflict`, "port http: 80/TCP of c2, the oldest export",
		`<tr data-import="store/web"><th scope="row">store/web</th><td><code>web.store.svc.clusterset.local</code></td><td>ClusterSetIP</td><td>http:80/TCP</td><td>c1, c2 (this cluster too)</td><td>1/1</td>`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the view of c1 lacks %q:\n%s", want, section(body))
		}
	}
	if strings.Contains(body, "store/hidden") {
		t.Error("the view of c1 shows a service of another cluster set")
	}
	if i, j := strings.Index(body, `data-export="store/api"`), strings.Index(body, `data-export="store/web"`); i > j {
		t.Error("exports are not in name order")
	}

	w = do(s, "GET", "/clusters/c3", testHost, session, nil, "")
	body = w.Body.String()
	for _, want := range []string{"In no exclusive cluster set", "flotilla clusterset set SET --clusters c3", "NotInClusterSet", "c3 is in no exclusive cluster set"} {
		if !strings.Contains(body, want) {
			t.Errorf("the view of c3 lacks %q:\n%s", want, section(body))
		}
	}
	if strings.Contains(body, `id="imports"`) {
		t.Error("a cluster in no set shows imports")
	}
}

// What the caller's RBAC hides is said where it would be shown.
func TestClusterViewServicesHiddenByRBAC(t *testing.T) {
	inSet := map[string]string{clusterv1beta2.ClusterSetLabel: "shop"}
	s, session, _ := serverWith(t, nil, managedCluster("c1", true, true, inSet),
		&clusterv1beta2.ManagedClusterSet{ObjectMeta: metav1.ObjectMeta{Name: "shop"}}, exportedService("c1", "store", "web"))
	s.store.access[kindExports.resource] = access{namespaces: []string{"c2"}}
	s.store.access[kindImports.resource] = access{}
	body := do(s, "GET", "/clusters/c1", testHost, session, nil, "").Body.String()
	for _, want := range []string{"Your hub RBAC does not let you see the ExportedServices in namespace c1.", "Your hub RBAC does not let you see the ImportedServices in namespace flotilla-clusterset-shop."} {
		if !strings.Contains(body, want) {
			t.Errorf("the view lacks %q:\n%s", want, section(body))
		}
	}
}

// section is the services section of a cluster page, for messages.
func section(body string) string {
	return regexp.MustCompile(`(?s)<h2 id="services">.*?<h2 id="events">`).FindString(body)
}
