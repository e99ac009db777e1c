package integration

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	"github.com/flotilla-io/flotilla/internal/addon"
)

// Deleting a ManagedCluster removes its add-ons first, as OCM does: their
// pre-delete hooks run through the cluster's agent, which keeps its work
// access until then, and only once the add-ons are gone do their works
// and the cluster's namespace go.
var _ = Describe("addon cleanup of a deleted cluster", func() {
	It("removes the add-ons first, running their pre-delete hook, then their works, then the namespace and the cluster", func(ctx SpecContext) {
		a := "gone-" + utilrand.String(5)
		c := atCluster(ctx, "at-gone")
		spoke := newWorkSpoke(ctx)
		_, err := spoke.Kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: addon.DefaultInstallNamespace}}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		startWorkAgent(c, spoke)
		atAddOn(ctx, a, atDeployment(a), atHookPod(a))
		atEnable(ctx, c.name, a)
		mca := atMCA(ctx, c.name, a)
		Eventually(mca).Should(HaveField("Finalizers", ContainElement(addon.PreDeleteHookFinalizer)))
		work := atWork(ctx, c.name, addon.DeployWorkName(a, 0))
		Eventually(work).ShouldNot(BeNil())
		Eventually(func() error {
			return spoke.Client.Get(ctx, client.ObjectKey{Namespace: addon.DefaultInstallNamespace, Name: a + "-agent"}, &metav1.PartialObjectMetadata{
				TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
			})
		}).Should(Succeed(), "the agent applied the add-on's Deployment")

		By("deleting the cluster: its add-on is deleted and its hook runs, while the works and the namespace stay")
		Expect(hubCP.Client.Delete(ctx, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: c.name}})).To(Succeed())
		Eventually(func() *metav1.Time {
			if m := mca(); m != nil {
				return m.DeletionTimestamp
			}
			return nil
		}).ShouldNot(BeNil())
		hookWork := atWork(ctx, c.name, addon.PreDeleteWorkName(a))
		Eventually(hookWork).ShouldNot(BeNil())
		pod := &corev1.Pod{}
		Eventually(func() error {
			return spoke.Client.Get(ctx, client.ObjectKey{Namespace: addon.DefaultInstallNamespace, Name: a + "-cleanup"}, pod)
		}).Should(Succeed(), "the cluster's agent applied the hook")
		Consistently(func(g Gomega) {
			g.Expect(mca()).NotTo(BeNil(), "the add-on went before its hook ran")
			g.Expect(work()).NotTo(BeNil(), "the add-on's work went before the add-on")
			ns := &corev1.Namespace{}
			g.Expect(hubCP.Client.Get(ctx, client.ObjectKey{Name: c.name}, ns)).To(Succeed())
			g.Expect(ns.DeletionTimestamp).To(BeNil(), "the namespace went before the add-ons")
		}, "2s").Should(Succeed())

		By("the hook succeeds: the add-on goes, then its works, the namespace and the cluster")
		Eventually(func() error {
			if err := spoke.Client.Get(ctx, client.ObjectKeyFromObject(pod), pod); err != nil {
				return err
			}
			pod.Status.Phase = corev1.PodSucceeded
			return spoke.Client.Status().Update(ctx, pod)
		}).Should(Succeed())
		Eventually(mca, "60s").Should(BeNil())
		Eventually(work, "60s").Should(BeNil())
		Eventually(hookWork, "60s").Should(BeNil())
		Eventually(exists(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: c.name}}), time.Minute).Should(BeFalse())
		Eventually(exists(ctx, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: c.name}}), time.Minute).Should(BeFalse())
	})
})
