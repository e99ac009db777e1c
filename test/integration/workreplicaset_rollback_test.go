package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	"github.com/flotilla-io/flotilla/test/framework"
)

// The revisions of a ManifestWorkReplicaSet and its automatic rollback
// (hub/workreplicaset, docs/rollback.md). As in the other replica set
// specs no agent runs: the specs write the works' status as an agent would.

// revisions returns, for Eventually, the replica set's ControllerRevisions
// by number, oldest first.
func revisions(ctx context.Context, ns, name string) func() []appsv1.ControllerRevision {
	return func() []appsv1.ControllerRevision {
		list := &appsv1.ControllerRevisionList{}
		Expect(hubCP.Client.List(ctx, list, client.InNamespace(ns), client.MatchingLabels{workv1.ManifestWorkReplicaSetLabel: ns + "." + name})).To(Succeed())
		slices.SortFunc(list.Items, func(a, b appsv1.ControllerRevision) int { return int(a.Revision - b.Revision) })
		return list.Items
	}
}

// revisionVersions returns, for Eventually, the template version of each
// revision by number.
func revisionVersions(ctx context.Context, ns, name string) func() map[int64]string {
	return func() map[int64]string {
		out := map[int64]string{}
		for _, cr := range revisions(ctx, ns, name)() {
			out[cr.Revision] = revisionVersion(cr)
		}
		return out
	}
}

// revisionVersion is the data.version of the ConfigMap of a revision's template.
func revisionVersion(cr appsv1.ControllerRevision) string {
	GinkgoHelper()
	var d workv1alpha1.RevisionData
	Expect(json.Unmarshal(cr.Data.Raw, &d)).To(Succeed())
	return workVersion(workv1.ManifestWork{Spec: d.ManifestWorkTemplate})
}

// revisionNamed returns the revision of the given version.
func revisionNamed(ctx context.Context, ns, name, version string) appsv1.ControllerRevision {
	GinkgoHelper()
	for _, cr := range revisions(ctx, ns, name)() {
		if revisionVersion(cr) == version {
			return cr
		}
	}
	Fail(fmt.Sprintf("no revision of %s/%s has version %s", ns, name, version))
	return appsv1.ControllerRevision{}
}

// workRevisions returns, for Eventually, the revision annotation of each
// cluster's work of replica set ns/name.
func workRevisions(ctx context.Context, ns, name string) func() map[string]string {
	return func() map[string]string {
		list := &workv1.ManifestWorkList{}
		Expect(hubCP.Client.List(ctx, list, client.MatchingLabels{workv1.ManifestWorkReplicaSetLabel: ns + "." + name})).To(Succeed())
		out := map[string]string{}
		for _, w := range list.Items {
			out[w.Namespace] = w.Annotations[workv1alpha1.RevisionAnnotation]
		}
		return out
	}
}

