package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
)

// The specs of flotilla rollout drive a replica set of the ConfigMap
// template (workreplicaset_helpers_test.go) through the CLI, over a real
// hub; no agent runs, so they report the works' status as agents would.

// cliRolloutRevisionNames maps the numbers of replica set ns/name's
// revisions to their ControllerRevision names, for Eventually.
func cliRolloutRevisionNames(ctx context.Context, ns, name string) func() map[int64]string {
	return func() map[int64]string {
		list := &appsv1.ControllerRevisionList{}
		Expect(hubCP.Client.List(ctx, list, client.InNamespace(ns), client.MatchingLabels{workv1.ManifestWorkReplicaSetLabel: ns + "." + name})).To(Succeed())
		out := map[int64]string{}
		for _, cr := range list.Items {
			out[cr.Revision] = cr.Name
		}
		return out
	}
}

// cliRolloutReport plays the agents of clusters for replica set ns/name:
// each work that carries version gets st for its generation, as it comes.
// It returns once every one of them does.
func cliRolloutReport(ctx SpecContext, ns, name, version string, st workState, clusters ...string) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		var waiting []string
		for _, cluster := range clusters {
			w := &workv1.ManifestWork{}
			if err := hubCP.Client.Get(ctx, client.ObjectKey{Namespace: cluster, Name: name}, w); err != nil || workVersion(*w) != version {
				waiting = append(waiting, cluster) // its turn has not come
				continue
			}
			if c := meta.FindStatusCondition(w.Status.Conditions, workv1.WorkAvailable); c != nil && c.ObservedGeneration == w.Generation {
				continue // reported for this generation already
			}
			for condType, on := range map[string]bool{workv1.WorkApplied: st.applied, workv1.WorkAvailable: st.available, workv1.WorkDegraded: st.degraded} {
				status := metav1.ConditionFalse
				if on {
					status = metav1.ConditionTrue
				}
				meta.SetStatusCondition(&w.Status.Conditions, metav1.Condition{Type: condType, Status: status, Reason: "ReportedByTest", ObservedGeneration: w.Generation})
			}
			g.Expect(hubCP.Client.Status().Update(ctx, w)).To(Succeed())
		}
		g.Expect(waiting).To(BeEmpty(), "clusters without a work of %s yet", version)
	}).WithTimeout(time.Minute).Should(Succeed())
}

// cliRolloutInBackground runs a hub command in the background; the
// channel delivers its result.
func cliRolloutInBackground(ctx SpecContext, args ...string) chan cliResult {
	done := make(chan cliResult, 1)
	go func() {
		defer GinkgoRecover()
		done <- onHub(ctx, args...)
	}()
	return done
}

