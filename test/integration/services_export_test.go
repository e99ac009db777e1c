package integration

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr/funcr"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/cmd/kube-controller-manager/names"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	mcscrd "sigs.k8s.io/mcs-api/config/crd"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/flotilla-io/flotilla/agent"
	"github.com/flotilla-io/flotilla/agent/services"
	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	mcsv1alpha1 "github.com/flotilla-io/flotilla/api/mcs/v1alpha1"
	"github.com/flotilla-io/flotilla/deploy"
	"github.com/flotilla-io/flotilla/hub/controlplane"
	"github.com/flotilla-io/flotilla/internal/mcs"
)

// The export side of multi-cluster services, on a real hub and a real
// spoke whose EndpointSlice controller keeps the Services' slices: the
// services agent runs with the spoke rights of the flotilla-agent chart's
// ServiceAccount, and as a user of its own on the hub, so that its hub
// writes can be counted.
var _ = Describe("services export", Ordered, func() {
	var x *exportEnv

	BeforeAll(func(ctx SpecContext) {
		x = startExportEnv(ctx)
	})

	It("installs the MCS CRDs on the spoke, and gives the chart's ServiceAccount what exporting needs and no more", func(ctx SpecContext) {
		for _, name := range []string{"serviceexports.multicluster.x-k8s.io", "serviceimports.multicluster.x-k8s.io"} {
			crd := &apiextensionsv1.CustomResourceDefinition{}
			Expect(x.spoke.Get(ctx, client.ObjectKey{Name: name}, crd)).To(Succeed())
			Expect(crd.Labels).To(HaveKeyWithValue(mcscrd.CustomResourceDefinitionSchemaRevisionLabel, "0"), name)
			Expect(crd.Labels).To(HaveKeyWithValue(mcscrd.ReleaseVersionLabel, "v0.5.2"), name)
		}
		for _, attr := range []authorizationv1.ResourceAttributes{
			{Verb: "watch", Group: mcsv1beta1.GroupName, Resource: "serviceexports"},
			{Verb: "update", Group: mcsv1beta1.GroupName, Resource: "serviceexports", Subresource: "status", Namespace: "app"},
			{Verb: "create", Group: mcsv1beta1.GroupName, Resource: "serviceimports", Namespace: "app"},
			{Verb: "update", Group: mcsv1beta1.GroupName, Resource: "serviceimports", Subresource: "status", Namespace: "app"},
			{Verb: "watch", Resource: "services"},
			{Verb: "create", Resource: "services", Namespace: "app"},
			{Verb: "delete", Group: "discovery.k8s.io", Resource: "endpointslices", Namespace: "app"},
			{Verb: "create", Resource: "namespaces"},
			{Verb: "create", Group: "apiextensions.k8s.io", Resource: "customresourcedefinitions"},
		} {
			Expect(x.agentCan(ctx, attr)).To(BeTrue(), "the agent may not %s %s/%s", attr.Verb, attr.Resource, attr.Subresource)
		}
		// The app team owns its ServiceExports: the agent only reports on them.
		for _, attr := range []authorizationv1.ResourceAttributes{
			{Verb: "create", Group: mcsv1beta1.GroupName, Resource: "serviceexports", Namespace: "app"},
			{Verb: "update", Group: mcsv1beta1.GroupName, Resource: "serviceexports", Namespace: "app"},
			{Verb: "delete", Group: mcsv1beta1.GroupName, Resource: "serviceexports", Namespace: "app"},
			{Verb: "create", Resource: "pods", Namespace: "app"},
			{Verb: "update", Resource: "endpoints", Namespace: "app"},
			{Verb: "delete", Group: "apiextensions.k8s.io", Resource: "customresourcedefinitions", Name: "serviceexports.multicluster.x-k8s.io"},
		} {
			Expect(x.agentCan(ctx, attr)).To(BeFalse(), "the agent may %s %s", attr.Verb, attr.Resource)
		}
	})

	It("publishes a ClusterIP export with its properties and its Service's endpoints, and leaves the agent's own import slices out", func(ctx SpecContext) {
		ns := x.namespace(ctx)
		svc := exportService(ns, "web")
		svc.Spec.SessionAffinity = corev1.ServiceAffinityClientIP
		svc.Spec.SessionAffinityConfig = &corev1.SessionAffinityConfig{ClientIP: &corev1.ClientIPConfig{TimeoutSeconds: ptr.To[int32](300)}}
		svc.Spec.InternalTrafficPolicy = ptr.To(corev1.ServiceInternalTrafficPolicyLocal)
		svc.Spec.TrafficDistribution = ptr.To("PreferClose")
		Expect(x.spoke.Create(ctx, svc)).To(Succeed())
		x.runPods(ctx, ns, "web", 2)
		// A slice the agent wrote for an import of the same name: not this
		// cluster's endpoints.
		Expect(x.spoke.Create(ctx, &discoveryv1.EndpointSlice{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web-imported", Labels: map[string]string{
				discoveryv1.LabelServiceName: "web", discoveryv1.LabelManagedBy: mcs.ManagedBy,
			}},
			AddressType: discoveryv1.AddressTypeIPv4,
			Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"10.99.0.1"}}},
		})).To(Succeed())
		se := x.export(ctx, ns, "web", func(se *mcsv1beta1.ServiceExport) {
			se.Spec.ExportedLabels = map[string]string{"tier": "frontend"}
			se.Spec.ExportedAnnotations = map[string]string{"owner": "team-web"}
		})

		es := x.eventuallyPublished(ctx, ns, "web", func(g Gomega, es *mcsv1alpha1.ExportedService) {
			g.Expect(readyAddresses(es)).To(ConsistOf("10.1.0.1", "10.1.0.2"))
		})
		Expect(es.Labels).To(Equal(map[string]string{mcs.ClusterLabel: x.cluster, mcs.ServiceNamespaceLabel: ns, mcs.ServiceNameLabel: "web"}))
		Expect(es.Spec.Namespace).To(Equal(ns))
		Expect(es.Spec.Name).To(Equal("web"))
		Expect(es.Spec.ExportCreationTimestamp.Equal(&se.CreationTimestamp)).To(BeTrue(), "exportCreationTimestamp %s, ServiceExport created %s", es.Spec.ExportCreationTimestamp, se.CreationTimestamp)
		p := es.Spec.ServiceProperties
		Expect(p.Type).To(Equal(mcsv1alpha1.ClusterSetIP))
		Expect(p.Ports).To(ConsistOf(
			mcsv1alpha1.ServicePort{Name: "http", Protocol: corev1.ProtocolTCP, AppProtocol: ptr.To("http"), Port: 80},
			mcsv1alpha1.ServicePort{Name: "metrics", Protocol: corev1.ProtocolTCP, Port: 9090},
		))
		Expect(p.SessionAffinity).To(Equal(corev1.ServiceAffinityClientIP))
		Expect(p.SessionAffinityConfig).To(Equal(svc.Spec.SessionAffinityConfig))
		Expect(p.InternalTrafficPolicy).To(HaveValue(Equal(corev1.ServiceInternalTrafficPolicyLocal)))
		Expect(p.TrafficDistribution).To(HaveValue(Equal("PreferClose")))
		Expect(p.IPFamilies).To(Equal([]corev1.IPFamily{corev1.IPv4Protocol}))
		Expect(p.ExportedLabels).To(Equal(map[string]string{"tier": "frontend"}))
		Expect(p.ExportedAnnotations).To(Equal(map[string]string{"owner": "team-web"}))
		Expect(es.Spec.Endpoints).To(HaveLen(1))
		g := es.Spec.Endpoints[0]
		Expect(g.AddressType).To(Equal(discoveryv1.AddressTypeIPv4))
		Expect(g.Ports).To(ConsistOf(
			discoveryv1.EndpointPort{Name: ptr.To("http"), Protocol: ptr.To(corev1.ProtocolTCP), Port: ptr.To[int32](8080), AppProtocol: ptr.To("http")},
			discoveryv1.EndpointPort{Name: ptr.To("metrics"), Protocol: ptr.To(corev1.ProtocolTCP), Port: ptr.To[int32](9090)},
		))
		Expect(g.Zone).To(Equal("zone-a"))
		Expect(g.Ready).To(Equal([]string{"10.1.0.1", "10.1.0.2"}), "ready endpoints by address alone, in address order")
		Expect(g.Endpoints).To(BeEmpty(), "every endpoint is ready, of one address, without hostname")

		By("setting Valid=True and a Conflict condition")
		Eventually(x.conditions(ctx, ns, "web")).Should(And(
			ContainElement(exportCondition(mcsv1beta1.ServiceExportConditionValid, metav1.ConditionTrue, mcsv1beta1.ServiceExportReasonValid)),
			ContainElement(exportCondition(mcsv1beta1.ServiceExportConditionConflict, metav1.ConditionFalse, mcsv1beta1.ServiceExportReasonNoConflicts)),
			ContainElement(HaveField("Type", string(mcsv1beta1.ServiceExportConditionReady))),
		))
		for _, c := range x.conditions(ctx, ns, "web")() {
			Expect(c.ObservedGeneration).To(Equal(se.Generation), c.Type)
		}
		Consistently(func() []string { return allAddresses(x.published(ctx, ns, "web")()) }, "1s").ShouldNot(ContainElement("10.99.0.1"))
	})

	It("says Ready once the hub lists the cluster in its set's import, stays Ready without a write through endpoint changes, Pending while the cluster is in no cluster set, and copies the hub's Conflict", func(ctx SpecContext) {
		ns := x.namespace(ctx)
		Expect(x.spoke.Create(ctx, exportService(ns, "shop"))).To(Succeed())
		x.runPods(ctx, ns, "shop", 1)
		x.export(ctx, ns, "shop")
		es := x.eventuallyPublished(ctx, ns, "shop", func(g Gomega, es *mcsv1alpha1.ExportedService) {
			g.Expect(readyAddresses(es)).To(HaveLen(1))
		})
		By("the hub putting every new cluster into set default: Ready once the set's import lists the cluster")
		ready := func(_ int64) OmegaMatcher {
			return ContainElement(And(
				exportCondition(mcsv1beta1.ServiceExportConditionReady, metav1.ConditionTrue, mcsv1beta1.ServiceExportReasonReady),
				HaveField("Message", ContainSubstring("lists this cluster")),
			))
		}
		Eventually(x.conditions(ctx, ns, "shop")).Should(ready(es.Generation))

		By("an endpoint change: still Ready, and the ServiceExport is not written again")
		exportVersion := func() string {
			se := &mcsv1beta1.ServiceExport{}
			Expect(x.spoke.Get(ctx, client.ObjectKey{Namespace: ns, Name: "shop"}, se)).To(Succeed())
			return se.ResourceVersion
		}
		// Settled first: the writes that made it Ready are not the endpoint change's.
		var before string
		Eventually(func(g Gomega) {
			before = exportVersion()
			g.Consistently(exportVersion, "1s").Should(Equal(before))
		}, "20s").Should(Succeed())
		x.runPod(ctx, ns, "shop", 2)
		es = x.eventuallyPublished(ctx, ns, "shop", func(g Gomega, es *mcsv1alpha1.ExportedService) {
			g.Expect(readyAddresses(es)).To(HaveLen(2))
		})
		Consistently(exportVersion, "2s").Should(Equal(before))
		Eventually(x.conditions(ctx, ns, "shop")).Should(ready(es.Generation))

		By("labelling the cluster into a set that does not exist: Pending, saying why")
		x.setClusterSet(ctx, "nowhere")
		Eventually(x.conditions(ctx, ns, "shop")).Should(ContainElement(And(
			exportCondition(mcsv1beta1.ServiceExportConditionReady, metav1.ConditionFalse, mcsv1beta1.ServiceExportReasonPending),
			HaveField("Message", ContainSubstring("no cluster set")),
		)))
		x.setClusterSet(ctx, "default")
		Eventually(x.conditions(ctx, ns, "shop")).Should(ready(es.Generation))

		By("an older export of the same service in another cluster of the set, with another number for port http: Conflict from the hub")
		other := newClusterName("svcexport-other")
		Expect(x.hub.Create(ctx, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: other}})).To(Succeed())
		deleteClusterAfterSpec(other)
		Expect(x.hub.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: other}})).To(Succeed())
		DeferCleanup(func(ctx SpecContext) {
			Expect(client.IgnoreNotFound(x.hub.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: other}}))).To(Succeed())
		})
		older := &mcsv1alpha1.ExportedService{
			ObjectMeta: metav1.ObjectMeta{Namespace: other, Name: mcs.ObjectName(ns, "shop"), Labels: map[string]string{
				mcs.ClusterLabel: other, mcs.ServiceNamespaceLabel: ns, mcs.ServiceNameLabel: "shop",
			}},
			Spec: mcsv1alpha1.ExportedServiceSpec{
				Namespace: ns, Name: "shop", ExportCreationTimestamp: metav1.NewTime(es.Spec.ExportCreationTimestamp.Add(-time.Hour)),
				ServiceProperties: mcsv1alpha1.ServiceProperties{Type: mcsv1alpha1.ClusterSetIP, Ports: []mcsv1alpha1.ServicePort{
					{Name: "http", Protocol: corev1.ProtocolTCP, Port: 81},
					{Name: "metrics", Protocol: corev1.ProtocolTCP, Port: 9090},
				}},
			},
		}
		Expect(x.hub.Create(ctx, older)).To(Succeed())
		Eventually(x.conditions(ctx, ns, "shop")).Should(ContainElement(And(
			HaveField("Type", string(mcsv1beta1.ServiceExportConditionConflict)), HaveField("Status", metav1.ConditionTrue),
			HaveField("Reason", ContainSubstring(string(mcsv1beta1.ServiceExportReasonPortConflict))),
			HaveField("Message", ContainSubstring(other)),
		)))
		hub := x.published(ctx, ns, "shop")()
		Expect(x.conditions(ctx, ns, "shop")()).To(ContainElement(And(
			HaveField("Type", string(mcsv1beta1.ServiceExportConditionConflict)),
			HaveField("Message", Equal(meta.FindStatusCondition(hub.Status.Conditions, mcsv1alpha1.ConditionConflict).Message)),
		)), "the ServiceExport's Conflict is the hub's")

		By("the other export going: NoConflicts again")
		Expect(x.hub.Delete(ctx, older)).To(Succeed())
		Eventually(x.conditions(ctx, ns, "shop")).Should(ContainElement(
			exportCondition(mcsv1beta1.ServiceExportConditionConflict, metav1.ConditionFalse, mcsv1beta1.ServiceExportReasonNoConflicts)))
	})

	It("writes the hub once per endpoint change (scale up, a pod not ready, scale down) and not at all when nothing it publishes changed", func(ctx SpecContext) {
		ns := x.namespace(ctx)
		Expect(x.spoke.Create(ctx, exportService(ns, "api"))).To(Succeed())
		x.runPods(ctx, ns, "api", 2)
		x.export(ctx, ns, "api")
		es := x.eventuallyPublished(ctx, ns, "api", func(g Gomega, es *mcsv1alpha1.ExportedService) {
			g.Expect(readyAddresses(es)).To(HaveLen(2))
		})
		Eventually(x.conditions(ctx, ns, "api")).Should(ContainElement(exportCondition(mcsv1beta1.ServiceExportConditionValid, metav1.ConditionTrue, mcsv1beta1.ServiceExportReasonValid)))
		writes := x.hubWrites()
		Consistently(x.hubWrites, "2s").Should(Equal(writes), "the agent wrote the hub with nothing changed")

		// Each step changes the Service's endpoints; the EndpointSlice
		// controller may take more than one write of its slices for it (a
		// deleted pod's endpoint can be marked terminating first). The
		// agent writes the hub at most once per slice change, at least once.
		step := func(what string, change func(), want func(Gomega, *mcsv1alpha1.ExportedService)) {
			By(what)
			before, gen := x.hubWrites(), es.Generation
			slices := x.sliceChanges(ctx, ns, "api")
			change()
			es = x.eventuallyPublished(ctx, ns, "api", want)
			Consistently(func() int { return x.hubWrites() - before }, "2s").Should(BeNumerically("<=", slices()), "%s: more hub writes than slice changes", what)
			es = x.published(ctx, ns, "api")()
			writes := x.hubWrites() - before
			Expect(writes).To(BeNumerically(">=", 1))
			Expect(es.Generation-gen).To(BeEquivalentTo(writes), "%s: each hub write is a new generation", what)
			AddReportEntry(what, fmt.Sprintf("%d EndpointSlice changes, %d hub writes", slices(), writes))
			GinkgoWriter.Printf("%s: %d EndpointSlice changes, %d hub writes\n", what, slices(), writes)
		}
		step("scaling up to three pods", func() { x.runPod(ctx, ns, "api", 3) }, func(g Gomega, es *mcsv1alpha1.ExportedService) {
			g.Expect(readyAddresses(es)).To(ConsistOf("10.1.0.1", "10.1.0.2", "10.1.0.3"))
		})
		step("a pod turning not ready", func() { x.setPodReady(ctx, ns, "api-2", false) }, func(g Gomega, es *mcsv1alpha1.ExportedService) {
			g.Expect(readyAddresses(es)).To(ConsistOf("10.1.0.1", "10.1.0.3"))
			g.Expect(allAddresses(es)).To(ConsistOf("10.1.0.1", "10.1.0.2", "10.1.0.3"))
		})
		step("scaling down by one pod", func() {
			Expect(x.spoke.Delete(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "api-3"}}, client.GracePeriodSeconds(0))).To(Succeed())
		}, func(g Gomega, es *mcsv1alpha1.ExportedService) {
			g.Expect(allAddresses(es)).To(ConsistOf("10.1.0.1", "10.1.0.2"))
		})

		By("a change of the Service that no export carries (a label) writing nothing")
		before := x.hubWrites()
		svc := &corev1.Service{}
		Expect(x.spoke.Get(ctx, client.ObjectKey{Namespace: ns, Name: "api"}, svc)).To(Succeed())
		svc.Labels = map[string]string{"touched": "yes"}
		Expect(x.spoke.Update(ctx, svc)).To(Succeed())
		Consistently(x.hubWrites, "2s").Should(Equal(before))
	})

	It("publishes a headless export as Headless", func(ctx SpecContext) {
		ns := x.namespace(ctx)
		svc := exportService(ns, "db")
		svc.Spec.ClusterIP = corev1.ClusterIPNone
		Expect(x.spoke.Create(ctx, svc)).To(Succeed())
		x.runPods(ctx, ns, "db", 1)
		x.export(ctx, ns, "db")
		es := x.eventuallyPublished(ctx, ns, "db", func(g Gomega, es *mcsv1alpha1.ExportedService) {
			g.Expect(readyAddresses(es)).To(HaveLen(1))
		})
		Expect(es.Spec.Type).To(Equal(mcsv1alpha1.Headless))
	})

	It("refuses an ExternalName Service with Valid=False InvalidServiceType, publishing nothing, and withdraws a Service that becomes one", func(ctx SpecContext) {
		ns := x.namespace(ctx)
		Expect(x.spoke.Create(ctx, &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ext"},
			Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "db.example.com"},
		})).To(Succeed())
		x.export(ctx, ns, "ext")
		Eventually(x.conditions(ctx, ns, "ext")).Should(ContainElement(And(
			exportCondition(mcsv1beta1.ServiceExportConditionValid, metav1.ConditionFalse, mcsv1beta1.ServiceExportReasonInvalidServiceType),
			HaveField("Message", ContainSubstring("ExternalName")),
		)))
		Expect(x.conditions(ctx, ns, "ext")()).NotTo(ContainElement(HaveField("Type", string(mcsv1beta1.ServiceExportConditionConflict))))
		Consistently(x.published(ctx, ns, "ext"), "3s").Should(BeNil())

		By("turning a published ClusterIP Service into ExternalName")
		Expect(x.spoke.Create(ctx, exportService(ns, "moving"))).To(Succeed())
		x.export(ctx, ns, "moving")
		x.eventuallyPublished(ctx, ns, "moving", func(Gomega, *mcsv1alpha1.ExportedService) {})
		svc := &corev1.Service{}
		Expect(x.spoke.Get(ctx, client.ObjectKey{Namespace: ns, Name: "moving"}, svc)).To(Succeed())
		svc.Spec = corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "moved.example.com"}
		Expect(x.spoke.Update(ctx, svc)).To(Succeed())
		Eventually(x.published(ctx, ns, "moving")).Should(BeNil())
		Eventually(x.conditions(ctx, ns, "moving")).Should(ContainElement(exportCondition(mcsv1beta1.ServiceExportConditionValid, metav1.ConditionFalse, mcsv1beta1.ServiceExportReasonInvalidServiceType)))
	})

	It("refuses an export without a Service with Valid=False NoService, and publishes it once the Service comes", func(ctx SpecContext) {
		ns := x.namespace(ctx)
		x.export(ctx, ns, "later")
		Eventually(x.conditions(ctx, ns, "later")).Should(ContainElement(And(
			exportCondition(mcsv1beta1.ServiceExportConditionValid, metav1.ConditionFalse, mcsv1beta1.ServiceExportReasonNoService),
			HaveField("Message", ContainSubstring(ns+"/later")),
		)))
		Expect(x.conditions(ctx, ns, "later")()).To(ContainElement(exportCondition(mcsv1beta1.ServiceExportConditionReady, metav1.ConditionFalse, mcsv1beta1.ServiceExportReasonPending)))
		Consistently(x.published(ctx, ns, "later"), "3s").Should(BeNil())

		Expect(x.spoke.Create(ctx, exportService(ns, "later"))).To(Succeed())
		x.eventuallyPublished(ctx, ns, "later", func(Gomega, *mcsv1alpha1.ExportedService) {})
		Eventually(x.conditions(ctx, ns, "later")).Should(ContainElement(exportCondition(mcsv1beta1.ServiceExportConditionValid, metav1.ConditionTrue, mcsv1beta1.ServiceExportReasonValid)))
	})

	It("removes the hub object when the export goes, and when the Service goes", func(ctx SpecContext) {
		ns := x.namespace(ctx)
		for _, name := range []string{"a", "b"} {
			Expect(x.spoke.Create(ctx, exportService(ns, name))).To(Succeed())
			x.export(ctx, ns, name)
			x.eventuallyPublished(ctx, ns, name, func(Gomega, *mcsv1alpha1.ExportedService) {})
		}
		By("deleting ServiceExport a")
		Expect(x.spoke.Delete(ctx, &mcsv1beta1.ServiceExport{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "a"}})).To(Succeed())
		Eventually(x.published(ctx, ns, "a")).Should(BeNil())
		By("deleting Service b")
		Expect(x.spoke.Delete(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "b"}})).To(Succeed())
		Eventually(x.published(ctx, ns, "b")).Should(BeNil())
		Eventually(x.conditions(ctx, ns, "b")).Should(ContainElement(exportCondition(mcsv1beta1.ServiceExportConditionValid, metav1.ConditionFalse, mcsv1beta1.ServiceExportReasonNoService)))
	})

	It("refuses, whole, an export with more endpoints than an ExportedService holds, keeping what it published last", func(ctx SpecContext) {
		ns := x.namespace(ctx)
		Expect(x.spoke.Create(ctx, exportService(ns, "big"))).To(Succeed())
		x.runPods(ctx, ns, "big", 2)
		x.export(ctx, ns, "big")
		es := x.eventuallyPublished(ctx, ns, "big", func(g Gomega, es *mcsv1alpha1.ExportedService) {
			g.Expect(readyAddresses(es)).To(HaveLen(2))
		})
		By("adding 11 slices of 1,000 endpoints each, of one address type and ports: 11,002 in one group")
		ports := []discoveryv1.EndpointPort{
			{Name: ptr.To("http"), Protocol: ptr.To(corev1.ProtocolTCP), Port: ptr.To[int32](8080), AppProtocol: ptr.To("http")},
			{Name: ptr.To("metrics"), Protocol: ptr.To(corev1.ProtocolTCP), Port: ptr.To[int32](9090)},
		}
		for i := range 11 {
			s := &discoveryv1.EndpointSlice{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("big-manual-%d", i), Labels: map[string]string{
					discoveryv1.LabelServiceName: "big", discoveryv1.LabelManagedBy: "manual.test.flotilla.io",
				}},
				AddressType: discoveryv1.AddressTypeIPv4, Ports: ports,
			}
			for j := range 1000 {
				s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{Addresses: []string{fmt.Sprintf("10.%d.%d.%d", 100+i, j/250, j%250+1)}})
			}
			Expect(x.spoke.Create(ctx, s)).To(Succeed())
		}
		Eventually(x.conditions(ctx, ns, "big")).Should(ContainElement(And(
			exportCondition(mcsv1beta1.ServiceExportConditionReady, metav1.ConditionFalse, mcsv1beta1.ServiceExportReasonFailed),
			HaveField("Message", And(ContainSubstring("11002"), ContainSubstring("10000"), ContainSubstring("keeps the endpoints last published"))),
		)))
		// The slices came one by one: each state up to 10,000 endpoints was
		// whole and published; the one past the limit is not, nor any after.
		last := x.published(ctx, ns, "big")()
		Expect(last.Generation).To(BeNumerically(">=", es.Generation))
		Expect(len(allAddresses(last))).To(BeNumerically("<=", 10000))
		Expect((len(allAddresses(last))-2)%1000).To(BeZero(), "the hub holds whole slices only")
		Expect(x.conditions(ctx, ns, "big")()).To(ContainElement(HaveField("Message", ContainSubstring(fmt.Sprintf("(generation %d)", last.Generation)))))
		Consistently(func() int64 { return x.published(ctx, ns, "big")().Generation }, "2s").Should(Equal(last.Generation))

		By("removing them again: published whole")
		Expect(x.spoke.DeleteAllOf(ctx, &discoveryv1.EndpointSlice{}, client.InNamespace(ns), client.MatchingLabels{discoveryv1.LabelManagedBy: "manual.test.flotilla.io"})).To(Succeed())
		Eventually(x.conditions(ctx, ns, "big")).ShouldNot(ContainElement(HaveField("Reason", string(mcsv1beta1.ServiceExportReasonFailed))))
		x.eventuallyPublished(ctx, ns, "big", func(g Gomega, es *mcsv1alpha1.ExportedService) {
			g.Expect(allAddresses(es)).To(ConsistOf("10.1.0.1", "10.1.0.2"))
		})
	})

	It("deletes at start what the cluster no longer exports, and leaves what it still exports unwritten", func(ctx SpecContext) {
		ns := x.namespace(ctx)
		for _, name := range []string{"stays", "goes"} {
			Expect(x.spoke.Create(ctx, exportService(ns, name))).To(Succeed())
			x.export(ctx, ns, name)
		}
		// Published as the agent will find it at its restart: the
		// EndpointSlice controller's placeholder slice (no endpoints)
		// publishes no group, so whenever it comes it changes nothing.
		stays := x.eventuallyPublished(ctx, ns, "stays", func(g Gomega, es *mcsv1alpha1.ExportedService) {
			g.Expect(es.Spec.Endpoints).To(BeEmpty())
		})
		x.eventuallyPublished(ctx, ns, "goes", func(Gomega, *mcsv1alpha1.ExportedService) {})

		By("stopping the agent, deleting an export meanwhile, and leaving a stray ExportedService on the hub")
		x.stopAgent()
		Expect(x.spoke.Delete(ctx, &mcsv1beta1.ServiceExport{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "goes"}})).To(Succeed())
		stray := &mcsv1alpha1.ExportedService{
			ObjectMeta: metav1.ObjectMeta{Namespace: x.cluster, Name: mcs.ObjectName(ns, "never"), Labels: map[string]string{
				mcs.ClusterLabel: x.cluster, mcs.ServiceNamespaceLabel: ns, mcs.ServiceNameLabel: "never",
			}},
			Spec: mcsv1alpha1.ExportedServiceSpec{Namespace: ns, Name: "never", ExportCreationTimestamp: metav1.Now(),
				ServiceProperties: mcsv1alpha1.ServiceProperties{Type: mcsv1alpha1.ClusterSetIP}},
		}
		Expect(x.hub.Create(ctx, stray)).To(Succeed())
		Consistently(x.published(ctx, ns, "goes"), "1s").ShouldNot(BeNil())

		By("starting it again")
		writes := x.hubWrites()
		x.startAgent()
		Eventually(x.published(ctx, ns, "goes")).Should(BeNil())
		Eventually(x.published(ctx, ns, "never")).Should(BeNil())
		// The hub may write its status meanwhile; the agent writes nothing.
		Consistently(func() int64 { return x.published(ctx, ns, "stays")().Generation }, "2s").Should(Equal(stays.Generation))
		Expect(x.hubWrites()).To(Equal(writes), "the restarted agent wrote an ExportedService")
	})

	It("leaves a newer MCS CRD as it is and upgrades an older one when it starts", func(ctx SpecContext) {
		x.stopAgent()
		set := func(name, rev, marker string) {
			Eventually(func() error {
				crd := &apiextensionsv1.CustomResourceDefinition{}
				if err := x.spoke.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
					return err
				}
				if rev == "" {
					delete(crd.Labels, mcscrd.CustomResourceDefinitionSchemaRevisionLabel)
				} else {
					crd.Labels[mcscrd.CustomResourceDefinitionSchemaRevisionLabel] = rev
				}
				crd.Spec.Names.ShortNames = append(crd.Spec.Names.ShortNames, marker)
				return x.spoke.Update(ctx, crd)
			}).Should(Succeed())
		}
		crd := func(name string) func() *apiextensionsv1.CustomResourceDefinition {
			return func() *apiextensionsv1.CustomResourceDefinition {
				c := &apiextensionsv1.CustomResourceDefinition{}
				Expect(x.spoke.Get(ctx, client.ObjectKey{Name: name}, c)).To(Succeed())
				return c
			}
		}
		set("serviceexports.multicluster.x-k8s.io", "7", "newer")
		set("serviceimports.multicluster.x-k8s.io", "", "older")
		x.startAgent()
		Eventually(crd("serviceimports.multicluster.x-k8s.io")).Should(And(
			HaveField("Labels", HaveKeyWithValue(mcscrd.CustomResourceDefinitionSchemaRevisionLabel, "0")),
			HaveField("Spec.Names.ShortNames", Not(ContainElement("older"))),
		))
		// The agent exports only once its CRDs are in place: by then it
		// has decided about both.
		ns := x.namespace(ctx)
		Expect(x.spoke.Create(ctx, exportService(ns, "after"))).To(Succeed())
		x.export(ctx, ns, "after")
		x.eventuallyPublished(ctx, ns, "after", func(Gomega, *mcsv1alpha1.ExportedService) {})
		Expect(crd("serviceexports.multicluster.x-k8s.io")()).To(And(
			HaveField("Labels", HaveKeyWithValue(mcscrd.CustomResourceDefinitionSchemaRevisionLabel, "7")),
			HaveField("Spec.Names.ShortNames", ContainElement("newer")),
		))
	})
})