var _ = Describe("ManifestWorkReplicaSet: revisions", func() {
	It("records each template as a numbered revision with its author and a summary, renumbers the one an undo goes back to, and keeps ten", func(ctx SpecContext) {
		set, ns := newSetWithNamespace(ctx, "mwrs-rev")
		c1 := newClusterName("mwrs-rev")
		createPolicyMember(ctx, c1, set, map[string]string{"env": "prod"})
		prodPlacement(ctx, ns, "prod")
		Eventually(chosen(ctx, ns, "prod")).Should(ConsistOf(c1))
		mwrs := &workv1alpha1.ManifestWorkReplicaSet{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "app", Annotations: map[string]string{workv1alpha1.ChangedByAnnotation: "alice"}},
			Spec: workv1alpha1.ManifestWorkReplicaSetSpec{PlacementRefs: []workv1alpha1.LocalPlacementReference{{Name: "prod"}},
				ManifestWorkTemplate: versionTemplate("v1")},
		}
		Expect(hubCP.Client.Create(ctx, mwrs)).To(Succeed())
		DeferCleanup(func(ctx SpecContext) { Expect(client.IgnoreNotFound(hubCP.Client.Delete(ctx, mwrs))).To(Succeed()) })
		// The hub's admission records who made the change (H4); without it the
		// annotation is the one the spec sent. Either way the revision keeps it.
		author := getReplicaSet(ctx, ns, "app").Annotations[workv1alpha1.ChangedByAnnotation]
		Expect(author).NotTo(BeEmpty())

		By("recording revision 1, owned by the replica set, which its work names")
		Eventually(revisionVersions(ctx, ns, "app")).Should(Equal(map[int64]string{1: "v1"}))
		rev1 := revisionNamed(ctx, ns, "app", "v1")
		Expect(metav1.IsControlledBy(&rev1, getReplicaSet(ctx, ns, "app"))).To(BeTrue())
		Expect(rev1.Annotations).To(HaveKeyWithValue(workv1alpha1.RevisionAuthorAnnotation, author))
		Expect(rev1.Annotations).To(HaveKeyWithValue(workv1alpha1.RevisionSummaryAnnotation, "ConfigMap default/mwrs-version added"))
		Eventually(workRevisions(ctx, ns, "app")).Should(Equal(map[string]string{c1: rev1.Name}))
		reportWork(ctx, c1, "app", healthy)
		Eventually(func() map[string]string { return revisionNamed(ctx, ns, "app", "v1").Annotations }).
			Should(HaveKey(workv1alpha1.RevisionCompleteAnnotation), "revision 1 rolled out and Available everywhere is complete")

		By("recording revision 2 with what changed, and writing its name to the work with its spec")
		setTemplateVersion(ctx, ns, "app", "v2")
		Eventually(revisionVersions(ctx, ns, "app")).Should(Equal(map[int64]string{1: "v1", 2: "v2"}))
		rev2 := revisionNamed(ctx, ns, "app", "v2")
		Expect(rev2.Annotations).To(HaveKeyWithValue(workv1alpha1.RevisionSummaryAnnotation, "ConfigMap default/mwrs-version: data.version"))
		Eventually(func(g Gomega) {
			w := &workv1.ManifestWork{}
			g.Expect(hubCP.Client.Get(ctx, client.ObjectKey{Namespace: c1, Name: "app"}, w)).To(Succeed())
			g.Expect(workVersion(*w)).To(Equal("v2"))
			g.Expect(w.Annotations).To(HaveKeyWithValue(workv1alpha1.RevisionAnnotation, rev2.Name))
		}).Should(Succeed())

		By("making no new revision when the spec goes back to v1: revision 1 is renumbered 3")
		setTemplateVersion(ctx, ns, "app", "v1")
		Eventually(revisionVersions(ctx, ns, "app")).Should(Equal(map[int64]string{2: "v2", 3: "v1"}))
		Expect(revisionNamed(ctx, ns, "app", "v1").Name).To(Equal(rev1.Name))
		Eventually(workRevisions(ctx, ns, "app")).Should(Equal(map[string]string{c1: rev1.Name}))

		By("keeping ten revisions: the newest, and the last complete one (v1, revision 3)")
		for i := 4; i <= 13; i++ {
			setTemplateVersion(ctx, ns, "app", fmt.Sprintf("v%d", i))
			Eventually(revisionVersions(ctx, ns, "app")).Should(HaveKeyWithValue(int64(i), fmt.Sprintf("v%d", i)))
		}
		want := map[int64]string{3: "v1"}
		for i := 5; i <= 13; i++ {
			want[int64(i)] = fmt.Sprintf("v%d", i)
		}
		Eventually(revisionVersions(ctx, ns, "app")).Should(Equal(want))
	})
})

