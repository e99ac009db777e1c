package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
)

// The rollback spec's namespace on the hub, and its releases: revision 1
// runs nginx:1.27; revision 2 runs nginx:1.28 and asks for more CPU than
// any dev cluster's node has, so that its Pod is never scheduled and the
// Deployment never has all its replicas available (the old Pod keeps
// running meanwhile, as a rolling update keeps it).
const (
	rollbackNS    = "rollback"
	rollbackGood  = "nginx:1.27"
	rollbackBad   = "nginx:1.28"
	rollbackDeadl = "20s"
)

// rollbackDeployment is Deployment name at image, one replica; at
// rollbackBad it asks for 1,000 CPUs.
func rollbackDeployment(name, image string) *appsv1.Deployment {
	c := corev1.Container{Name: name, Image: image}
	if image == rollbackBad {
		c.Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1000")}
	}
	l := map[string]string{"app": name}
	return &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: l},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: l}, Spec: corev1.PodSpec{Containers: []corev1.Container{c}}},
		},
	}
}

// rollbackTemplate is the work template of Deployment name at image, its
// well-known status (Replicas, AvailableReplicas, ...) reported back,
// applied server-side: going back to revision 1 must remove the CPU
// request revision 2 added, which the Update strategy (a merge onto the
// live object) would keep.
func rollbackTemplate(name, image string) workv1.ManifestWorkSpec {
	return workv1.ManifestWorkSpec{
		Workload: workv1.ManifestsTemplate{Manifests: []workv1.Manifest{{RawExtension: runtime.RawExtension{Object: rollbackDeployment(name, image)}}}},
		ManifestConfigs: []workv1.ManifestConfigOption{{
			ResourceIdentifier: workv1.ResourceIdentifier{Group: "apps", Resource: "deployments", Namespace: "default", Name: name},
			FeedbackRules:      []workv1.FeedbackRule{{Type: workv1.WellKnownStatusType}},
			UpdateStrategy:     &workv1.UpdateStrategy{Type: workv1.UpdateStrategyTypeServerSideApply},
		}},
	}
}

// rollbackReplicaSet is replica set name of Deployment name at
// rollbackGood, rolled out one cluster at a time to Placement fleet with
// a healthCheck that every replica be available; with auto, rolled back
// after the first failed cluster.
func rollbackReplicaSet(name string, auto bool) *workv1alpha1.ManifestWorkReplicaSet {
	rs := &workv1alpha1.ManifestWorkReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: rollbackNS, Name: name},
		Spec: workv1alpha1.ManifestWorkReplicaSetSpec{
			ManifestWorkTemplate: rollbackTemplate(name, rollbackGood),
			PlacementRefs: []workv1alpha1.LocalPlacementReference{{Name: "fleet", RolloutStrategy: workv1alpha1.RolloutStrategy{
				Type: workv1alpha1.Progressive,
				Progressive: &workv1alpha1.RolloutProgressive{
					// A Deployment's status says the new revision's replicas
					// a moment after its spec changed: until then the old
					// ones pass the health check. minSuccessTime holds the
					// next cluster back past that moment.
					RolloutConfig:  workv1alpha1.RolloutConfig{ProgressDeadline: rollbackDeadl, MinSuccessTime: metav1.Duration{Duration: 10 * time.Second}},
					MaxConcurrency: intstr.FromInt32(1),
				},
			}}},
			CascadeDeletionPolicy: workv1alpha1.Background,
			HealthCheck: &workv1alpha1.HealthCheck{Feedback: []workv1alpha1.FeedbackCheck{
				{Name: "AvailableReplicas", EqualsValue: "Replicas"},
			}},
		},
	}
	if auto {
		rs.Spec.Rollback = &workv1alpha1.RollbackPolicy{FailedClusters: intstr.FromInt32(1)}
	}
	return rs
}

