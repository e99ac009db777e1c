package integration

import (
	"context"
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	clusterv1beta2 "github.com/flotilla-io/flotilla/api/cluster/v1beta2"
	mcsv1alpha1 "github.com/flotilla-io/flotilla/api/mcs/v1alpha1"
	"github.com/flotilla-io/flotilla/hub/services"
	"github.com/flotilla-io/flotilla/internal/identity"
	"github.com/flotilla-io/flotilla/internal/mcs"
)

// hubSvcCluster is an accepted cluster of the services hub specs, with a
// client that authenticates as its agent, with the agent's certificate.
type hubSvcCluster struct {
	name  string
	agent client.Client
}

// hubSvcJoin creates cluster name in set, accepts it, issues its agent a
// certificate, and has the agent renew a long lease and report the
// cluster Available, so that only the specs change its availability.
func hubSvcJoin(ctx SpecContext, name, set string) hubSvcCluster {
	GinkgoHelper()
	createCluster(ctx, name, func(mc *clusterv1.ManagedCluster) {
		mc.Labels = map[string]string{clusterv1.ClusterSetLabel: set}
		mc.Spec.LeaseDurationSeconds = 3600
	})
	acceptCluster(ctx, name)
	agent := crClient(agentConfig(ctx, name, "agent1"))
	Eventually(func() error {
		_, err := hubCP.Kube.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
		return err
	}).Should(Succeed())
	renewLeaseAt(ctx, agent, name, time.Now())
	hubSvcAvailable(ctx, name, metav1.ConditionTrue)
	return hubSvcCluster{name: name, agent: agent}
}

// hubSvcAvailable sets cluster c's Available condition as the hub's lease
// controller does, and waits until the hub's cache could see it.
func hubSvcAvailable(ctx SpecContext, c string, status metav1.ConditionStatus) {
	GinkgoHelper()
	Eventually(func() error {
		mc := &clusterv1.ManagedCluster{}
		if err := hubCP.Client.Get(ctx, client.ObjectKey{Name: c}, mc); err != nil {
			return err
		}
		before := mc.DeepCopy()
		meta.SetStatusCondition(&mc.Status.Conditions, metav1.Condition{
			Type: clusterv1.ManagedClusterConditionAvailable, Status: status, Reason: "SetBySpec", Message: "set by the services hub spec",
		})
		return hubCP.Client.Status().Patch(ctx, mc, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}))
	}).Should(Succeed())
}

// hubSvcSet creates an exclusive ManagedClusterSet, deleted when the specs end.
func hubSvcSet(ctx SpecContext, name string) {
	GinkgoHelper()
	set := &clusterv1beta2.ManagedClusterSet{ObjectMeta: metav1.ObjectMeta{Name: name}}
	Expect(hubCP.Client.Create(ctx, set)).To(Succeed())
	DeferCleanup(func(ctx SpecContext) { Expect(client.IgnoreNotFound(hubCP.Client.Delete(ctx, set))).To(Succeed()) })
}

// hubSvcExport is cluster c's ExportedService of demo/<svc>, as an agent
// writes it: exported at created, with ports and one ready IPv4 endpoint
// per address, listed by address alone.
func hubSvcExport(c, svc string, created time.Time, typ mcsv1alpha1.ServiceType, ports []mcsv1alpha1.ServicePort, addrs ...string) *mcsv1alpha1.ExportedService {
	var groups []mcsv1alpha1.EndpointGroup
	if len(addrs) > 0 {
		groups = []mcsv1alpha1.EndpointGroup{{AddressType: discoveryv1.AddressTypeIPv4, Ready: addrs}}
	}
	return &mcsv1alpha1.ExportedService{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: c, Name: mcs.ObjectName("demo", svc),
			Labels: map[string]string{mcs.ClusterLabel: c, mcs.ServiceNamespaceLabel: "demo", mcs.ServiceNameLabel: svc},
		},
		Spec: mcsv1alpha1.ExportedServiceSpec{
			Namespace: "demo", Name: svc, ExportCreationTimestamp: metav1.NewTime(created),
			ServiceProperties: mcsv1alpha1.ServiceProperties{Type: typ, Ports: ports},
			Endpoints:         groups,
		},
	}
}

