package integration

import (
	"maps"
	"net"
	"strconv"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	clusterv1beta2 "github.com/flotilla-io/flotilla/api/cluster/v1beta2"
	"github.com/flotilla-io/flotilla/internal/mcs"
)

// The import side of multi-cluster services, end to end: Services and
// ServiceExports in real spoke API servers (with the EndpointSlice
// controller), real agents carrying them to the hub, the hub's merge, and
// what each member's agent then writes into its cluster.
var _ = Describe("services import", Ordered, func() {
	var (
		set     string
		a, b, c *importCluster
		all     []*importCluster
	)

	BeforeAll(func(ctx SpecContext) {
		set = newImportSet(ctx)
		a, b, c = startImportCluster(ctx, "imp-a"), startImportCluster(ctx, "imp-b"), startImportCluster(ctx, "imp-c")
		all = []*importCluster{a, b, c}
		for _, sc := range all {
			Expect(sc.c.Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: importNode}})).To(Succeed())
			setClusterSet(ctx, sc.name, set)
		}
	})

	newNamespace := func() string { return "imp-" + utilrand.String(5) }

	// goneEverywhere waits until no member holds anything of namespace/name.
	goneEverywhere := func(ctx SpecContext, namespace, name string) {
		GinkgoHelper()
		for _, sc := range all {
			Eventually(sc.serviceImport(ctx, namespace, name), "20s").Should(BeNil(), sc.name)
			Eventually(sc.derivedService(ctx, namespace, name), "20s").Should(BeNil(), sc.name)
			Eventually(sc.importSlices(ctx, namespace, name), "20s").Should(BeEmpty(), sc.name)
		}
	}
	// addresses returns the addresses cluster from holds of namespace/name in sc.
	addresses := func(ctx SpecContext, sc *importCluster, namespace, name string, from *importCluster) func() []string {
		return func() []string { return addressesFrom(sc.importSlices(ctx, namespace, name)(), from.name) }
	}

	It("imports a ClusterSetIP export into every member, exporters included, with the Service's properties, and removes it with the export", func(ctx SpecContext) {
		ns := newNamespace()
		a.exportService(ctx, ns, "web", 1, 3, false, func(s *corev1.Service) {
			s.Spec.Ports = append(s.Spec.Ports, corev1.ServicePort{Name: "grpc", Port: 9090, AppProtocol: ptr.To("kubernetes.io/h2c")})
			s.Spec.SessionAffinity = corev1.ServiceAffinityClientIP
			s.Spec.SessionAffinityConfig = &corev1.SessionAffinityConfig{ClientIP: &corev1.ClientIPConfig{TimeoutSeconds: ptr.To[int32](300)}}
			s.Spec.InternalTrafficPolicy = ptr.To(corev1.ServiceInternalTrafficPolicyCluster)
			s.Spec.TrafficDistribution = ptr.To(corev1.ServiceTrafficDistributionPreferClose)
		})
		Eventually(a.exportCondition(ctx, ns, "web", "Valid"), "20s").Should(HaveField("Status", metav1.ConditionTrue))
		local := &corev1.Service{}
		Expect(a.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, local)).To(Succeed())

		for _, sc := range all {
			By("cluster " + sc.name + ": the ServiceImport, in a namespace made for it where missing")
			var si *mcsv1beta1.ServiceImport
			Eventually(func(g Gomega) {
				si = sc.serviceImport(ctx, ns, "web")()
				g.Expect(si).NotTo(BeNil())
				g.Expect(si.Spec.Type).To(Equal(mcsv1beta1.ClusterSetIP))
				g.Expect(si.Spec.IPs).NotTo(BeEmpty())
				g.Expect(si.Status.Conditions).To(ContainElement(And(HaveField("Type", "Ready"), HaveField("Status", metav1.ConditionTrue), HaveField("Reason", "Ready"))))
			}, "20s").Should(Succeed())
			Expect(si.Labels).To(Equal(map[string]string{mcs.ClusterSetLabel: set, "app.kubernetes.io/managed-by": mcs.ManagedBy}))
			Expect(si.Annotations).To(Equal(map[string]string{mcs.DerivedServiceAnnotation: mcs.DerivedServiceName(ns, "web")}))
			Expect(si.Spec.Ports).To(ConsistOf(
				mcsv1beta1.ServicePort{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80},
				mcsv1beta1.ServicePort{Name: "grpc", Protocol: corev1.ProtocolTCP, AppProtocol: ptr.To("kubernetes.io/h2c"), Port: 9090}))
			Expect(si.Spec.SessionAffinity).To(Equal(local.Spec.SessionAffinity))
			Expect(si.Spec.SessionAffinityConfig).To(Equal(local.Spec.SessionAffinityConfig))
			Expect(si.Spec.InternalTrafficPolicy).To(Equal(local.Spec.InternalTrafficPolicy))
			Expect(si.Spec.TrafficDistribution).To(Equal(local.Spec.TrafficDistribution))
			Expect(si.Status.Clusters).To(Equal([]mcsv1beta1.ClusterStatus{{Cluster: a.name}}))

			By("cluster " + sc.name + ": spec.ips is the derived Service's cluster IP, one per family")
			svc := sc.derivedService(ctx, ns, "web")()
			Expect(svc).NotTo(BeNil())
			Expect(si.Spec.IPs).To(HaveLen(len(si.Spec.IPFamilies)))
			Expect(si.Spec.IPs).To(Equal(svc.Spec.ClusterIPs))
			for i, ip := range si.Spec.IPs {
				parsed := net.ParseIP(ip)
				Expect(parsed).NotTo(BeNil(), ip)
				Expect(parsed.To4() != nil).To(Equal(si.Spec.IPFamilies[i] == corev1.IPv4Protocol), "%s of family %s", ip, si.Spec.IPFamilies[i])
			}
			Expect(svc.Spec.Selector).To(BeEmpty())
			Expect(svc.OwnerReferences).To(ConsistOf(And(HaveField("Kind", "ServiceImport"), HaveField("Name", "web"), HaveField("UID", si.UID))))
			Expect(svc.Spec.Ports).To(HaveLen(2))

			By("cluster " + sc.name + ": a slice of the exporter's endpoints, with the well-known labels")
			Eventually(addresses(ctx, sc, ns, "web", a), "60s").Should(Equal(podIPs(1, 3)))
			for _, s := range sc.importSlices(ctx, ns, "web")() {
				Expect(s.Labels).To(Equal(map[string]string{
					mcsv1beta1.LabelServiceName:   "web",
					mcsv1beta1.LabelSourceCluster: a.name,
					discoveryv1.LabelManagedBy:    mcs.ManagedBy,
					mcs.ClusterSetLabel:           set,
					discoveryv1.LabelServiceName:  mcs.DerivedServiceName(ns, "web"),
				}))
				Expect(s.AddressType).To(Equal(discoveryv1.AddressTypeIPv4))
				Expect(s.OwnerReferences).To(ConsistOf(And(HaveField("UID", si.UID), HaveField("Controller", ptr.To(false)))))
				Expect(s.Ports).To(ConsistOf(
					HaveField("Port", ptr.To[int32](8080)),
					HaveField("Port", ptr.To[int32](9090))))
			}
		}

		By("the exporter's own Service and its slices are as the EndpointSlice controller left them")
		localSlices := func() []discoveryv1.EndpointSlice {
			list := &discoveryv1.EndpointSliceList{}
			Expect(a.c.List(ctx, list, client.InNamespace(ns), client.MatchingLabels{discoveryv1.LabelServiceName: "web"})).To(Succeed())
			return list.Items
		}
		before := localSlices()
		Expect(before).NotTo(BeEmpty())
		for _, s := range before {
			Expect(s.Labels).To(HaveKeyWithValue(discoveryv1.LabelManagedBy, "endpointslice-controller.k8s.io"))
			Expect(s.Labels).NotTo(HaveKey(mcs.ClusterSetLabel))
		}
		Consistently(func(g Gomega) {
			got := &corev1.Service{}
			g.Expect(a.c.Get(ctx, client.ObjectKeyFromObject(local), got)).To(Succeed())
			g.Expect(got.ResourceVersion).To(Equal(local.ResourceVersion))
			g.Expect(localSlices()).To(Equal(before))
		}, "2s").Should(Succeed())

		By("unexporting removes the import everywhere")
		a.unexport(ctx, ns, "web")
		goneEverywhere(ctx, ns, "web")
		got := &corev1.Service{}
		Expect(a.c.Get(ctx, client.ObjectKeyFromObject(local), got)).To(Succeed())
		Expect(got.ResourceVersion).To(Equal(local.ResourceVersion))
	})

	It("keeps an import while one of two exporters remains, without the other's endpoints, and removes it with the last", func(ctx SpecContext) {
		ns := newNamespace()
		a.exportService(ctx, ns, "api", 3, 2, false)
		b.exportService(ctx, ns, "api", 4, 2, false)
		for _, sc := range all {
			Eventually(addresses(ctx, sc, ns, "api", a), "20s").Should(Equal(podIPs(3, 2)), sc.name)
			Eventually(addresses(ctx, sc, ns, "api", b), "20s").Should(Equal(podIPs(4, 2)), sc.name)
			Eventually(func() []mcsv1beta1.ClusterStatus { return sc.serviceImport(ctx, ns, "api")().Status.Clusters }).
				Should(ConsistOf(mcsv1beta1.ClusterStatus{Cluster: a.name}, mcsv1beta1.ClusterStatus{Cluster: b.name}))
		}
		By("cluster a stops exporting")
		a.unexport(ctx, ns, "api")
		for _, sc := range all {
			Eventually(addresses(ctx, sc, ns, "api", a), "20s").Should(BeEmpty(), sc.name)
			Eventually(func() []mcsv1beta1.ClusterStatus { return sc.serviceImport(ctx, ns, "api")().Status.Clusters }).Should(Equal([]mcsv1beta1.ClusterStatus{{Cluster: b.name}}))
		}
		Consistently(func(g Gomega) {
			for _, sc := range all {
				g.Expect(sc.serviceImport(ctx, ns, "api")()).NotTo(BeNil(), sc.name)
				g.Expect(addresses(ctx, sc, ns, "api", b)()).To(Equal(podIPs(4, 2)), sc.name)
			}
		}, "5s").Should(Succeed())
		By("the last exporter stops")
		b.unexport(ctx, ns, "api")
		goneEverywhere(ctx, ns, "api")
	})

	It("imports a headless StatefulSet-like export with the pods' hostnames and no cluster-set IP", func(ctx SpecContext) {
		ns := newNamespace()
		headless := func(s *corev1.Service) { s.Spec.ClusterIP = corev1.ClusterIPNone }
		a.exportService(ctx, ns, "db", 5, 3, true, headless)
		b.exportService(ctx, ns, "db", 6, 2, true, headless)
		for _, sc := range all {
			Eventually(func(g Gomega) {
				si := sc.serviceImport(ctx, ns, "db")()
				g.Expect(si).NotTo(BeNil())
				g.Expect(si.Spec.Type).To(Equal(mcsv1beta1.Headless))
				g.Expect(si.Status.Conditions).To(ContainElement(And(HaveField("Type", "Ready"), HaveField("Status", metav1.ConditionTrue))))
				items := sc.importSlices(ctx, ns, "db")()
				g.Expect(addressesFrom(items, a.name)).To(Equal(podIPs(5, 3)))
				g.Expect(addressesFrom(items, b.name)).To(Equal(podIPs(6, 2)))
				hostnames := map[string][]string{}
				for _, s := range items {
					g.Expect(s.Labels).NotTo(HaveKey(discoveryv1.LabelServiceName))
					for _, e := range s.Endpoints {
						g.Expect(e.Hostname).NotTo(BeNil())
						g.Expect(*e.Conditions.Ready).To(BeTrue())
						from := s.Labels[mcsv1beta1.LabelSourceCluster]
						hostnames[from] = append(hostnames[from], *e.Hostname)
					}
				}
				g.Expect(hostnames[a.name]).To(ConsistOf("db-0", "db-1", "db-2"))
				g.Expect(hostnames[b.name]).To(ConsistOf("db-0", "db-1"))
			}, "20s").Should(Succeed(), sc.name)
		}
		Consistently(func(g Gomega) {
			for _, sc := range all {
				si := sc.serviceImport(ctx, ns, "db")()
				g.Expect(si).NotTo(BeNil())
				g.Expect(si.Spec.IPs).To(BeEmpty())
				g.Expect(si.Annotations).NotTo(HaveKey(mcs.DerivedServiceAnnotation))
				g.Expect(sc.derivedService(ctx, ns, "db")()).To(BeNil())
			}
		}, "5s").Should(Succeed())
		a.unexport(ctx, ns, "db")
		b.unexport(ctx, ns, "db")
		goneEverywhere(ctx, ns, "db")
	})

	It("splits more than 100 endpoints of one cluster into several slices, and writes only the slice that changed", func(ctx SpecContext) {
		ns := newNamespace()
		a.exportService(ctx, ns, "big", 7, 250, false)
		for _, sc := range all {
			Eventually(func(g Gomega) {
				items := sc.importSlices(ctx, ns, "big")()
				g.Expect(items).To(HaveLen(3))
				for _, s := range items {
					g.Expect(len(s.Endpoints)).To(BeNumerically("<=", 100))
				}
				g.Expect(addressesFrom(items, a.name)).To(Equal(podIPs(7, 250)))
			}, "60s").Should(Succeed(), sc.name)
		}
		By("one pod going not ready")
		items := c.importSlices(ctx, ns, "big")()
		changed := items[1].Endpoints[0].Addresses[0]
		rv := c.resourceVersions(ctx, ns)
		for i := range 250 {
			if podIP(7, i) == changed {
				a.setPodReady(ctx, ns, "big-"+strconv.Itoa(i), false)
			}
		}
		key := "EndpointSlice " + ns + "/" + items[1].Name
		Eventually(func() bool {
			for _, s := range c.importSlices(ctx, ns, "big")() {
				for _, e := range s.Endpoints {
					if e.Addresses[0] == changed {
						return *e.Conditions.Ready
					}
				}
			}
			return true
		}, "20s").Should(BeFalse())
		Consistently(func() map[string]string { return withoutKey(c.resourceVersions(ctx, ns), key) }, "2s").Should(Equal(withoutKey(rv, key)))

		By("scaling down to 50 pods: one slice")
		for i := 50; i < 250; i++ {
			Expect(a.c.Delete(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "big-" + strconv.Itoa(i)}}, client.GracePeriodSeconds(0))).To(Succeed())
		}
		for _, sc := range all {
			Eventually(func() []discoveryv1.EndpointSlice { return sc.importSlices(ctx, ns, "big")() }, "30s").Should(HaveLen(1), sc.name)
			Eventually(func() int { return len(addresses(ctx, sc, ns, "big", a)()) }).Should(Equal(50))
		}
		a.unexport(ctx, ns, "big")
		goneEverywhere(ctx, ns, "big")
	})

	It("reads nothing from a member's cluster beyond its watches in a steady state of 30 imports, and writes one EndpointSlice per endpoint change", func(ctx SpecContext) {
		ns := newNamespace()
		const n = 30
		name := func(i int) string { return "steady-" + strconv.Itoa(i) }
		for i := range n {
			a.exportService(ctx, ns, name(i), 100+i, 2, false)
		}
		Eventually(func(g Gomega) {
			for i := range n {
				si := c.serviceImport(ctx, ns, name(i))()
				g.Expect(si).NotTo(BeNil(), name(i))
				g.Expect(si.Spec.IPs).NotTo(BeEmpty(), name(i))
				g.Expect(si.Status.Conditions).To(ContainElement(HaveField("Status", metav1.ConditionTrue)), name(i))
				g.Expect(addressesFrom(c.importSlices(ctx, ns, name(i))(), a.name)).To(Equal(podIPs(100+i, 2)), name(i))
			}
		}, "90s").Should(Succeed())
		settled := c.resourceVersions(ctx, ns)
		Consistently(func() map[string]string { return c.resourceVersions(ctx, ns) }, "2s").Should(Equal(settled))

		By("settled: no get or list of its objects, no write")
		reads, writes := c.spokeReads()
		Consistently(func(g Gomega) {
			r, w := c.spokeReads()
			g.Expect(r).To(Equal(reads))
			g.Expect(w).To(Equal(writes))
		}, "5s").Should(Succeed())

		By("one pod of one service going not ready: the changed slice is written, nothing is read")
		a.setPodReady(ctx, ns, name(7)+"-1", false)
		Eventually(func() []bool {
			var ready []bool
			for _, s := range c.importSlices(ctx, ns, name(7))() {
				for _, e := range s.Endpoints {
					ready = append(ready, ptr.Deref(e.Conditions.Ready, true))
				}
			}
			return ready
		}, "20s").Should(ConsistOf(true, false))
		want := maps.Clone(writes)
		want["update endpointslices"]++
		Consistently(func(g Gomega) {
			r, w := c.spokeReads()
			g.Expect(r).To(Equal(reads))
			g.Expect(w).To(Equal(want))
		}, "3s").Should(Succeed())

		for i := range n {
			a.unexport(ctx, ns, name(i))
		}
		for i := range n {
			goneEverywhere(ctx, ns, name(i))
		}
		By("removing 30 imports read nothing either")
		r, _ := c.spokeReads()
		Expect(r).To(Equal(reads))
	})

	It("never touches a ServiceImport or EndpointSlice that is not its own", func(ctx SpecContext) {
		ns := newNamespace()
		Expect(c.c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
		theirs := &mcsv1beta1.ServiceImport{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "mine"},
			Spec:       mcsv1beta1.ServiceImportSpec{Type: mcsv1beta1.Headless, Ports: []mcsv1beta1.ServicePort{{Port: 1}}},
		}
		Expect(c.c.Create(ctx, theirs)).To(Succeed())
		theirSlice := &discoveryv1.EndpointSlice{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "mine-other", Labels: map[string]string{
				mcsv1beta1.LabelServiceName: "mine", mcsv1beta1.LabelSourceCluster: a.name, discoveryv1.LabelManagedBy: "other-mcs.example"}},
			AddressType: discoveryv1.AddressTypeIPv4,
			Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"192.0.2.1"}}},
		}
		Expect(c.c.Create(ctx, theirSlice)).To(Succeed())
		a.exportService(ctx, ns, "mine", 10, 1, false)
		Eventually(b.serviceImport(ctx, ns, "mine"), "20s").ShouldNot(BeNil())
		Eventually(c.agent.logs.count("is not Flotilla's"), "20s").Should(BeNumerically(">", 0))
		Consistently(func(g Gomega) {
			got := c.serviceImport(ctx, ns, "mine")()
			g.Expect(got).NotTo(BeNil())
			g.Expect(got.ResourceVersion).To(Equal(theirs.ResourceVersion))
			g.Expect(c.derivedService(ctx, ns, "mine")()).To(BeNil())
		}, "3s").Should(Succeed())
		a.unexport(ctx, ns, "mine")
		Eventually(b.serviceImport(ctx, ns, "mine"), "20s").Should(BeNil())
		Consistently(func(g Gomega) {
			g.Expect(c.serviceImport(ctx, ns, "mine")()).NotTo(BeNil())
			got := &discoveryv1.EndpointSlice{}
			g.Expect(c.c.Get(ctx, client.ObjectKeyFromObject(theirSlice), got)).To(Succeed())
			g.Expect(got.ResourceVersion).To(Equal(theirSlice.ResourceVersion))
		}, "3s").Should(Succeed())
	})

	It("drops the endpoints of a cluster whose lease the hub lost, lists it still, and takes them back when it returns", func(ctx SpecContext) {
		ns := newNamespace()
		a.exportService(ctx, ns, "lease", 8, 2, false)
		b.exportService(ctx, ns, "lease", 9, 2, false)
		for _, sc := range all {
			Eventually(addresses(ctx, sc, ns, "lease", b), "20s").Should(Equal(podIPs(9, 2)), sc.name)
		}
		By("b's agent stops: its lease lapses")
		b.agent.stop()
		for _, sc := range []*importCluster{a, c} {
			Eventually(addresses(ctx, sc, ns, "lease", b), "60s").Should(BeEmpty(), sc.name)
			Expect(addresses(ctx, sc, ns, "lease", a)()).To(Equal(podIPs(8, 2)))
			Expect(sc.serviceImport(ctx, ns, "lease")().Status.Clusters).To(HaveLen(2))
		}
		By("b's agent is back")
		b.agent = startAgentUnmanaged(b.opts)
		for _, sc := range []*importCluster{a, c} {
			Eventually(addresses(ctx, sc, ns, "lease", b), "60s").Should(Equal(podIPs(9, 2)), sc.name)
		}
		a.unexport(ctx, ns, "lease")
		b.unexport(ctx, ns, "lease")
		goneEverywhere(ctx, ns, "lease")
	})

	It("removes a leaving cluster's imports, and its endpoints from the others'; says once that it may not read a set the hub does not count it in", func(ctx SpecContext) {
		ns := newNamespace()
		a.exportService(ctx, ns, "move", 12, 2, false)
		c.exportService(ctx, ns, "move", 13, 2, false)
		for _, sc := range all {
			Eventually(addresses(ctx, sc, ns, "move", c), "20s").Should(Equal(podIPs(13, 2)), sc.name)
		}

		By("cluster c moves to a set that does not exist yet")
		other := "svc-" + utilrand.String(5)
		forbidden := "does not let the cluster read its set's imported services"
		before := c.agent.logs.count(forbidden)()
		setClusterSet(ctx, c.name, other)
		Eventually(c.serviceImport(ctx, ns, "move"), "20s").Should(BeNil())
		Eventually(c.derivedService(ctx, ns, "move"), "20s").Should(BeNil())
		Eventually(c.importSlices(ctx, ns, "move"), "20s").Should(BeEmpty())
		for _, sc := range []*importCluster{a, b} {
			Eventually(addresses(ctx, sc, ns, "move", c), "20s").Should(BeEmpty(), sc.name)
			Expect(addresses(ctx, sc, ns, "move", a)()).To(Equal(podIPs(12, 2)))
		}
		Eventually(c.agent.logs.count(forbidden)).Should(Equal(before + 1))
		Consistently(c.agent.logs.count(forbidden), "5s").Should(Equal(before + 1))

		By("the set is made: the hub lets c read it, and c imports its own export there")
		hub := importHub()
		Expect(hub.Create(ctx, &clusterv1beta2.ManagedClusterSet{ObjectMeta: metav1.ObjectMeta{Name: other}})).To(Succeed())
		DeferCleanup(func(ctx SpecContext) {
			Expect(client.IgnoreNotFound(hub.Delete(ctx, &clusterv1beta2.ManagedClusterSet{ObjectMeta: metav1.ObjectMeta{Name: other}}))).To(Succeed())
		})
		Eventually(addresses(ctx, c, ns, "move", c), "30s").Should(Equal(podIPs(13, 2)))
		Expect(c.serviceImport(ctx, ns, "move")().Labels).To(HaveKeyWithValue(mcs.ClusterSetLabel, other))
		Expect(addresses(ctx, c, ns, "move", a)()).To(BeEmpty())
		Expect(c.agent.logs.count("now lets the cluster read")()).To(BeNumerically(">", 0))

		By("c comes back: the other set's import goes, the set's comes back, with c's endpoints everywhere")
		setClusterSet(ctx, c.name, set)
		for _, sc := range all {
			Eventually(addresses(ctx, sc, ns, "move", a), "20s").Should(Equal(podIPs(12, 2)), sc.name)
			Eventually(addresses(ctx, sc, ns, "move", c), "20s").Should(Equal(podIPs(13, 2)), sc.name)
			Eventually(func() map[string]string { return sc.serviceImport(ctx, ns, "move")().Labels }).Should(HaveKeyWithValue(mcs.ClusterSetLabel, set))
		}
		a.unexport(ctx, ns, "move")
		c.unexport(ctx, ns, "move")
		goneEverywhere(ctx, ns, "move")
	})

	It("restarted, rewrites nothing that is right, repairs what is not and removes what the hub no longer has", func(ctx SpecContext) {
		ns := newNamespace()
		a.exportService(ctx, ns, "keep", 15, 150, false)
		b.exportService(ctx, ns, "keep", 16, 3, false)
		b.exportService(ctx, ns, "hl", 17, 2, true, func(s *corev1.Service) { s.Spec.ClusterIP = corev1.ClusterIPNone })
		b.exportService(ctx, ns, "gone", 18, 1, false)
		Eventually(func(g Gomega) {
			g.Expect(c.importSlices(ctx, ns, "keep")()).To(HaveLen(3))
			g.Expect(addressesFrom(c.importSlices(ctx, ns, "keep")(), a.name)).To(HaveLen(150))
			g.Expect(addressesFrom(c.importSlices(ctx, ns, "keep")(), b.name)).To(Equal(podIPs(16, 3)))
			g.Expect(c.importSlices(ctx, ns, "hl")()).To(HaveLen(1))
			g.Expect(addressesFrom(c.importSlices(ctx, ns, "hl")(), b.name)).To(Equal(podIPs(17, 2)))
			g.Expect(c.importSlices(ctx, ns, "gone")()).To(HaveLen(1))
			for _, name := range []string{"keep", "hl", "gone"} {
				si := c.serviceImport(ctx, ns, name)()
				g.Expect(si).NotTo(BeNil(), name)
				if name != "hl" {
					g.Expect(si.Spec.IPs).NotTo(BeEmpty(), name)
				}
				g.Expect(si.Status.Conditions).To(ContainElement(HaveField("Status", metav1.ConditionTrue)), name)
			}
		}, "60s").Should(Succeed())
		// Settled: nothing more is written.
		settled := c.resourceVersions(ctx, ns)
		Consistently(func() map[string]string { return c.resourceVersions(ctx, ns) }, "2s").Should(Equal(settled))

		By("while c's agent is stopped: an export goes, and someone deletes one of c's imported slices")
		c.agent.stop()
		b.unexport(ctx, ns, "gone")
		Eventually(b.serviceImport(ctx, ns, "gone"), "20s").Should(BeNil())
		deleted := c.importSlices(ctx, ns, "keep")()[0]
		Expect(c.c.Delete(ctx, &deleted)).To(Succeed())
		rv := c.resourceVersions(ctx, ns)
		deletedKey := "EndpointSlice " + ns + "/" + deleted.Name
		for k := range rv {
			if k == "ServiceImport "+ns+"/gone" || k == "Service "+ns+"/"+mcs.DerivedServiceName(ns, "gone") || strings.HasPrefix(k, "EndpointSlice "+ns+"/gone-") {
				delete(rv, k)
			}
		}

		By("restarted, the agent removes the import the hub no longer has and puts the slice back")
		c.agent = startAgentUnmanaged(c.opts)
		goneEverywhere(ctx, ns, "gone")
		Eventually(func() []string {
			var names []string
			for _, s := range c.importSlices(ctx, ns, "keep")() {
				names = append(names, s.Name)
			}
			return names
		}, "30s").Should(ContainElement(deleted.Name))
		Eventually(addresses(ctx, c, ns, "keep", a)).Should(Equal(podIPs(15, 150)))

		By("and writes nothing else")
		unchanged := func() map[string]string { return withoutKey(c.resourceVersions(ctx, ns), deletedKey) }
		Eventually(unchanged).Should(Equal(rv))
		Consistently(unchanged, "3s").Should(Equal(rv))

		a.unexport(ctx, ns, "keep")
		b.unexport(ctx, ns, "keep")
		b.unexport(ctx, ns, "hl")
		goneEverywhere(ctx, ns, "keep")
		goneEverywhere(ctx, ns, "hl")
	})
})