// replicaSetWorks reads the ManifestWorks of replica set rollback/name by cluster.
func replicaSetWorks(ctx context.Context, hub client.Client, name string) map[string]workv1.ManifestWork {
	GinkgoHelper()
	list := &workv1.ManifestWorkList{}
	Expect(hub.List(ctx, list, client.MatchingLabels{workv1.ManifestWorkReplicaSetLabel: rollbackNS + "." + name})).To(Succeed())
	out := map[string]workv1.ManifestWork{}
	for _, w := range list.Items {
		out[w.Namespace] = w
	}
	return out
}

// revisions reads the ControllerRevisions of replica set rollback/name by number.
func revisions(ctx context.Context, hub client.Client, name string) map[int64]appsv1.ControllerRevision {
	GinkgoHelper()
	list := &appsv1.ControllerRevisionList{}
	Expect(hub.List(ctx, list, client.InNamespace(rollbackNS), client.MatchingLabels{workv1.ManifestWorkReplicaSetLabel: rollbackNS + "." + name})).To(Succeed())
	out := map[int64]appsv1.ControllerRevision{}
	for _, r := range list.Items {
		out[r.Revision] = r
	}
	return out
}

// workAvailable says whether w is Applied and Available for its generation.
func workAvailable(w workv1.ManifestWork) bool {
	for _, t := range []string{workv1.WorkApplied, workv1.WorkAvailable} {
		c := meta.FindStatusCondition(w.Status.Conditions, t)
		if c == nil || c.Status != metav1.ConditionTrue || c.ObservedGeneration != w.Generation {
			return false
		}
	}
	return true
}

// deploymentMark is what must not change on a cluster that never took a
// bad revision: its Deployment's UID and generation.
type deploymentMark struct {
	uid        types.UID
	generation int64
}

// markDeployments reads Deployment name on each spoke.
func markDeployments(ctx context.Context, spokes map[string]kubernetes.Interface, name string) map[string]deploymentMark {
	GinkgoHelper()
	out := map[string]deploymentMark{}
	for c, spoke := range spokes {
		d, err := spoke.AppsV1().Deployments("default").Get(ctx, name, metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred(), "Deployment %s on %s", name, c)
		out[c] = deploymentMark{d.UID, d.Generation}
	}
	return out
}

// waitRevisionOne waits until replica set name runs rollbackGood,
// Available, on every cluster, its Deployment available on every spoke,
// and revision 1 is recorded complete; it returns revision 1's name.
func waitRevisionOne(ctx context.Context, hub client.Client, spokes map[string]kubernetes.Interface, name string) string {
	GinkgoHelper()
	var rev1 string
	Eventually(func(g Gomega) {
		works := replicaSetWorks(ctx, hub, name)
		g.Expect(works).To(HaveLen(len(spokes)))
		for c, w := range works {
			g.Expect(imageOf(w)).To(Equal(rollbackGood), c)
			g.Expect(workAvailable(w)).To(BeTrue(), "%s: %v", c, w.Status.Conditions)
		}
		rev, ok := revisions(ctx, hub, name)[1]
		g.Expect(ok).To(BeTrue(), "no revision 1 of %s", name)
		g.Expect(rev.Annotations).To(HaveKey(workv1alpha1.RevisionCompleteAnnotation))
		rev1 = rev.Name
		for c, w := range works {
			g.Expect(w.Annotations).To(HaveKeyWithValue(workv1alpha1.RevisionAnnotation, rev1), c)
		}
	}, 3*time.Minute, time.Second).Should(Succeed())
	for c, spoke := range spokes {
		Eventually(func(g Gomega) {
			d, err := spoke.AppsV1().Deployments("default").Get(ctx, name, metav1.GetOptions{})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(d.Status.AvailableReplicas).To(Equal(int32(1)), c)
		}, time.Minute).Should(Succeed())
	}
	return rev1
}

