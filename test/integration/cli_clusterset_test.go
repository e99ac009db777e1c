package integration

import (
	"encoding/json"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta2 "github.com/flotilla-io/flotilla/api/cluster/v1beta2"
)

var _ = Describe("CLI clusterset", func() {
	It("creates a set, puts clusters into it, binds and unbinds it, and lists it", func(ctx SpecContext) {
		set := newClusterName("cli-set")
		DeferCleanup(func(ctx SpecContext) {
			Expect(client.IgnoreNotFound(hubCP.Client.Delete(ctx, &clusterv1beta2.ManagedClusterSet{ObjectMeta: metav1.ObjectMeta{Name: set}}))).To(Succeed())
		})
		res := onHub(ctx, "create", "clusterset", set)
		Expect(res.Code).To(Equal(0), res.Stderr)
		Expect(res.Stdout).To(ContainSubstring("ManagedClusterSet " + set + " created"))
		Expect(res.Stderr).To(ContainSubstring("flotilla clusterset bind " + set + " --namespace NAMESPACE"))
		res = onHub(ctx, "create", "clusterset", set)
		Expect(res.Code).NotTo(Equal(0))
		Expect(res.Stderr).To(ContainSubstring("ManagedClusterSet " + set + " already exists"))

		By("putting two clusters into it, checking every cluster first")
		c1, c2 := newClusterName("cli-set-c"), newClusterName("cli-set-c")
		createCluster(ctx, c1)
		createCluster(ctx, c2)
		res = onHub(ctx, "clusterset", "set", set, "--clusters", c1+",nosuchcluster")
		Expect(res.Code).NotTo(Equal(0))
		Expect(res.Stderr).To(ContainSubstring("cluster nosuchcluster does not exist on the hub"))
		Expect(getCluster(ctx, c1).Labels[clusterv1beta2.ClusterSetLabel]).NotTo(Equal(set))
		res = onHub(ctx, "clusterset", "set", set, "--clusters", c1+","+c2)
		Expect(res.Code).To(Equal(0), res.Stderr)
		Expect(res.Stdout).To(ContainSubstring("Cluster " + c1 + " is now in ManagedClusterSet " + set))
		Expect(getCluster(ctx, c2).Labels).To(HaveKeyWithValue(clusterv1beta2.ClusterSetLabel, set))
		res = onHub(ctx, "clusterset", "set", set, "--clusters", c1)
		Expect(res.Stdout).To(ContainSubstring("Cluster " + c1 + " is already in ManagedClusterSet " + set))

		By("binding it to a new namespace")
		ns := newClusterName("cli-bind-ns")
		DeferCleanup(func(ctx SpecContext) { Expect(deleteNamespace(ctx, ns)).To(Succeed()) })
		res = onHub(ctx, "clusterset", "bind", set, "--namespace", ns)
		Expect(res.Code).To(Equal(0), res.Stderr)
		Expect(res.Stderr).To(ContainSubstring("created namespace " + ns))
		Expect(res.Stdout).To(ContainSubstring("ManagedClusterSet " + set + " bound to namespace " + ns))
		Eventually(bindingCondition(ctx, ns, set)).Should(haveCondition(metav1.ConditionTrue, clusterv1beta2.ReasonClusterSetBound))
		res = onHub(ctx, "clusterset", "bind", set, "-n", ns)
		Expect(res.Code).To(Equal(0), res.Stderr)
		Expect(res.Stdout).To(ContainSubstring("already bound"))
		res = onHub(ctx, "clusterset", "bind", "no-such-set", "-n", ns)
		Expect(res.Code).NotTo(Equal(0))
		Expect(res.Stderr).To(ContainSubstring("ManagedClusterSet no-such-set does not exist"))
		Expect(res.Stderr).To(ContainSubstring("flotilla create clusterset no-such-set"))

		By("listing it with its namespace and members")
		res = onHub(ctx, "get", "clustersets", set)
		Expect(res.Code).To(Equal(0), res.Stderr)
		lines := strings.Split(strings.TrimSpace(res.Stdout), "\n")
		Expect(lines).To(HaveLen(2))
		Expect(lines[0]).To(MatchRegexp(`NAME\s+SELECTOR\s+BOUND NAMESPACES\s+CLUSTERS\s+MEMBERS\s+AGE`))
		first, second := c1, c2
		if second < first {
			first, second = second, first
		}
		Expect(lines[1]).To(MatchRegexp(set + `\s+clusterset label\s+` + ns + `\s+2\s+` + first + "," + second + `\s+\S+`))
		res = onHub(ctx, "get", "clustersets", "-o", "json")
		Expect(res.Code).To(Equal(0), res.Stderr)
		list := clusterv1beta2.ManagedClusterSetList{}
		Expect(json.Unmarshal([]byte(res.Stdout), &list)).To(Succeed())
		Expect(list.Items).To(ContainElements(HaveField("Name", set), HaveField("Name", "default"), HaveField("Name", "global")))

		By("unbinding it")
		res = onHub(ctx, "clusterset", "unbind", set, "--namespace", ns)
		Expect(res.Code).To(Equal(0), res.Stderr)
		Expect(res.Stdout).To(ContainSubstring("unbound from namespace " + ns))
		res = onHub(ctx, "clusterset", "unbind", set, "--namespace", ns)
		Expect(res.Code).NotTo(Equal(0))
		Expect(res.Stderr).To(ContainSubstring("ManagedClusterSet " + set + " is not bound to namespace " + ns))
	})

	It("creates a LabelSelector set and refuses bad input", func(ctx SpecContext) {
		set := newClusterName("cli-selset")
		DeferCleanup(func(ctx SpecContext) {
			Expect(client.IgnoreNotFound(hubCP.Client.Delete(ctx, &clusterv1beta2.ManagedClusterSet{ObjectMeta: metav1.ObjectMeta{Name: set}}))).To(Succeed())
		})
		res := onHub(ctx, "create", "clusterset", set, "--selector", "region in (eu,us)")
		Expect(res.Code).To(Equal(0), res.Stderr)
		got, err := getSet(ctx, set)()
		Expect(err).NotTo(HaveOccurred())
		Expect(got.Spec.ClusterSelector.SelectorType).To(Equal(clusterv1beta2.LabelSelector))
		Expect(metav1.FormatLabelSelector(got.Spec.ClusterSelector.LabelSelector)).To(Equal("region in (eu,us)"))
		res = onHub(ctx, "clusterset", "set", set, "--clusters", "any")
		Expect(res.Code).NotTo(Equal(0))
		Expect(res.Stderr).To(ContainSubstring("selects its members by LabelSelector"))

		for _, args := range [][]string{
			{"create", "clusterset", "Bad_Name"},
			{"clusterset", "set", set},
			{"clusterset", "bind", set},
			{"clusterset", "frobnicate"},
		} {
			res = onHub(ctx, args...)
			Expect(res.Code).NotTo(Equal(0), "flotilla %v", args)
			Expect(res.Stderr).NotTo(BeEmpty())
		}
		Expect(onHub(ctx, "create", "clusterset", "Bad_Name").Stderr).To(ContainSubstring(`"Bad_Name" is not a valid ManagedClusterSet name`))
		Expect(onHub(ctx, "clusterset", "set", set).Stderr).To(ContainSubstring("--clusters is required"))
		Expect(onHub(ctx, "clusterset", "bind", set).Stderr).To(ContainSubstring(`required flag(s) "namespace" not set`))
	})
})
