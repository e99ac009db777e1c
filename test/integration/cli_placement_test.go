package integration

import (
	"encoding/json"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1beta1 "github.com/flotilla-io/flotilla/api/cluster/v1beta1"
)

var _ = Describe("CLI placement", func() {
	It("creates placements from flags, waits for their clusters, and lists them with the hub's message", func(ctx SpecContext) {
		set, ns := newSetWithNamespace(ctx, "cli-pl")
		small, large, dev := newClusterName("cli-pl-small"), newClusterName("cli-pl-large"), newClusterName("cli-pl-dev")
		createMember(ctx, small, set, member{labels: map[string]string{"env": "prod"}, cpu: "2"})
		createMember(ctx, large, set, member{labels: map[string]string{"env": "prod"}, cpu: "16"})
		createMember(ctx, dev, set, member{labels: map[string]string{"env": "dev"}, cpu: "64"})

		By("creating one that picks the prod cluster with the most CPU")
		res := onHub(ctx, "create", "placement", "web", "-n", ns, "--clustersets", set, "--label-selectors", "env=prod",
			"--count", "1", "--prioritizers", "ResourceAllocatableCPU:2,Balance:0", "--wait")
		Expect(res.Code).To(Equal(0), res.Stderr)
		Expect(res.Stdout).To(ContainSubstring("Placement web created in namespace " + ns))
		Expect(res.Stdout).To(ContainSubstring("Chosen clusters (1): " + large))
		p := getPlacement(ctx, ns, "web")
		Expect(p.Spec.ClusterSets).To(Equal([]string{set}))
		Expect(*p.Spec.NumberOfClusters).To(BeEquivalentTo(1))
		Expect(p.Spec.PrioritizerPolicy.Configurations).To(HaveLen(2))

		By("creating one that cannot get what it asks for, and saying why")
		res = onHub(ctx, "create", "placement", "many", "-n", ns, "--label-selectors", "env=prod", "--label-selectors", "env=staging", "--count", "5", "--wait")
		Expect(res.Code).To(Equal(0), res.Stderr)
		Expect(res.Stdout).To(ContainSubstring("Chosen clusters (2): "))
		Expect(res.Stdout).To(ContainSubstring("Not satisfied (NotAllDecisionsScheduled): 2 of 5 requested clusters selected: of the 3 clusters in ManagedClusterSets [" + set + "], 2 qualify; 1 match no predicate"))

		By("listing the namespace's placements")
		res = onHub(ctx, "get", "placements", "-n", ns)
		Expect(res.Code).To(Equal(0), res.Stderr)
		lines := strings.Split(strings.TrimSpace(res.Stdout), "\n")
		Expect(lines).To(HaveLen(3))
		Expect(lines[0]).To(MatchRegexp(`^NAME\s+SELECTED\s+SATISFIED\s+CLUSTERS\s+AGE\s+MESSAGE$`))
		Expect(lines[1]).To(MatchRegexp(`^many\s+2/5\s+False\s+\S+,\S+\s+\S+\s+2 of 5 requested clusters selected`))
		Expect(lines[2]).To(MatchRegexp(`^web\s+1/1\s+True\s+` + large + `\s+\S+\s+All 1 requested clusters selected$`))

		By("showing one placement wide, across namespaces, and as YAML")
		res = onHub(ctx, "get", "placements", "web", "-n", ns, "-o", "wide")
		Expect(res.Code).To(Equal(0), res.Stderr)
		Expect(res.Stdout).To(MatchRegexp(`web\s+1/1\s+True\s+` + large + `\s+0=1\s+`))
		res = onHub(ctx, "get", "placements")
		Expect(res.Code).To(Equal(0), res.Stderr)
		Expect(res.Stdout).To(MatchRegexp(`NAMESPACE\s+NAME\s+SELECTED`))
		Expect(res.Stdout).To(MatchRegexp(ns + `\s+web\s+1/1\s+True`))
		res = onHub(ctx, "get", "placements", "-n", ns, "-o", "json")
		Expect(res.Code).To(Equal(0), res.Stderr)
		list := clusterv1beta1.PlacementList{}
		Expect(json.Unmarshal([]byte(res.Stdout), &list)).To(Succeed())
		Expect(list.Items).To(ConsistOf(
			And(HaveField("Name", "web"), HaveField("Kind", "Placement"), HaveField("Status.NumberOfSelectedClusters", BeEquivalentTo(1))),
			HaveField("Name", "many")))
	})

	It("refuses bad flags before writing anything, and notes a namespace without bindings", func(ctx SpecContext) {
		ns := newNamespace(ctx, "cli-pl-bad")
		for _, tc := range []struct {
			args []string
			want string
		}{
			{[]string{"--prioritizers", "Fastest"}, `unknown prioritizer "Fastest": use one of Balance, Steady`},
			{[]string{"--prioritizers", "Steady:20"}, "not a whole number from -10 to 10"},
			{[]string{"--label-selectors", "env in ("}, `--label-selectors "env in ("`},
			{[]string{"--count", "-2"}, "--count -2 is negative"},
		} {
			res := onHub(ctx, append([]string{"create", "placement", "p", "-n", ns}, tc.args...)...)
			Expect(res.Code).NotTo(Equal(0))
			Expect(res.Stderr).To(ContainSubstring(tc.want))
		}
		Expect(onHub(ctx, "get", "placements", "-n", ns).Stderr).To(ContainSubstring("No Placements in namespace " + ns))

		res := onHub(ctx, "create", "placement", "p", "-n", ns, "--wait")
		Expect(res.Code).To(Equal(0), res.Stderr)
		Expect(res.Stderr).To(ContainSubstring("no ManagedClusterSet is bound to namespace " + ns))
		Expect(res.Stdout).To(ContainSubstring("Not satisfied (NoManagedClusterSetBindings)"))
		Eventually(placementCondition(ctx, ns, "p", clusterv1beta1.PlacementConditionSatisfied)).
			Should(haveCondition(metav1.ConditionFalse, clusterv1beta1.ReasonNoManagedClusterSetBindings))

		res = onHub(ctx, "get", "placements", "missing")
		Expect(res.Code).NotTo(Equal(0))
		Expect(res.Stderr).To(ContainSubstring("say which namespace Placement missing is in"))
	})
})