// setRelease writes replica set name's template at image, with its
// resourceVersion.
func setRelease(ctx context.Context, hub client.Client, name, image string) {
	GinkgoHelper()
	Eventually(func() error {
		rs := &workv1alpha1.ManifestWorkReplicaSet{}
		if err := hub.Get(ctx, client.ObjectKey{Namespace: rollbackNS, Name: name}, rs); err != nil {
			return err
		}
		rs.Spec.ManifestWorkTemplate = rollbackTemplate(name, image)
		return hub.Update(ctx, rs)
	}, 30*time.Second).Should(Succeed())
}

// expectUntouched checks that the works of the clusters in others are
// still the ones written for revision rev (their generations in works),
// and their Deployments the ones in marks.
func expectUntouched(ctx context.Context, hub client.Client, spokes map[string]kubernetes.Interface, name, rev string, works map[string]int64, marks map[string]deploymentMark, others []string) {
	GinkgoHelper()
	now := replicaSetWorks(ctx, hub, name)
	deployments := markDeployments(ctx, spokes, name)
	for _, c := range others {
		Expect(imageOf(now[c])).To(Equal(rollbackGood), "%s took the bad revision", c)
		Expect(now[c].Generation).To(Equal(works[c]), "the work of %s was written", c)
		Expect(now[c].Annotations).To(HaveKeyWithValue(workv1alpha1.RevisionAnnotation, rev), c)
		Expect(deployments[c]).To(Equal(marks[c]), "Deployment %s on %s was replaced or changed", name, c)
	}
}

// workGenerations are the generations of the works by cluster.
func workGenerations(works map[string]workv1.ManifestWork) map[string]int64 {
	out := map[string]int64{}
	for c, w := range works {
		out[c] = w.Generation
	}
	return out
}

