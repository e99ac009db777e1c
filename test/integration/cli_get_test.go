package integration

import (
	"encoding/json"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	"github.com/flotilla-io/flotilla/internal/version"
)

var _ = Describe("CLI get clusters", func() {
	It("lists clusters as a table, wide table, JSON and YAML", func(ctx SpecContext) {
		mc := newManagedCluster("cli-get-joined")
		mc.Labels = map[string]string{"env": "prod"}
		mc.Spec.HubAcceptsClient = true
		Expect(hubCP.Client.Create(ctx, mc)).To(Succeed())
		Expect(hubCP.Client.Create(ctx, newManagedCluster("cli-get-pending"))).To(Succeed())
		setConditions(ctx, "cli-get-joined",
			metav1.Condition{Type: clusterv1.ManagedClusterConditionJoined, Status: metav1.ConditionTrue, Reason: clusterv1.ReasonManagedClusterJoined},
			metav1.Condition{Type: clusterv1.ManagedClusterConditionAvailable, Status: metav1.ConditionTrue, Reason: clusterv1.ReasonManagedClusterAvailable},
		)
		// The hub writes the cluster too (taints, the default set label): retry on conflict.
		Eventually(func() error {
			if err := hubCP.Client.Get(ctx, client.ObjectKeyFromObject(mc), mc); err != nil {
				return err
			}
			mc.Status.Version.Kubernetes = "v1.36.3"
			mc.Status.Capacity = clusterv1.ResourceList{clusterv1.ResourceCPU: resource.MustParse("4"), clusterv1.ResourceMemory: resource.MustParse("16Gi")}
			return hubCP.Client.Status().Update(ctx, mc)
		}).Should(Succeed())

		res := onHub(ctx, "get", "clusters", "cli-get-joined", "cli-get-pending")
		Expect(res.Code).To(Equal(0), res.Stderr)
		lines := strings.Split(strings.TrimSpace(res.Stdout), "\n")
		Expect(lines).To(HaveLen(3))
		Expect(strings.Fields(lines[0])).To(Equal([]string{"NAME", "ACCEPTED", "JOINED", "AVAILABLE", "KUBERNETES", "VERSION", "AGE"}))
		Expect(strings.Fields(lines[1])).To(HaveExactElements("cli-get-joined", "True", "True", "True", "v1.36.3", Not(BeEmpty())))
		Expect(strings.Fields(lines[2])).To(HaveExactElements("cli-get-pending", "False", "Unknown", "Unknown", "<none>", Not(BeEmpty())))

		res = onHub(ctx, "get", "clusters", "cli-get-joined", "-o", "wide")
		Expect(res.Code).To(Equal(0), res.Stderr)
		Expect(res.Stdout).To(MatchRegexp(`NAME\s+ACCEPTED\s+JOINED\s+AVAILABLE\s+KUBERNETES VERSION\s+AGE\s+TUNNEL\s+CPU\s+MEMORY\s+LABELS\s+URL`))
		Expect(res.Stdout).To(MatchRegexp(`cli-get-joined\s+True\s+True\s+True\s+v1.36.3\s+\S+\s+(True|False)\s+4\s+16Gi\s+\S*env=prod\S*\s+https://cli-get-joined:6443`))

		By("listing every cluster as JSON")
		res = onHub(ctx, "get", "clusters", "-o", "json")
		Expect(res.Code).To(Equal(0), res.Stderr)
		list := clusterv1.ManagedClusterList{}
		Expect(json.Unmarshal([]byte(res.Stdout), &list)).To(Succeed())
		Expect(list.Kind).To(Equal("ManagedClusterList"))
		Expect(list.Items).To(ContainElements(
			And(HaveField("Name", "cli-get-joined"), HaveField("Kind", "ManagedCluster"), HaveField("Spec.HubAcceptsClient", true)),
			HaveField("Name", "cli-get-pending"),
		))

		res = onHub(ctx, "get", "clusters", "cli-get-pending", "-o", "yaml")
		Expect(res.Code).To(Equal(0), res.Stderr)
		Expect(res.Stdout).To(ContainSubstring("name: cli-get-pending"))
		Expect(res.Stdout).To(ContainSubstring("apiVersion: cluster.open-cluster-management.io/v1"))

		By("naming a cluster that does not exist")
		res = onHub(ctx, "get", "clusters", "cli-get-missing")
		Expect(res.Code).NotTo(Equal(0))
		Expect(res.Stderr).To(ContainSubstring(`ManagedCluster "cli-get-missing" not found`))
	})
})

var _ = Describe("CLI version", func() {
	It("prints the client version, and the server's when it is reachable", func(ctx SpecContext) {
		res := onHub(ctx, "version")
		Expect(res.Code).To(Equal(0), res.Stderr)
		Expect(res.Stdout).To(ContainSubstring("Client Version: " + version.Version))
		Expect(res.Stdout).To(MatchRegexp(`Server Version: v\S+ \(Kubernetes, at ` + hubCP.URL + `\)`))

		res = flotilla(ctx, "version", "--client", "-o", "json")
		Expect(res.Code).To(Equal(0), res.Stderr)
		Expect(res.Stdout).To(ContainSubstring(`"version": "` + version.Version + `"`))
		Expect(res.Stdout).NotTo(ContainSubstring("serverVersion"))
	})

	It("offers shell completion", func(ctx SpecContext) {
		res := flotilla(ctx, "completion", "bash")
		Expect(res.Code).To(Equal(0), res.Stderr)
		Expect(res.Stdout).To(ContainSubstring("__start_flotilla"))

		By("completing cluster names from the hub")
		Expect(hubCP.Client.Create(ctx, newManagedCluster("cli-complete-me"))).To(Succeed())
		res = flotilla(ctx, "__complete", "--kubeconfig", hubCP.AdminKubeconfig, "accept", "--clusters", "cli-complete-")
		Expect(res.Code).To(Equal(0), res.Stderr)
		Expect(res.Stdout).To(ContainSubstring("cli-complete-me"))
	})
})
