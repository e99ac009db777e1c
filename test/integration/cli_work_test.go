package integration

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
)

// newAcceptedCluster creates an accepted cluster, waits until the hub has made
// its namespace, and removes it when the spec ends.
func newAcceptedCluster(ctx SpecContext, prefix string) string {
	GinkgoHelper()
	name := newClusterName(prefix)
	createCluster(ctx, name)
	acceptCluster(ctx, name)
	return name
}

// writeSpecFile writes content to a new file of the spec and returns its path.
func writeSpecFile(name, content string) string {
	GinkgoHelper()
	path := filepath.Join(GinkgoT().TempDir(), name)
	Expect(os.WriteFile(path, []byte(content), 0o600)).To(Succeed())
	return path
}

// readHubWork reads a ManifestWork from the hub.
func readHubWork(ctx context.Context, cluster, name string) *workv1.ManifestWork {
	GinkgoHelper()
	mw := &workv1.ManifestWork{}
	Expect(hubCP.Client.Get(ctx, client.ObjectKey{Namespace: cluster, Name: name}, mw)).To(Succeed())
	return mw
}

// manifestsJSON is a work's manifests as compact JSON strings.
func manifestsJSON(mw *workv1.ManifestWork) []string {
	var out []string
	for _, m := range mw.Spec.Workload.Manifests {
		out = append(out, string(m.Raw))
	}
	return out
}

// reportStatus writes a ManifestWork's status as the cluster's agent does.
func reportStatus(ctx context.Context, cluster, name string, status workv1.ManifestWorkStatus) {
	GinkgoHelper()
	Eventually(func() error {
		mw := readHubWork(ctx, cluster, name)
		mw.Status = status
		return hubCP.Client.Status().Update(ctx, mw)
	}).Should(Succeed())
}

const twoManifests = `# what app needs
apiVersion: v1
kind: Namespace
metadata:
  name: app
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  namespace: app
data:
  mode: fast
`