var _ = Describe("Rollback of a ManifestWorkReplicaSet", func() {
	It("moves the cluster that took a revision failing its health check back to revision 1, by itself or by flotilla rollout undo, and never touches the three clusters that did not take it", func(ctx SpecContext) {
		dir, hub, onHub := startSandbox(ctx, 4)
		clusters := []string{"cluster1", "cluster2", "cluster3", "cluster4"}
		spokes := map[string]kubernetes.Interface{}
		for _, c := range clusters {
			spokes[c] = devKube(filepath.Join(dir, c, "admin.kubeconfig"))
		}
		// One cluster at a time, by name: cluster1 takes revision 2 first.
		first, others := clusters[0], clusters[1:]

		By("choosing all four clusters with a Placement")
		Expect(onHub("clusterset", "bind", "global", "-n", rollbackNS).code).To(Equal(0))
		res := onHub("create", "placement", "fleet", "-n", rollbackNS, "--clustersets", "global", "--wait")
		Expect(res.code).To(Equal(0), res.stderr)
		Expect(res.stdout).To(ContainSubstring("Chosen clusters (4): "))

		By("refusing spec.rollback on a replica set that rolls out to every cluster at once, saying why")
		all := rollbackReplicaSet("everywhere", true)
		all.Spec.PlacementRefs[0].RolloutStrategy = workv1alpha1.RolloutStrategy{Type: workv1alpha1.All}
		Expect(hub.Create(ctx, all)).To(MatchError(ContainSubstring("spec.rollback needs a progressive rollout")))

		By("rolling revision 1 (" + rollbackGood + ") of web (automatic rollback) and api (none) out, one cluster at a time")
		Expect(hub.Create(ctx, rollbackReplicaSet("web", true))).To(Succeed())
		Expect(hub.Create(ctx, rollbackReplicaSet("api", false))).To(Succeed())
		webRev1 := waitRevisionOne(ctx, hub, spokes, "web")
		apiRev1 := waitRevisionOne(ctx, hub, spokes, "api")
		webWorks, apiWorks := workGenerations(replicaSetWorks(ctx, hub, "web")), workGenerations(replicaSetWorks(ctx, hub, "api"))
		webMarks, apiMarks := markDeployments(ctx, spokes, "web"), markDeployments(ctx, spokes, "api")

		By("writing revision 2 of web: " + rollbackBad + " asking for 1,000 CPUs, whose Pod is never scheduled")
		setRelease(ctx, hub, "web", rollbackBad)
		Eventually(func(g Gomega) {
			g.Expect(imageOf(replicaSetWorks(ctx, hub, "web")[first])).To(Equal(rollbackBad))
		}, time.Minute).Should(Succeed())
		expectUntouched(ctx, hub, spokes, "web", webRev1, webWorks, webMarks, others)

		By("the hub rolls " + first + " back to revision 1 after its health check failed for " + rollbackDeadl + ", and says why")
		var rolledBack *metav1.Condition
		Eventually(func(g Gomega) {
			rs := &workv1alpha1.ManifestWorkReplicaSet{}
			g.Expect(hub.Get(ctx, client.ObjectKey{Namespace: rollbackNS, Name: "web"}, rs)).To(Succeed())
			rolledBack = meta.FindStatusCondition(rs.Status.Conditions, workv1alpha1.ManifestWorkReplicaSetConditionRolledBack)
			g.Expect(rolledBack).NotTo(BeNil())
			g.Expect(rolledBack.Reason).To(Equal(workv1alpha1.ReasonRolledBack), rolledBack.Message)
		}, 3*time.Minute, time.Second).Should(Succeed())
		Expect(rolledBack.Message).To(And(ContainSubstring("revision 2"), ContainSubstring("revision 1"), ContainSubstring(first),
			ContainSubstring("AvailableReplicas")))
		Eventually(func(g Gomega) {
			w := replicaSetWorks(ctx, hub, "web")[first]
			g.Expect(imageOf(w)).To(Equal(rollbackGood))
			g.Expect(w.Annotations).To(HaveKeyWithValue(workv1alpha1.RevisionAnnotation, webRev1))
			g.Expect(workAvailable(w)).To(BeTrue(), "%v", w.Status.Conditions)
			d, err := spokes[first].AppsV1().Deployments("default").Get(ctx, "web", metav1.GetOptions{})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(d.Spec.Template.Spec.Containers[0].Image).To(Equal(rollbackGood))
			g.Expect(d.Status.AvailableReplicas).To(Equal(int32(1)))
		}, time.Minute).Should(Succeed())
		Expect(markDeployments(ctx, spokes, "web")[first].uid).To(Equal(webMarks[first].uid), "the rollback replaced the Deployment on %s", first)
		revs := revisions(ctx, hub, "web")
		Expect(revs[2].Annotations[workv1alpha1.RevisionFailedAnnotation]).To(ContainSubstring(first))
		Expect(revs[2].Annotations[workv1alpha1.RevisionSummaryAnnotation]).To(ContainSubstring(rollbackBad))
		Expect(revs[2].Annotations[workv1alpha1.RevisionAuthorAnnotation]).NotTo(BeEmpty())

		By("nothing moves after the rollback: it does not loop, and the other clusters never took revision 2")
		Consistently(func(g Gomega) {
			works := replicaSetWorks(ctx, hub, "web")
			g.Expect(imageOf(works[first])).To(Equal(rollbackGood))
			for _, c := range others {
				g.Expect(works[c].Generation).To(Equal(webWorks[c]), c)
			}
		}, 10*time.Second, time.Second).Should(Succeed())
		expectUntouched(ctx, hub, spokes, "web", webRev1, webWorks, webMarks, others)

		By("flotilla rollout history lists both revisions, revision 2 failed and rolled back, and why")
		res = onHub("rollout", "history", "web", "-n", rollbackNS)
		Expect(res.code).To(Equal(0), res.stderr)
		Expect(res.stdout).To(MatchRegexp(`(?m)^REVISION\s+CREATED\s+AUTHOR\s+CLUSTERS\s+STATUS\s+SUMMARY$`))
		Expect(res.stdout).To(MatchRegexp(`(?m)^1\s+.*\s4\s+complete\s`))
		Expect(res.stdout).To(MatchRegexp(`(?m)^2\s+.*\s0\s+current, failed, rolled back\s+.*` + rollbackBad))
		Expect(res.stdout).To(ContainSubstring("RolledBack: RolledBack: "))
		Expect(res.stdout).To(ContainSubstring(first))

		By("writing revision 2 of api, which has no automatic rollback: the rollout stops at " + first)
		setRelease(ctx, hub, "api", rollbackBad)
		Eventually(func(g Gomega) {
			rs := &workv1alpha1.ManifestWorkReplicaSet{}
			g.Expect(hub.Get(ctx, client.ObjectKey{Namespace: rollbackNS, Name: "api"}, rs)).To(Succeed())
			c := meta.FindStatusCondition(rs.Status.Conditions, workv1alpha1.ManifestWorkReplicaSetConditionPlacementRolledOut)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Message).To(And(ContainSubstring("rollout stopped"), ContainSubstring(first)))
			g.Expect(meta.FindStatusCondition(rs.Status.Conditions, workv1alpha1.ManifestWorkReplicaSetConditionRolledBack)).To(BeNil())
		}, 2*time.Minute, time.Second).Should(Succeed())
		Expect(imageOf(replicaSetWorks(ctx, hub, "api")[first])).To(Equal(rollbackBad))
		expectUntouched(ctx, hub, spokes, "api", apiRev1, apiWorks, apiMarks, others)

		By("refusing to undo to a revision that does not exist, naming those there are")
		res = onHub("rollout", "undo", "api", "-n", rollbackNS, "--to-revision", "7")
		Expect(res.code).NotTo(Equal(0))
		Expect(res.stderr).To(ContainSubstring("ManifestWorkReplicaSet rollback/api has no revision 7: it has revisions 1, 2"))
		Expect(imageOf(replicaSetWorks(ctx, hub, "api")[first])).To(Equal(rollbackBad))

		By("flotilla rollout undo api: revision 1 again, as revision 3, back on " + first + " only")
		res = onHub("rollout", "undo", "api", "-n", rollbackNS)
		Expect(res.code).To(Equal(0), res.stderr)
		Expect(res.stdout).To(ContainSubstring("ManifestWorkReplicaSet rollback/api rolled back to revision 1"))
		Eventually(func(g Gomega) {
			w := replicaSetWorks(ctx, hub, "api")[first]
			g.Expect(imageOf(w)).To(Equal(rollbackGood))
			g.Expect(w.Annotations).To(HaveKeyWithValue(workv1alpha1.RevisionAnnotation, apiRev1), "the undo made a new revision instead of renumbering revision 1")
			g.Expect(workAvailable(w)).To(BeTrue(), "%v", w.Status.Conditions)
			d, err := spokes[first].AppsV1().Deployments("default").Get(ctx, "api", metav1.GetOptions{})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(d.Spec.Template.Spec.Containers[0].Image).To(Equal(rollbackGood))
			g.Expect(d.Status.AvailableReplicas).To(Equal(int32(1)))
		}, 2*time.Minute, time.Second).Should(Succeed())
		expectUntouched(ctx, hub, spokes, "api", apiRev1, apiWorks, apiMarks, others)
		Eventually(func(g Gomega) {
			revs := revisions(ctx, hub, "api")
			g.Expect(revs).To(HaveLen(2), "revisions %v", revs)
			g.Expect(revs[3].Name).To(Equal(apiRev1), "revision 1 renumbered 3")
		}, 30*time.Second).Should(Succeed())
		res = onHub("rollout", "history", "api", "-n", rollbackNS)
		Expect(res.code).To(Equal(0), res.stderr)
		Expect(res.stdout).To(MatchRegexp(`(?m)^3\s+.*\s4\s+current, complete\s`))
		Expect(res.stdout).To(MatchRegexp(fmt.Sprintf(`(?m)^2\s+.*\s0\s+.*%s`, rollbackBad)))
		res = onHub("rollout", "status", "api", "-n", rollbackNS, "--timeout", "1m")
		Expect(res.code).To(Equal(0), res.stderr)
		Expect(res.stdout).To(ContainSubstring("ManifestWorkReplicaSet rollback/api successfully rolled out."))
	})
})
