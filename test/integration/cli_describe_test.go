package integration

import (
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/flotilla-io/flotilla/api/cluster/v1beta1"
	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
)

var _ = Describe("CLI describe and completion", func() {
	It("describes every kind get lists, and completes their names from the hub", func(ctx SpecContext) {
		cluster := "cli-describe-c1"
		mc := newManagedCluster(cluster)
		mc.Labels = map[string]string{"env": "prod"}
		Expect(hubCP.Client.Create(ctx, mc)).To(Succeed())
		DeferCleanup(func(ctx SpecContext) { Expect(client.IgnoreNotFound(hubCP.Client.Delete(ctx, mc))).To(Succeed()) })
		ensureNamespace(ctx, cluster)
		mw := &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: "described"}}
		mw.Spec.Workload.Manifests = []workv1.Manifest{{RawExtension: runtime.RawExtension{Raw: []byte(
			`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"hello","namespace":"default"},"spec":{"replicas":2,"template":{"spec":{"containers":[{"name":"c","image":"hello:1"}]}}}}`)}}}
		Expect(hubCP.Client.Create(ctx, mw)).To(Succeed())
		ns := newNamespace(ctx, "cli-describe")
		p := &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}}
		Expect(hubCP.Client.Create(ctx, p)).To(Succeed())
		createSet(ctx, "cli-describe-set", nil)

		By("describe cluster: acceptance, conditions, its works")
		res := onHub(ctx, "describe", "cluster", cluster)
		Expect(res.Code).To(Equal(0), res.Stderr)
		Expect(res.Stdout).To(ContainSubstring("Name:         " + cluster + "\nAccepted:     False\n"))
		Expect(res.Stdout).To(ContainSubstring("flotilla accept --clusters " + cluster))
		Expect(res.Stdout).To(MatchRegexp(`(?m)^  described\s+-\s+-\s+-\s`))

		By("describe work with --cluster, and without: the one ManifestWork of that name")
		for _, args := range [][]string{{"describe", "work", "described", "--cluster", cluster}, {"describe", "work", "described"}} {
			res = onHub(ctx, args...)
			Expect(res.Code).To(Equal(0), res.Stderr)
			Expect(res.Stdout).To(ContainSubstring("Name:         described\nCluster:      " + cluster + "\n"))
			Expect(res.Stdout).To(ContainSubstring("Manifests:    1 (replicas 2, images hello:1)"))
		}

		By("describe placement and clusterset")
		res = onHub(ctx, "describe", "placement", "web", "-n", ns)
		Expect(res.Code).To(Equal(0), res.Stderr)
		Expect(res.Stdout).To(ContainSubstring("Name:         web\nNamespace:    " + ns + "\n"))
		res = onHub(ctx, "describe", "clusterset", "cli-describe-set")
		Expect(res.Code).To(Equal(0), res.Stderr)
		Expect(res.Stdout).To(ContainSubstring("Name:         cli-describe-set\n"))
		Expect(res.Stdout).To(ContainSubstring("flotilla clusterset bind cli-describe-set -n NAMESPACE"))

		By("completing names from the hub")
		for _, tc := range []struct {
			args []string
			want string
		}{
			{[]string{"__complete", "describe", "cluster", "cli-describe-"}, cluster},
			{[]string{"__complete", "get", "works", "--clusters", cluster, "de"}, "described"},
			{[]string{"__complete", "delete", "work", "--cluster", cluster, ""}, "described"},
			{[]string{"__complete", "describe", "placement", "-n", ns, ""}, "web"},
			{[]string{"__complete", "get", "clustersets", "cli-describe"}, "cli-describe-set"},
			{[]string{"__complete", "accept", "--clusters", "cli-describe"}, cluster},
		} {
			// The word being completed comes last: --kubeconfig goes first.
			res = flotilla(ctx, append([]string{"__complete", "--kubeconfig", hubCP.AdminKubeconfig}, tc.args[1:]...)...)
			Expect(res.Code).To(Equal(0), res.Stderr)
			Expect(strings.Split(res.Stdout, "\n")).To(ContainElement(tc.want), "%v", tc.args)
		}
	})
})
