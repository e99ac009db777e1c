package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
)

// webDeployment is the Deployment the rollout spec delivers, at an image tag.
func webDeployment(tag string) string {
	return `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: default
spec:
  replicas: 1
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
        - name: web
          image: nginx:` + tag + `
`
}

// webReplicaSetV2 is a ManifestWorkReplicaSet of the Deployment at tag 1.28,
// rolled out one cluster at a time, with an override that makes the
// Deployment invalid on cluster failing: its API server refuses it, so the
// agent reports the work not Applied, and the cluster fails after the
// progress deadline.
func webReplicaSetV2(failing string) string {
	var b strings.Builder
	b.WriteString(`apiVersion: work.open-cluster-management.io/v1alpha1
kind: ManifestWorkReplicaSet
metadata:
  name: web
  namespace: rollout
spec:
  placementRefs:
    - name: fleet
      rolloutStrategy:
        type: Progressive
        progressive: {maxConcurrency: 1, progressDeadline: 15s}
  overrides:
    - name: break-` + failing + `
      clusterNames: [` + failing + `]
      jsonPatch:
        - {op: replace, path: /spec/replicas, value: -1}
  manifestWorkTemplate:
    workload:
      manifests:
`)
	for i, line := range strings.Split(strings.TrimRight(webDeployment("1.28"), "\n"), "\n") {
		prefix := "          "
		if i == 0 {
			prefix = "        - "
		}
		b.WriteString(prefix + line + "\n")
	}
	return b.String()
}

// fleetWorks reads the ManifestWorks of replica set rollout/web by cluster.
func fleetWorks(ctx context.Context, hub client.Client) map[string]workv1.ManifestWork {
	GinkgoHelper()
	list := &workv1.ManifestWorkList{}
	Expect(hub.List(ctx, list, client.MatchingLabels{workv1.ManifestWorkReplicaSetLabel: "rollout.web"})).To(Succeed())
	out := map[string]workv1.ManifestWork{}
	for _, w := range list.Items {
		out[w.Namespace] = w
	}
	return out
}

// imageOf is the image of the Deployment a work carries.
func imageOf(w workv1.ManifestWork) string {
	GinkgoHelper()
	var d struct {
		Spec struct {
			Template struct {
				Spec struct {
					Containers []struct{ Image string } `json:"containers"`
				} `json:"spec"`
			} `json:"template"`
		} `json:"spec"`
	}
	Expect(json.Unmarshal(w.Spec.Workload.Manifests[0].Raw, &d)).To(Succeed())
	return d.Spec.Template.Spec.Containers[0].Image
}

// rolloutTime is when the hub last wrote a work's spec.
func rolloutTime(w workv1.ManifestWork) time.Time {
	GinkgoHelper()
	t, err := time.Parse(time.RFC3339, w.Annotations["work.flotilla.io/rollout-time"])
	Expect(err).NotTo(HaveOccurred(), "work %s/%s has no rollout-time annotation", w.Namespace, w.Name)
	return t
}

