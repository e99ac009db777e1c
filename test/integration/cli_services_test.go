package integration

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	clusterv1beta2 "github.com/flotilla-io/flotilla/api/cluster/v1beta2"
	mcsv1alpha1 "github.com/flotilla-io/flotilla/api/mcs/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/mcs"
	"github.com/flotilla-io/flotilla/test/framework"
)

// The CLI reads what the hub's services controller and the agents write.
// The objects are written here as they would (with admin credentials), on
// a hub of its own without the hub controllers, so that what the commands
// show is exactly what the spec wrote.
var _ = Describe("cli services", Ordered, func() {
	var (
		cp  *framework.ControlPlane
		run func(ctx context.Context, args ...string) cliResult
	)
	const set = "svc-shop"

	BeforeAll(func(ctx SpecContext) {
		var err error
		cp, err = framework.Start(suiteCtx, framework.HubAPI)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(cp.Stop)
		run = func(ctx context.Context, args ...string) cliResult {
			return flotilla(ctx, append(args, "--kubeconfig", cp.AdminKubeconfig)...)
		}
		c := cp.Client

		By("a cluster set svc-shop of three clusters, a label-selector set, and a fourth cluster in no exclusive set")
		Expect(c.Create(ctx, &clusterv1beta2.ManagedClusterSet{ObjectMeta: metav1.ObjectMeta{Name: set}})).To(Succeed())
		Expect(c.Create(ctx, &clusterv1beta2.ManagedClusterSet{ObjectMeta: metav1.ObjectMeta{Name: "svc-everything"},
			Spec: clusterv1beta2.ManagedClusterSetSpec{ClusterSelector: clusterv1beta2.ManagedClusterSelector{
				SelectorType: clusterv1beta2.LabelSelector, LabelSelector: &metav1.LabelSelector{}}}})).To(Succeed())
		for _, name := range []string{"cli-svc-1", "cli-svc-2", "cli-svc-3", "cli-svc-4"} {
			mc := newManagedCluster(name)
			mc.Labels = map[string]string{clusterv1beta2.ClusterSetLabel: set}
			if name == "cli-svc-4" {
				mc.Labels[clusterv1beta2.ClusterSetLabel] = "svc-everything"
			}
			Expect(c.Create(ctx, mc)).To(Succeed())
			Expect(c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})).To(Succeed())
		}
		Expect(c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: mcs.SetNamespace(set)}})).To(Succeed())

		By("the agents' exports: shop/web from cli-svc-1 (the oldest) and cli-svc-2 (another port number), shop/db from cli-svc-4")
		now := time.Now().Truncate(time.Second)
		web1 := cliExportedService("cli-svc-1", "shop", "web", now.Add(-time.Hour), 80, cliEndpoints("10.1.0.1", true, "10.1.0.2", true))
		web2 := cliExportedService("cli-svc-2", "shop", "web", now.Add(-time.Minute), 8080, cliEndpoints("10.2.0.1", true, "10.2.0.2", false))
		db4 := cliExportedService("cli-svc-4", "shop", "db", now, 5432, cliEndpoints("10.4.0.1", true))
		for _, es := range []*mcsv1alpha1.ExportedService{web1, web2, db4} {
			Expect(c.Create(ctx, es)).To(Succeed())
		}

		By("the hub's verdicts and its merge")
		web1.Status = mcsv1alpha1.ExportedServiceStatus{ClusterSet: set, Conditions: []metav1.Condition{
			{Type: mcsv1alpha1.ConditionInClusterSet, Status: metav1.ConditionTrue, Reason: "InClusterSet", Message: "imported into cluster set " + set, LastTransitionTime: metav1.Now()},
			{Type: mcsv1alpha1.ConditionConflict, Status: metav1.ConditionTrue, Reason: "PortConflict", Message: "port http: 80/TCP from the oldest export, in cli-svc-1; cli-svc-2 has 8080/TCP", LastTransitionTime: metav1.Now()},
		}}
		web2.Status = *web1.Status.DeepCopy()
		db4.Status = mcsv1alpha1.ExportedServiceStatus{Conditions: []metav1.Condition{
			{Type: mcsv1alpha1.ConditionInClusterSet, Status: metav1.ConditionFalse, Reason: "NotInClusterSet", Message: "cluster cli-svc-4 is in no exclusive ManagedClusterSet", LastTransitionTime: metav1.Now()},
		}}
		for _, es := range []*mcsv1alpha1.ExportedService{web1, web2, db4} {
			Expect(c.Status().Update(ctx, es)).To(Succeed())
		}
		merged := &mcsv1alpha1.ImportedService{
			ObjectMeta: metav1.ObjectMeta{Namespace: mcs.SetNamespace(set), Name: mcs.ObjectName("shop", "web"),
				Labels: map[string]string{mcs.ClusterSetLabel: set, mcs.ServiceNamespaceLabel: "shop", mcs.ServiceNameLabel: "web"}},
			Spec: mcsv1alpha1.ImportedServiceSpec{ClusterSet: set, Namespace: "shop", Name: "web",
				ServiceProperties: web1.Spec.ServiceProperties,
				Clusters: []mcsv1alpha1.ImportedCluster{
					{Name: "cli-svc-1", Generation: 1, Available: true, Endpoints: web1.Spec.Endpoints},
					{Name: "cli-svc-2", Generation: 1, Available: true, Endpoints: web2.Spec.Endpoints},
				}},
		}
		Expect(c.Create(ctx, merged)).To(Succeed())
	})

	It("lists the fleet's exports with their endpoints, cluster set and conflict, and filters them", func(ctx SpecContext) {
		res := run(ctx, "get", "serviceexports")
		Expect(res.Code).To(Equal(0), res.Stderr)
		lines := strings.Split(strings.TrimSpace(res.Stdout), "\n")
		Expect(lines).To(HaveLen(4), res.Stdout)
		Expect(strings.Fields(lines[0])).To(Equal([]string{"CLUSTER", "NAMESPACE", "NAME", "TYPE", "PORTS", "ENDPOINTS", "CLUSTERSET", "CONFLICT", "AGE"}))
		Expect(strings.Fields(lines[1])).To(HaveExactElements("cli-svc-1", "shop", "web", "ClusterSetIP", "http:80/TCP", "2/2", set, "PortConflict", Not(BeEmpty())))
		Expect(strings.Fields(lines[2])).To(HaveExactElements("cli-svc-2", "shop", "web", "ClusterSetIP", "http:8080/TCP", "1/2", set, "PortConflict", Not(BeEmpty())))
		Expect(strings.Fields(lines[3])).To(HaveExactElements("cli-svc-4", "shop", "db", "ClusterSetIP", "http:5432/TCP", "1/1", "<none>", "-", Not(BeEmpty())))

		By("the kubectl short name, one cluster (--cluster), a namespace and a set")
		res = run(ctx, "get", "svcex", "--cluster", "cli-svc-2")
		Expect(res.Code).To(Equal(0), res.Stderr)
		Expect(strings.Split(strings.TrimSpace(res.Stdout), "\n")).To(HaveLen(2))
		Expect(res.Stdout).To(ContainSubstring("cli-svc-2"))
		res = run(ctx, "get", "serviceexport", "--clusterset", set, "-n", "shop")
		Expect(res.Code).To(Equal(0), res.Stderr)
		Expect(res.Stdout).NotTo(ContainSubstring("cli-svc-4"))
		Expect(strings.Split(strings.TrimSpace(res.Stdout), "\n")).To(HaveLen(3))
		res = run(ctx, "get", "serviceexports", "-n", "other")
		Expect(res.Code).To(Equal(0), res.Stderr)
		Expect(res.Stdout).To(BeEmpty())
		Expect(res.Stderr).To(ContainSubstring("No cluster exports a service in namespace other yet"))

		By("-o json: a list, or the object itself for one NAME matching one")
		res = run(ctx, "get", "serviceexports", "web", "-n", "shop", "-o", "json")
		Expect(res.Code).To(Equal(0), res.Stderr)
		list := mcsv1alpha1.ExportedServiceList{}
		Expect(json.Unmarshal([]byte(res.Stdout), &list)).To(Succeed())
		Expect(list.Kind).To(Equal("ExportedServiceList"))
		Expect(list.Items).To(HaveLen(2))
		res = run(ctx, "get", "serviceexports", "shop/web", "--clusters", "cli-svc-1", "-o", "yaml")
		Expect(res.Code).To(Equal(0), res.Stderr)
		one := mcsv1alpha1.ExportedService{}
		Expect(yaml.Unmarshal([]byte(res.Stdout), &one)).To(Succeed())
		Expect(one.TypeMeta).To(Equal(metav1.TypeMeta{APIVersion: "mcs.flotilla.io/v1alpha1", Kind: "ExportedService"}))
		Expect(one.Namespace).To(Equal("cli-svc-1"))
		Expect(one.Status.Conditions).NotTo(BeEmpty())

		By("a name nobody exports: what, where, how to fix")
		res = run(ctx, "get", "serviceexports", "nope", "-n", "shop")
		Expect(res.Code).To(Equal(1))
		Expect(res.Stderr).To(ContainSubstring("no cluster exports Service shop/nope: there is no such ExportedService on the hub"))
		Expect(res.Stderr).To(ContainSubstring("create a ServiceExport of the same name and namespace beside the Service"))
	})

	It("lists each set's imports with who exports and who imports them", func(ctx SpecContext) {
		res := run(ctx, "get", "serviceimports")
		Expect(res.Code).To(Equal(0), res.Stderr)
		lines := strings.Split(strings.TrimSpace(res.Stdout), "\n")
		Expect(lines).To(HaveLen(2), res.Stdout)
		Expect(strings.Fields(lines[0])).To(Equal([]string{"CLUSTERSET", "NAMESPACE", "NAME", "TYPE", "PORTS", "EXPORTED", "BY", "IMPORTED", "BY", "ENDPOINTS", "AGE"}))
		Expect(strings.Fields(lines[1])).To(HaveExactElements(set, "shop", "web", "ClusterSetIP", "http:80/TCP", "cli-svc-1,cli-svc-2", "cli-svc-1,cli-svc-2,cli-svc-3", "3/4", Not(BeEmpty())))

		By("a cluster of the set imports it; one in no exclusive set imports nothing")
		res = run(ctx, "get", "svcim", "--clusters", "cli-svc-3")
		Expect(res.Code).To(Equal(0), res.Stderr)
		Expect(res.Stdout).To(MatchRegexp(`shop\s+web\s+ClusterSetIP`))
		res = run(ctx, "get", "svcim", "--clusters", "cli-svc-4")
		Expect(res.Code).To(Equal(0), res.Stderr)
		Expect(res.Stdout).To(BeEmpty())
		Expect(res.Stderr).To(ContainSubstring("No cluster set imports a service into cluster cli-svc-4 yet"))
		res = run(ctx, "get", "svcim", "--clusters", "cli-svc-9")
		Expect(res.Code).To(Equal(1))
		Expect(res.Stderr).To(ContainSubstring("cluster cli-svc-9 does not exist on the hub"))

		By("-o yaml of one named import is the object")
		res = run(ctx, "get", "serviceimport", "shop/web", "--clusterset", set, "-o", "yaml")
		Expect(res.Code).To(Equal(0), res.Stderr)
		one := mcsv1alpha1.ImportedService{}
		Expect(yaml.Unmarshal([]byte(res.Stdout), &one)).To(Succeed())
		Expect(one.Kind).To(Equal("ImportedService"))
		Expect(one.Spec.Clusters).To(HaveLen(2))

		By("a service exported only from a cluster in no set is imported nowhere: the error says so and where to look")
		res = run(ctx, "get", "serviceimports", "shop/db")
		Expect(res.Code).To(Equal(1))
		Expect(res.Stderr).To(ContainSubstring("no cluster set imports Service shop/db: there is no such ImportedService on the hub"))
		Expect(res.Stderr).To(ContainSubstring("`flotilla get serviceexports db` shows who exports it"))
	})

	It("describes an export: each cluster's endpoints, the verdicts with what to do, the merged spec", func(ctx SpecContext) {
		res := run(ctx, "describe", "serviceexport", "shop/web")
		Expect(res.Code).To(Equal(0), res.Stderr)
		out := res.Stdout
		Expect(out).To(ContainSubstring("Service:      shop/web\nExported by:  cli-svc-1, cli-svc-2\n"))
		Expect(out).To(ContainSubstring("Cluster cli-svc-2:"))
		Expect(out).To(MatchRegexp(`Ports:\s+http:8080/TCP`))
		Expect(out).To(MatchRegexp(`Endpoints:\s+1 ready of 2`))
		Expect(out).To(MatchRegexp(`10\.2\.0\.1\s+ready`))
		Expect(out).To(MatchRegexp(`10\.2\.0\.2\s+not ready`))
		Expect(out).To(MatchRegexp(`Conflict\s+True\s+PortConflict\s+port http: 80/TCP from the oldest export, in cli-svc-1; cli-svc-2 has 8080/TCP`))
		Expect(out).To(ContainSubstring("What to do:\n    PortConflict: make the ports"))
		Expect(out).To(ContainSubstring("Merged in cluster set " + set))
		Expect(out).To(MatchRegexp(`Imported by:\s+cli-svc-1, cli-svc-2, cli-svc-3`))

		By("one cluster only, and -o json")
		res = run(ctx, "describe", "svcex", "web", "-n", "shop", "--clusters", "cli-svc-1")
		Expect(res.Code).To(Equal(0), res.Stderr)
		Expect(res.Stdout).NotTo(ContainSubstring("Cluster cli-svc-2:"))
		res = run(ctx, "describe", "serviceexport", "shop/web", "--clusters", "cli-svc-1", "-o", "json")
		Expect(res.Code).To(Equal(0), res.Stderr)
		one := mcsv1alpha1.ExportedService{}
		Expect(json.Unmarshal([]byte(res.Stdout), &one)).To(Succeed())
		Expect(one.Namespace).To(Equal("cli-svc-1"))

		By("an export from a cluster in no set says how to put it into one")
		res = run(ctx, "describe", "serviceexport", "shop/db")
		Expect(res.Code).To(Equal(0), res.Stderr)
		Expect(res.Stdout).To(MatchRegexp(`Cluster set:\s+<none>`))
		Expect(res.Stdout).To(ContainSubstring("`flotilla clusterset set SET --clusters cli-svc-4`"))

		By("unknown names")
		res = run(ctx, "describe", "serviceexport", "shop/nope")
		Expect(res.Code).To(Equal(1))
		Expect(res.Stderr).To(ContainSubstring("no cluster exports Service shop/nope: there is no ExportedService for it on the hub"))
		Expect(res.Stderr).To(ContainSubstring("create a ServiceExport named nope in namespace shop"))
		res = run(ctx, "describe", "serviceexport", "shop/web", "--clusters", "cli-svc-3")
		Expect(res.Code).To(Equal(1))
		Expect(res.Stderr).To(ContainSubstring("cluster cli-svc-3 does not export Service shop/web; cli-svc-1, cli-svc-2 do"))
		res = run(ctx, "describe", "serviceexport")
		Expect(res.Code).To(Equal(1))
		Expect(res.Stderr).To(ContainSubstring("name one exported Service (got 0): flotilla describe serviceexport NAMESPACE/NAME"))
	})

	It("describes an import: the merged spec, importers, each exporter's endpoints and the conflicts", func(ctx SpecContext) {
		res := run(ctx, "describe", "serviceimport", "shop/web")
		Expect(res.Code).To(Equal(0), res.Stderr)
		out := res.Stdout
		Expect(out).To(MatchRegexp(`Cluster set:\s+` + set + ` \(hub namespace flotilla-clusterset-` + set + `\)`))
		Expect(out).To(MatchRegexp(`DNS name:\s+web\.shop\.svc\.clusterset\.local`))
		Expect(out).To(MatchRegexp(`Merged spec:\n\s+Type:\s+ClusterSetIP\n\s+Ports:\s+http:80/TCP`))
		Expect(out).To(MatchRegexp(`Imported by:\s+cli-svc-1, cli-svc-2, cli-svc-3`))
		Expect(out).To(ContainSubstring("cli-svc-2 (available, export generation 1)"))
		Expect(out).To(MatchRegexp(`10\.1\.0\.2\s+ready`))
		Expect(out).To(ContainSubstring("Conflicts:\n  cli-svc-1: PortConflict: port http: 80/TCP"))
		Expect(out).To(ContainSubstring("What to do:\n  PortConflict:"))

		By("unknown names and sets")
		res = run(ctx, "describe", "serviceimport", "shop/web", "--clusterset", "other")
		Expect(res.Code).To(Equal(1))
		Expect(res.Stderr).To(ContainSubstring("cluster set other does not import Service shop/web; " + set + " do"))
		res = run(ctx, "describe", "svcim", "db", "-n", "shop")
		Expect(res.Code).To(Equal(1))
		Expect(res.Stderr).To(ContainSubstring("no cluster set imports Service shop/db"))
		Expect(res.Stderr).To(ContainSubstring("It is exported by cli-svc-4, in no exclusive cluster set: put them into one with `flotilla clusterset set SET --clusters cli-svc-4`"))
		res = run(ctx, "describe", "serviceimport", "shop/nothing")
		Expect(res.Code).To(Equal(1))
		Expect(res.Stderr).To(ContainSubstring("No cluster exports it either: create a ServiceExport named nothing in namespace shop"))
	})
})