func hubSvcTCP(name string, port int32) mcsv1alpha1.ServicePort {
	return mcsv1alpha1.ServicePort{Name: name, Protocol: corev1.ProtocolTCP, Port: port}
}

// hubSvcImport reads set's ImportedService of demo/<svc>, nil while there is none.
func hubSvcImport(ctx context.Context, set, svc string) func() *mcsv1alpha1.ImportedService {
	return func() *mcsv1alpha1.ImportedService {
		imp := &mcsv1alpha1.ImportedService{}
		err := hubCP.Client.Get(ctx, client.ObjectKey{Namespace: mcs.SetNamespace(set), Name: mcs.ObjectName("demo", svc)}, imp)
		if apierrors.IsNotFound(err) {
			return nil
		}
		Expect(err).NotTo(HaveOccurred())
		return imp
	}
}

// importedClusters summarises an import's clusters: name=available/endpoint count.
func hubSvcClusters(imp *mcsv1alpha1.ImportedService) []string {
	if imp == nil {
		return nil
	}
	var out []string
	for _, c := range imp.Spec.Clusters {
		_, n := mcs.CountEndpoints(c.Endpoints)
		out = append(out, fmt.Sprintf("%s=%t/%d", c.Name, c.Available, n))
	}
	return out
}

// exportStatus reads the status of cluster c's ExportedService of demo/<svc>.
func hubSvcExportStatus(ctx context.Context, c, svc string) func() mcsv1alpha1.ExportedServiceStatus {
	return func() mcsv1alpha1.ExportedServiceStatus {
		e := &mcsv1alpha1.ExportedService{}
		Expect(hubCP.Client.Get(ctx, client.ObjectKey{Namespace: c, Name: mcs.ObjectName("demo", svc)}, e)).To(Succeed())
		return e.Status
	}
}

// haveCondition matches a status holding condition t with status s and
// reason r, whose message holds every part.
func hubSvcCondition(t string, s metav1.ConditionStatus, r string, parts ...string) OmegaMatcher {
	return WithTransform(func(st mcsv1alpha1.ExportedServiceStatus) *metav1.Condition {
		return meta.FindStatusCondition(st.Conditions, t)
	}, And(Not(BeNil()), HaveField("Status", s), HaveField("Reason", r), HaveField("Message", And(hubSvcContainAll(parts)...))))
}

func hubSvcContainAll(parts []string) []OmegaMatcher {
	ms := []OmegaMatcher{Not(BeEmpty())}
	for _, p := range parts {
		ms = append(ms, ContainSubstring(p))
	}
	return ms
}

// hubSvcUpdateExport changes cluster c's export of demo/<svc> as its
// agent, again while it conflicts, and returns what the agent wrote.
func hubSvcUpdateExport(ctx SpecContext, c hubSvcCluster, svc string, change func(*mcsv1alpha1.ExportedService)) *mcsv1alpha1.ExportedService {
	GinkgoHelper()
	e := &mcsv1alpha1.ExportedService{}
	Eventually(func() error {
		if err := c.agent.Get(ctx, client.ObjectKey{Namespace: c.name, Name: mcs.ObjectName("demo", svc)}, e); err != nil {
			return err
		}
		change(e)
		return c.agent.Update(ctx, e)
	}).Should(Succeed())
	return e
}