var _ = Describe("CLI rollout", func() {
	It("lists the revisions, follows, pauses and resumes the rollout, and undoes a revision, by hand", func(ctx SpecContext) {
		ns, c1, c2, c3 := rolloutClusters(ctx, "cli-rollout")
		createReplicaSet(ctx, ns, "app", "v1", placementRef("prod", progressive(workv1alpha1.RolloutConfig{ProgressDeadline: "10m"})))
		author := getReplicaSet(ctx, ns, "app").Annotations[workv1alpha1.ChangedByAnnotation]
		Expect(author).NotTo(BeEmpty(), "the hub's admission records who created the replica set")

		By("following the rollout of revision 1 until it is complete")
		status := cliRolloutInBackground(ctx, "rollout", "status", "app", "-n", ns, "--timeout", "2m")
		cliRolloutReport(ctx, ns, "app", "v1", healthy, c1, c2, c3)
		var res cliResult
		Eventually(status).WithTimeout(time.Minute).Should(Receive(&res))
		Expect(res.Code).To(Equal(0), res.Stderr)
		Expect(res.Stdout).To(ContainSubstring("Cluster " + c1 + ": applied and available\n"))
		Expect(res.Stdout).To(ContainSubstring("Cluster " + c2 + ": applied and available\n"))
		Expect(res.Stdout).To(ContainSubstring("Cluster " + c3 + ": applied and available\n"))
		Expect(res.Stdout).To(HaveSuffix("Rollout of " + ns + "/app: Complete\nManifestWorkReplicaSet " + ns + "/app successfully rolled out.\n"))
		// One line per change: no line is printed twice in a row.
		lines := strings.Split(res.Stdout, "\n")
		for i := 1; i < len(lines); i++ {
			Expect(lines[i]).NotTo(And(Equal(lines[i-1]), Not(BeEmpty())), "printed twice:\n%s", res.Stdout)
		}
		Eventually(func(g Gomega) {
			res := onHub(ctx, "rollout", "history", "app", "-n", ns)
			g.Expect(res.Code).To(Equal(0), res.Stderr)
			g.Expect(res.Stdout).To(MatchRegexp(`(?m)^REVISION\s+CREATED\s+AUTHOR\s+CLUSTERS\s+STATUS\s+SUMMARY$`))
			g.Expect(res.Stdout).To(MatchRegexp(`(?m)^1\s+\S+ ago\s+%s\s+3\s+current, complete\s+ConfigMap default/mwrs-version added$`, regexp.QuoteMeta(author)))
		}).Should(Succeed())

		By("pausing: revision 2 reaches no cluster until resumed")
		res = onHub(ctx, "rollout", "pause", "app", "-n", ns)
		Expect(res.Code).To(Equal(0), res.Stderr)
		Expect(res.Stdout).To(Equal(fmt.Sprintf("The rollout of ManifestWorkReplicaSet %s/app is paused: resume it with flotilla rollout resume app -n %s\n", ns, ns)))
		Expect(getReplicaSet(ctx, ns, "app").Annotations).To(HaveKeyWithValue(workv1alpha1.PausedAnnotation, "true"))
		res = onHub(ctx, "rollout", "pause", "app", "-n", ns)
		Expect(res.Code).To(Equal(0), res.Stderr)
		Expect(res.Stdout).To(ContainSubstring("is already paused"))
		setTemplateVersion(ctx, ns, "app", "v2")
		Eventually(cliRolloutRevisionNames(ctx, ns, "app")).Should(HaveLen(2))
		Consistently(replicaSetWorks(ctx, ns, "app")).WithTimeout(3 * time.Second).Should(Equal(versions("v1", c1, c2, c3)))
		res = onHub(ctx, "rollout", "status", "app", "-n", ns, "--watch=false")
		Expect(res.Code).To(Equal(0), res.Stderr)
		Expect(res.Stdout).To(ContainSubstring(fmt.Sprintf("Rollout of %s/app: paused (resume it with flotilla rollout resume app -n %s)", ns, ns)))
		Expect(res.Stdout).NotTo(ContainSubstring("successfully rolled out"))
		res = onHub(ctx, "rollout", "history", "app", "-n", ns)
		Expect(res.Code).To(Equal(0), res.Stderr)
		Expect(res.Stdout).To(MatchRegexp(`(?m)^1\s+\S+ ago\s+\S+\s+3\s+complete\s`))
		Expect(res.Stdout).To(MatchRegexp(`(?m)^2\s+\S+ ago\s+\S+\s+0\s+current\s+ConfigMap default/mwrs-version: data.version`))

		By("resuming: revision 2 rolls out one cluster at a time")
		res = onHub(ctx, "rollout", "resume", "app", "-n", ns)
		Expect(res.Code).To(Equal(0), res.Stderr)
		Expect(res.Stdout).To(Equal("The rollout of ManifestWorkReplicaSet " + ns + "/app is resumed.\n"))
		Expect(getReplicaSet(ctx, ns, "app").Annotations).NotTo(HaveKey(workv1alpha1.PausedAnnotation))
		status = cliRolloutInBackground(ctx, "rollout", "status", "app", "-n", ns, "--timeout", "2m")
		cliRolloutReport(ctx, ns, "app", "v2", healthy, c1, c2, c3)
		Eventually(status).WithTimeout(time.Minute).Should(Receive(&res))
		Expect(res.Code).To(Equal(0), res.Stderr)

		By("showing one revision with its data, and all as JSON")
		res = onHub(ctx, "rollout", "history", "app", "-n", ns, "--revision", "1")
		Expect(res.Code).To(Equal(0), res.Stderr)
		Expect(res.Stdout).To(HavePrefix(fmt.Sprintf("ManifestWorkReplicaSet %s/app, revision 1 (ControllerRevision app-", ns)))
		Expect(res.Stdout).To(ContainSubstring("Author:    " + author + "\n"))
		Expect(res.Stdout).To(MatchRegexp(`(?m)^\s+version: v1$`))
		names := cliRolloutRevisionNames(ctx, ns, "app")()
		Eventually(func(g Gomega) {
			res := onHub(ctx, "rollout", "history", "app", "-n", ns, "-o", "json")
			g.Expect(res.Code).To(Equal(0), res.Stderr)
			var revs []struct {
				Revision     int64    `json:"revision"`
				Name         string   `json:"name"`
				Clusters     int      `json:"clusters"`
				ClusterNames []string `json:"clusterNames"`
				Status       string   `json:"status"`
			}
			g.Expect(json.Unmarshal([]byte(res.Stdout), &revs)).To(Succeed())
			// Revision 2 is complete once the hub marked it so, after the rollout.
			g.Expect(revs).To(HaveExactElements(
				And(HaveField("Revision", int64(1)), HaveField("Name", names[1]), HaveField("Clusters", 0)),
				And(HaveField("Revision", int64(2)), HaveField("Name", names[2]), HaveField("ClusterNames", ConsistOf(c1, c2, c3)), HaveField("Status", "current, complete"))))
		}).Should(Succeed())

		By("refusing to undo to a revision that does not exist, naming those there are, and writing nothing")
		generation := getReplicaSet(ctx, ns, "app").Generation
		res = onHub(ctx, "rollout", "undo", "app", "-n", ns, "--to-revision", "7")
		Expect(res.Code).To(Equal(1))
		Expect(res.Stderr).To(ContainSubstring(fmt.Sprintf("ManifestWorkReplicaSet %s/app has no revision 7: it has revisions 1, 2 (see flotilla rollout history app -n %s)", ns, ns)))
		Expect(getReplicaSet(ctx, ns, "app").Generation).To(Equal(generation))

		By("undoing to the revision before the current one: revision 1 again, renumbered 3")
		res = onHub(ctx, "rollout", "undo", "app", "-n", ns)
		Expect(res.Code).To(Equal(0), res.Stderr)
		Expect(res.Stdout).To(Equal(fmt.Sprintf("ManifestWorkReplicaSet %s/app rolled back to revision 1 (ConfigMap default/mwrs-version added): the hub rolls it out by its strategy.\n", ns)))
		Expect(res.Stderr).To(ContainSubstring("Follow it with: flotilla rollout status app -n " + ns))
		Expect(workVersion(workv1.ManifestWork{Spec: getReplicaSet(ctx, ns, "app").Spec.ManifestWorkTemplate})).To(Equal("v1"))
		Eventually(cliRolloutRevisionNames(ctx, ns, "app")).Should(Equal(map[int64]string{2: names[2], 3: names[1]}))
		cliRolloutReport(ctx, ns, "app", "v1", healthy, c1, c2, c3)
		res = onHub(ctx, "rollout", "status", "app", "-n", ns, "--timeout", "1m")
		Expect(res.Code).To(Equal(0), res.Stderr)
		res = onHub(ctx, "rollout", "history", "app", "-n", ns)
		Expect(res.Code).To(Equal(0), res.Stderr)
		Expect(res.Stdout).To(MatchRegexp(`(?m)^2\s+\S+ ago\s+\S+\s+0\s+complete\s`))
		Expect(res.Stdout).To(MatchRegexp(`(?m)^3\s+\S+ ago\s+\S+\s+3\s+current, complete\s`))
		res = onHub(ctx, "rollout", "undo", "app", "-n", ns, "--to-revision", "3")
		Expect(res.Code).To(Equal(0), res.Stderr)
		Expect(res.Stdout).To(Equal(fmt.Sprintf("ManifestWorkReplicaSet %s/app is already at revision 3: nothing to undo.\n", ns)))

		By("failing rollout status at once when the rollout stops on a failed cluster, and undoing that by hand")
		setTemplateVersion(ctx, ns, "app", "v3")
		status = cliRolloutInBackground(ctx, "rollout", "status", "app", "-n", ns, "--timeout", "2m")
		var first string
		Eventually(func() []string {
			var on []string
			for cluster, v := range replicaSetWorks(ctx, ns, "app")() {
				if v == "v3" {
					on = append(on, cluster)
				}
			}
			if len(on) == 1 {
				first = on[0]
			}
			return on
		}).Should(HaveLen(1))
		cliRolloutReport(ctx, ns, "app", "v3", workState{applied: true, degraded: true}, first)
		Eventually(status).WithTimeout(time.Minute).Should(Receive(&res))
		Expect(res.Code).To(Equal(1))
		Expect(res.Stderr).To(ContainSubstring(fmt.Sprintf("the rollout of ManifestWorkReplicaSet %s/app stopped because clusters failed:\n  cluster %s: Degraded", ns, first)))
		Expect(res.Stderr).To(ContainSubstring("go back with flotilla rollout undo app -n " + ns))
		res = onHub(ctx, "rollout", "undo", "app", "-n", ns)
		Expect(res.Code).To(Equal(0), res.Stderr)
		Expect(res.Stdout).To(ContainSubstring("rolled back to revision 3"))
		cliRolloutReport(ctx, ns, "app", "v1", healthy, c1, c2, c3)
		res = onHub(ctx, "rollout", "status", "app", "-n", ns, "--timeout", "1m")
		Expect(res.Code).To(Equal(0), res.Stderr)
	})

	It("fails rollout status with the reason when the hub rolls a failed revision back, and history says why", func(ctx SpecContext) {
		ns, c1, c2, c3 := rolloutClusters(ctx, "cli-rollback")
		createReplicaSet(ctx, ns, "app", "v1", placementRef("prod", progressive(workv1alpha1.RolloutConfig{ProgressDeadline: "10m"})))
		Eventually(func() error {
			rs := getReplicaSet(ctx, ns, "app")
			rs.Spec.Rollback = &workv1alpha1.RollbackPolicy{FailedClusters: intstr.FromInt32(1)}
			return hubCP.Client.Update(ctx, rs)
		}).Should(Succeed())
		cliRolloutReport(ctx, ns, "app", "v1", healthy, c1, c2, c3)
		res := onHub(ctx, "rollout", "status", "app", "-n", ns, "--timeout", "1m")
		Expect(res.Code).To(Equal(0), res.Stderr)
		Eventually(func() string { return onHub(ctx, "rollout", "history", "app", "-n", ns).Stdout }).Should(MatchRegexp(`(?m)^1\s.*current, complete\s`))
		works := map[string]workv1.ManifestWork{}
		for _, c := range []string{c1, c2, c3} {
			w := &workv1.ManifestWork{}
			Expect(hubCP.Client.Get(ctx, client.ObjectKey{Namespace: c, Name: "app"}, w)).To(Succeed())
			works[c] = *w
		}

		By("revision 2 failing on the first cluster it reaches")
		setTemplateVersion(ctx, ns, "app", "v2")
		status := cliRolloutInBackground(ctx, "rollout", "status", "app", "-n", ns, "--timeout", "2m")
		var first string
		Eventually(func() []string {
			var on []string
			for cluster, v := range replicaSetWorks(ctx, ns, "app")() {
				if v == "v2" {
					on = append(on, cluster)
				}
			}
			if len(on) == 1 {
				first = on[0]
			}
			return on
		}).Should(HaveLen(1))
		cliRolloutReport(ctx, ns, "app", "v2", workState{applied: true, degraded: true}, first)

		By("the hub moving that cluster back to revision 1, and rollout status waiting until it is back")
		cliRolloutReport(ctx, ns, "app", "v1", healthy, first)
		var out cliResult
		Eventually(status).WithTimeout(time.Minute).Should(Receive(&out))
		Expect(out.Code).To(Equal(1), out.Stdout)
		Expect(out.Stderr).To(ContainSubstring(fmt.Sprintf("the current revision of ManifestWorkReplicaSet %s/app failed, and the hub rolled it back: ", ns)))
		Expect(out.Stderr).To(ContainSubstring("rollout undo app -n " + ns))
		Expect(out.Stdout).To(ContainSubstring(fmt.Sprintf("Rollout of %s/app: %s: ", ns, workv1alpha1.ReasonRolledBack)))
		Expect(out.Stdout).To(ContainSubstring("Cluster " + first + ": revision 1: applied and available"))
		for _, c := range []string{c1, c2, c3} {
			w := &workv1.ManifestWork{}
			Expect(hubCP.Client.Get(ctx, client.ObjectKey{Namespace: c, Name: "app"}, w)).To(Succeed())
			Expect(workVersion(*w)).To(Equal("v1"))
			if c != first {
				Expect(w.ResourceVersion).To(Equal(works[c].ResourceVersion), "cluster %s never took revision 2, yet its work was written", c)
			}
		}

		By("history saying revision 2 failed and was rolled back, and why")
		res = onHub(ctx, "rollout", "history", "app", "-n", ns)
		Expect(res.Code).To(Equal(0), res.Stderr)
		Expect(res.Stdout).To(MatchRegexp(`(?m)^1\s+\S+ ago\s+\S+\s+3\s+complete\s`))
		Expect(res.Stdout).To(MatchRegexp(`(?m)^2\s+\S+ ago\s+\S+\s+0\s+current, failed, rolled back\s`))
		Expect(res.Stdout).To(ContainSubstring("RolledBack: RolledBack: "))
		res = onHub(ctx, "rollout", "history", "app", "-n", ns, "--revision", "2")
		Expect(res.Code).To(Equal(0), res.Stderr)
		Expect(res.Stdout).To(MatchRegexp(`(?m)^Failed:\s+.*` + regexp.QuoteMeta(first)))
		res = onHub(ctx, "rollout", "status", "app", "-n", ns, "--watch=false")
		Expect(res.Code).To(Equal(1))
		Expect(res.Stderr).To(ContainSubstring("failed, and the hub rolled it back"))
	})

	It("needs to read the revisions to undo, and records who undid", func(ctx SpecContext) {
		ns, _, _, _ := rolloutClusters(ctx, "cli-rollout-rbac")
		createReplicaSet(ctx, ns, "app", "v1", placementRef("prod", progressive(workv1alpha1.RolloutConfig{ProgressDeadline: "10m"})))
		Eventually(cliRolloutRevisionNames(ctx, ns, "app")).Should(HaveLen(1))
		setTemplateVersion(ctx, ns, "app", "v2")
		Eventually(cliRolloutRevisionNames(ctx, ns, "app")).Should(HaveLen(2))
		sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "release"}}
		Expect(hubCP.Client.Create(ctx, sa)).To(Succeed())
		kubeconfig := serviceAccountKubeconfig(ctx, hubCP, ns, "release")
		subject := rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: "release"}
		// What undo reads and writes, except the revisions.
		grant(ctx, subject,
			rbacv1.PolicyRule{APIGroups: []string{workv1alpha1.GroupName}, Resources: []string{"manifestworkreplicasets"}, Verbs: []string{"get", "update"}},
			rbacv1.PolicyRule{APIGroups: []string{workv1.GroupName}, Resources: []string{"manifestworks"}, Verbs: []string{"list"}})

		By("refusing to undo without reading the revisions, writing nothing")
		generation := getReplicaSet(ctx, ns, "app").Generation
		res := flotilla(ctx, "rollout", "undo", "app", "-n", ns, "--kubeconfig", kubeconfig)
		Expect(res.Code).To(Equal(1))
		Expect(res.Stderr).To(ContainSubstring("list the ControllerRevisions of ManifestWorkReplicaSet " + ns + "/app"))
		Expect(res.Stderr).To(ContainSubstring("forbidden"))
		Expect(getReplicaSet(ctx, ns, "app").Generation).To(Equal(generation))

		By("undoing once it may list them, as the user the hub records")
		grant(ctx, subject, rbacv1.PolicyRule{APIGroups: []string{appsv1.GroupName}, Resources: []string{"controllerrevisions"}, Verbs: []string{"list"}})
		res = flotilla(ctx, "rollout", "undo", "app", "-n", ns, "--kubeconfig", kubeconfig)
		Expect(res.Code).To(Equal(0), res.Stderr)
		Expect(res.Stdout).To(ContainSubstring("rolled back to revision 1"))
		Expect(getReplicaSet(ctx, ns, "app").Annotations).To(HaveKeyWithValue(workv1alpha1.ChangedByAnnotation, "system:serviceaccount:"+ns+":release"))
	})
})