// exportSpecScheme holds what the export specs read and write.
var exportSpecScheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(apiextensionsv1.AddToScheme(s))
	utilruntime.Must(clusterv1.AddToScheme(s))
	utilruntime.Must(mcsv1alpha1.AddToScheme(s))
	utilruntime.Must(mcsv1beta1.Install(s))
	return s
}()

// exportEnv is a spoke with the EndpointSlice controller, the cluster's
// namespace on the hub, and the services agent of the cluster.
type exportEnv struct {
	cluster string
	// spoke and hub are admin clients.
	spoke, hub client.Client
	kube       kubernetes.Interface
	// agentSpoke is the chart ServiceAccount's configuration of the spoke;
	// agentHub the agent's of the hub (a user of its own, counted).
	agentSpoke, agentHub *rest.Config
	hubUser              string
	stop                 func()
	nextNamespace        int
}

// startExportEnv starts the spoke, installs the agent chart's RBAC on it,
// makes the cluster's hub namespace and starts the agent.
func startExportEnv(ctx SpecContext) *exportEnv {
	GinkgoHelper()
	dir := GinkgoT().TempDir()
	cp, err := controlplane.Start(ctx, controlplane.Options{DataDir: dir, Controllers: []string{names.EndpointSliceController, names.NamespaceController, names.ServiceAccountController}})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(cp.Stop)
	x := &exportEnv{cluster: newClusterName("svcexport")}
	x.spoke, err = client.New(cp.Config, client.Options{Scheme: exportSpecScheme})
	Expect(err).NotTo(HaveOccurred())
	x.kube, err = kubernetes.NewForConfig(cp.Config)
	Expect(err).NotTo(HaveOccurred())
	x.hub, err = client.New(hubCP.Config, client.Options{Scheme: exportSpecScheme})
	Expect(err).NotTo(HaveOccurred())

	objs, err := deploy.Render(deploy.AgentChart, agent.DefaultNamespace, map[string]any{
		"clusterName": x.cluster, "createNamespace": true,
		"hub":       map[string]any{"apiServer": "https://hub.example.com:6443", "caCert": string(hubCP.CAData)},
		"bootstrap": map[string]any{"token": "abcdef.0123456789abcdef"},
		"execution": map[string]any{"rules": []any{map[string]any{"apiGroups": []any{""}, "resources": []any{"configmaps"}, "verbs": []any{"get"}}}},
	})
	Expect(err).NotTo(HaveOccurred())
	applyRendered(ctx, x.spoke, objs)
	x.agentSpoke = rest.CopyConfig(cp.Config)
	x.agentSpoke.Impersonate = rest.ImpersonationConfig{
		UserName: "system:serviceaccount:" + agent.DefaultNamespace + ":flotilla-agent",
		Groups:   []string{"system:serviceaccounts", "system:serviceaccounts:" + agent.DefaultNamespace, "system:authenticated"},
	}
	// The hub's RBAC of agents is the hub's business (and its specs'):
	// here the agent writes as a user of its own, with every right.
	x.hubUser = "flotilla-test:services-export:" + x.cluster
	x.agentHub = rest.CopyConfig(hubCP.Config)
	x.agentHub.Impersonate = rest.ImpersonationConfig{UserName: x.hubUser, Groups: []string{"system:masters", "system:authenticated"}}

	Expect(x.hub.Create(ctx, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: x.cluster}})).To(Succeed())
	deleteClusterAfterSpec(x.cluster)
	Expect(client.IgnoreAlreadyExists(x.hub.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: x.cluster}}))).To(Succeed())
	DeferCleanup(func(ctx SpecContext) {
		Expect(client.IgnoreNotFound(x.hub.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: x.cluster}}))).To(Succeed())
	})
	Expect(x.spoke.Create(ctx, &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "node-a", Labels: map[string]string{corev1.LabelTopologyZone: "zone-a"}},
	})).To(Succeed())

	x.startAgent()
	DeferCleanup(func() { x.stopAgent() })
	Eventually(func() error { return x.spoke.List(ctx, &mcsv1beta1.ServiceExportList{}) }).Should(Succeed())
	return x
}