var _ = Describe("CLI create work", func() {
	It("wraps plain manifests into a ManifestWork on every cluster, and replaces it only with --overwrite", func(ctx SpecContext) {
		c1, c2 := newAcceptedCluster(ctx, "cw"), newAcceptedCluster(ctx, "cw")
		file := writeSpecFile("app.yaml", twoManifests)

		res := onHub(ctx, "create", "work", "app", "-f", file, "--clusters", c1+","+c2)
		Expect(res.Code).To(Equal(0), res.Stderr)
		Expect(res.Stdout).To(Equal("ManifestWork app created in cluster " + c1 + " (2 manifests)\nManifestWork app created in cluster " + c2 + " (2 manifests)\n"))
		Expect(res.Stderr).To(ContainSubstring("flotilla get works app"))
		for _, c := range []string{c1, c2} {
			Expect(manifestsJSON(readHubWork(ctx, c, "app"))).To(Equal([]string{
				`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"app"}}`,
				`{"apiVersion":"v1","data":{"mode":"fast"},"kind":"ConfigMap","metadata":{"name":"settings","namespace":"app"}}`,
			}))
		}

		By("refusing to replace an existing work without --overwrite, creating nothing")
		c3 := newAcceptedCluster(ctx, "cw")
		res = onHub(ctx, "create", "work", "app", "-f", file, "--clusters", c3+","+c1)
		Expect(res.Code).To(Equal(1))
		Expect(res.Stderr).To(ContainSubstring("Error: nothing was created:\n  ManifestWork app already exists in cluster " + c1 + ": pass --overwrite to replace its spec, or delete it first (flotilla delete work app --clusters " + c1 + ")"))
		Expect(exists(ctx, &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: c3, Name: "app"}})()).To(BeFalse())

		By("replacing the spec with --overwrite, keeping the work's other labels")
		mw := readHubWork(ctx, c1, "app")
		mw.Labels = map[string]string{"team": "a"}
		Expect(hubCP.Client.Update(ctx, mw)).To(Succeed())
		one := writeSpecFile("one.yaml", "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: other\n")
		res = onHub(ctx, "create", "work", "app", "-f", one, "--clusters", c1+","+c3, "--overwrite")
		Expect(res.Code).To(Equal(0), res.Stderr)
		Expect(res.Stdout).To(Equal("ManifestWork app replaced in cluster " + c1 + " (1 manifest)\nManifestWork app created in cluster " + c3 + " (1 manifest)\n"))
		replaced := readHubWork(ctx, c1, "app")
		Expect(manifestsJSON(replaced)).To(Equal([]string{`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"other"}}`}))
		Expect(replaced.Labels).To(HaveKeyWithValue("team", "a"))
	})

	It("uses the spec of a ManifestWork file as it is, under the given name", func(ctx SpecContext) {
		c := newAcceptedCluster(ctx, "cw")
		example := filepath.Join("..", "..", "..", "shared", "examples", "manifestwork-hello.yaml")
		res := onHub(ctx, "create", "work", "hello", "-f", example, "--clusters", c)
		Expect(res.Code).To(Equal(0), res.Stderr)
		Expect(res.Stdout).To(Equal("ManifestWork hello created in cluster " + c + " (1 manifest)\n"))

		data, err := os.ReadFile(example)
		Expect(err).NotTo(HaveOccurred())
		want := &workv1.ManifestWork{}
		Expect(yaml.Unmarshal(data, want)).To(Succeed())
		got := readHubWork(ctx, c, "hello")
		Expect(got.Namespace).To(Equal(c))
		Expect(manifestsJSON(got)).To(HaveLen(1))
		var gotObj, wantObj map[string]any
		Expect(json.Unmarshal(got.Spec.Workload.Manifests[0].Raw, &gotObj)).To(Succeed())
		Expect(json.Unmarshal(want.Spec.Workload.Manifests[0].Raw, &wantObj)).To(Succeed())
		Expect(gotObj).To(Equal(wantObj))
	})

	It("with --wait, waits until every cluster reports the work Applied and Available, and says what is missing on timeout", func(ctx SpecContext) {
		c1, c2 := newAcceptedCluster(ctx, "cw"), newAcceptedCluster(ctx, "cw")
		file := writeSpecFile("app.yaml", twoManifests)
		applied := metav1.Condition{Type: workv1.WorkApplied, Status: metav1.ConditionTrue, Reason: "AppliedManifestWorkComplete", ObservedGeneration: 1, LastTransitionTime: metav1.Now()}
		available := metav1.Condition{Type: workv1.WorkAvailable, Status: metav1.ConditionTrue, Reason: "ResourcesAvailable", ObservedGeneration: 1, LastTransitionTime: metav1.Now()}

		done := make(chan cliResult, 1)
		go func() {
			defer GinkgoRecover()
			done <- onHub(ctx, "create", "work", "app", "-f", file, "--clusters", c1+","+c2, "--wait", "--timeout", "60s")
		}()
		for _, c := range []string{c1, c2} {
			Eventually(exists(ctx, &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: c, Name: "app"}})).Should(BeTrue())
		}
		By("writing status as the agents would: first Applied on one cluster, then everything")
		reportStatus(ctx, c1, "app", workv1.ManifestWorkStatus{Conditions: []metav1.Condition{applied}})
		Consistently(done, "1500ms").ShouldNot(Receive())
		reportStatus(ctx, c1, "app", workv1.ManifestWorkStatus{Conditions: []metav1.Condition{applied, available}})
		reportStatus(ctx, c2, "app", workv1.ManifestWorkStatus{Conditions: []metav1.Condition{applied, available}})
		var res cliResult
		Eventually(done, "30s").Should(Receive(&res))
		Expect(res.Code).To(Equal(0), res.Stderr)
		Expect(res.Stdout).To(Equal("ManifestWork app created in cluster " + c1 + " (2 manifests)\nManifestWork app created in cluster " + c2 + " (2 manifests)\n"))
		Expect(res.Stderr).To(ContainSubstring("Waiting for ManifestWork app in cluster " + c1 + ": its agent has not reported it Applied yet"))
		Expect(res.Stderr).To(ContainSubstring("Waiting for ManifestWork app in cluster " + c1 + ": its agent has not reported it Available yet\n"))
		Expect(res.Stderr).To(ContainSubstring("ManifestWork app is applied and available in cluster " + c1 + ".\n"))
		Expect(res.Stderr).To(ContainSubstring("ManifestWork app is applied and available in cluster " + c2 + ".\n"))
		Expect(strings.Count(res.Stderr, "Waiting for ManifestWork app in cluster "+c1+": its agent has not reported it Applied yet")).To(Equal(1), "one line per change")

		By("timing out, naming what each cluster still lacks")
		c3 := newAcceptedCluster(ctx, "cw")
		res = onHub(ctx, "create", "work", "late", "-f", file, "--clusters", c3, "--wait", "--timeout", "2s")
		Expect(res.Code).To(Equal(1))
		Expect(res.Stderr).To(ContainSubstring("Error: timed out after --timeout 2s waiting for ManifestWork late:\n  cluster " + c3 + ": its agent has not reported it Applied yet (does the agent of cluster " + c3 + " run? see `flotilla describe cluster " + c3 + "` and the agent's log); its agent has not reported it Available yet\n"))
	})

	It("names every cluster that is missing or not accepted, and creates nothing", func(ctx SpecContext) {
		good := newAcceptedCluster(ctx, "cw")
		pending := newClusterName("cw")
		createCluster(ctx, pending)
		missing := newClusterName("cw")
		file := writeSpecFile("app.yaml", twoManifests)

		res := onHub(ctx, "create", "work", "app", "-f", file, "--clusters", strings.Join([]string{good, pending, missing}, ","))
		Expect(res.Code).To(Equal(1))
		Expect(res.Stderr).To(Equal("Error: nothing was created:\n" +
			"  cluster " + pending + " is not accepted, so its agent could not read the work: accept it first (flotilla accept --clusters " + pending + ")\n" +
			"  cluster " + missing + " does not exist on the hub (see `flotilla get clusters` for the names)\n"))
		Expect(exists(ctx, &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: good, Name: "app"}})()).To(BeFalse())
	})

	It("names the document the hub would refuse, before sending anything", func(ctx SpecContext) {
		c := newAcceptedCluster(ctx, "cw")
		file := writeSpecFile("bad.yaml", twoManifests+"---\napiVersion: v1\nkind: Secret\nmetadata:\n  generateName: s-\n")
		res := onHub(ctx, "create", "work", "bad", "-f", file, "--clusters", c)
		Expect(res.Code).To(Equal(1))
		Expect(res.Stderr).To(Equal("Error: the hub would refuse this work: document 3 of " + file + " (Secret) has no metadata.name: every manifest must name the object it applies (generateName is not supported)\n"))
	})
})

