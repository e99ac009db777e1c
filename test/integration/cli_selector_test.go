package integration

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta2 "github.com/flotilla-io/flotilla/api/cluster/v1beta2"
)

var _ = Describe("CLI label selectors", func() {
	It("refuses a set-based requirement with no values, naming the flag and the requirement, and writes nothing", func(ctx SpecContext) {
		ns := newNamespace(ctx, "cli-sel")
		for _, tc := range []struct{ selector, requirement string }{
			{"env in ()", "'env in ()'"},
			{"tier=web,env notin ()", "'env notin ()'"},
		} {
			res := onHub(ctx, "create", "placement", "p", "-n", ns, "--label-selectors", tc.selector)
			Expect(res.Code).NotTo(Equal(0), res.Stdout)
			Expect(res.Stderr).To(ContainSubstring(`--label-selectors "` + tc.selector + `": the requirement ` + tc.requirement + ` lists no values: give at least one`))
		}
		Expect(onHub(ctx, "get", "placements", "-n", ns).Stderr).To(ContainSubstring("No Placements in namespace " + ns))

		By("refusing it in the clusterset's --selector too")
		set := newClusterName("cli-sel")
		res := onHub(ctx, "create", "clusterset", set, "--selector", "region in ()")
		Expect(res.Code).NotTo(Equal(0), res.Stdout)
		Expect(res.Stderr).To(ContainSubstring(`--selector "region in ()": the requirement 'region in ()' lists no values`))
		err := hubCP.Client.Get(ctx, client.ObjectKey{Name: set}, &clusterv1beta2.ManagedClusterSet{})
		Expect(apierrors.IsNotFound(err)).To(BeTrue(), "ManagedClusterSet %s: %v", set, err)

		By("still taking a set with values")
		res = onHub(ctx, "create", "placement", "p", "-n", ns, "--label-selectors", "env in (prod),tier notin (test)")
		Expect(res.Code).To(Equal(0), res.Stderr)
	})
})
