package integration

import (
	"slices"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
)

// The CLI's view of multi-cluster services as real agents and the hub's
// services controller make it: three clusters of one set, two exporting
// the same Service with different port numbers.
var _ = Describe("cli services through agents", Ordered, func() {
	var (
		set     string
		a, b, c *importCluster
	)

	BeforeAll(func(ctx SpecContext) {
		set = newImportSet(ctx)
		a, b, c = startImportCluster(ctx, "clisvc-a"), startImportCluster(ctx, "clisvc-b"), startImportCluster(ctx, "clisvc-c")
		for _, sc := range []*importCluster{a, b, c} {
			Expect(sc.c.Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: importNode}})).To(Succeed())
			setClusterSet(ctx, sc.name, set)
		}
	})

	It("shows who exports and imports, the endpoints, and the conflict the hub found, with what to do", func(ctx SpecContext) {
		ns := "clisvc-" + utilrand.String(5)
		a.exportService(ctx, ns, "web", 1, 3, false)
		Eventually(a.exportCondition(ctx, ns, "web", "Valid"), "20s").Should(HaveField("Status", metav1.ConditionTrue))
		b.exportService(ctx, ns, "web", 2, 2, false, func(s *corev1.Service) { s.Spec.Ports[0].Port = 8080 })
		Eventually(b.exportCondition(ctx, ns, "web", "Conflict"), "20s").Should(HaveField("Status", metav1.ConditionTrue))

		By("get serviceexports: both clusters, their endpoints, the set and PortConflict on both")
		Eventually(func(g Gomega) {
			res := onHub(ctx, "get", "serviceexports", "-n", ns)
			g.Expect(res.Code).To(Equal(0), res.Stderr)
			lines := strings.Split(strings.TrimSpace(res.Stdout), "\n")
			g.Expect(lines).To(HaveLen(3), res.Stdout)
			g.Expect(strings.Fields(lines[1])).To(HaveExactElements(a.name, ns, "web", "ClusterSetIP", "http:80/TCP", "3/3", set, "PortConflict", Not(BeEmpty())))
			g.Expect(strings.Fields(lines[2])).To(HaveExactElements(b.name, ns, "web", "ClusterSetIP", "http:8080/TCP", "2/2", set, "PortConflict", Not(BeEmpty())))
		}, "20s").Should(Succeed())

		By("get serviceimports: the older export's port, both exporters, every member importing, 5 endpoints")
		importers := strings.Join(sortedNames(a.name, b.name, c.name), ",")
		Eventually(func(g Gomega) {
			res := onHub(ctx, "get", "serviceimports", "-n", ns, "--clusters", c.name, "-o", "wide")
			g.Expect(res.Code).To(Equal(0), res.Stderr)
			lines := strings.Split(strings.TrimSpace(res.Stdout), "\n")
			g.Expect(lines).To(HaveLen(2), res.Stdout)
			g.Expect(strings.Fields(lines[1])).To(HaveExactElements(set, ns, "web", "ClusterSetIP", "http:80/TCP",
				strings.Join(sortedNames(a.name, b.name), ","), importers, "5/5", Not(BeEmpty())))
		}, "20s").Should(Succeed())

		By("describe serviceexport: the hub's message on the losing export and what to do")
		res := onHub(ctx, "describe", "serviceexport", ns+"/web", "--clusters", b.name)
		Expect(res.Code).To(Equal(0), res.Stderr)
		Expect(res.Stdout).To(MatchRegexp(`Conflict\s+True\s+PortConflict\s+\S+`))
		Expect(res.Stdout).To(ContainSubstring(a.name), "the message names the winning cluster")
		Expect(res.Stdout).To(ContainSubstring("What to do:\n    PortConflict: make the ports"))
		Expect(res.Stdout).To(MatchRegexp(`Merged in cluster set ` + set + ` \(what every member's ServiceImport says\):\n\s+Type:\s+ClusterSetIP\n\s+Ports:\s+http:80/TCP`))

		By("describe serviceimport: each exporter's ready endpoints")
		res = onHub(ctx, "describe", "serviceimport", ns+"/web")
		Expect(res.Code).To(Equal(0), res.Stderr)
		Expect(res.Stdout).To(ContainSubstring(b.name + " (available, export generation "))
		Expect(res.Stdout).To(MatchRegexp(`10\.2\.0\.1\s+ready`))
		Expect(res.Stdout).To(MatchRegexp(`Endpoints:\s+3 ready of 3`))

		By("a pod not ready shows as such, after one write per hop")
		b.setPodReady(ctx, ns, "web-0", false)
		Eventually(func(g Gomega) {
			res := onHub(ctx, "describe", "serviceimport", ns+"/web")
			g.Expect(res.Stdout).To(MatchRegexp(`10\.2\.0\.1\s+not ready`))
		}, "20s").Should(Succeed())

		By("unexporting both: the import is gone and the CLI says how to look")
		a.unexport(ctx, ns, "web")
		b.unexport(ctx, ns, "web")
		Eventually(func(g Gomega) {
			res := onHub(ctx, "describe", "serviceimport", ns+"/web")
			g.Expect(res.Code).To(Equal(1))
			g.Expect(res.Stderr).To(ContainSubstring("no cluster set imports Service " + ns + "/web"))
			g.Expect(res.Stderr).To(ContainSubstring("No cluster exports it either"))
		}, "20s").Should(Succeed())
	})
})

// sortedNames are names in order.
func sortedNames(names ...string) []string {
	return slices.Sorted(slices.Values(names))
}