// fourClusters creates four prod clusters whose names sort in order, a
// namespace with a prod Placement "prod", and returns them.
func fourClusters(ctx SpecContext, prefix string) (ns string, clusters []string) {
	GinkgoHelper()
	set, ns := newSetWithNamespace(ctx, prefix)
	for i := 1; i <= 4; i++ {
		c := newClusterName(fmt.Sprintf("%s%d", prefix, i))
		createPolicyMember(ctx, c, set, map[string]string{"env": "prod"})
		clusters = append(clusters, c)
	}
	prodPlacement(ctx, ns, "prod")
	Eventually(chosen(ctx, ns, "prod")).Should(ConsistOf(clusters))
	return ns, clusters
}

// createRollbackReplicaSet creates replica set "app" of the ConfigMap
// template at version, rolled out to Placement prod one cluster at a time
// with cfg, with automatic rollback after failedClusters failed clusters.
func createRollbackReplicaSet(ctx SpecContext, ns, version string, cfg workv1alpha1.RolloutConfig, failedClusters int32) {
	GinkgoHelper()
	mwrs := &workv1alpha1.ManifestWorkReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "app"},
		Spec: workv1alpha1.ManifestWorkReplicaSetSpec{
			PlacementRefs:        []workv1alpha1.LocalPlacementReference{placementRef("prod", progressive(cfg))},
			ManifestWorkTemplate: versionTemplate(version),
			Rollback:             &workv1alpha1.RollbackPolicy{FailedClusters: intstr.FromInt32(failedClusters)},
		},
	}
	Expect(hubCP.Client.Create(ctx, mwrs)).To(Succeed())
	DeferCleanup(func(ctx SpecContext) { Expect(client.IgnoreNotFound(hubCP.Client.Delete(ctx, mwrs))).To(Succeed()) })
}

// rollOut reports each cluster's work healthy in turn as the rollout
// reaches it, until every cluster carries version and the rollout is
// complete.
func rollOut(ctx SpecContext, ns, version string, clusters ...string) {
	GinkgoHelper()
	for _, c := range clusters {
		Eventually(clusterVersion(ctx, ns, c)).Should(Equal(version))
		reportWork(ctx, c, "app", healthy)
	}
	Eventually(replicaSetCondition(ctx, ns, "app", workv1alpha1.ManifestWorkReplicaSetConditionPlacementRolledOut)).
		Should(haveCondition(metav1.ConditionTrue, workv1alpha1.ReasonComplete))
}

// clusterVersion returns, for Eventually, the version cluster's work of
// replica set ns/app carries ("" before it has one).
func clusterVersion(ctx context.Context, ns, cluster string) func() string {
	return func() string { return replicaSetWorks(ctx, ns, "app")()[cluster] }
}

// appWork reads cluster's work "app".
func appWork(ctx context.Context, cluster string) workv1.ManifestWork {
	GinkgoHelper()
	w := workv1.ManifestWork{}
	Expect(hubCP.Client.Get(ctx, client.ObjectKey{Namespace: cluster, Name: "app"}, &w)).To(Succeed())
	return w
}

// workWrites is the resourceVersion and generation of each given
// cluster's work "app": a change of either is a write.
func workWrites(ctx context.Context, clusters ...string) func() map[string]string {
	return func() map[string]string {
		out := map[string]string{}
		for _, c := range clusters {
			w := appWork(ctx, c)
			out[c] = fmt.Sprintf("rv %s gen %d", w.ResourceVersion, w.Generation)
		}
		return out
	}
}

// specWrites is the generation of each given cluster's work "app": a
// change is a write of its spec (its status changes as the spec reports it).
func specWrites(ctx context.Context, clusters ...string) func() map[string]int64 {
	return func() map[string]int64 {
		out := map[string]int64{}
		for _, c := range clusters {
			out[c] = appWork(ctx, c).Generation
		}
		return out
	}
}

// replicaSetEvents returns, for Eventually, "reason: note" of the events
// about replica set ns/name.
func replicaSetEvents(ctx context.Context, ns, name string) func() []string {
	return func() []string {
		list := &eventsv1.EventList{}
		Expect(hubCP.Client.List(ctx, list, client.InNamespace(ns))).To(Succeed())
		var out []string
		for _, e := range list.Items {
			if e.Regarding.Kind == "ManifestWorkReplicaSet" && e.Regarding.Name == name {
				out = append(out, e.Reason+": "+e.Note)
			}
		}
		return out
	}
}

