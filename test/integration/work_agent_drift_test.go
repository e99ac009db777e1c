package integration

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	"github.com/flotilla-io/flotilla/test/framework"
)

var _ = Describe("Work agent: drift", Ordered, func() {
	var spoke *framework.ControlPlane

	BeforeAll(func(ctx SpecContext) {
		spoke = newWorkSpoke(ctx)
	})

	drift := func(ctx SpecContext, c, name string, ordinal int32) func() *workv1.ManifestDrift {
		return func() *workv1.ManifestDrift { return manifestStatus(ctx, c, name, ordinal)().Drift }
	}

	It("puts back an object changed on the spoke as soon as its watch says so, and counts it", func(ctx SpecContext) {
		c := newWorkCluster(ctx, "work-drift")
		// An hour between resyncs: what is put back within seconds was put
		// back because of a watch event.
		startWorkAgent(c, spoke, func(cfg *workConfig) { cfg.ResyncInterval = time.Hour })
		ns := c.name
		createSpokeNamespace(ctx, spoke, ns)
		w := newWork(c.name, "drift-"+c.name, configMap(ns, "settings", map[string]string{"color": "blue"}), deploymentManifest(ns, "web", 2))
		Expect(hubCP.Client.Create(ctx, w)).To(Succeed())
		Eventually(workCond(ctx, c.name, w.Name, workv1.WorkApplied)).Should(haveStatus(metav1.ConditionTrue))
		Expect(manifestStatus(ctx, c.name, w.Name, 0)().Drift).To(BeNil(), "no drift record before the first drift")
		Expect(manifestCond(ctx, c.name, w.Name, 0, workv1.ManifestDrifted)()).To(BeNil())

		By("changing a field the manifest sets")
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "settings"}}
		Expect(spoke.Client.Get(ctx, client.ObjectKeyFromObject(cm), cm)).To(Succeed())
		uid := cm.UID
		cm.Data["color"] = "red"
		Expect(spoke.Client.Update(ctx, cm)).To(Succeed())
		Eventually(func() string {
			Expect(spoke.Client.Get(ctx, client.ObjectKeyFromObject(cm), cm)).To(Succeed())
			return cm.Data["color"]
		}, 5*time.Second).Should(Equal("blue"))
		Eventually(drift(ctx, c.name, w.Name, 0)).Should(And(Not(BeNil()),
			HaveField("Corrections", int64(1)), HaveField("Fields", []string{"data"}), HaveField("LastCorrectedTime", Not(BeZero()))))
		Expect(manifestCond(ctx, c.name, w.Name, 0, workv1.ManifestDrifted)()).To(And(
			haveStatusReason(metav1.ConditionFalse, workv1.ReasonDriftCorrected), HaveField("Message", ContainSubstring("data had changed"))))
		Eventually(func() []eventsv1.Event {
			list := &eventsv1.EventList{}
			Expect(hubCP.Client.List(ctx, list, client.InNamespace(c.name))).To(Succeed())
			return list.Items
		}).Should(ContainElement(And(HaveField("Reason", workv1.ReasonDriftCorrected), HaveField("Regarding.Name", w.Name),
			HaveField("Note", ContainSubstring(`configmaps "settings"`)))), "an event on the ManifestWork")

		By("scaling the Deployment and relabelling it")
		dep := &appsv1.Deployment{}
		Expect(spoke.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, dep)).To(Succeed())
		dep.Spec.Replicas = new(int32(7))
		dep.Spec.Template.Labels["app"] = "other"
		dep.Spec.Selector.MatchLabels["app"] = "other"
		Expect(spoke.Client.Update(ctx, dep)).To(MatchError(ContainSubstring("field is immutable")), "a selector cannot change")
		Expect(spoke.Client.Get(ctx, client.ObjectKeyFromObject(dep), dep)).To(Succeed())
		dep.Spec.Replicas = new(int32(7))
		dep.Labels["extra"] = "kept"
		Expect(spoke.Client.Update(ctx, dep)).To(Succeed())
		Eventually(func() int32 {
			Expect(spoke.Client.Get(ctx, client.ObjectKeyFromObject(dep), dep)).To(Succeed())
			return *dep.Spec.Replicas
		}, 5*time.Second).Should(BeEquivalentTo(2))
		Expect(dep.Labels).To(HaveKeyWithValue("extra", "kept"), "fields the manifest does not set stay")
		Eventually(drift(ctx, c.name, w.Name, 1)).Should(And(Not(BeNil()), HaveField("Corrections", int64(1)), HaveField("Fields", []string{"spec"})))

		By("re-creating a deleted object")
		Expect(spoke.Client.Delete(ctx, cm)).To(Succeed())
		Eventually(func() error { return spoke.Client.Get(ctx, client.ObjectKeyFromObject(cm), cm) }, 5*time.Second).Should(Succeed())
		Expect(cm.UID).NotTo(Equal(uid))
		Expect(cm.Data).To(HaveKeyWithValue("color", "blue"))
		Eventually(drift(ctx, c.name, w.Name, 0)).Should(And(HaveField("Corrections", int64(2)), HaveField("Fields", []string{workv1.DriftWholeObject})))

		By("leaving alone what the manifest does not set")
		cm.Data["note"] = "added here"
		Expect(spoke.Client.Update(ctx, cm)).To(Succeed())
		Consistently(func() map[string]string {
			Expect(spoke.Client.Get(ctx, client.ObjectKeyFromObject(cm), cm)).To(Succeed())
			return cm.Data
		}, 2*time.Second, 200*time.Millisecond).Should(Equal(map[string]string{"color": "blue", "note": "added here"}))
		Expect(drift(ctx, c.name, w.Name, 0)()).To(HaveField("Corrections", int64(2)))
	})

	It("says when a drift cannot be put back", func(ctx SpecContext) {
		c := newWorkCluster(ctx, "work-stuck")
		startWorkAgent(c, spoke)
		ns := c.name
		createSpokeNamespace(ctx, spoke, ns)
		w := newWork(c.name, "stuck-"+c.name, configMap(ns, "contested", map[string]string{"mode": "safe"}))
		w.Spec.ManifestConfigs = []workv1.ManifestConfigOption{{
			ResourceIdentifier: workv1.ResourceIdentifier{Resource: "configmaps", Namespace: ns, Name: "contested"},
			UpdateStrategy:     &workv1.UpdateStrategy{Type: workv1.UpdateStrategyTypeServerSideApply},
		}}
		Expect(hubCP.Client.Create(ctx, w)).To(Succeed())
		Eventually(workCond(ctx, c.name, w.Name, workv1.WorkApplied)).Should(haveStatus(metav1.ConditionTrue))

		By("having another field manager take the field by a forced apply")
		other := &corev1.ConfigMap{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "contested"},
			Data:       map[string]string{"mode": "fast"},
		}
		Expect(spoke.Client.Patch(ctx, other, client.Apply, client.FieldOwner("operator"), client.ForceOwnership)).To(Succeed())
		Eventually(manifestCond(ctx, c.name, w.Name, 0, workv1.ManifestDrifted)).Should(And(
			haveStatusReason(metav1.ConditionTrue, workv1.ReasonDriftNotCorrected),
			HaveField("Message", And(ContainSubstring("data had changed"), ContainSubstring("conflict")))))
		Expect(manifestCond(ctx, c.name, w.Name, 0, workv1.ManifestApplied)()).To(haveStatusReason(metav1.ConditionFalse, workv1.ReasonAppliedManifestFailed))

		By("putting it back once the work forces its apply")
		Eventually(func() error {
			w := getWork(ctx, hubCP, c.name, w.Name)
			w.Spec.ManifestConfigs[0].UpdateStrategy.ServerSideApply = &workv1.ServerSideApplyConfig{Force: true}
			return hubCP.Client.Update(ctx, w)
		}).Should(Succeed())
		Eventually(manifestCond(ctx, c.name, w.Name, 0, workv1.ManifestDrifted)).Should(haveStatusReason(metav1.ConditionFalse, workv1.ReasonDriftCorrected))
		Expect(manifestStatus(ctx, c.name, w.Name, 0)().Drift).To(HaveField("Corrections", int64(1)))
		cm := &corev1.ConfigMap{}
		Expect(spoke.Client.Get(ctx, client.ObjectKeyFromObject(other), cm)).To(Succeed())
		Expect(cm.Data).To(HaveKeyWithValue("mode", "safe"))
	})
})
