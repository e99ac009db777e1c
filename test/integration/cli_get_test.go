package integration

import (
	"encoding/json"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	policyv1 "github.com/flotilla-io/flotilla/api/policy/v1"
	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
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

		By("printing one named cluster as the object itself, as kubectl does")
		res = onHub(ctx, "get", "clusters", "cli-get-pending", "-o", "yaml")
		Expect(res.Code).To(Equal(0), res.Stderr)
		one := clusterv1.ManagedCluster{}
		Expect(yaml.Unmarshal([]byte(res.Stdout), &one)).To(Succeed())
		Expect(one.TypeMeta).To(Equal(metav1.TypeMeta{APIVersion: "cluster.open-cluster-management.io/v1", Kind: "ManagedCluster"}))
		Expect(one.Name).To(Equal("cli-get-pending"))

		By("naming a cluster that does not exist")
		res = onHub(ctx, "get", "clusters", "cli-get-missing")
		Expect(res.Code).NotTo(Equal(0))
		Expect(res.Stderr).To(ContainSubstring(`ManagedCluster "cli-get-missing" not found`))
	})
})

// gotObject is the kind and name of an object that get printed.
type gotObject struct {
	Kind     string `json:"kind"`
	Metadata struct {
		Namespace string `json:"namespace"`
		Name      string `json:"name"`
	} `json:"metadata"`
}

// gotList is a list that get printed.
type gotList struct {
	APIVersion string      `json:"apiVersion"`
	Kind       string      `json:"kind"`
	Items      []gotObject `json:"items"`
}

// anObject matches a gotObject.
func anObject(kind, namespace, name string) gotObject {
	o := gotObject{Kind: kind}
	o.Metadata.Namespace, o.Metadata.Name = namespace, name
	return o
}

