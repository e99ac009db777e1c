package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	clusterv1beta1 "github.com/flotilla-io/flotilla/api/cluster/v1beta1"
	policyv1 "github.com/flotilla-io/flotilla/api/policy/v1"
	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
)

// spokeOutage is how long the spoke's API server stays down: the issue's
// upper bound for a restart, longer than the 5 × 10 s that the hub waits
// for a lease renewal at the lease duration the spec sets.
const spokeOutage = 60 * time.Second

// blipSurvivors are the identities that a blip of cluster1 must not change.
type blipSurvivors struct {
	Works       map[string]types.UID // ManifestWorks on the hub, by replica set
	Deployments map[string]types.UID // on the spoke, by name
	Namespace   types.UID            // prod, which the policy enforces
	Policy      types.UID            // the replicated policy on the hub
	History     []string             // its history before the outage, oldest first
}

var _ = Describe("A spoke blip moves nothing", func() {
	It("keeps every work, spoke object and replicated policy of a cluster whose API server was killed for a minute", func(ctx SpecContext) {
		dir, hub, onHub := startSandbox(ctx, 2)
		spoke := devClient(filepath.Join(dir, "cluster1", "admin.kubeconfig"))
		const ns = "policies"
		copyKey := client.ObjectKey{Namespace: "cluster1", Name: ns + ".policy-namespace"}

		By("agreeing a lease of 10 s with cluster1's agent, so that it probes its API server every 10 s")
		Eventually(func() error {
			mc := &clusterv1.ManagedCluster{}
			if err := hub.Get(ctx, client.ObjectKey{Name: "cluster1"}, mc); err != nil {
				return err
			}
			mc.Spec.LeaseDurationSeconds = 10
			return hub.Update(ctx, mc)
		}).Should(Succeed())

		By("placing a fleet-wide replica set, a counted one (2 of the 2 clusters) and an enforced policy")
		Expect(onHub("clusterset", "bind", "global", "-n", ns).code).To(Equal(0))
		res := onHub("create", "placement", "fleet", "-n", ns, "--clustersets", "global", "--wait")
		Expect(res.code).To(Equal(0), res.stderr)
		res = onHub("create", "placement", "pair", "-n", ns, "--clustersets", "global", "--count", "2", "--wait")
		Expect(res.code).To(Equal(0), res.stderr)
		Expect(res.stdout).To(ContainSubstring("Chosen clusters (2): "))
		for name, placement := range map[string]string{"web": "fleet", "counted": "pair"} {
			file := filepath.Join(GinkgoT().TempDir(), name+".yaml")
			Expect(os.WriteFile(file, []byte(strings.ReplaceAll(webDeployment("1.27"), "name: web\n", "name: "+name+"\n")), 0o600)).To(Succeed())
			res = onHub("create", "work", name, "-f", file, "--placement", ns+"/"+placement, "--wait", "--timeout", "3m")
			Expect(res.code).To(Equal(0), res.stderr)
		}
		res = onHub("create", "policy", "-f", filepath.Join("..", "..", "..", "shared", "examples", "policy-namespace.yaml"), "--placement", "fleet")
		Expect(res.code).To(Equal(0), res.stderr)
		Eventually(func(g Gomega) {
			cp := &policyv1.Policy{}
			g.Expect(hub.Get(ctx, copyKey, cp)).To(Succeed())
			g.Expect(cp.Status.ComplianceState).To(Equal(policyv1.Compliant))
		}, 2*time.Minute).Should(Succeed())

		survivors := func() blipSurvivors {
			s := blipSurvivors{Works: map[string]types.UID{}, Deployments: map[string]types.UID{}}
			for _, name := range []string{"web", "counted"} {
				w := &workv1.ManifestWork{}
				if err := hub.Get(ctx, client.ObjectKey{Namespace: "cluster1", Name: name}, w); err == nil && w.DeletionTimestamp == nil {
					s.Works[name] = w.UID
				}
			}
			cp := &policyv1.Policy{}
			if err := hub.Get(ctx, copyKey, cp); err == nil && cp.DeletionTimestamp == nil {
				s.Policy = cp.UID
				for _, d := range cp.Status.Details {
					for _, h := range d.History {
						s.History = append([]string{h.LastTimestamp.UTC().Format(time.RFC3339) + " " + h.Message}, s.History...)
					}
				}
			}
			return s
		}
		onSpoke := func(s *blipSurvivors) {
			GinkgoHelper()
			for _, name := range []string{"web", "counted"} {
				d := &appsv1.Deployment{}
				Expect(spoke.Get(ctx, client.ObjectKey{Namespace: "default", Name: name}, d)).To(Succeed())
				Expect(d.DeletionTimestamp).To(BeNil())
				s.Deployments[name] = d.UID
			}
			prod := &corev1.Namespace{}
			Expect(spoke.Get(ctx, client.ObjectKey{Name: "prod"}, prod)).To(Succeed())
			s.Namespace = prod.UID
		}
		before := survivors()
		onSpoke(&before)
		Expect(before.Works).To(HaveLen(2))
		Expect(before.Policy).NotTo(BeEmpty())
		Expect(before.History).NotTo(BeEmpty())
		GinkgoWriter.Printf("Before the outage: %+v\n", before)

		By("killing cluster1's API server (the dev cluster process: etcd, kube-apiserver, controllers) for 60 s")
		st := readSandboxState(dir)
		pid := st.Clusters[0].Process.PID
		Expect(syscall.Kill(pid, syscall.SIGKILL)).To(Succeed())
		killed := time.Now()
		Eventually(processEnded).WithContext(ctx).WithArguments(pid).Should(BeTrue())

		By("the hub taints cluster1 for its health, and both Placements drop it")
		var taint string
		Eventually(func() string {
			mc := &clusterv1.ManagedCluster{}
			Expect(hub.Get(ctx, client.ObjectKey{Name: "cluster1"}, mc)).To(Succeed())
			for _, t := range mc.Spec.Taints {
				if t.Key == clusterv1.ManagedClusterTaintUnavailable || t.Key == clusterv1.ManagedClusterTaintUnreachable {
					taint = t.Key
				}
			}
			return taint
		}, spokeOutage).Should(Equal(clusterv1.ManagedClusterTaintUnavailable), "the agent reports the API server down")
		AddReportEntry("hub taint on cluster1 after its API server was killed", time.Since(killed).Round(time.Second).String())
		for _, placement := range []string{"fleet", "pair"} {
			Eventually(func() []string { return chosenClusters(ctx, hub, ns, placement) }).Should(ConsistOf("cluster2"), placement)
		}

		By("keeping cluster1's works and replicated policy for the rest of the outage")
		Expect(time.Until(killed.Add(spokeOutage))).To(BeNumerically(">", 5*time.Second), "the taint came too late to see the works kept")
		Consistently(func() blipSurvivors {
			s := survivors()
			s.History = nil
			return s
		}, time.Until(killed.Add(spokeOutage)), time.Second).Should(Equal(blipSurvivors{Works: before.Works, Deployments: map[string]types.UID{}, Policy: before.Policy}))

		By("starting cluster1 again with its data: it comes back, both Placements choose it again")
		up := runFlotilla(ctx, "dev", "up", "--dir", dir)
		Expect(up.code).To(Equal(0), up.stderr)
		Expect(up.stderr).To(ContainSubstring("Starting cluster1"))
		Eventually(func(g Gomega) {
			mc := &clusterv1.ManagedCluster{}
			g.Expect(hub.Get(ctx, client.ObjectKey{Name: "cluster1"}, mc)).To(Succeed())
			g.Expect(mc.Spec.Taints).To(BeEmpty())
			g.Expect(meta.IsStatusConditionTrue(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable)).To(BeTrue())
		}).Should(Succeed())
		for _, placement := range []string{"fleet", "pair"} {
			Eventually(func() []string { return chosenClusters(ctx, hub, ns, placement) }).Should(ConsistOf("cluster1", "cluster2"), placement)
		}

		By("finding every work, spoke object and the policy's history as they were")
		// Long enough for the replica sets and the propagator to act on
		// the new decisions, and for the agent to report again.
		Consistently(func(g Gomega) {
			after := survivors()
			g.Expect(after.Works).To(Equal(before.Works))
			g.Expect(after.Policy).To(Equal(before.Policy))
			g.Expect(len(after.History)).To(BeNumerically(">=", len(before.History)))
			g.Expect(after.History[:len(before.History)]).To(Equal(before.History), "the history before the outage is kept")
		}, 10*time.Second, time.Second).Should(Succeed())
		after := survivors()
		onSpoke(&after)
		Expect(after.Deployments).To(Equal(before.Deployments), "the Deployments on cluster1 were not deleted and created again")
		Expect(after.Namespace).To(Equal(before.Namespace))
		for _, name := range []string{"web", "counted"} {
			Eventually(func(g Gomega) {
				w := &workv1.ManifestWork{}
				g.Expect(hub.Get(ctx, client.ObjectKey{Namespace: "cluster1", Name: name}, w)).To(Succeed())
				g.Expect(meta.IsStatusConditionTrue(w.Status.Conditions, workv1.WorkAvailable)).To(BeTrue())
			}).Should(Succeed())
		}
		GinkgoWriter.Printf("After the outage: %+v\n", after)
	})
})

// chosenClusters are the clusters the decisions of Placement ns/name hold.
func chosenClusters(ctx context.Context, hub client.Client, ns, name string) []string {
	GinkgoHelper()
	list := &clusterv1beta1.PlacementDecisionList{}
	Expect(hub.List(ctx, list, client.InNamespace(ns), client.MatchingLabels{clusterv1beta1.PlacementLabel: name})).To(Succeed())
	out := []string{}
	for _, pd := range list.Items {
		for _, d := range pd.Status.Decisions {
			out = append(out, d.ClusterName)
		}
	}
	return out
}
