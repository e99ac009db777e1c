package integration

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/flotilla/agent/work"
	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	"github.com/flotilla-io/flotilla/test/framework"
)

var _ = Describe("Work agent: deleting", Ordered, func() {
	var spoke *framework.ControlPlane

	BeforeAll(func(ctx SpecContext) {
		spoke = newWorkSpoke(ctx)
	})

	cm := func(ns, name string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	}
	workGone := func(ctx SpecContext, c, name string) func() bool {
		return func() bool {
			return !exists(ctx, &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: c, Name: name}})()
		}
	}

	It("deletes what the work applied, in the foreground, before letting the work go", func(ctx SpecContext) {
		c := newWorkCluster(ctx, "work-fg")
		a := startWorkAgent(c, spoke)
		ns := c.name
		createSpokeNamespace(ctx, spoke, ns)
		w := newWork(c.name, "fg-"+c.name, configMap(ns, "held", nil), configMap(ns, "plain", nil))
		Expect(hubCP.Client.Create(ctx, w)).To(Succeed())
		Eventually(workCond(ctx, c.name, w.Name, workv1.WorkApplied)).Should(haveStatus(metav1.ConditionTrue))

		By("holding one object with a finalizer of someone else's")
		held := cm(ns, "held")
		Expect(spoke.Client.Get(ctx, client.ObjectKeyFromObject(held), held)).To(Succeed())
		held.Finalizers = []string{"example.com/hold"}
		Expect(spoke.Client.Update(ctx, held)).To(Succeed())

		Expect(hubCP.Client.Delete(ctx, getWork(ctx, hubCP, c.name, w.Name))).To(Succeed())
		Eventually(spokeGone(ctx, spoke, cm(ns, "plain"))).Should(BeTrue())
		Eventually(workCond(ctx, c.name, w.Name, workv1.WorkDeleting)).Should(And(haveStatus(metav1.ConditionTrue), HaveField("Message", ContainSubstring("Waiting for 1 applied objects"))))
		Consistently(workGone(ctx, c.name, w.Name), 2*time.Second, 200*time.Millisecond).Should(BeFalse(), "the work waits for the held object")

		By("letting the work go once the object is gone")
		Expect(spoke.Client.Get(ctx, client.ObjectKeyFromObject(held), held)).To(Succeed())
		held.Finalizers = nil
		Expect(spoke.Client.Update(ctx, held)).To(Succeed())
		Eventually(workGone(ctx, c.name, w.Name)).Should(BeTrue())
		Expect(spokeGone(ctx, spoke, held)()).To(BeTrue())
		Expect(spokeGone(ctx, spoke, &workv1.AppliedManifestWork{ObjectMeta: metav1.ObjectMeta{Name: a.appliedName(w.Name)}})()).To(BeTrue())
	})

	It("keeps everything with Orphan, and the objects named by orphaningRules with SelectivelyOrphan", func(ctx SpecContext) {
		c := newWorkCluster(ctx, "work-orphan")
		a := startWorkAgent(c, spoke)
		ns := c.name
		createSpokeNamespace(ctx, spoke, ns)
		orphan := newWork(c.name, "orphan-"+c.name, configMap(ns, "o1", nil), configMap(ns, "o2", nil))
		orphan.Spec.DeleteOption = &workv1.DeleteOption{PropagationPolicy: workv1.DeletePropagationPolicyTypeOrphan}
		selective := newWork(c.name, "selective-"+c.name, configMap(ns, "keep", nil), configMap(ns, "drop", nil))
		selective.Spec.DeleteOption = &workv1.DeleteOption{
			PropagationPolicy: workv1.DeletePropagationPolicyTypeSelectivelyOrphan,
			SelectivelyOrphan: &workv1.SelectivelyOrphan{OrphaningRules: []workv1.OrphaningRule{{Resource: "configmaps", Namespace: ns, Name: "keep"}}},
		}
		for _, w := range []*workv1.ManifestWork{orphan, selective} {
			Expect(hubCP.Client.Create(ctx, w)).To(Succeed())
			Eventually(workCond(ctx, c.name, w.Name, workv1.WorkApplied)).Should(haveStatus(metav1.ConditionTrue))
		}
		amws := map[string]*workv1.AppliedManifestWork{orphan.Name: a.applied(ctx, orphan.Name), selective.Name: a.applied(ctx, selective.Name)}

		for _, w := range []*workv1.ManifestWork{orphan, selective} {
			Expect(hubCP.Client.Delete(ctx, getWork(ctx, hubCP, c.name, w.Name))).To(Succeed())
			Eventually(workGone(ctx, c.name, w.Name)).Should(BeTrue())
		}
		By("deleting what SelectivelyOrphan does not name")
		Eventually(spokeGone(ctx, spoke, cm(ns, "drop"))).Should(BeTrue())
		By("keeping the rest, without the work's ownerReference or the agent's label")
		for _, kept := range []struct{ name, work string }{{"o1", orphan.Name}, {"o2", orphan.Name}, {"keep", selective.Name}} {
			obj := cm(ns, kept.name)
			Expect(spoke.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj)).To(Succeed())
			Expect(ownedBy(obj, amws[kept.work])).To(BeFalse(), kept.name)
			Expect(obj.OwnerReferences).To(BeEmpty(), kept.name)
			Expect(obj.Labels).NotTo(HaveKey(work.AgentLabel), kept.name)
		}
		Consistently(func() error {
			return spoke.Client.Get(ctx, client.ObjectKeyFromObject(cm(ns, "o1")), &corev1.ConfigMap{})
		}, 2*time.Second, 200*time.Millisecond).Should(Succeed(), "the garbage collector finds no owner to act on")
	})

	It("deletes the object of a manifest removed from the work, and only that one", func(ctx SpecContext) {
		c := newWorkCluster(ctx, "work-prune")
		a := startWorkAgent(c, spoke)
		ns := c.name
		createSpokeNamespace(ctx, spoke, ns)
		w := newWork(c.name, "prune-"+c.name, configMap(ns, "stays", nil), configMap(ns, "goes", nil))
		Expect(hubCP.Client.Create(ctx, w)).To(Succeed())
		Eventually(workCond(ctx, c.name, w.Name, workv1.WorkApplied)).Should(haveStatus(metav1.ConditionTrue))
		stays := cm(ns, "stays")
		Expect(spoke.Client.Get(ctx, client.ObjectKeyFromObject(stays), stays)).To(Succeed())

		Eventually(func() error {
			w := getWork(ctx, hubCP, c.name, w.Name)
			w.Spec.Workload.Manifests = w.Spec.Workload.Manifests[:1]
			return hubCP.Client.Update(ctx, w)
		}).Should(Succeed())
		Eventually(spokeGone(ctx, spoke, cm(ns, "goes"))).Should(BeTrue())
		Eventually(func() []workv1.AppliedManifestResourceMeta { return a.applied(ctx, w.Name).Status.AppliedResources }).Should(
			ConsistOf(HaveField("ResourceIdentifier", workv1.ResourceIdentifier{Resource: "configmaps", Namespace: ns, Name: "stays"})))
		again := cm(ns, "stays")
		Expect(spoke.Client.Get(ctx, client.ObjectKeyFromObject(again), again)).To(Succeed())
		Expect(again.UID).To(Equal(stays.UID))
		Eventually(func() []workv1.ManifestCondition {
			return getWork(ctx, hubCP, c.name, w.Name).Status.ResourceStatus.Manifests
		}).Should(HaveLen(1))
	})

	It("deletes a work whose Complete condition held for ttlSecondsAfterFinished", func(ctx SpecContext) {
		c := newWorkCluster(ctx, "work-ttl")
		startWorkAgent(c, spoke)
		ns := c.name
		createSpokeNamespace(ctx, spoke, ns)
		w := newWork(c.name, "ttl-"+c.name, configMap(ns, "job-like", map[string]string{"task": "run"}))
		w.Spec.DeleteOption = &workv1.DeleteOption{TTLSecondsAfterFinished: ptr.To[int64](2)}
		w.Spec.ManifestConfigs = []workv1.ManifestConfigOption{{
			ResourceIdentifier: workv1.ResourceIdentifier{Resource: "configmaps", Namespace: ns, Name: "job-like"},
			ConditionRules: []workv1.ConditionRule{{Condition: workv1.ManifestComplete, Type: workv1.CELConditionExpressionsType,
				CelExpressions: []string{`has(object.data.result) && object.data.result == "done"`}}},
		}}
		Expect(hubCP.Client.Create(ctx, w)).To(Succeed())
		Eventually(manifestCond(ctx, c.name, w.Name, 0, workv1.ManifestComplete)).Should(haveStatus(metav1.ConditionFalse))
		Expect(workCond(ctx, c.name, w.Name, workv1.WorkComplete)()).To(BeNil())

		By("finishing, as a job would, in a field the manifest does not set")
		obj := cm(ns, "job-like")
		Expect(spoke.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj)).To(Succeed())
		obj.Data["result"] = "done"
		Expect(spoke.Client.Update(ctx, obj)).To(Succeed())
		var completeAt time.Time
		Eventually(func() *metav1.Condition {
			c := workCond(ctx, c.name, w.Name, workv1.WorkComplete)()
			if c != nil {
				completeAt = c.LastTransitionTime.Time
			}
			return c
		}).Should(haveStatusReason(metav1.ConditionTrue, workv1.ReasonManifestsComplete))
		Eventually(workGone(ctx, c.name, w.Name)).Should(BeTrue())
		Expect(time.Since(completeAt)).To(BeNumerically(">=", 2*time.Second-time.Second), "not before the TTL (to the second the API keeps)")
		Eventually(spokeGone(ctx, spoke, obj)).Should(BeTrue(), "and its deletion removes what it applied")
	})

	It("evicts what a work applied once the work is gone from the hub for the grace period", func(ctx SpecContext) {
		c := newWorkCluster(ctx, "work-evict")
		a := startWorkAgent(c, spoke, func(cfg *workConfig) { cfg.EvictionGracePeriod = 3 * time.Second })
		ns := c.name
		createSpokeNamespace(ctx, spoke, ns)
		w := newWork(c.name, "evict-"+c.name, configMap(ns, "left-behind", nil))
		Expect(hubCP.Client.Create(ctx, w)).To(Succeed())
		Eventually(workCond(ctx, c.name, w.Name, workv1.WorkApplied)).Should(haveStatus(metav1.ConditionTrue))

		By("losing the work while the agent was not looking: stopped, and the finalizer removed by force")
		a.stop()
		got := getWork(ctx, hubCP, c.name, w.Name)
		got.Finalizers = nil
		Expect(hubCP.Client.Update(ctx, got)).To(Succeed())
		Expect(hubCP.Client.Delete(ctx, got)).To(Succeed())
		Eventually(workGone(ctx, c.name, w.Name)).Should(BeTrue())
		a.start()

		By("marking the AppliedManifestWork for eviction, and keeping the object for the grace period")
		Eventually(func() *metav1.Time { return a.applied(ctx, w.Name).Status.EvictionStartTime }).ShouldNot(BeNil())
		start := a.applied(ctx, w.Name).Status.EvictionStartTime.Time
		Expect(spoke.Client.Get(ctx, client.ObjectKeyFromObject(cm(ns, "left-behind")), &corev1.ConfigMap{})).To(Succeed())
		By("then removing both")
		Eventually(spokeGone(ctx, spoke, &workv1.AppliedManifestWork{ObjectMeta: metav1.ObjectMeta{Name: a.appliedName(w.Name)}})).Should(BeTrue())
		Expect(time.Since(start)).To(BeNumerically(">=", 3*time.Second-time.Second))
		Eventually(spokeGone(ctx, spoke, cm(ns, "left-behind"))).Should(BeTrue())
	})
})
