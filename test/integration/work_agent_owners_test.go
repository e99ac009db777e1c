package integration

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/flotilla/agent/work"
	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	"github.com/flotilla-io/flotilla/test/framework"
)

// contestedWork is a work of one ConfigMap, settings, applied with strategy.
func contestedWork(c, name, ns, color string, strategy workv1.UpdateStrategyType) *workv1.ManifestWork {
	w := newWork(c, name, configMap(ns, "settings", map[string]string{"color": color}))
	w.Spec.ManifestConfigs = []workv1.ManifestConfigOption{{
		ResourceIdentifier: workv1.ResourceIdentifier{Resource: "configmaps", Namespace: ns, Name: "settings"},
		UpdateStrategy:     &workv1.UpdateStrategy{Type: strategy},
	}}
	return w
}

// hubWrites are the writes user made to the hub so far, by "verb resource".
func hubWrites(user string) map[string]int {
	writes := map[string]int{}
	for what, n := range hubCP.Requests.Counts(user) {
		for _, verb := range []string{"create ", "update ", "patch ", "delete "} {
			if strings.HasPrefix(what, verb) {
				writes[what] = n
			}
		}
	}
	return writes
}

// spokeWrites counts the changes of ConfigMap ns/name on spoke from now on.
func spokeWrites(ctx context.Context, spoke *framework.ControlPlane, ns, name string) func() int {
	GinkgoHelper()
	cm, err := spoke.Kube.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
	Expect(err).NotTo(HaveOccurred())
	w, err := spoke.Kube.CoreV1().ConfigMaps(ns).Watch(ctx, metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("metadata.name", name).String(), ResourceVersion: cm.ResourceVersion,
	})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(w.Stop)
	var n atomic.Int32
	go func() {
		for ev := range w.ResultChan() {
			if ev.Type != watch.Bookmark {
				n.Add(1)
			}
		}
	}()
	return func() int { return int(n.Load()) }
}