var _ = Describe("CLI get output", func() {
	It("prints a named object itself, a list otherwise, and as data all that the table shows", func(ctx SpecContext) {
		set, ns := newSetWithNamespace(ctx, "cli-out")
		a, b := newClusterName("cli-out-a"), newClusterName("cli-out-b")
		createPolicyMember(ctx, a, set, map[string]string{"env": "prod"})
		createPolicyMember(ctx, b, set, map[string]string{"env": "dev"})
		prodPlacement(ctx, ns, "prod")
		Eventually(chosen(ctx, ns, "prod")).Should(ConsistOf(a))
		Expect(hubCP.Client.Create(ctx, rootPolicy(ns, "placed"))).To(Succeed())
		Expect(hubCP.Client.Create(ctx, rootPolicy(ns, "unplaced"))).To(Succeed())
		bindPolicy(ctx, ns, "binding", "prod", policySubject("placed"))
		Eventually(copiesOf(ctx, ns, "placed")).Should(Equal([]string{a}))
		reportCompliance(ctx, a, ns+".placed", policyv1.NonCompliant, "NonCompliant; violation - namespaces [prod] not found")
		Eventually(func() policyv1.ComplianceState { return getPolicy(ctx, ns, "placed").Status.ComplianceState }).Should(Equal(policyv1.NonCompliant))
		rs := newClusterName("cli-out-rs")
		res := onHub(ctx, "create", "work", rs, "-f", writeSpecFile("hello.yaml", helloDeployment), "--placement", ns+"/prod")
		Expect(res.Code).To(Equal(0), res.Stderr)
		Eventually(func() *workv1.ManifestWork { return replicaSetWork(ctx, a, ns, rs) }).WithTimeout(30 * time.Second).ShouldNot(BeNil())

		By("printing each named object as the object itself")
		for _, tt := range []struct {
			args []string
			want gotObject
		}{
			{[]string{"get", "clusters", a, "-o", "json"}, anObject("ManagedCluster", "", a)},
			{[]string{"get", "clustersets", set, "-o", "yaml"}, anObject("ManagedClusterSet", "", set)},
			{[]string{"get", "placements", "prod", "-n", ns, "-o", "yaml"}, anObject("Placement", ns, "prod")},
			{[]string{"get", "policies", "placed", "-n", ns, "-o", "json"}, anObject("Policy", ns, "placed")},
			{[]string{"get", "works", rs, "--clusters", a, "-o", "json"}, anObject("ManifestWork", a, rs)},
			{[]string{"get", "works", rs, "--replicasets", "-n", ns, "-o", "yaml"}, anObject("ManifestWorkReplicaSet", ns, rs)},
		} {
			res := onHub(ctx, tt.args...)
			Expect(res.Code).To(Equal(0), res.Stderr)
			var got gotObject
			Expect(yaml.Unmarshal([]byte(res.Stdout), &got)).To(Succeed(), res.Stdout)
			Expect(got).To(Equal(tt.want), strings.Join(tt.args, " "))
		}

		By("printing two named objects, or none named, as a list")
		res = onHub(ctx, "get", "clusters", a, b, "-o", "yaml")
		Expect(res.Code).To(Equal(0), res.Stderr)
		var list gotList
		Expect(yaml.Unmarshal([]byte(res.Stdout), &list)).To(Succeed())
		Expect(list.Kind).To(Equal("ManagedClusterList"))
		Expect(list.Items).To(ConsistOf(anObject("ManagedCluster", "", a), anObject("ManagedCluster", "", b)))
		res = onHub(ctx, "get", "placements", "-n", ns, "-o", "json")
		Expect(res.Code).To(Equal(0), res.Stderr)
		list = gotList{}
		Expect(json.Unmarshal([]byte(res.Stdout), &list)).To(Succeed())
		Expect(list.Kind).To(Equal("PlacementList"))
		Expect(list.Items).To(ConsistOf(anObject("Placement", ns, "prod")))

		By("printing the replica sets that the table of get works shows, with the ManifestWorks")
		res = onHub(ctx, "get", "works", rs)
		Expect(res.Code).To(Equal(0), res.Stderr)
		Expect(res.Stdout).To(MatchRegexp(`(?m)^%s\s+%s\s+prod\s`, ns, rs))
		Expect(res.Stdout).To(MatchRegexp(`(?m)^%s\s+%s\s`, a, rs))
		for _, format := range []string{"json", "yaml"} {
			res = onHub(ctx, "get", "works", rs, "-o", format)
			Expect(res.Code).To(Equal(0), res.Stderr)
			list = gotList{}
			Expect(yaml.Unmarshal([]byte(res.Stdout), &list)).To(Succeed())
			Expect(list.APIVersion).To(Equal("v1"))
			Expect(list.Kind).To(Equal("List"))
			Expect(list.Items).To(HaveExactElements(anObject("ManifestWorkReplicaSet", ns, rs), anObject("ManifestWork", a, rs)))
		}

		By("printing the grid of --matrix as data")
		res = onHub(ctx, "get", "policies", "-n", ns, "--matrix", "-o", "json")
		Expect(res.Code).To(Equal(0), res.Stderr)
		var matrix struct {
			Policies []struct{ Namespace, Name string } `json:"policies"`
			Clusters []struct {
				Name       string            `json:"name"`
				Compliance map[string]string `json:"compliance"`
			} `json:"clusters"`
		}
		Expect(json.Unmarshal([]byte(res.Stdout), &matrix)).To(Succeed(), res.Stdout)
		Expect(matrix.Policies).To(HaveExactElements(
			And(HaveField("Namespace", ns), HaveField("Name", "placed")),
			And(HaveField("Namespace", ns), HaveField("Name", "unplaced"))))
		Expect(matrix.Clusters).To(HaveExactElements(And(HaveField("Name", a), HaveField("Compliance", Equal(map[string]string{ns + "/placed": "NonCompliant"})))))

		By("saying when a named object does not exist, in every format")
		res = onHub(ctx, "get", "policies", "nope", "-n", ns, "-o", "yaml")
		Expect(res.Code).To(Equal(1))
		Expect(res.Stderr).To(ContainSubstring("Policy nope not found in namespace " + ns))
		res = onHub(ctx, "get", "works", "nope", "--clusters", a, "-o", "json")
		Expect(res.Code).To(Equal(1))
		Expect(res.Stderr).To(ContainSubstring("ManifestWork nope not found in cluster " + a))
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