// cliExportedService is an ExportedService as cluster's agent writes it.
func cliExportedService(cluster, ns, name string, created time.Time, port int32, endpoints []mcsv1alpha1.EndpointGroup) *mcsv1alpha1.ExportedService {
	return &mcsv1alpha1.ExportedService{
		ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: mcs.ObjectName(ns, name),
			Labels: map[string]string{mcs.ClusterLabel: cluster, mcs.ServiceNamespaceLabel: ns, mcs.ServiceNameLabel: name}},
		Spec: mcsv1alpha1.ExportedServiceSpec{Namespace: ns, Name: name, ExportCreationTimestamp: metav1.NewTime(created),
			ServiceProperties: mcsv1alpha1.ServiceProperties{Type: mcsv1alpha1.ClusterSetIP, SessionAffinity: corev1.ServiceAffinityNone,
				Ports: []mcsv1alpha1.ServicePort{{Name: "http", Protocol: corev1.ProtocolTCP, Port: port}}, IPFamilies: []corev1.IPFamily{corev1.IPv4Protocol}},
			Endpoints: endpoints},
	}
}

// cliEndpoints is one IPv4 group of endpoints: pairs of address and
// readiness, as an agent writes them (the ready ones by address alone).
func cliEndpoints(pairs ...any) []mcsv1alpha1.EndpointGroup {
	g := mcsv1alpha1.EndpointGroup{AddressType: discoveryv1.AddressTypeIPv4, Ports: []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To[int32](80)}}}
	for i := 0; i < len(pairs); i += 2 {
		if pairs[i+1].(bool) {
			g.Ready = append(g.Ready, pairs[i].(string))
			continue
		}
		g.Endpoints = append(g.Endpoints, mcsv1alpha1.Endpoint{Addresses: []string{pairs[i].(string)},
			Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(false)}})
	}
	return []mcsv1alpha1.EndpointGroup{g}
}