var degraded = workState{applied: true, degraded: true}

var _ = Describe("ManifestWorkReplicaSet: rollback", func() {
	rolledBackCondition := func(ctx context.Context, ns string) func() *metav1.Condition {
		return replicaSetCondition(ctx, ns, "app", workv1alpha1.ManifestWorkReplicaSetConditionRolledBack)
	}

	It("rolls revision 2 back to revision 1 on the one cluster that took it and failed; the other three works are never written", func(ctx SpecContext) {
		ns, cs := fourClusters(ctx, "mwrs-rb")
		createRollbackReplicaSet(ctx, ns, "v1", workv1alpha1.RolloutConfig{}, 1)
		rollOut(ctx, ns, "v1", cs...)
		rev1 := revisionNamed(ctx, ns, "app", "v1")
		Eventually(func() map[string]string { return revisionNamed(ctx, ns, "app", "v1").Annotations }).Should(HaveKey(workv1alpha1.RevisionCompleteAnnotation))
		others := workWrites(ctx, cs[1:]...)()

		By("rolling revision 2 out to the first cluster, which reports Degraded")
		setTemplateVersion(ctx, ns, "app", "v2")
		Eventually(clusterVersion(ctx, ns, cs[0])).Should(Equal("v2"))
		reportWork(ctx, cs[0], "app", degraded)

		By("marking revision 2 failed and moving the first cluster back to revision 1")
		Eventually(func() map[string]string { return revisionNamed(ctx, ns, "app", "v2").Annotations }).Should(HaveKeyWithValue(
			workv1alpha1.RevisionFailedAnnotation, And(ContainSubstring("revision 2 failed its gate on 1 of the 1 clusters"), ContainSubstring(cs[0]+" (Degraded"))))
		Eventually(func(g Gomega) {
			w := appWork(ctx, cs[0])
			g.Expect(workVersion(w)).To(Equal("v1"))
			g.Expect(w.Annotations).To(HaveKeyWithValue(workv1alpha1.RevisionAnnotation, rev1.Name))
		}).Should(Succeed())
		Eventually(rolledBackCondition(ctx, ns)).Should(And(haveCondition(metav1.ConditionFalse, workv1alpha1.ReasonRollingBack),
			HaveField("Message", And(ContainSubstring("revision 2"), ContainSubstring(cs[0]), ContainSubstring("rolling back to revision 1")))))

		By("saying RolledBack once the cluster is Available on revision 1")
		reportWork(ctx, cs[0], "app", healthy)
		Eventually(rolledBackCondition(ctx, ns)).Should(And(haveCondition(metav1.ConditionTrue, workv1alpha1.ReasonRolledBack),
			HaveField("Message", And(ContainSubstring("revision 2 ("), ContainSubstring(cs[0]+" (Degraded"), ContainSubstring("every chosen cluster is back on revision 1")))))
		Expect(replicaSetCondition(ctx, ns, "app", workv1alpha1.ManifestWorkReplicaSetConditionPlacementRolledOut)()).To(And(
			haveCondition(metav1.ConditionFalse, workv1alpha1.ReasonRolledBack), HaveField("Message", ContainSubstring("the rollout of revision 2 stopped"))))
		Eventually(replicaSetEvents(ctx, ns, "app")).Should(ContainElements(
			HavePrefix("RevisionFailed: revision 2 failed its gate"), HavePrefix("RolledBack: revision 2")))
		Consistently(replicaSetWorks(ctx, ns, "app"), 2*time.Second).Should(Equal(versions("v1", cs...)))
		Expect(workWrites(ctx, cs[1:]...)()).To(Equal(others), "a work that never took revision 2 was written")
		Expect(revisionVersions(ctx, ns, "app")()).To(Equal(map[int64]string{1: "v1", 2: "v2"}))

		By("removing the condition when a new revision becomes current")
		setTemplateVersion(ctx, ns, "app", "v3")
		Eventually(rolledBackCondition(ctx, ns)).Should(BeNil())
		Eventually(clusterVersion(ctx, ns, cs[0])).Should(Equal("v3"))
	})

	It("stops with RollbackFailed when a cluster fails on the revision rolled back to, and never loops", func(ctx SpecContext) {
		ns, cs := fourClusters(ctx, "mwrs-rbf")
		createRollbackReplicaSet(ctx, ns, "v1", workv1alpha1.RolloutConfig{}, 1)
		rollOut(ctx, ns, "v1", cs...)
		Eventually(func() map[string]string { return revisionNamed(ctx, ns, "app", "v1").Annotations }).Should(HaveKey(workv1alpha1.RevisionCompleteAnnotation))
		setTemplateVersion(ctx, ns, "app", "v2")
		Eventually(clusterVersion(ctx, ns, cs[0])).Should(Equal("v2"))
		reportWork(ctx, cs[0], "app", degraded)
		Eventually(clusterVersion(ctx, ns, cs[0])).Should(Equal("v1"))

		By("failing on revision 1 too")
		reportWork(ctx, cs[0], "app", degraded)
		Eventually(rolledBackCondition(ctx, ns)).Should(And(haveCondition(metav1.ConditionFalse, workv1alpha1.ReasonRollbackFailed),
			HaveField("Message", And(ContainSubstring("rolling back to revision 1"), ContainSubstring("failed on "+cs[0]), ContainSubstring("not retried")))))
		before := workWrites(ctx, cs...)()
		Consistently(workWrites(ctx, cs...), 3*time.Second).Should(Equal(before), "the hub wrote a work after the rollback failed")
		rev1 := revisionNamed(ctx, ns, "app", "v1")
		Expect(rev1.Annotations).NotTo(HaveKey(workv1alpha1.RevisionFailedAnnotation), "a rollback is never rolled back")
		Expect(revisionVersions(ctx, ns, "app")()).To(Equal(map[int64]string{1: "v1", 2: "v2"}))
	})

	It("rolls nothing back when no revision before the failed one was complete: NoCompleteRevision, and the rollout stops", func(ctx SpecContext) {
		ns, cs := fourClusters(ctx, "mwrs-rbn")
		createRollbackReplicaSet(ctx, ns, "v1", workv1alpha1.RolloutConfig{}, 1)
		Eventually(replicaSetWorks(ctx, ns, "app")).Should(Equal(versions("v1", cs[0])))
		reportWork(ctx, cs[0], "app", degraded)
		Eventually(rolledBackCondition(ctx, ns)).Should(And(haveCondition(metav1.ConditionFalse, workv1alpha1.ReasonNoCompleteRevision),
			HaveField("Message", And(ContainSubstring("revision 1 ("), ContainSubstring(cs[0]), ContainSubstring("nothing was rolled back")))))
		Expect(revisionNamed(ctx, ns, "app", "v1").Annotations).To(HaveKey(workv1alpha1.RevisionFailedAnnotation))
		Consistently(replicaSetWorks(ctx, ns, "app"), 3*time.Second).Should(Equal(versions("v1", cs[0])))
	})

	It("goes on with a rollback after a hub restart, rewriting nothing already rolled back", func(ctx SpecContext) {
		// A hub of this spec's own, restarted: the suite's hub stays as it is.
		own, err := framework.StartHub(ctx)
		Expect(err).NotTo(HaveOccurred())
		shared := hubCP
		hubCP = own
		DeferCleanup(func() { hubCP.Stop(); hubCP = shared })
		ns, cs := fourClusters(ctx, "mwrs-rbr")
		// Two failures roll back; the rollout tolerates the first.
		createRollbackReplicaSet(ctx, ns, "v1", workv1alpha1.RolloutConfig{MaxFailures: intstr.FromInt32(1)}, 2)
		rollOut(ctx, ns, "v1", cs...)
		Eventually(func() map[string]string { return revisionNamed(ctx, ns, "app", "v1").Annotations }).Should(HaveKey(workv1alpha1.RevisionCompleteAnnotation))
		untouched := workWrites(ctx, cs[2:]...)()
		setTemplateVersion(ctx, ns, "app", "v2")
		for _, c := range cs[:2] {
			Eventually(clusterVersion(ctx, ns, c)).Should(Equal("v2"))
			reportWork(ctx, c, "app", degraded)
		}

		By("moving the first failed cluster back, then restarting the hub before it reports")
		Eventually(replicaSetWorks(ctx, ns, "app")).Should(Equal(map[string]string{cs[0]: "v1", cs[1]: "v2", cs[2]: "v1", cs[3]: "v1"}))
		Eventually(rolledBackCondition(ctx, ns)).Should(haveCondition(metav1.ConditionFalse, workv1alpha1.ReasonRollingBack))
		gens := specWrites(ctx, cs...)()
		hubCP, err = hubCP.Restart(ctx)
		Expect(err).NotTo(HaveOccurred())

		By("writing nothing after the restart until the first cluster is Available on revision 1")
		Consistently(specWrites(ctx, cs...), 3*time.Second).Should(Equal(gens))
		reportWork(ctx, cs[0], "app", healthy)
		Eventually(clusterVersion(ctx, ns, cs[1])).Should(Equal("v1"))
		reportWork(ctx, cs[1], "app", healthy)
		Eventually(rolledBackCondition(ctx, ns)).Should(haveCondition(metav1.ConditionTrue, workv1alpha1.ReasonRolledBack))
		after := specWrites(ctx, cs...)()
		Expect(after[cs[0]]).To(Equal(gens[cs[0]]), "the first cluster's work was written again")
		Expect(after[cs[1]]).To(Equal(gens[cs[1]]+1), "the second cluster's work was written more than once")
		Expect(workWrites(ctx, cs[2:]...)()).To(Equal(untouched), "a work that never took revision 2 was written")
		Expect(replicaSetEvents(ctx, ns, "app")()).To(ContainElement(HavePrefix("RevisionFailed: revision 2 failed its gate on 2 of the 2 clusters")))
	})

	It("fails a revision that is Available but fails the health check at progressDeadline, and rolls it back", func(ctx SpecContext) {
		ns, cs := fourClusters(ctx, "mwrs-rbh")
		createRollbackReplicaSet(ctx, ns, "v1", workv1alpha1.RolloutConfig{ProgressDeadline: "6s"}, 1)
		Eventually(func() error {
			mwrs := getReplicaSet(ctx, ns, "app")
			mwrs.Spec.HealthCheck = &workv1alpha1.HealthCheck{Feedback: []workv1alpha1.FeedbackCheck{{Name: "replicas", Equals: "2"}}}
			return hubCP.Client.Update(ctx, mwrs)
		}).Should(Succeed())
		By("rolling revision 1 out to clusters that report replicas 2")
		for _, c := range cs {
			Eventually(clusterVersion(ctx, ns, c)).Should(Equal("v1"))
			reportFeedback(ctx, c, 2)
		}
		Eventually(replicaSetCondition(ctx, ns, "app", workv1alpha1.ManifestWorkReplicaSetConditionPlacementRolledOut)).
			Should(haveCondition(metav1.ConditionTrue, workv1alpha1.ReasonComplete))
		Eventually(func() map[string]string { return revisionNamed(ctx, ns, "app", "v1").Annotations }).Should(HaveKey(workv1alpha1.RevisionCompleteAnnotation))

		By("failing revision 2 on the first cluster, Available with replicas 1, once progressDeadline passed")
		setTemplateVersion(ctx, ns, "app", "v2")
		Eventually(clusterVersion(ctx, ns, cs[0])).Should(Equal("v2"))
		reportFeedback(ctx, cs[0], 1)
		Consistently(clusterVersion(ctx, ns, cs[0]), 2*time.Second).Should(Equal("v2"), "the cluster failed before progressDeadline")
		Eventually(func() map[string]string { return revisionNamed(ctx, ns, "app", "v2").Annotations }, 15*time.Second).Should(HaveKeyWithValue(
			workv1alpha1.RevisionFailedAnnotation, And(ContainSubstring(cs[0]+" (not Available within progressDeadline 6s"), ContainSubstring("replicas is 1, not 2"))))
		Eventually(clusterVersion(ctx, ns, cs[0])).Should(Equal("v1"))
		Expect(replicaSetWorks(ctx, ns, "app")()).To(Equal(versions("v1", cs...)))
	})

	It("is refused on a replica set whose rollout is not progressive", func(ctx SpecContext) {
		ns := newNamespace(ctx, "mwrs-rball")
		mwrs := &workv1alpha1.ManifestWorkReplicaSet{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "app"},
			Spec: workv1alpha1.ManifestWorkReplicaSetSpec{
				PlacementRefs:        []workv1alpha1.LocalPlacementReference{{Name: "prod", RolloutStrategy: workv1alpha1.RolloutStrategy{Type: workv1alpha1.All}}},
				ManifestWorkTemplate: versionTemplate("v1"),
				Rollback:             &workv1alpha1.RollbackPolicy{},
			},
		}
		err := hubCP.Client.Create(ctx, mwrs)
		Expect(err).To(MatchError(And(ContainSubstring("spec.rollback"), ContainSubstring("needs a progressive rollout"), ContainSubstring("Progressive or ProgressivePerGroup"))))
		mwrs.Spec.PlacementRefs[0].RolloutStrategy = progressive(workv1alpha1.RolloutConfig{})
		Expect(hubCP.Client.Create(ctx, mwrs)).To(Succeed())
		DeferCleanup(func(ctx SpecContext) { Expect(client.IgnoreNotFound(hubCP.Client.Delete(ctx, mwrs))).To(Succeed()) })
	})
})

