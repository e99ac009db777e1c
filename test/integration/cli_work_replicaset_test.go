package integration

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
)

const helloDeployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: hello
  namespace: default
spec:
  replicas: 3
  selector:
    matchLabels: {app: hello}
  template:
    metadata:
      labels: {app: hello}
    spec:
      containers:
        - name: hello
          image: busybox:1.36
`

// replicaSetWork is the ManifestWork of replica set ns/name in cluster, or nil.
func replicaSetWork(ctx context.Context, cluster, ns, name string) *workv1.ManifestWork {
	GinkgoHelper()
	list := &workv1.ManifestWorkList{}
	Expect(hubCP.Client.List(ctx, list, client.InNamespace(cluster), client.MatchingLabels{workv1.ManifestWorkReplicaSetLabel: ns + "." + name})).To(Succeed())
	if len(list.Items) == 0 {
		return nil
	}
	return &list.Items[0]
}

// deploymentOf decodes the Deployment manifest of a work: replicas and image.
func deploymentOf(w *workv1.ManifestWork) (replicas int, image string) {
	GinkgoHelper()
	var d struct {
		Spec struct {
			Replicas int `json:"replicas"`
			Template struct {
				Spec struct {
					Containers []struct{ Image string } `json:"containers"`
				} `json:"spec"`
			} `json:"template"`
		} `json:"spec"`
	}
	Expect(json.Unmarshal(w.Spec.Workload.Manifests[0].Raw, &d)).To(Succeed())
	return d.Spec.Replicas, d.Spec.Template.Spec.Containers[0].Image
}

// readHubWorkSpec is a ManifestWork spec of the one manifest of a YAML file.
func readHubWorkSpec(path string) workv1.ManifestWorkSpec {
	GinkgoHelper()
	data, err := os.ReadFile(path)
	Expect(err).NotTo(HaveOccurred())
	raw, err := yaml.YAMLToJSON(data)
	Expect(err).NotTo(HaveOccurred())
	var spec workv1.ManifestWorkSpec
	spec.Workload.Manifests = []workv1.Manifest{{RawExtension: runtime.RawExtension{Raw: raw}}}
	return spec
}

// rolledOutFirst waits until one of clusters a and b has the work of
// replica set ns/name, and returns that one and the other, which must not
// have it: the order of a progressive rollout is the hub's to choose.
func rolledOutFirst(ctx context.Context, ns, name, a, b string) (first, second string) {
	GinkgoHelper()
	Eventually(func() bool {
		return replicaSetWork(ctx, a, ns, name) != nil || replicaSetWork(ctx, b, ns, name) != nil
	}).Should(BeTrue())
	first, second = a, b
	if replicaSetWork(ctx, a, ns, name) == nil {
		first, second = b, a
	}
	Expect(replicaSetWork(ctx, second, ns, name)).To(BeNil(), "both clusters got the work at once")
	return first, second
}

var _ = Describe("CLI ManifestWorkReplicaSet", func() {
	It("creates a replica set over a Placement from flags, and shows its rollout cluster by cluster", func(ctx SpecContext) {
		set, ns := newSetWithNamespace(ctx, "cli-mwrs")
		a, b, dev := newClusterName("cli-mwrs-a"), newClusterName("cli-mwrs-b"), newClusterName("cli-mwrs-dev")
		createPolicyMember(ctx, a, set, map[string]string{"env": "prod"})
		createPolicyMember(ctx, b, set, map[string]string{"env": "prod"})
		createPolicyMember(ctx, dev, set, map[string]string{"env": "dev"})
		Expect(onHub(ctx, "create", "placement", "web", "-n", ns, "--label-selectors", "env=prod", "--wait").Code).To(Equal(0))
		Eventually(chosen(ctx, ns, "web")).Should(ConsistOf(a, b))
		file := writeSpecFile("hello.yaml", helloDeployment)

		By("refusing a Placement that does not exist, writing nothing")
		res := onHub(ctx, "create", "work", "hello", "-f", file, "--placement", ns+"/nope")
		Expect(res.Code).To(Equal(1))
		Expect(res.Stderr).To(ContainSubstring("nothing was created: Placement nope does not exist in namespace " + ns))

		By("refusing a division the hub could not apply, writing nothing")
		configMap := writeSpecFile("settings.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: default}\n")
		res = onHub(ctx, "create", "work", "settings", "-f", configMap, "--placement", ns+"/web", "--replicas", "3")
		Expect(res.Code).To(Equal(1))
		Expect(res.Stderr).To(ContainSubstring("nothing was created: the hub could not roll out ManifestWorkReplicaSet " + ns + "/settings as written, for the clusters its Placements choose now ("))
		Expect(res.Stderr).To(ContainSubstring("spec.replicas"))
		Expect(hubCP.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "settings"}, &workv1alpha1.ManifestWorkReplicaSet{})).NotTo(Succeed())

		By("refusing a name that a ManifestWork of a chosen cluster already has")
		Expect(hubCP.Client.Create(ctx, &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: b, Name: "taken"},
			Spec: readHubWorkSpec(configMap)})).To(Succeed())
		res = onHub(ctx, "create", "work", "taken", "-f", file, "--placement", ns+"/web")
		Expect(res.Code).To(Equal(1))
		Expect(res.Stderr).To(ContainSubstring("nothing was created: clusters " + b + " already have a ManifestWork named taken that is not this replica set's"))
		Expect(hubCP.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "taken"}, &workv1alpha1.ManifestWorkReplicaSet{})).NotTo(Succeed())

		By("creating it: progressive, one cluster at a time, 3 replicas divided 2:1, another image on b")
		res = onHub(ctx, "create", "work", "hello", "-f", file, "--placement", ns+"/web", "--rollout", "Progressive", "--max-concurrency", "1",
			"--progress-deadline", "10m", "--replicas", "3", "--weight", a+"=2", "--image", b+"=registry.eu.example.com/hello:2")
		Expect(res.Code).To(Equal(0), res.Stderr)
		Expect(res.Stdout).To(Equal("ManifestWorkReplicaSet hello created in namespace " + ns +
			": Placement web (rollout Progressive, 1 at a time, deadline 10m, max failures 0), 1 manifest, 1 override, 3 replicas divided by weight (" + a + "=2, others 1)\n"))
		rs := &workv1alpha1.ManifestWorkReplicaSet{}
		Expect(hubCP.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "hello"}, rs)).To(Succeed())
		Expect(rs.Spec.PlacementRefs).To(HaveExactElements(HaveField("Name", "web")))
		Expect(rs.Spec.PlacementRefs[0].RolloutStrategy.Progressive.MaxConcurrency).To(Equal(intstr.FromInt32(1)))
		Expect(rs.Spec.Overrides).To(HaveExactElements(And(HaveField("ClusterNames", []string{b}),
			HaveField("Images", HaveExactElements(HaveField("Image", "registry.eu.example.com/hello:2"))))))
		Expect(*rs.Spec.ReplicaDivision.TotalReplicas).To(BeEquivalentTo(3))

		By("rolling out to one cluster only, with its share of the replicas and its image")
		type runs struct {
			replicas int
			image    string
		}
		want := map[string]runs{a: {2, "busybox:1.36"}, b: {1, "registry.eu.example.com/hello:2"}}
		first, second := rolledOutFirst(ctx, ns, "hello", a, b)
		w := replicaSetWork(ctx, first, ns, "hello")
		replicas, image := deploymentOf(w)
		Expect(runs{replicas, image}).To(Equal(want[first]))
		Expect(replicaSetWork(ctx, dev, ns, "hello")).To(BeNil())
		Eventually(func(g Gomega) {
			res := onHub(ctx, "get", "works", "--replicasets", "-n", ns)
			g.Expect(res.Code).To(Equal(0))
			g.Expect(res.Stdout).To(MatchRegexp(`(?m)^NAMESPACE\s+NAME\s+PLACEMENTS\s+CLUSTERS\s+UPDATED\s+APPLIED\s+AVAILABLE\s+DEGRADED\s+ROLLOUT\s+AGE$`))
			g.Expect(res.Stdout).To(MatchRegexp(`(?m)^%s\s+hello\s+web\s+2\s+1\s+0\s+0\s+0\s+Progressing 0/2\s+\S+$`, ns))
		}).Should(Succeed())

		By("going on to the second cluster once the first reports it available")
		reportWork(ctx, first, w.Name, healthy)
		Eventually(func() *workv1.ManifestWork { return replicaSetWork(ctx, second, ns, "hello") }).ShouldNot(BeNil())
		w2 := replicaSetWork(ctx, second, ns, "hello")
		replicas, image = deploymentOf(w2)
		Expect(runs{replicas, image}).To(Equal(want[second]))
		res = onHub(ctx, "describe", "work", "hello", "-n", ns)
		Expect(res.Code).To(Equal(0), res.Stderr)
		Expect(res.Stdout).To(ContainSubstring("image-" + b + ": clusters " + b + ": every container image registry.eu.example.com/hello:2"))
		Expect(res.Stdout).To(MatchRegexp(`(?m)^\s+%s\s+web\s+Available\s+%d\s+%s\s+True\s+True\s+-$`, first, want[first].replicas, want[first].image))
		Expect(res.Stdout).To(MatchRegexp(`(?m)^\s+%s\s+web\s+Applying\s+%d\s+%s\s+-\s+-\s+its agent has not reported it Applied yet`, second, want[second].replicas, want[second].image))

		By("showing the rollout complete once both report it available")
		reportWork(ctx, second, w2.Name, healthy)
		Eventually(func(g Gomega) {
			res := onHub(ctx, "get", "works", "hello")
			g.Expect(res.Code).To(Equal(0))
			g.Expect(res.Stdout).To(MatchRegexp(`(?m)^%s\s+hello\s+web\s+2\s+2\s+2\s+2\s+0\s+Complete\s+\S+$`, ns))
			// The replica sets' table comes first, then each cluster's ManifestWork.
			g.Expect(res.Stdout).To(MatchRegexp(`(?m)^%s\s+hello\s+True\s+True\s+False\s+1 manifest`, first))
		}).Should(Succeed())
		res = onHub(ctx, "get", "works", "--replicasets", "-n", ns, "-o", "json")
		Expect(res.Code).To(Equal(0), res.Stderr)
		list := workv1alpha1.ManifestWorkReplicaSetList{}
		Expect(json.Unmarshal([]byte(res.Stdout), &list)).To(Succeed())
		Expect(list.Items).To(HaveExactElements(And(HaveField("Kind", "ManifestWorkReplicaSet"), HaveField("Status.Summary.Available", 2))))

		res = onHub(ctx, "describe", "work", "hello", "-n", ns, "-o", "json")
		Expect(res.Code).To(Equal(0), res.Stderr)
		var desc struct {
			Rollout  string `json:"rollout"`
			Clusters []struct {
				Cluster, State, Replicas, Images string
				ManifestWork                     *workv1.ManifestWork
			} `json:"clusters"`
		}
		Expect(json.Unmarshal([]byte(res.Stdout), &desc)).To(Succeed())
		Expect(desc.Rollout).To(Equal("Complete"))
		Expect(desc.Clusters).To(ConsistOf(
			And(HaveField("Cluster", a), HaveField("State", "Available"), HaveField("Replicas", "2"), HaveField("Images", "busybox:1.36"), HaveField("ManifestWork.Namespace", a)),
			And(HaveField("Cluster", b), HaveField("State", "Available"), HaveField("Replicas", "1"), HaveField("Images", "registry.eu.example.com/hello:2"))))

		By("refusing to replace it without --overwrite")
		res = onHub(ctx, "create", "work", "hello", "-f", file, "--placement", "web", "-n", ns)
		Expect(res.Code).To(Equal(1))
		Expect(res.Stderr).To(ContainSubstring("ManifestWorkReplicaSet hello already exists in namespace " + ns + ": pass --overwrite"))
	})

	It("waits for a rollout with --wait, and fails at once when the rollout stops on a failed cluster", func(ctx SpecContext) {
		set, ns := newSetWithNamespace(ctx, "cli-mwrs-wait")
		a, b := newClusterName("cli-mwrs-w"), newClusterName("cli-mwrs-w")
		createPolicyMember(ctx, a, set, map[string]string{"env": "prod"})
		createPolicyMember(ctx, b, set, map[string]string{"env": "prod"})
		Expect(onHub(ctx, "create", "placement", "web", "-n", ns, "--wait").Code).To(Equal(0))
		Eventually(chosen(ctx, ns, "web")).Should(ConsistOf(a, b))
		file := writeSpecFile("hello.yaml", helloDeployment)

		// The test plays both agents: the first reports the work degraded.
		done := make(chan cliResult)
		go func() {
			defer GinkgoRecover()
			done <- onHub(ctx, "create", "work", "hello", "-f", file, "--placement", ns+"/web", "--rollout", "Progressive",
				"--max-concurrency", "1", "--wait", "--timeout", "2m")
		}()
		first, second := rolledOutFirst(ctx, ns, "hello", a, b)
		reportWork(ctx, first, replicaSetWork(ctx, first, ns, "hello").Name, workState{applied: true, available: true, degraded: true})
		var res cliResult
		Eventually(done).WithTimeout(time.Minute).Should(Receive(&res))
		Expect(res.Code).To(Equal(1))
		Expect(res.Stderr).To(ContainSubstring("Cluster " + first + ": failed: Degraded"))
		Expect(res.Stderr).To(ContainSubstring("Cluster " + second + ": no ManifestWork yet: waiting for its turn in the rollout"))
		Expect(res.Stderr).To(ContainSubstring("the rollout of ManifestWorkReplicaSet " + ns + "/hello stopped because clusters failed:\n  cluster " + first + ": Degraded"))
		Expect(replicaSetWork(ctx, second, ns, "hello")).To(BeNil(), "the rollout went on past the failed cluster")
		Eventually(func() string {
			return onHub(ctx, "get", "works", "--replicasets", "-n", ns).Stdout
		}).Should(ContainSubstring("Stopped: " + first + " failed"))

		By("completing a wait when the agents report the fixed work available")
		go func() {
			defer GinkgoRecover()
			done <- onHub(ctx, "create", "work", "hello", "-f", file, "--placement", ns+"/web", "--rollout", "All", "--overwrite", "--wait", "--timeout", "2m")
		}()
		for _, cluster := range []string{first, second} {
			Eventually(func(g Gomega) {
				w := replicaSetWork(ctx, cluster, ns, "hello")
				g.Expect(w).NotTo(BeNil())
				rs := &workv1alpha1.ManifestWorkReplicaSet{}
				g.Expect(hubCP.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "hello"}, rs)).To(Succeed())
				g.Expect(rs.Spec.PlacementRefs[0].RolloutStrategy.Type).To(Equal(workv1alpha1.All))
				reportWork(ctx, cluster, w.Name, healthy)
			}).Should(Succeed())
		}
		Eventually(done).WithTimeout(time.Minute).Should(Receive(&res))
		Expect(res.Code).To(Equal(0), res.Stderr)
		Expect(res.Stdout).To(ContainSubstring("ManifestWorkReplicaSet hello replaced in namespace " + ns))
		Expect(res.Stderr).To(ContainSubstring("Rollout of " + ns + "/hello: Complete"))
		rs := &workv1alpha1.ManifestWorkReplicaSet{}
		Expect(hubCP.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "hello"}, rs)).To(Succeed())
		Expect(meta.IsStatusConditionTrue(rs.Status.Conditions, workv1alpha1.ManifestWorkReplicaSetConditionPlacementRolledOut)).To(BeTrue())
		Expect(strings.Count(res.Stderr, "applied and available")).To(Equal(2), res.Stderr)

		By("refusing to delete one cluster's work of the replica set, and deleting the replica set with all its works")
		res = onHub(ctx, "delete", "work", "hello", "--cluster", first)
		Expect(res.Code).To(Equal(1))
		Expect(res.Stderr).To(ContainSubstring("ManifestWork hello of cluster " + first + " belongs to ManifestWorkReplicaSet " + ns + "/hello, which would create it again: delete the replica set (flotilla delete work hello -n " + ns + ")"))
		Expect(replicaSetWork(ctx, first, ns, "hello")).NotTo(BeNil())
		res = onHub(ctx, "delete", "work", "hello", "-n", ns, "--wait", "--timeout", "1m")
		Expect(res.Code).To(Equal(0), res.Stderr)
		Expect(res.Stdout).To(Equal("ManifestWorkReplicaSet hello of namespace " + ns + " is deleted, with its ManifestWorks and what they applied.\n"))
		Expect(replicaSetWork(ctx, first, ns, "hello")).To(BeNil())
		Expect(replicaSetWork(ctx, second, ns, "hello")).To(BeNil())
		res = onHub(ctx, "delete", "work", "hello", "-n", ns)
		Expect(res.Code).To(Equal(1))
		Expect(res.Stderr).To(ContainSubstring("ManifestWorkReplicaSet hello not found in namespace " + ns))
	})

	It("fails a wait at once when clusters the Placement chooses later make the spec impossible to roll out", func(ctx SpecContext) {
		set, ns := newSetWithNamespace(ctx, "cli-mwrs-late")
		late := newClusterName("cli-mwrs-late")
		createPolicyMember(ctx, late, set, map[string]string{"env": "staging"})
		Expect(onHub(ctx, "create", "placement", "web", "-n", ns, "--label-selectors", "env=prod", "--wait").Code).To(Equal(0))
		// No cluster is chosen now, so nothing can be rendered yet; a
		// ConfigMap has no replicas to divide.
		configMap := writeSpecFile("settings.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: default}\n")
		done := make(chan cliResult)
		go func() {
			defer GinkgoRecover()
			done <- onHub(ctx, "create", "work", "settings", "-f", configMap, "--placement", ns+"/web", "--replicas", "2", "--wait", "--timeout", "2m")
		}()
		Eventually(func() error {
			return hubCP.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "settings"}, &workv1alpha1.ManifestWorkReplicaSet{})
		}).Should(Succeed())
		Expect(updateCluster(ctx, hubCP.Client, late, func(mc *clusterv1.ManagedCluster) { mc.Labels["env"] = "prod" })).To(Succeed())
		var res cliResult
		Eventually(done).WithTimeout(time.Minute).Should(Receive(&res))
		Expect(res.Code).To(Equal(1))
		Expect(res.Stderr).To(MatchRegexp(`ManifestWorkReplicaSet %s/settings cannot be rolled out as written: .*spec.replicas|the hub cannot roll out ManifestWorkReplicaSet %s/settings: .*spec.replicas`, ns, ns))
		Expect(replicaSetWork(ctx, late, ns, "settings")).To(BeNil())
	})
})