// startAgent runs the services agent until stopAgent.
func (x *exportEnv) startAgent() {
	logger := funcr.New(func(prefix, args string) {
		specLog.Println("services agent:", strings.TrimSpace(prefix+" "+args))
	}, funcr.Options{Verbosity: 2})
	ctx, cancel := context.WithCancel(klog.NewContext(context.Background(), logger))
	a, err := services.New(services.Config{ClusterName: x.cluster, Spoke: x.agentSpoke})
	Expect(err).NotTo(HaveOccurred())
	done := make(chan error, 1)
	go func() {
		defer GinkgoRecover()
		done <- a.Run(ctx, x.agentHub)
	}()
	x.stop = func() {
		cancel()
		Eventually(done, "30s").Should(Receive(BeNil()))
	}
}

// stopAgent stops the services agent and waits until it returned nil.
func (x *exportEnv) stopAgent() {
	GinkgoHelper()
	if x.stop != nil {
		x.stop()
		x.stop = nil
	}
}

// sliceChanges counts, from now on, the writes of the EndpointSlices of
// Service ns/svc (the cluster's own, not the agent's import slices).
func (x *exportEnv) sliceChanges(ctx context.Context, ns, svc string) func() int {
	GinkgoHelper()
	sel := discoveryv1.LabelServiceName + "=" + svc + "," + discoveryv1.LabelManagedBy + "!=" + mcs.ManagedBy
	list, err := x.kube.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{LabelSelector: sel})
	Expect(err).NotTo(HaveOccurred())
	w, err := x.kube.DiscoveryV1().EndpointSlices(ns).Watch(ctx, metav1.ListOptions{LabelSelector: sel, ResourceVersion: list.ResourceVersion})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(w.Stop)
	var n atomic.Int32
	go func() {
		for ev := range w.ResultChan() {
			if ev.Type == watch.Added || ev.Type == watch.Modified || ev.Type == watch.Deleted {
				n.Add(1)
			}
		}
	}()
	return func() int { return int(n.Load()) }
}