var _ = Describe("CLI get works", func() {
	It("shows each work with its manifests' conditions, status feedback and drift, as text, wide, JSON and YAML", func(ctx SpecContext) {
		c := newAcceptedCluster(ctx, "gw")
		example := filepath.Join("..", "..", "..", "shared", "examples", "manifestwork-hello.yaml")
		Expect(onHub(ctx, "create", "work", "hello", "-f", example, "--clusters", c).Code).To(Equal(0))

		By("showing the manifests of the spec before the agent reports")
		res := onHub(ctx, "get", "works", "--cluster", c)
		Expect(res.Code).To(Equal(0), res.Stderr)
		lines := strings.Split(strings.TrimRight(res.Stdout, "\n"), "\n")
		Expect(lines).To(HaveLen(3))
		Expect(lines[0]).To(MatchRegexp(`^NAME\s+APPLIED\s+AVAILABLE\s+DEGRADED\s+DETAILS\s+AGE$`))
		Expect(lines[1]).To(MatchRegexp(`^hello\s+-\s+-\s+-\s+1 manifest, not reported by the cluster's agent yet\s+\d+s$`))
		Expect(lines[2]).To(MatchRegexp(`^  Deployment default/hello\s+-\s+-\s+-\s+<none>$`))

		By("showing what the agent reported")
		now := metav1.Now()
		ok := func(t, reason string) metav1.Condition {
			return metav1.Condition{Type: t, Status: metav1.ConditionTrue, Reason: reason, Message: "set by the test", LastTransitionTime: now}
		}
		reportStatus(ctx, c, "hello", workv1.ManifestWorkStatus{
			Conditions: []metav1.Condition{ok(workv1.WorkApplied, workv1.ReasonAppliedManifestWorkComplete), ok(workv1.WorkAvailable, workv1.ReasonResourcesAvailable)},
			ResourceStatus: workv1.ManifestResourceStatus{Manifests: []workv1.ManifestCondition{{
				ResourceMeta: workv1.ManifestResourceMeta{Ordinal: 0, Group: "apps", Version: "v1", Kind: "Deployment", Resource: "deployments", Namespace: "default", Name: "hello"},
				StatusFeedback: workv1.StatusFeedbackResult{Values: []workv1.FeedbackValue{
					{Name: "ReadyReplicas", Value: workv1.FieldValue{Type: workv1.Integer, Integer: ptr.To[int64](1)}},
					{Name: "Replicas", Value: workv1.FieldValue{Type: workv1.Integer, Integer: ptr.To[int64](1)}},
					{Name: "AvailableReplicas", Value: workv1.FieldValue{Type: workv1.Integer, Integer: ptr.To[int64](1)}},
				}},
				Conditions: []metav1.Condition{
					ok(workv1.ManifestApplied, workv1.ReasonAppliedManifestComplete),
					ok(workv1.ManifestAvailable, workv1.ReasonResourceAvailable),
					ok(workv1.ManifestStatusFeedbackSynced, workv1.ReasonStatusFeedbackSynced),
				},
				Drift: &workv1.ManifestDrift{Corrections: 3, LastCorrectedTime: now, Fields: []string{"spec"}},
			}}},
		})
		res = onHub(ctx, "get", "works", "hello", "--cluster", c)
		Expect(res.Code).To(Equal(0), res.Stderr)
		lines = strings.Split(strings.TrimRight(res.Stdout, "\n"), "\n")
		Expect(lines).To(HaveLen(3))
		Expect(lines[1]).To(MatchRegexp(`^hello\s+True\s+True\s+-\s+1 manifest, drift corrected 3 times\s+\d+s$`))
		Expect(lines[2]).To(MatchRegexp(`^  Deployment default/hello\s+True\s+True\s+-\s+ReadyReplicas=1 Replicas=1 AvailableReplicas=1 drift corrected 3 times$`))

		res = onHub(ctx, "get", "works", "hello", "--cluster", c, "-o", "wide")
		Expect(res.Code).To(Equal(0), res.Stderr)
		Expect(res.Stdout).To(MatchRegexp(`NAME\s+APPLIED\s+AVAILABLE\s+DEGRADED\s+PROGRESSING\s+DETAILS\s+MESSAGE\s+AGE`))
		Expect(res.Stdout).To(MatchRegexp(`  apps/v1 Deployment default/hello\s+True\s+True\s+-\s+-\s+ReadyReplicas=1 Replicas=1 AvailableReplicas=1 drift corrected 3 times \(last \d+s ago: spec\)\s+<none>`))

		By("listing the works of every cluster, with their cluster")
		res = onHub(ctx, "get", "works", "hello")
		Expect(res.Code).To(Equal(0), res.Stderr)
		Expect(res.Stdout).To(MatchRegexp(`CLUSTER\s+NAME\s+APPLIED`))
		Expect(res.Stdout).To(MatchRegexp(c + `\s+hello\s+True\s+True`))

		By("printing the objects as JSON and YAML")
		res = onHub(ctx, "get", "works", "--cluster", c, "-o", "json")
		Expect(res.Code).To(Equal(0), res.Stderr)
		list := workv1.ManifestWorkList{}
		Expect(json.Unmarshal([]byte(res.Stdout), &list)).To(Succeed())
		Expect(list.Kind).To(Equal("ManifestWorkList"))
		Expect(list.Items).To(ConsistOf(And(HaveField("Name", "hello"), HaveField("Kind", "ManifestWork"), HaveField("ManagedFields", BeNil()))))
		Expect(meta.IsStatusConditionTrue(list.Items[0].Status.Conditions, workv1.WorkApplied)).To(BeTrue())
		res = onHub(ctx, "get", "works", "hello", "--cluster", c, "-o", "yaml")
		Expect(res.Code).To(Equal(0), res.Stderr)
		Expect(res.Stdout).To(ContainSubstring("apiVersion: work.open-cluster-management.io/v1"))
		Expect(res.Stdout).To(ContainSubstring("corrections: 3"))

		By("saying when there is nothing to show")
		res = onHub(ctx, "get", "works", "missing", "--cluster", c)
		Expect(res.Code).To(Equal(1))
		Expect(res.Stderr).To(Equal("Error: ManifestWork missing not found in cluster " + c + " (see `flotilla get works --clusters " + c + "`)\n"))
		res = onHub(ctx, "get", "works", "--cluster", "no-such-cluster")
		Expect(res.Code).To(Equal(1))
		Expect(res.Stderr).To(ContainSubstring("cluster no-such-cluster does not exist on the hub"))
		empty := newAcceptedCluster(ctx, "gw")
		res = onHub(ctx, "get", "works", "--cluster", empty)
		Expect(res.Code).To(Equal(0), res.Stderr)
		Expect(res.Stdout).To(BeEmpty())
		Expect(res.Stderr).To(ContainSubstring("No ManifestWorks in cluster " + empty))
	})
})