var _ = Describe("Work agent: two works of one object", Ordered, func() {
	var spoke *framework.ControlPlane

	BeforeAll(func(ctx SpecContext) {
		spoke = newWorkSpoke(ctx)
	})

	for _, tc := range []struct {
		strategy workv1.UpdateStrategyType
		reason   string
	}{
		{workv1.UpdateStrategyTypeUpdate, work.ReasonAppliedByAnotherWork},
		{workv1.UpdateStrategyTypeServerSideApply, work.ReasonApplyConflict},
	} {
		It(fmt.Sprintf("with %s, leaves the object to the work that applied it first, says so on the other, and hands it over when the first goes", tc.strategy), func(ctx SpecContext) {
			c := newWorkCluster(ctx, "work-owners")
			a := startWorkAgent(c, spoke)
			ns := c.name
			createSpokeNamespace(ctx, spoke, ns)
			first := contestedWork(c.name, "first", ns, "blue", tc.strategy)
			second := contestedWork(c.name, "second", ns, "red", tc.strategy)
			Expect(hubCP.Client.Create(ctx, first)).To(Succeed())
			Eventually(workCond(ctx, c.name, first.Name, workv1.WorkApplied)).Should(haveStatus(metav1.ConditionTrue))
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "settings"}}
			Expect(spoke.Client.Get(ctx, client.ObjectKeyFromObject(cm), cm)).To(Succeed())
			uid := cm.UID

			By("telling the second work which work holds the object")
			Expect(hubCP.Client.Create(ctx, second)).To(Succeed())
			holder := fmt.Sprintf("ManifestWork %s/%s of cluster %s", c.name, first.Name, c.name)
			Eventually(manifestCond(ctx, c.name, second.Name, 0, workv1.ManifestApplied)).Should(And(
				haveStatusReason(metav1.ConditionFalse, tc.reason), HaveField("Message", ContainSubstring(holder))),
				func() string {
					return fmt.Sprintf("the second work's manifest: %+v", manifestCond(ctx, c.name, second.Name, 0, workv1.ManifestApplied)())
				})
			Expect(workCond(ctx, c.name, second.Name, workv1.WorkApplied)()).To(And(
				haveStatusReason(metav1.ConditionFalse, workv1.ReasonAppliedManifestWorkFailed), HaveField("Message", ContainSubstring(holder))))
			Expect(workCond(ctx, c.name, first.Name, workv1.WorkApplied)()).To(haveStatus(metav1.ConditionTrue))
			Eventually(func() []eventsv1.Event {
				list := &eventsv1.EventList{}
				Expect(hubCP.Client.List(ctx, list, client.InNamespace(c.name))).To(Succeed())
				return list.Items
			}).Should(ContainElement(And(HaveField("Reason", tc.reason), HaveField("Regarding.Name", second.Name),
				HaveField("Type", corev1.EventTypeWarning))), "one event when the second work starts waiting")
			Expect(spoke.Client.Get(ctx, client.ObjectKeyFromObject(cm), cm)).To(Succeed())
			Expect(cm.Data).To(HaveKeyWithValue("color", "blue"), "the first work keeps the object")

			By("writing neither the object nor the works' status while both stay")
			user := agentUser(c.name, "agent1")
			before := hubWrites(user)
			written := spokeWrites(ctx, spoke, ns, "settings")
			changes := func() string {
				after := hubWrites(user)
				var diff []string
				for what, n := range after {
					if n != before[what] {
						diff = append(diff, fmt.Sprintf("%s: %d", what, n-before[what]))
					}
				}
				return fmt.Sprintf("%d changes of the ConfigMap on the spoke, hub writes %v", written(), diff)
			}
			Consistently(changes, 4*a.cfg.ResyncInterval, 200*time.Millisecond).Should(Equal("0 changes of the ConfigMap on the spoke, hub writes []"),
				"four resyncs of both works")

			if tc.strategy == workv1.UpdateStrategyTypeUpdate {
				By("putting back a change on the spoke with the first work's manifest only")
				Expect(spoke.Client.Get(ctx, client.ObjectKeyFromObject(cm), cm)).To(Succeed())
				cm.Data["color"] = "green"
				Expect(spoke.Client.Update(ctx, cm)).To(Succeed())
				Eventually(manifestStatus(ctx, c.name, first.Name, 0)).Should(HaveField("Drift", HaveField("Corrections", int64(1))))
				Expect(spoke.Client.Get(ctx, client.ObjectKeyFromObject(cm), cm)).To(Succeed())
				Expect(cm.Data).To(HaveKeyWithValue("color", "blue"))
				rv := cm.ResourceVersion
				Consistently(func() string {
					Expect(spoke.Client.Get(ctx, client.ObjectKeyFromObject(cm), cm)).To(Succeed())
					return cm.ResourceVersion
				}, 3*a.cfg.ResyncInterval, 200*time.Millisecond).Should(Equal(rv), "the second work does not answer the correction")
				Expect(manifestStatus(ctx, c.name, second.Name, 0)().Drift).To(BeNil())
			}

			By("handing the object over, unchanged in identity, once the first work is deleted")
			firstApplied := a.applied(ctx, first.Name)
			secondApplied := a.applied(ctx, second.Name)
			Expect(hubCP.Client.Delete(ctx, getWork(ctx, hubCP, c.name, first.Name))).To(Succeed())
			Eventually(func() map[string]string {
				Expect(spoke.Client.Get(ctx, client.ObjectKeyFromObject(cm), cm)).To(Succeed())
				return maps.Clone(cm.Data)
			}).Should(HaveKeyWithValue("color", "red"))
			Expect(cm.UID).To(Equal(uid), "the object was kept for the second work, not deleted and created again")
			Expect(ownedBy(cm, firstApplied)).To(BeFalse())
			Expect(ownedBy(cm, secondApplied)).To(BeTrue())
			Eventually(workCond(ctx, c.name, second.Name, workv1.WorkApplied)).Should(haveStatus(metav1.ConditionTrue))
			Expect(manifestCond(ctx, c.name, second.Name, 0, workv1.ManifestApplied)()).To(
				haveStatusReason(metav1.ConditionTrue, workv1.ReasonAppliedManifestComplete))
			Expect(manifestStatus(ctx, c.name, second.Name, 0)().Drift).To(BeNil(), "a hand-over is not a drift")
			Eventually(exists(ctx, &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: c.name, Name: first.Name}})).Should(BeFalse())

			By("deleting the object with its last work")
			Expect(hubCP.Client.Delete(ctx, getWork(ctx, hubCP, c.name, second.Name))).To(Succeed())
			Eventually(spokeGone(ctx, spoke, cm)).Should(BeTrue())
			// The next spec's works have the same names on this spoke: an
			// AppliedManifestWork left behind would be another cluster's.
			Eventually(spokeGone(ctx, spoke, firstApplied)).Should(BeTrue(), "the first work's AppliedManifestWork removed")
			Eventually(spokeGone(ctx, spoke, secondApplied)).Should(BeTrue(), "the second work's AppliedManifestWork removed")
		})
	}
})