// setClusterSet labels the cluster into set.
func (x *exportEnv) setClusterSet(ctx context.Context, set string) {
	GinkgoHelper()
	Eventually(func() error {
		mc := &clusterv1.ManagedCluster{}
		if err := x.hub.Get(ctx, client.ObjectKey{Name: x.cluster}, mc); err != nil {
			return err
		}
		metav1.SetMetaDataLabel(&mc.ObjectMeta, clusterv1.ClusterSetLabel, set)
		return x.hub.Update(ctx, mc)
	}).Should(Succeed())
}

// agentCan says whether the chart's ServiceAccount may do attr on the spoke.
func (x *exportEnv) agentCan(ctx context.Context, attr authorizationv1.ResourceAttributes) bool {
	GinkgoHelper()
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: x.agentSpoke.Impersonate.UserName, Groups: x.agentSpoke.Impersonate.Groups, ResourceAttributes: ptr.To(attr),
	}}
	Expect(x.spoke.Create(ctx, sar)).To(Succeed())
	return sar.Status.Allowed
}

// hubWrites counts the agent's creates and updates of ExportedServices.
func (x *exportEnv) hubWrites() int {
	c := hubCP.Requests.Counts(x.hubUser)
	return c["create exportedservices"] + c["update exportedservices"] + c["patch exportedservices"]
}