var _ = Describe("Progressive rollout of a ManifestWorkReplicaSet", func() {
	It("reaches three clusters one at a time, and stops at a cluster that fails: the next never gets the new spec", func(ctx SpecContext) {
		dir, hub, onHub := startSandbox(ctx, 3)

		By("choosing all three clusters with a Placement")
		Expect(onHub("clusterset", "bind", "global", "-n", "rollout").code).To(Equal(0))
		res := onHub("create", "placement", "fleet", "-n", "rollout", "--clustersets", "global", "--wait")
		Expect(res.code).To(Equal(0), res.stderr)
		Expect(res.stdout).To(ContainSubstring("Chosen clusters (3): "))

		By("rolling version 1.27 out one cluster at a time, waiting until it is complete")
		v1 := filepath.Join(GinkgoT().TempDir(), "web.yaml")
		Expect(os.WriteFile(v1, []byte(webDeployment("1.27")), 0o600)).To(Succeed())
		res = onHub("create", "work", "web", "-f", v1, "--placement", "rollout/fleet", "--rollout", "Progressive", "--max-concurrency", "1",
			"--progress-deadline", "2m", "--wait", "--timeout", "3m")
		Expect(res.code).To(Equal(0), res.stderr)
		Expect(res.stderr).To(ContainSubstring("Rollout of rollout/web: Complete"))
		works := fleetWorks(ctx, hub)
		Expect(works).To(HaveLen(3))
		// The hub wrote each work only once the one before it was available.
		order := []string{"cluster1", "cluster2", "cluster3"}
		slices.SortStableFunc(order, func(a, b string) int { return rolloutTime(works[a]).Compare(rolloutTime(works[b])) })
		for i := 1; i < len(order); i++ {
			prev := meta.FindStatusCondition(works[order[i-1]].Status.Conditions, workv1.WorkAvailable)
			Expect(prev).NotTo(BeNil())
			Expect(rolloutTime(works[order[i]])).NotTo(BeTemporally("<", prev.LastTransitionTime.Time.Truncate(time.Second)),
				"%s got the work before %s was available", order[i], order[i-1])
		}
		for _, c := range order {
			Expect(imageOf(works[c])).To(Equal("nginx:1.27"))
			Expect(res.stderr).To(ContainSubstring("Cluster " + c + ": applied and available"))
		}
		first, failing, last := order[0], order[1], order[2]

		By("rolling 1.28 out with an override that breaks the Deployment on " + failing)
		v2 := filepath.Join(GinkgoT().TempDir(), "web-v2.yaml")
		Expect(os.WriteFile(v2, []byte(webReplicaSetV2(failing)), 0o600)).To(Succeed())
		lastBefore := rolloutTime(works[last])
		res = onHub("create", "work", "web", "-f", v2, "--overwrite", "--wait", "--timeout", "3m")
		Expect(res.code).To(Equal(1), res.stderr)
		Expect(res.stdout).To(ContainSubstring("ManifestWorkReplicaSet web replaced in namespace rollout: Placement fleet (rollout Progressive, 1 at a time, deadline 15s, max failures 0), 1 manifest, 1 override"))
		Expect(res.stderr).To(ContainSubstring("the rollout of ManifestWorkReplicaSet rollout/web stopped because clusters failed:\n  cluster " + failing + ": not Available within progressDeadline 15s: Applied is False"))
		Expect(res.stderr).To(ContainSubstring("spec.replicas"))
		Expect(res.stderr).To(ContainSubstring("Cluster " + first + ": applied and available"))
		Expect(res.stderr).To(ContainSubstring("Cluster " + last + ": has the previous spec: waiting for its turn in the rollout"))

		By("leaving " + last + " on the old spec, as the hub objects and the CLI show")
		Eventually(func(g Gomega) {
			res := onHub("get", "works", "--replicasets", "-n", "rollout")
			g.Expect(res.code).To(Equal(0))
			g.Expect(res.stdout).To(MatchRegexp(`(?m)^rollout\s+web\s+fleet\s+3\s+2\s+2\s+\d\s+0\s+Stopped: %s failed\s`, failing))
		}).Should(Succeed())
		// A rollout that stopped stays stopped: nothing happens with time.
		Consistently(func(g Gomega) {
			works := fleetWorks(ctx, hub)
			g.Expect(imageOf(works[first])).To(Equal("nginx:1.28"))
			g.Expect(imageOf(works[failing])).To(Equal("nginx:1.28"))
			g.Expect(imageOf(works[last])).To(Equal("nginx:1.27"), "the rollout went on past the failed cluster")
			g.Expect(rolloutTime(works[last])).To(Equal(lastBefore))
		}).WithTimeout(5 * time.Second).Should(Succeed())
		works = fleetWorks(ctx, hub)
		Expect(meta.IsStatusConditionTrue(works[first].Status.Conditions, workv1.WorkAvailable)).To(BeTrue())
		Expect(meta.IsStatusConditionFalse(works[failing].Status.Conditions, workv1.WorkApplied)).To(BeTrue())
		spoke := devKube(filepath.Join(dir, last, "admin.kubeconfig"))
		d, err := spoke.AppsV1().Deployments("default").Get(ctx, "web", metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(d.Spec.Template.Spec.Containers[0].Image).To(Equal("nginx:1.27"))

		res = onHub("describe", "work", "web", "-n", "rollout")
		Expect(res.code).To(Equal(0), res.stderr)
		Expect(res.stdout).To(MatchRegexp(`(?m)^\s+%s\s+fleet\s+Available\s+1\s+nginx:1.28\s+True\s+True\s+-$`, first))
		Expect(res.stdout).To(MatchRegexp(`(?m)^\s+%s\s+fleet\s+Failed\s+-1\s+nginx:1.28\s+False\s`, failing))
		Expect(res.stdout).To(MatchRegexp(`(?m)^\s+%s\s+fleet\s+Pending\s+1\s+nginx:1.27\s+True\s+True\s+has the previous spec.*next: .*nginx:1.28`, last), "a Pending cluster shows the image its work holds, and what it gets next")
	})
})