var _ = Describe("services hub", Ordered, func() {
	var (
		setA, setB string
		c1, c2, c3 hubSvcCluster
		t0         = time.Now().Add(-time.Hour).Truncate(time.Second)
	)

	BeforeAll(func(ctx SpecContext) {
		id := utilrand.String(5)
		setA, setB = "svc-a-"+id, "svc-b-"+id
		hubSvcSet(ctx, setA)
		hubSvcSet(ctx, setB)
		c1 = hubSvcJoin(ctx, newClusterName("svchub1"), setA)
		c2 = hubSvcJoin(ctx, newClusterName("svchub2"), setA)
		c3 = hubSvcJoin(ctx, newClusterName("svchub3"), setB)
	})

	It("gives each exclusive set a namespace, owned by the set, with a RoleBinding per member to the importer role", func(ctx SpecContext) {
		for set, members := range map[string][]string{setA: {c1.name, c2.name}, setB: {c3.name}} {
			ns := &corev1.Namespace{}
			Eventually(func() error {
				return hubCP.Client.Get(ctx, client.ObjectKey{Name: mcs.SetNamespace(set)}, ns)
			}).Should(Succeed())
			Expect(ns.Labels).To(HaveKeyWithValue(mcs.ClusterSetLabel, set))
			Expect(metav1.GetControllerOf(ns)).To(And(Not(BeNil()), HaveField("Kind", "ManagedClusterSet"), HaveField("Name", set)))
			Eventually(func() []string { return hubSvcBindings(ctx, set) }).Should(ConsistOf(members))
		}
		rb := &rbacv1.RoleBinding{}
		Expect(hubCP.Client.Get(ctx, client.ObjectKey{Namespace: mcs.SetNamespace(setA), Name: services.ImporterRoleBindingName(c1.name)}, rb)).To(Succeed())
		Expect(rb.RoleRef.Name).To(Equal(services.ImporterClusterRole))
		role := &rbacv1.ClusterRole{}
		Expect(hubCP.Client.Get(ctx, client.ObjectKey{Name: services.ImporterClusterRole}, role)).To(Succeed())
		Expect(role.Rules).To(ConsistOf(HaveField("Resources", ConsistOf("importedservices"))))
		Expect(role.Rules[0].Verbs).To(ConsistOf("get", "list", "watch"))
		By("the agent reading its own set's ImportedServices")
		Eventually(func() error {
			return c1.agent.List(ctx, &mcsv1alpha1.ImportedServiceList{}, client.InNamespace(mcs.SetNamespace(setA)))
		}).Should(Succeed())

		By("binding the accepted agent by name once the hub records it, as registration does")
		Expect(updateCluster(ctx, hubCP.Client, c1.name, func(mc *clusterv1.ManagedCluster) {
			if mc.Annotations == nil {
				mc.Annotations = map[string]string{}
			}
			mc.Annotations[identity.AcceptedAgentAnnotation] = "agent1"
		})).To(Succeed())
		Eventually(func() []rbacv1.Subject {
			Expect(hubCP.Client.Get(ctx, client.ObjectKeyFromObject(rb), rb)).To(Succeed())
			return rb.Subjects
		}).Should(Equal([]rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: identity.AgentUser(c1.name, "agent1")}}))
		Eventually(func() error {
			return c1.agent.List(ctx, &mcsv1alpha1.ImportedServiceList{}, client.InNamespace(mcs.SetNamespace(setA)))
		}).Should(Succeed())
	})

	It("imports an agent's ExportedService into its set's namespace, and only there", func(ctx SpecContext) {
		Expect(c1.agent.Create(ctx, hubSvcExport(c1.name, "web", t0, mcsv1alpha1.ClusterSetIP, []mcsv1alpha1.ServicePort{hubSvcTCP("http", 80)}, "10.1.0.1", "10.1.0.2"))).To(Succeed())
		Eventually(func() []string { return hubSvcClusters(hubSvcImport(ctx, setA, "web")()) }).Should(Equal([]string{c1.name + "=true/2"}))
		imp := hubSvcImport(ctx, setA, "web")()
		Expect(imp.Labels).To(And(HaveKeyWithValue(mcs.ClusterSetLabel, setA), HaveKeyWithValue(mcs.ServiceNamespaceLabel, "demo"), HaveKeyWithValue(mcs.ServiceNameLabel, "web")))
		Expect(imp.Spec.ClusterSet).To(Equal(setA))
		Expect(imp.Spec.Namespace + "/" + imp.Spec.Name).To(Equal("demo/web"))
		Expect(imp.Spec.Type).To(Equal(mcsv1alpha1.ClusterSetIP))
		Expect(imp.Spec.Ports).To(Equal([]mcsv1alpha1.ServicePort{hubSvcTCP("http", 80)}))
		Expect(imp.Spec.Clusters[0].Generation).To(Equal(int64(1)))
		Eventually(hubSvcExportStatus(ctx, c1.name, "web")).Should(And(
			HaveField("ClusterSet", setA),
			hubSvcCondition(mcsv1alpha1.ConditionConflict, metav1.ConditionFalse, "NoConflicts"),
			hubSvcCondition(mcsv1alpha1.ConditionInClusterSet, metav1.ConditionTrue, "InClusterSet", setA),
		))
		Consistently(hubSvcImport(ctx, setB, "web"), "2s").Should(BeNil())
	})

	It("merges two members' exports by the KEP's rules and gives both the verdict", func(ctx SpecContext) {
		By("an older export with tcp/42 and a newer headless one with tcp/43 and stcp SCTP/142")
		Expect(c1.agent.Create(ctx, hubSvcExport(c1.name, "merge", t0, mcsv1alpha1.ClusterSetIP, []mcsv1alpha1.ServicePort{hubSvcTCP("tcp", 42)}, "10.1.1.1"))).To(Succeed())
		Expect(c2.agent.Create(ctx, hubSvcExport(c2.name, "merge", t0.Add(time.Minute), mcsv1alpha1.Headless,
			[]mcsv1alpha1.ServicePort{hubSvcTCP("tcp", 43), {Name: "stcp", Protocol: corev1.ProtocolSCTP, Port: 142}}, "10.2.1.1"))).To(Succeed())
		Eventually(func() []string { return hubSvcClusters(hubSvcImport(ctx, setA, "merge")()) }).Should(Equal(hubSvcPair(c1.name+"=true/1", c2.name+"=true/1")))
		imp := hubSvcImport(ctx, setA, "merge")()
		Expect(imp.Spec.Type).To(Equal(mcsv1alpha1.ClusterSetIP), "the oldest export's type")
		By("the hub's managed fields naming the list of clusters whole, not each cluster: every version kept in the watch caches carries them")
		var fields []string
		for _, f := range imp.ManagedFields {
			if f.FieldsV1 != nil {
				fields = append(fields, string(f.FieldsV1.Raw))
			}
		}
		Expect(fields).To(ContainElement(ContainSubstring(`"f:clusters":{}`)))
		Expect(fields).NotTo(ContainElement(ContainSubstring(`k:{"name"`)))
		Expect(imp.Spec.Ports).To(Equal([]mcsv1alpha1.ServicePort{hubSvcTCP("tcp", 42), {Name: "stcp", Protocol: corev1.ProtocolSCTP, Port: 142}}),
			"the union, the oldest export's tcp/42 kept over tcp/43")
		for _, c := range []string{c1.name, c2.name} {
			Eventually(hubSvcExportStatus(ctx, c, "merge")).Should(hubSvcCondition(mcsv1alpha1.ConditionConflict, metav1.ConditionTrue, "PortConflict,TypeConflict",
				"TypeConflict: type ClusterSetIP taken from the oldest export, in "+c1.name+"; 1 of 2 exports disagree ("+c2.name+")",
				c2.name+"'s tcp TCP/43 lost to "+c1.name+"'s tcp TCP/42"))
		}

		By("the newer export agreeing")
		hubSvcUpdateExport(ctx, c2, "merge", func(e *mcsv1alpha1.ExportedService) {
			e.Spec.Type = mcsv1alpha1.ClusterSetIP
			e.Spec.Ports = []mcsv1alpha1.ServicePort{hubSvcTCP("tcp", 42)}
		})
		for _, c := range []string{c1.name, c2.name} {
			Eventually(hubSvcExportStatus(ctx, c, "merge")).Should(hubSvcCondition(mcsv1alpha1.ConditionConflict, metav1.ConditionFalse, "NoConflicts", "the 2 exports agree"))
		}
		Eventually(func() []mcsv1alpha1.ServicePort { return hubSvcImport(ctx, setA, "merge")().Spec.Ports }).Should(Equal([]mcsv1alpha1.ServicePort{hubSvcTCP("tcp", 42)}))
	})

	It("writes the hub once per endpoint change: the ImportedService, never the ExportedService's status", func(ctx SpecContext) {
		Expect(c1.agent.Create(ctx, hubSvcExport(c1.name, "count", t0, mcsv1alpha1.ClusterSetIP, []mcsv1alpha1.ServicePort{hubSvcTCP("http", 80)}, "10.1.2.1"))).To(Succeed())
		Eventually(hubSvcExportStatus(ctx, c1.name, "count")).Should(hubSvcCondition(mcsv1alpha1.ConditionConflict, metav1.ConditionFalse, "NoConflicts"))
		Eventually(func() []string { return hubSvcClusters(hubSvcImport(ctx, setA, "count")()) }).Should(Equal([]string{c1.name + "=true/1"}))

		w, err := client.NewWithWatch(hubCP.Config, client.Options{Scheme: hubCP.Client.Scheme()})
		Expect(err).NotTo(HaveOccurred())
		imports, err := w.Watch(ctx, &mcsv1alpha1.ImportedServiceList{}, client.InNamespace(mcs.SetNamespace(setA)),
			client.MatchingFieldsSelector{Selector: fields.OneTermEqualSelector("metadata.name", mcs.ObjectName("demo", "count"))},
			&client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: hubSvcImport(ctx, setA, "count")().ResourceVersion}})
		Expect(err).NotTo(HaveOccurred())
		defer imports.Stop()
		exports, err := w.Watch(ctx, &mcsv1alpha1.ExportedServiceList{}, client.InNamespace(c1.name),
			client.MatchingFieldsSelector{Selector: fields.OneTermEqualSelector("metadata.name", mcs.ObjectName("demo", "count"))})
		Expect(err).NotTo(HaveOccurred())
		defer exports.Stop()
		Eventually(exports.ResultChan()).Should(Receive(HaveField("Type", watch.Added)), "the watch's initial event")

		const changes = 5
		for i := 2; i <= changes+1; i++ {
			mine := hubSvcUpdateExport(ctx, c1, "count", func(e *mcsv1alpha1.ExportedService) {
				addrs := make([]string, i)
				for j := range addrs {
					addrs[j] = fmt.Sprintf("10.1.2.%d", j+1)
				}
				e.Spec.Endpoints[0].Ready = addrs
			})
			var ev watch.Event
			Eventually(imports.ResultChan(), "10s").Should(Receive(&ev))
			Expect(ev.Type).To(Equal(watch.Modified))
			got := ev.Object.(*mcsv1alpha1.ImportedService)
			Expect(hubSvcClusters(got)).To(Equal([]string{fmt.Sprintf("%s=true/%d", c1.name, i)}), "the one write carries the change")
			Expect(got.Spec.Clusters[0].Generation).To(Equal(mine.Generation))
			Eventually(exports.ResultChan()).Should(Receive(HaveField("Object", HaveField("ObjectMeta.ResourceVersion", mine.ResourceVersion))), "the agent's own write")
			Consistently(imports.ResultChan(), "1s").ShouldNot(Receive(), "a second ImportedService write for endpoint change %d", i-1)
			Consistently(exports.ResultChan(), "100ms").ShouldNot(Receive(), "a status write on endpoint change %d", i-1)
		}
	})

	It("leaves an unavailable cluster listed without endpoints, and puts them back when it is available again", func(ctx SpecContext) {
		Expect(c2.agent.Create(ctx, hubSvcExport(c2.name, "web", t0.Add(time.Minute), mcsv1alpha1.ClusterSetIP, []mcsv1alpha1.ServicePort{hubSvcTCP("http", 80)}, "10.2.0.1"))).To(Succeed())
		Eventually(func() []string { return hubSvcClusters(hubSvcImport(ctx, setA, "web")()) }).Should(Equal(hubSvcPair(c1.name+"=true/2", c2.name+"=true/1")))

		hubSvcAvailable(ctx, c2.name, metav1.ConditionUnknown)
		Eventually(func() []string { return hubSvcClusters(hubSvcImport(ctx, setA, "web")()) }).Should(Equal(hubSvcPair(c1.name+"=true/2", c2.name+"=false/0")))
		Expect(hubSvcExportStatus(ctx, c2.name, "web")()).To(HaveField("ClusterSet", setA), "still a member")

		hubSvcAvailable(ctx, c2.name, metav1.ConditionTrue)
		Eventually(func() []string { return hubSvcClusters(hubSvcImport(ctx, setA, "web")()) }).Should(Equal(hubSvcPair(c1.name+"=true/2", c2.name+"=true/1")))
	})

	It("moves a cluster's exports and its RoleBinding with it to another set", func(ctx SpecContext) {
		Eventually(func() error {
			return c2.agent.List(ctx, &mcsv1alpha1.ImportedServiceList{}, client.InNamespace(mcs.SetNamespace(setA)))
		}).Should(Succeed())
		Expect(updateCluster(ctx, hubCP.Client, c2.name, func(mc *clusterv1.ManagedCluster) { mc.Labels[clusterv1.ClusterSetLabel] = setB })).To(Succeed())

		Eventually(func() []string { return hubSvcClusters(hubSvcImport(ctx, setA, "web")()) }).Should(Equal([]string{c1.name + "=true/2"}))
		Eventually(func() []string { return hubSvcClusters(hubSvcImport(ctx, setB, "web")()) }).Should(Equal([]string{c2.name + "=true/1"}))
		Eventually(func() []string { return hubSvcClusters(hubSvcImport(ctx, setB, "merge")()) }).Should(Equal([]string{c2.name + "=true/1"}))
		Eventually(hubSvcExportStatus(ctx, c2.name, "web")).Should(And(HaveField("ClusterSet", setB),
			hubSvcCondition(mcsv1alpha1.ConditionInClusterSet, metav1.ConditionTrue, "InClusterSet", setB)))
		Eventually(func() []string { return hubSvcBindings(ctx, setA) }).Should(ConsistOf(c1.name))
		Eventually(func() []string { return hubSvcBindings(ctx, setB) }).Should(ConsistOf(c2.name, c3.name))

		By("the agent reading the new set's ImportedServices and no longer the old set's")
		Eventually(func() error {
			return c2.agent.List(ctx, &mcsv1alpha1.ImportedServiceList{}, client.InNamespace(mcs.SetNamespace(setB)))
		}).Should(Succeed())
		Eventually(func() error {
			return c2.agent.List(ctx, &mcsv1alpha1.ImportedServiceList{}, client.InNamespace(mcs.SetNamespace(setA)))
		}).Should(beForbidden())
	})

	It("says so on the export of a cluster in no exclusive set, and imports it nowhere", func(ctx SpecContext) {
		Expect(c3.agent.Create(ctx, hubSvcExport(c3.name, "lonely", t0, mcsv1alpha1.ClusterSetIP, []mcsv1alpha1.ServicePort{hubSvcTCP("http", 80)}, "10.3.0.1"))).To(Succeed())
		Eventually(func() []string { return hubSvcClusters(hubSvcImport(ctx, setB, "lonely")()) }).Should(Equal([]string{c3.name + "=true/1"}))
		Expect(updateCluster(ctx, hubCP.Client, c3.name, func(mc *clusterv1.ManagedCluster) { mc.Labels[clusterv1.ClusterSetLabel] = "no-such-set-" + setB })).To(Succeed())
		Eventually(hubSvcImport(ctx, setB, "lonely")).Should(BeNil())
		Eventually(hubSvcExportStatus(ctx, c3.name, "lonely")).Should(And(HaveField("ClusterSet", ""),
			hubSvcCondition(mcsv1alpha1.ConditionInClusterSet, metav1.ConditionFalse, "NotInClusterSet", "no-such-set-"+setB, "does not exist")))
		Eventually(func() []string { return hubSvcBindings(ctx, setB) }).Should(ConsistOf(c2.name))
		Expect(updateCluster(ctx, hubCP.Client, c3.name, func(mc *clusterv1.ManagedCluster) { mc.Labels[clusterv1.ClusterSetLabel] = setB })).To(Succeed())
		Eventually(func() []string { return hubSvcClusters(hubSvcImport(ctx, setB, "lonely")()) }).Should(Equal([]string{c3.name + "=true/1"}))
	})

	It("deletes the ImportedService when no member exports the service any more", func(ctx SpecContext) {
		Expect(c1.agent.Delete(ctx, &mcsv1alpha1.ExportedService{ObjectMeta: metav1.ObjectMeta{Namespace: c1.name, Name: mcs.ObjectName("demo", "web")}})).To(Succeed())
		Eventually(hubSvcImport(ctx, setA, "web")).Should(BeNil())
		Consistently(func() []string { return hubSvcClusters(hubSvcImport(ctx, setB, "web")()) }, "2s").Should(Equal([]string{c2.name + "=true/1"}),
			"the other set's import of the same service stays")
	})

	Describe("refuses an agent", func() {
		It("creating an ExportedService in another cluster's namespace", func(ctx SpecContext) {
			err := c1.agent.Create(ctx, hubSvcExport(c3.name, "forged", t0, mcsv1alpha1.ClusterSetIP, []mcsv1alpha1.ServicePort{hubSvcTCP("http", 80)}, "10.9.9.9"))
			Expect(err).To(beForbidden())
		})

		It("writing an ExportedService of its own namespace labelled as another cluster's", func(ctx SpecContext) {
			e := hubSvcExport(c1.name, "forged-label", t0, mcsv1alpha1.ClusterSetIP, []mcsv1alpha1.ServicePort{hubSvcTCP("http", 80)}, "10.9.9.9")
			e.Labels[mcs.ClusterLabel] = c3.name
			err := c1.agent.Create(ctx, e)
			Expect(err).To(beForbidden())
			Expect(err.Error()).To(ContainSubstring("may publish only its own exports"))

			By("nor relabelling its own export so")
			Expect(c1.agent.Create(ctx, hubSvcExport(c1.name, "relabel", t0, mcsv1alpha1.ClusterSetIP, []mcsv1alpha1.ServicePort{hubSvcTCP("http", 80)}))).To(Succeed())
			mine := &mcsv1alpha1.ExportedService{}
			Expect(c1.agent.Get(ctx, client.ObjectKey{Namespace: c1.name, Name: mcs.ObjectName("demo", "relabel")}, mine)).To(Succeed())
			mine.Labels[mcs.ClusterLabel] = c3.name
			Expect(c1.agent.Update(ctx, mine)).To(beForbidden())
		})

		It("labelling an ExportedService with a service other than its own", func(ctx SpecContext) {
			e := hubSvcExport(c1.name, "mislabelled", t0, mcsv1alpha1.ClusterSetIP, []mcsv1alpha1.ServicePort{hubSvcTCP("http", 80)})
			e.Labels[mcs.ServiceNameLabel] = "other"
			Expect(apierrors.IsInvalid(c1.agent.Create(ctx, e))).To(BeTrue())
		})

		It("writing the status of its own ExportedService", func(ctx SpecContext) {
			Expect(c1.agent.Create(ctx, hubSvcExport(c1.name, "status", t0, mcsv1alpha1.ClusterSetIP, []mcsv1alpha1.ServicePort{hubSvcTCP("http", 80)}))).To(Succeed())
			e := &mcsv1alpha1.ExportedService{}
			Eventually(func() string {
				Expect(c1.agent.Get(ctx, client.ObjectKey{Namespace: c1.name, Name: mcs.ObjectName("demo", "status")}, e)).To(Succeed())
				return e.Status.ClusterSet
			}).Should(Equal(setA))
			e.Status.ClusterSet = setB
			meta.SetStatusCondition(&e.Status.Conditions, metav1.Condition{Type: mcsv1alpha1.ConditionConflict, Status: metav1.ConditionFalse, Reason: "NoConflicts", Message: "forged"})
			Expect(c1.agent.Status().Update(ctx, e)).To(beForbidden())
			Expect(c1.agent.Status().Patch(ctx, e, client.Merge)).To(beForbidden())
		})

		It("creating or changing an ImportedService in its own set's namespace", func(ctx SpecContext) {
			Expect(c1.agent.Create(ctx, hubSvcExport(c1.name, "imp", t0, mcsv1alpha1.ClusterSetIP, []mcsv1alpha1.ServicePort{hubSvcTCP("http", 80)}, "10.1.3.1"))).To(Succeed())
			Eventually(hubSvcImport(ctx, setA, "imp")).ShouldNot(BeNil())
			forged := &mcsv1alpha1.ImportedService{
				ObjectMeta: metav1.ObjectMeta{Namespace: mcs.SetNamespace(setA), Name: mcs.ObjectName("demo", "forged")},
				Spec:       mcsv1alpha1.ImportedServiceSpec{ClusterSet: setA, Namespace: "demo", Name: "forged", ServiceProperties: mcsv1alpha1.ServiceProperties{Type: mcsv1alpha1.ClusterSetIP}},
			}
			Expect(c1.agent.Create(ctx, forged)).To(beForbidden())
			imp := &mcsv1alpha1.ImportedService{}
			Expect(c1.agent.Get(ctx, client.ObjectKey{Namespace: mcs.SetNamespace(setA), Name: mcs.ObjectName("demo", "imp")}, imp)).To(Succeed(), "it may read it")
			imp.Spec.Clusters = nil
			Expect(c1.agent.Update(ctx, imp)).To(beForbidden())
			Expect(c1.agent.Delete(ctx, imp)).To(beForbidden())
		})

		It("reading another set's ImportedServices", func(ctx SpecContext) {
			Expect(c1.agent.List(ctx, &mcsv1alpha1.ImportedServiceList{}, client.InNamespace(mcs.SetNamespace(setB)))).To(beForbidden())
			Expect(c1.agent.Get(ctx, client.ObjectKey{Namespace: mcs.SetNamespace(setB), Name: mcs.ObjectName("demo", "web")}, &mcsv1alpha1.ImportedService{})).To(beForbidden())
			Expect(c1.agent.List(ctx, &mcsv1alpha1.ImportedServiceList{})).To(beForbidden(), "nor every namespace's")
		})

		It("reading or deleting another cluster's ExportedServices", func(ctx SpecContext) {
			Expect(c1.agent.List(ctx, &mcsv1alpha1.ExportedServiceList{}, client.InNamespace(c2.name))).To(beForbidden())
			Expect(c1.agent.Get(ctx, client.ObjectKey{Namespace: c2.name, Name: mcs.ObjectName("demo", "web")}, &mcsv1alpha1.ExportedService{})).To(beForbidden())
			Expect(c1.agent.List(ctx, &mcsv1alpha1.ExportedServiceList{})).To(beForbidden(), "nor every namespace's")
			Expect(c1.agent.Delete(ctx, &mcsv1alpha1.ExportedService{ObjectMeta: metav1.ObjectMeta{Namespace: c2.name, Name: mcs.ObjectName("demo", "web")}})).To(beForbidden())
			Expect(hubSvcImport(ctx, setB, "web")()).NotTo(BeNil())
		})
	})

	It("withdraws a deleted set's namespace, and with it its imports and bindings", func(ctx SpecContext) {
		Expect(hubCP.Client.Delete(ctx, &clusterv1beta2.ManagedClusterSet{ObjectMeta: metav1.ObjectMeta{Name: setA}})).To(Succeed())
		Eventually(hubSvcExportStatus(ctx, c1.name, "imp")).Should(And(HaveField("ClusterSet", ""),
			hubSvcCondition(mcsv1alpha1.ConditionInClusterSet, metav1.ConditionFalse, "NotInClusterSet", setA, "does not exist")))
		Eventually(func() bool {
			ns := &corev1.Namespace{}
			err := hubCP.Client.Get(ctx, client.ObjectKey{Name: mcs.SetNamespace(setA)}, ns)
			return apierrors.IsNotFound(err) || (err == nil && !ns.DeletionTimestamp.IsZero())
		}).Should(BeTrue(), "the namespace goes with its set")
		Eventually(func() error {
			return c1.agent.List(ctx, &mcsv1alpha1.ImportedServiceList{}, client.InNamespace(mcs.SetNamespace(setA)))
		}).Should(beForbidden())
	})
})

// hubSvcBindings are the clusters bound to the importer role in set's namespace.
func hubSvcBindings(ctx context.Context, set string) []string {
	list := &rbacv1.RoleBindingList{}
	Expect(hubCP.Client.List(ctx, list, client.InNamespace(mcs.SetNamespace(set)))).To(Succeed())
	var out []string
	for _, b := range list.Items {
		if b.RoleRef.Name == services.ImporterClusterRole && b.DeletionTimestamp.IsZero() {
			out = append(out, strings.TrimPrefix(b.Name, services.ImporterClusterRole+":"))
		}
	}
	return out
}

func hubSvcPair(a, b string) []string {
	if a > b {
		return []string{b, a}
	}
	return []string{a, b}
}