// namespace creates a namespace of the spoke for one spec.
func (x *exportEnv) namespace(ctx context.Context) string {
	GinkgoHelper()
	x.nextNamespace++
	ns := fmt.Sprintf("app-%d", x.nextNamespace)
	Expect(x.spoke.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
	return ns
}

// exportService is a ClusterIP Service of pods app=<name>, ports http
// (80 to 8080) and metrics (9090).
func exportService(ns, name string) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app": name},
			Ports: []corev1.ServicePort{
				{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080), AppProtocol: ptr.To("http")},
				{Name: "metrics", Port: 9090},
			},
		},
	}
}

// export creates ServiceExport ns/name and returns it.
func (x *exportEnv) export(ctx context.Context, ns, name string, mutate ...func(*mcsv1beta1.ServiceExport)) *mcsv1beta1.ServiceExport {
	GinkgoHelper()
	se := &mcsv1beta1.ServiceExport{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	for _, m := range mutate {
		m(se)
	}
	Expect(x.spoke.Create(ctx, se)).To(Succeed())
	return se
}

// runPods runs pods <app>-1..n, ready, at 10.1.0.1..n.
func (x *exportEnv) runPods(ctx context.Context, ns, app string, n int) {
	GinkgoHelper()
	for i := 1; i <= n; i++ {
		x.runPod(ctx, ns, app, i)
	}
}

// runPod runs pod <app>-i on node-a as a kubelet would report it: Running,
// at 10.1.0.i, ready.
func (x *exportEnv) runPod(ctx context.Context, ns, app string, i int) {
	GinkgoHelper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("%s-%d", app, i), Labels: map[string]string{"app": app}},
		Spec: corev1.PodSpec{NodeName: "node-a", Containers: []corev1.Container{{
			Name: "app", Image: "app",
			Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}, {Name: "metrics", ContainerPort: 9090}},
		}}},
	}
	Expect(x.spoke.Create(ctx, pod)).To(Succeed())
	ip := fmt.Sprintf("10.1.0.%d", i)
	pod.Status = corev1.PodStatus{
		Phase: corev1.PodRunning, PodIP: ip, PodIPs: []corev1.PodIP{{IP: ip}},
		Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Now()}},
	}
	Expect(x.spoke.Status().Update(ctx, pod)).To(Succeed())
}

