package integration

import (
	"net"
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

	mcsv1alpha1 "github.com/flotilla-io/flotilla/api/mcs/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/mcs"
)

// The import side of multi-cluster services: what each member cluster's
// agent writes into its cluster from the ImportedServices of its set on the
// hub. The hub's merge is not what these specs test: they write the
// ImportedServices on the hub as its admin, as the merge would, and the
// RoleBindings the hub makes for the members of a set.
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
			setClusterSet(ctx, sc.name, set)
			allowImports(ctx, set, sc.name)
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

	It("imports a ClusterSetIP service into every member, exporters included, as the merge says, and removes it when the hub does", func(ctx SpecContext) {
		ns := newNamespace()
		By("a Service of the same name in cluster a, which importing must not change")
		Expect(a.c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
		local := &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web", Labels: map[string]string{"app": "web"}},
			Spec:       corev1.ServiceSpec{Selector: map[string]string{"app": "web"}, Ports: []corev1.ServicePort{{Name: "http", Port: 80}}},
		}
		Expect(a.c.Create(ctx, local)).To(Succeed())
		localSlices := func() []discoveryv1.EndpointSlice {
			list := &discoveryv1.EndpointSliceList{}
			Expect(a.c.List(ctx, list, client.InNamespace(ns), client.MatchingLabels{discoveryv1.LabelServiceName: "web"})).To(Succeed())
			return list.Items
		}
		// The EndpointSlice controller keeps a placeholder slice for a
		// Service that selects no pods.
		Eventually(localSlices).ShouldNot(BeEmpty())
		before := localSlices()

		is := importOf(set, ns, "web", mcsv1alpha1.ClusterSetIP, importFrom(a.name, 1, 3, ""), importFrom(b.name, 2, 2, ""))
		is.Spec.Ports = []mcsv1alpha1.ServicePort{
			{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80},
			{Name: "grpc", Protocol: corev1.ProtocolTCP, AppProtocol: ptr.To("kubernetes.io/h2c"), Port: 9090},
		}
		is.Spec.SessionAffinity = corev1.ServiceAffinityClientIP
		is.Spec.SessionAffinityConfig = &corev1.SessionAffinityConfig{ClientIP: &corev1.ClientIPConfig{TimeoutSeconds: ptr.To[int32](300)}}
		is.Spec.InternalTrafficPolicy = ptr.To(corev1.ServiceInternalTrafficPolicyCluster)
		is.Spec.TrafficDistribution = ptr.To(corev1.ServiceTrafficDistributionPreferClose)
		is.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv4Protocol}
		is.Spec.ExportedLabels = map[string]string{"team": "shop"}
		is.Spec.ExportedAnnotations = map[string]string{"shop.example/owner": "ops"}
		publishImport(ctx, is)

		for _, sc := range all {
			By("cluster " + sc.name + ": the ServiceImport, in the namespace made for it where missing")
			var si *mcsv1beta1.ServiceImport
			Eventually(func(g Gomega) {
				si = sc.serviceImport(ctx, ns, "web")()
				g.Expect(si).NotTo(BeNil())
				g.Expect(si.Spec.Type).To(Equal(mcsv1beta1.ClusterSetIP))
				g.Expect(si.Spec.IPs).NotTo(BeEmpty())
				g.Expect(si.Status.Conditions).To(ContainElement(And(HaveField("Type", "Ready"), HaveField("Status", metav1.ConditionTrue), HaveField("Reason", "Ready"))))
			}, "20s").Should(Succeed())
			Expect(si.Labels).To(Equal(map[string]string{"team": "shop", mcs.ClusterSetLabel: set, "app.kubernetes.io/managed-by": mcs.ManagedBy}))
			Expect(si.Annotations).To(Equal(map[string]string{"shop.example/owner": "ops", mcs.DerivedServiceAnnotation: mcs.DerivedServiceName(ns, "web")}))
			Expect(si.Spec.Ports).To(ConsistOf(
				mcsv1beta1.ServicePort{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80},
				mcsv1beta1.ServicePort{Name: "grpc", Protocol: corev1.ProtocolTCP, AppProtocol: ptr.To("kubernetes.io/h2c"), Port: 9090}))
			Expect(si.Spec.SessionAffinity).To(Equal(corev1.ServiceAffinityClientIP))
			Expect(si.Spec.SessionAffinityConfig).To(Equal(is.Spec.SessionAffinityConfig))
			Expect(si.Spec.InternalTrafficPolicy).To(Equal(is.Spec.InternalTrafficPolicy))
			Expect(si.Spec.TrafficDistribution).To(Equal(is.Spec.TrafficDistribution))
			Expect(si.Status.Clusters).To(Equal([]mcsv1beta1.ClusterStatus{{Cluster: a.name}, {Cluster: b.name}}))

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

			By("cluster " + sc.name + ": a slice per source cluster, with the well-known labels")
			Eventually(func(g Gomega) {
				items := sc.importSlices(ctx, ns, "web")()
				g.Expect(addressesFrom(items, a.name)).To(Equal(wantAddresses(1, 3)))
				g.Expect(addressesFrom(items, b.name)).To(Equal(wantAddresses(2, 2)))
				for _, s := range items {
					g.Expect(s.Labels).To(Equal(map[string]string{
						mcsv1beta1.LabelServiceName:   "web",
						mcsv1beta1.LabelSourceCluster: s.Labels[mcsv1beta1.LabelSourceCluster],
						discoveryv1.LabelManagedBy:    mcs.ManagedBy,
						mcs.ClusterSetLabel:           set,
						discoveryv1.LabelServiceName:  mcs.DerivedServiceName(ns, "web"),
					}))
					g.Expect(s.Labels[discoveryv1.LabelManagedBy]).NotTo(Equal("endpointslice-controller.k8s.io"))
					g.Expect(s.AddressType).To(Equal(discoveryv1.AddressTypeIPv4))
					g.Expect(s.OwnerReferences).To(ConsistOf(And(HaveField("UID", si.UID), HaveField("Controller", ptr.To(false)))))
				}
			}, "60s").Should(Succeed())
		}

		By("the local Service of the same name and its slices are as they were")
		Consistently(func(g Gomega) {
			got := &corev1.Service{}
			g.Expect(a.c.Get(ctx, client.ObjectKeyFromObject(local), got)).To(Succeed())
			g.Expect(got.ResourceVersion).To(Equal(local.ResourceVersion))
			g.Expect(localSlices()).To(Equal(before))
		}, "2s").Should(Succeed())

		By("the hub removing the import removes it everywhere")
		unpublishImport(ctx, is)
		goneEverywhere(ctx, ns, "web")
		Expect(a.c.Get(ctx, client.ObjectKeyFromObject(local), &corev1.Service{})).To(Succeed())
		Expect(localSlices()).To(Equal(before))
	})

	It("keeps an import while one of two exporters remains, without the other's endpoints, and removes it with the last", func(ctx SpecContext) {
		ns := newNamespace()
		is := importOf(set, ns, "api", mcsv1alpha1.ClusterSetIP, importFrom(a.name, 3, 2, ""), importFrom(b.name, 4, 2, ""))
		publishImport(ctx, is)
		for _, sc := range all {
			Eventually(func() []string { return addressesFrom(sc.importSlices(ctx, ns, "api")(), b.name) }, "20s").Should(Equal(wantAddresses(4, 2)), sc.name)
		}
		By("cluster a stops exporting")
		is.Spec.Clusters = is.Spec.Clusters[1:]
		publishImport(ctx, is)
		for _, sc := range all {
			Eventually(func() []string { return addressesFrom(sc.importSlices(ctx, ns, "api")(), a.name) }, "20s").Should(BeEmpty(), sc.name)
			Eventually(func() []mcsv1beta1.ClusterStatus { return sc.serviceImport(ctx, ns, "api")().Status.Clusters }).Should(Equal([]mcsv1beta1.ClusterStatus{{Cluster: b.name}}))
		}
		Consistently(func(g Gomega) {
			for _, sc := range all {
				g.Expect(sc.serviceImport(ctx, ns, "api")()).NotTo(BeNil(), sc.name)
				g.Expect(addressesFrom(sc.importSlices(ctx, ns, "api")(), b.name)).To(Equal(wantAddresses(4, 2)), sc.name)
			}
		}, "5s").Should(Succeed())
		By("the last exporter stops")
		unpublishImport(ctx, is)
		goneEverywhere(ctx, ns, "api")
	})

	It("imports a headless service with the endpoints' hostnames and no cluster-set IP", func(ctx SpecContext) {
		ns := newNamespace()
		is := importOf(set, ns, "db", mcsv1alpha1.Headless, importFrom(a.name, 5, 3, "db"), importFrom(b.name, 6, 2, "db"))
		publishImport(ctx, is)
		for _, sc := range all {
			Eventually(func(g Gomega) {
				si := sc.serviceImport(ctx, ns, "db")()
				g.Expect(si).NotTo(BeNil())
				g.Expect(si.Spec.Type).To(Equal(mcsv1beta1.Headless))
				g.Expect(si.Status.Conditions).To(ContainElement(And(HaveField("Type", "Ready"), HaveField("Status", metav1.ConditionTrue))))
				items := sc.importSlices(ctx, ns, "db")()
				g.Expect(addressesFrom(items, a.name)).To(Equal(wantAddresses(5, 3)))
				g.Expect(addressesFrom(items, b.name)).To(Equal(wantAddresses(6, 2)))
				hostnames := map[string][]string{}
				for _, s := range items {
					g.Expect(s.Labels).NotTo(HaveKey(discoveryv1.LabelServiceName))
					for _, e := range s.Endpoints {
						g.Expect(e.Hostname).NotTo(BeNil())
						g.Expect(*e.Conditions.Ready).To(BeTrue())
						hostnames[s.Labels[mcsv1beta1.LabelSourceCluster]] = append(hostnames[s.Labels[mcsv1beta1.LabelSourceCluster]], *e.Hostname)
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
		unpublishImport(ctx, is)
		goneEverywhere(ctx, ns, "db")
	})

	It("splits more than 100 endpoints of one cluster into several slices, and writes only the slice that changed", func(ctx SpecContext) {
		ns := newNamespace()
		is := importOf(set, ns, "big", mcsv1alpha1.ClusterSetIP, importFrom(a.name, 7, 250, ""))
		publishImport(ctx, is)
		for _, sc := range all {
			Eventually(func(g Gomega) {
				items := sc.importSlices(ctx, ns, "big")()
				g.Expect(items).To(HaveLen(3))
				for _, s := range items {
					g.Expect(len(s.Endpoints)).To(BeNumerically("<=", 100))
				}
				g.Expect(addressesFrom(items, a.name)).To(Equal(wantAddresses(7, 250)))
			}, "20s").Should(Succeed(), sc.name)
		}
		By("one endpoint going not ready")
		items := c.importSlices(ctx, ns, "big")()
		changed := items[1].Endpoints[0].Addresses[0]
		rv := c.resourceVersions(ctx)
		for i, e := range is.Spec.Clusters[0].Endpoints[0].Endpoints {
			if e.Addresses[0] == changed {
				is.Spec.Clusters[0].Endpoints[0].Endpoints[i].Conditions.Ready = ptr.To(false)
			}
		}
		publishImport(ctx, is)
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
		Consistently(func() map[string]string { return withoutKey(c.resourceVersions(ctx), key) }, "2s").Should(Equal(withoutKey(rv, key)))

		By("scaling down to 50 endpoints: one slice")
		is.Spec.Clusters[0] = importFrom(a.name, 7, 50, "")
		publishImport(ctx, is)
		for _, sc := range all {
			Eventually(func() []discoveryv1.EndpointSlice { return sc.importSlices(ctx, ns, "big")() }, "20s").Should(HaveLen(1), sc.name)
			Eventually(func() []string { return addressesFrom(sc.importSlices(ctx, ns, "big")(), a.name) }).Should(Equal(wantAddresses(7, 50)))
		}
		unpublishImport(ctx, is)
		goneEverywhere(ctx, ns, "big")
	})

	It("leaves out the endpoints of a cluster whose lease the hub lost, and lists it still", func(ctx SpecContext) {
		ns := newNamespace()
		is := importOf(set, ns, "lease", mcsv1alpha1.ClusterSetIP, importFrom(a.name, 8, 2, ""), importFrom(b.name, 9, 2, ""))
		is.Spec.Clusters[1].Available = false
		publishImport(ctx, is)
		for _, sc := range all {
			Eventually(func() []string { return addressesFrom(sc.importSlices(ctx, ns, "lease")(), a.name) }, "20s").Should(Equal(wantAddresses(8, 2)), sc.name)
			Expect(addressesFrom(sc.importSlices(ctx, ns, "lease")(), b.name)).To(BeEmpty())
			Eventually(func() []mcsv1beta1.ClusterStatus { return sc.serviceImport(ctx, ns, "lease")().Status.Clusters }).Should(HaveLen(2))
		}
		By("the cluster is back")
		is.Spec.Clusters[1].Available = true
		publishImport(ctx, is)
		for _, sc := range all {
			Eventually(func() []string { return addressesFrom(sc.importSlices(ctx, ns, "lease")(), b.name) }, "20s").Should(Equal(wantAddresses(9, 2)), sc.name)
		}
		unpublishImport(ctx, is)
		goneEverywhere(ctx, ns, "lease")
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
				mcsv1beta1.LabelServiceName: "mine", mcsv1beta1.LabelSourceCluster: "elsewhere", discoveryv1.LabelManagedBy: "other-mcs.example"}},
			AddressType: discoveryv1.AddressTypeIPv4,
			Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"192.0.2.1"}}},
		}
		Expect(c.c.Create(ctx, theirSlice)).To(Succeed())
		is := importOf(set, ns, "mine", mcsv1alpha1.ClusterSetIP, importFrom(a.name, 10, 1, ""))
		publishImport(ctx, is)
		Eventually(a.serviceImport(ctx, ns, "mine"), "20s").ShouldNot(BeNil())
		Eventually(c.agent.logs.count("is not Flotilla's"), "20s").Should(BeNumerically(">", 0))
		Consistently(func(g Gomega) {
			got := c.serviceImport(ctx, ns, "mine")()
			g.Expect(got).NotTo(BeNil())
			g.Expect(got.ResourceVersion).To(Equal(theirs.ResourceVersion))
			g.Expect(c.derivedService(ctx, ns, "mine")()).To(BeNil())
		}, "3s").Should(Succeed())
		unpublishImport(ctx, is)
		Eventually(a.serviceImport(ctx, ns, "mine"), "20s").Should(BeNil())
		Consistently(func(g Gomega) {
			g.Expect(c.serviceImport(ctx, ns, "mine")()).NotTo(BeNil())
			got := &discoveryv1.EndpointSlice{}
			g.Expect(c.c.Get(ctx, client.ObjectKeyFromObject(theirSlice), got)).To(Succeed())
			g.Expect(got.ResourceVersion).To(Equal(theirSlice.ResourceVersion))
		}, "3s").Should(Succeed())
	})

	It("says Ready=False IPFamilyNotSupported where the cluster has no cluster-set IP of the import's family", func(ctx SpecContext) {
		ns := newNamespace()
		is := importOf(set, ns, "v6", mcsv1alpha1.ClusterSetIP, importFrom(a.name, 11, 1, ""))
		is.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv6Protocol}
		publishImport(ctx, is)
		for _, sc := range all {
			Eventually(func(g Gomega) {
				si := sc.serviceImport(ctx, ns, "v6")()
				g.Expect(si).NotTo(BeNil())
				g.Expect(si.Spec.IPs).To(BeEmpty())
				g.Expect(si.Status.Conditions).To(ContainElement(And(HaveField("Type", "Ready"), HaveField("Status", metav1.ConditionFalse), HaveField("Reason", "IPFamilyNotSupported"))))
			}, "20s").Should(Succeed(), sc.name)
		}
		unpublishImport(ctx, is)
		goneEverywhere(ctx, ns, "v6")
	})

	It("removes what a cluster imported from a set it leaves, says once that the hub does not let it read its new set, and imports once it does", func(ctx SpecContext) {
		ns := newNamespace()
		is := importOf(set, ns, "move", mcsv1alpha1.ClusterSetIP, importFrom(a.name, 12, 2, ""), importFrom(c.name, 13, 2, ""))
		publishImport(ctx, is)
		Eventually(func() []string { return addressesFrom(c.importSlices(ctx, ns, "move")(), a.name) }, "20s").Should(Equal(wantAddresses(12, 2)))

		By("cluster c moves to another set, which does not let it read yet")
		other := newImportSet(ctx)
		forbidden := "does not let the cluster read its set's imported services"
		before := c.agent.logs.count(forbidden)()
		setClusterSet(ctx, c.name, other)
		Eventually(c.serviceImport(ctx, ns, "move"), "20s").Should(BeNil())
		Eventually(c.derivedService(ctx, ns, "move"), "20s").Should(BeNil())
		Eventually(c.importSlices(ctx, ns, "move"), "20s").Should(BeEmpty())
		Eventually(c.agent.logs.count(forbidden)).Should(Equal(before + 1))
		Consistently(c.agent.logs.count(forbidden), "5s").Should(Equal(before + 1))

		By("the hub drops c from the old set's import: the others lose its endpoints")
		is.Spec.Clusters = is.Spec.Clusters[:1]
		publishImport(ctx, is)
		for _, sc := range []*importCluster{a, b} {
			Eventually(func() []string { return addressesFrom(sc.importSlices(ctx, ns, "move")(), c.name) }, "20s").Should(BeEmpty(), sc.name)
			Expect(sc.serviceImport(ctx, ns, "move")()).NotTo(BeNil())
		}

		By("the hub lets c read the new set")
		inOther := importOf(other, ns, "other", mcsv1alpha1.Headless, importFrom(c.name, 14, 1, ""))
		publishImport(ctx, inOther)
		allowImports(ctx, other, c.name)
		Eventually(func() []string { return addressesFrom(c.importSlices(ctx, ns, "other")(), c.name) }, "30s").Should(Equal(wantAddresses(14, 1)))
		Expect(c.serviceImport(ctx, ns, "other")().Labels).To(HaveKeyWithValue(mcs.ClusterSetLabel, other))
		Expect(c.agent.logs.count("now lets the cluster read")()).To(BeNumerically(">", 0))

		By("c comes back: the new set's imports go, the old set's come back")
		setClusterSet(ctx, c.name, set)
		Eventually(c.serviceImport(ctx, ns, "other"), "20s").Should(BeNil())
		Eventually(c.importSlices(ctx, ns, "other"), "20s").Should(BeEmpty())
		Eventually(func() []string { return addressesFrom(c.importSlices(ctx, ns, "move")(), a.name) }, "20s").Should(Equal(wantAddresses(12, 2)))
		unpublishImport(ctx, is)
		unpublishImport(ctx, inOther)
		goneEverywhere(ctx, ns, "move")
	})

	It("restarted, rewrites nothing that is right, repairs what is not and removes what the hub no longer has", func(ctx SpecContext) {
		ns := newNamespace()
		keep := importOf(set, ns, "keep", mcsv1alpha1.ClusterSetIP, importFrom(a.name, 15, 150, ""), importFrom(b.name, 16, 3, ""))
		headless := importOf(set, ns, "hl", mcsv1alpha1.Headless, importFrom(b.name, 17, 2, "hl"))
		gone := importOf(set, ns, "gone", mcsv1alpha1.ClusterSetIP, importFrom(b.name, 18, 1, ""))
		for _, is := range []*mcsv1alpha1.ImportedService{keep, headless, gone} {
			publishImport(ctx, is)
		}
		Eventually(func(g Gomega) {
			g.Expect(a.importSlices(ctx, ns, "keep")()).To(HaveLen(3))
			g.Expect(a.importSlices(ctx, ns, "hl")()).To(HaveLen(1))
			g.Expect(a.importSlices(ctx, ns, "gone")()).To(HaveLen(1))
			si := a.serviceImport(ctx, ns, "keep")()
			g.Expect(si).NotTo(BeNil())
			g.Expect(si.Spec.IPs).NotTo(BeEmpty())
			g.Expect(si.Status.Conditions).To(ContainElement(HaveField("Status", metav1.ConditionTrue)))
		}, "20s").Should(Succeed())
		// Settled: nothing more is written.
		settled := a.resourceVersions(ctx)
		Consistently(func() map[string]string { return a.resourceVersions(ctx) }, "2s").Should(Equal(settled))

		By("while the agent is stopped: an import goes from the hub, and someone deletes one of its slices")
		a.agent.stop()
		unpublishImport(ctx, gone)
		deleted := a.importSlices(ctx, ns, "keep")()[0]
		Expect(a.c.Delete(ctx, &deleted)).To(Succeed())
		rv := a.resourceVersions(ctx)
		deletedKey := "EndpointSlice " + ns + "/" + deleted.Name
		Expect(rv).NotTo(HaveKey(deletedKey))

		By("restarted, the agent removes the import the hub no longer has and puts the slice back")
		a.agent = startAgentUnmanaged(a.opts)
		goneEverywhere(ctx, ns, "gone")
		Eventually(func() []string {
			var names []string
			for _, s := range a.importSlices(ctx, ns, "keep")() {
				names = append(names, s.Name)
			}
			return names
		}, "30s").Should(ContainElement(deleted.Name))
		Eventually(func() []string { return addressesFrom(a.importSlices(ctx, ns, "keep")(), a.name) }).Should(Equal(wantAddresses(15, 150)))

		By("and writes nothing else")
		for k := range rv {
			if k == "ServiceImport "+ns+"/gone" || k == "Service "+ns+"/"+mcs.DerivedServiceName(ns, "gone") || strings.HasPrefix(k, "EndpointSlice "+ns+"/gone-") {
				delete(rv, k)
			}
		}
		unchanged := func() map[string]string { return withoutKey(a.resourceVersions(ctx), deletedKey) }
		Eventually(unchanged).Should(Equal(rv))
		Consistently(unchanged, "3s").Should(Equal(rv))

		unpublishImport(ctx, keep)
		unpublishImport(ctx, headless)
		goneEverywhere(ctx, ns, "keep")
		goneEverywhere(ctx, ns, "hl")
	})
})