var _ = Describe("CLI delete work", func() {
	It("deletes a work, and with --wait waits until its agent released it", func(ctx SpecContext) {
		c := newAcceptedCluster(ctx, "dw")
		file := writeSpecFile("app.yaml", twoManifests)
		Expect(onHub(ctx, "create", "work", "app", "-f", file, "--clusters", c).Code).To(Equal(0))
		Expect(onHub(ctx, "create", "work", "other", "-f", file, "--clusters", c).Code).To(Equal(0))

		By("deleting a work no agent holds at once")
		res := onHub(ctx, "delete", "work", "other", "--cluster", c)
		Expect(res.Code).To(Equal(0), res.Stderr)
		Expect(res.Stdout).To(ContainSubstring("ManifestWork other of cluster " + c + " is marked for deletion"))
		Eventually(exists(ctx, &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: c, Name: "other"}})).Should(BeFalse())

		By("waiting while the agent's finalizer holds the work, saying the cluster is unavailable")
		mw := readHubWork(ctx, c, "app")
		mw.Finalizers = []string{workv1.ManifestWorkFinalizer}
		Expect(hubCP.Client.Update(ctx, mw)).To(Succeed())
		res = onHub(ctx, "delete", "work", "app", "--cluster", c, "--wait", "--timeout", "2s")
		Expect(res.Code).To(Equal(1))
		Expect(res.Stderr).To(ContainSubstring("Waiting for ManifestWork app of cluster " + c + " to go: cluster " + c + " is not available (ManagedClusterConditionAvailable=Unknown)"))
		Expect(res.Stderr).To(ContainSubstring("Error: timed out after --timeout 2s waiting for ManifestWork app of cluster " + c + " to go"))
		Expect(res.Stderr).To(ContainSubstring("kubectl -n " + c + " patch manifestwork app --type merge -p '{\"metadata\":{\"finalizers\":null}}'"))

		By("returning once the agent removed its finalizer")
		setConditions(ctx, c, metav1.Condition{Type: clusterv1.ManagedClusterConditionAvailable, Status: metav1.ConditionTrue, Reason: clusterv1.ReasonManagedClusterAvailable})
		done := make(chan cliResult, 1)
		go func() {
			defer GinkgoRecover()
			done <- onHub(ctx, "delete", "work", "app", "--cluster", c, "--wait", "--timeout", "1m")
		}()
		Eventually(func() *metav1.Time { return readHubWork(ctx, c, "app").DeletionTimestamp }).ShouldNot(BeNil())
		Consistently(done, "1500ms").ShouldNot(Receive())
		Eventually(func() error {
			mw := readHubWork(ctx, c, "app")
			mw.Finalizers = nil
			return hubCP.Client.Update(ctx, mw)
		}).Should(Succeed())
		Eventually(done, time.Minute).Should(Receive(SatisfyAll(
			HaveField("Code", 0),
			HaveField("Stdout", "ManifestWork app of cluster "+c+" is deleted, with what it applied.\n"),
			HaveField("Stderr", ContainSubstring("the agent of cluster "+c+" is removing what the work applied")),
		)))

		By("naming what is not there")
		res = onHub(ctx, "delete", "work", "app", "--cluster", c)
		Expect(res.Code).To(Equal(1))
		Expect(res.Stderr).To(Equal("Error: ManifestWork app not found in cluster " + c + " (see `flotilla get works --clusters " + c + "`)\n"))
		res = onHub(ctx, "delete", "work", "app", "--cluster", "no-such-cluster")
		Expect(res.Code).To(Equal(1))
		Expect(res.Stderr).To(ContainSubstring("cluster no-such-cluster does not exist on the hub"))
	})
})