// setPodReady sets a pod's Ready condition.
func (x *exportEnv) setPodReady(ctx context.Context, ns, name string, ready bool) {
	GinkgoHelper()
	pod := &corev1.Pod{}
	Expect(x.spoke.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, pod)).To(Succeed())
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: status, LastTransitionTime: metav1.Now()}}
	Expect(x.spoke.Status().Update(ctx, pod)).To(Succeed())
}

// published returns the hub's ExportedService of ns/name, or nil.
func (x *exportEnv) published(ctx context.Context, ns, name string) func() *mcsv1alpha1.ExportedService {
	return func() *mcsv1alpha1.ExportedService {
		es := &mcsv1alpha1.ExportedService{}
		err := x.hub.Get(ctx, client.ObjectKey{Namespace: x.cluster, Name: mcs.ObjectName(ns, name)}, es)
		if apierrors.IsNotFound(err) {
			return nil
		}
		Expect(err).NotTo(HaveOccurred())
		return es
	}
}

// eventuallyPublished waits until the hub's ExportedService of ns/name
// exists and passes check, and returns it.
func (x *exportEnv) eventuallyPublished(ctx context.Context, ns, name string, check func(Gomega, *mcsv1alpha1.ExportedService)) *mcsv1alpha1.ExportedService {
	GinkgoHelper()
	var es *mcsv1alpha1.ExportedService
	Eventually(func(g Gomega) {
		es = x.published(ctx, ns, name)()
		g.Expect(es).NotTo(BeNil(), "no ExportedService %s/%s", x.cluster, mcs.ObjectName(ns, name))
		check(g, es)
	}).WithTimeout(20 * time.Second).Should(Succeed())
	return es
}