// reportFeedback writes the status of cluster's work "app" as an agent
// would: Applied and Available for its generation, its ConfigMap
// reporting status feedback value replicas.
func reportFeedback(ctx SpecContext, cluster string, replicas int64) {
	GinkgoHelper()
	Eventually(func() error {
		w := &workv1.ManifestWork{}
		if err := hubCP.Client.Get(ctx, client.ObjectKey{Namespace: cluster, Name: "app"}, w); err != nil {
			return err
		}
		for _, t := range []string{workv1.WorkApplied, workv1.WorkAvailable} {
			meta.SetStatusCondition(&w.Status.Conditions, metav1.Condition{Type: t, Status: metav1.ConditionTrue, Reason: "ReportedByTest", ObservedGeneration: w.Generation})
		}
		var conds []metav1.Condition
		for _, t := range []string{workv1.WorkApplied, workv1.WorkAvailable, workv1.ManifestStatusFeedbackSynced} {
			meta.SetStatusCondition(&conds, metav1.Condition{Type: t, Status: metav1.ConditionTrue, Reason: "ReportedByTest", ObservedGeneration: w.Generation})
		}
		w.Status.ResourceStatus.Manifests = []workv1.ManifestCondition{{
			ResourceMeta:   workv1.ManifestResourceMeta{Version: "v1", Kind: "ConfigMap", Resource: "configmaps", Namespace: "default", Name: "mwrs-version"},
			StatusFeedback: workv1.StatusFeedbackResult{Values: []workv1.FeedbackValue{{Name: "replicas", Value: workv1.FieldValue{Type: workv1.Integer, Integer: &replicas}}}},
			Conditions:     conds,
		}}
		return hubCP.Client.Status().Update(ctx, w)
	}).Should(Succeed())
}