// conditions returns ServiceExport ns/name's conditions.
func (x *exportEnv) conditions(ctx context.Context, ns, name string) func() []metav1.Condition {
	return func() []metav1.Condition {
		se := &mcsv1beta1.ServiceExport{}
		Expect(x.spoke.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, se)).To(Succeed())
		return se.Status.Conditions
	}
}

// exportCondition matches a condition by type, status and reason.
func exportCondition(t mcsv1beta1.ServiceExportConditionType, s metav1.ConditionStatus, r mcsv1beta1.ServiceExportConditionReason) OmegaMatcher {
	return And(HaveField("Type", string(t)), HaveField("Status", s), HaveField("Reason", string(r)))
}

// readyAddresses are the first addresses of an export's ready endpoints,
// those of the groups' ready lists and the others that are ready.
func readyAddresses(es *mcsv1alpha1.ExportedService) []string {
	var out []string
	for i := range es.Spec.Endpoints {
		for _, e := range mcs.Endpoints(&es.Spec.Endpoints[i]) {
			if e.Conditions.Ready == nil || *e.Conditions.Ready {
				out = append(out, e.Addresses[0])
			}
		}
	}
	return out
}

// allAddresses are the first addresses of all of an export's endpoints.
func allAddresses(es *mcsv1alpha1.ExportedService) []string {
	var out []string
	for i := range es.Spec.Endpoints {
		for _, e := range mcs.Endpoints(&es.Spec.Endpoints[i]) {
			out = append(out, e.Addresses[0])
		}
	}
	return out
}
