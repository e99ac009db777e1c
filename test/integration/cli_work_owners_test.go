package integration

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("CLI: create work --wait, when another work holds an object", func() {
	It("fails at once, naming the work that holds the object, instead of saying the work is applied and available", func(ctx SpecContext) {
		spoke := newWorkSpoke(ctx)
		c := newWorkCluster(ctx, "cw-owners")
		startWorkAgent(c, spoke)
		createSpokeNamespace(ctx, spoke, "app")
		settings := func(mode string) string {
			return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: app\ndata:\n  mode: " + mode + "\n"
		}
		res := onHub(ctx, "create", "work", "first", "-f", writeSpecFile("first.yaml", settings("fast")), "--clusters", c.name, "--wait", "--timeout", "60s")
		Expect(res.Code).To(Equal(0), res.Stderr)
		Expect(res.Stderr).To(ContainSubstring("ManifestWork first is applied and available in cluster " + c.name + ".\n"))

		res = onHub(ctx, "create", "work", "second", "-f", writeSpecFile("second.yaml", settings("safe")), "--clusters", c.name, "--wait", "--timeout", "60s")
		Expect(res.Code).To(Equal(1), res.Stderr)
		Expect(res.Stderr).NotTo(ContainSubstring("applied and available"))
		Expect(res.Stderr).NotTo(ContainSubstring("timed out"), "a work held by another is not waited for")
		Expect(res.Stderr).To(ContainSubstring("Error: ManifestWork second in cluster " + c.name + " is not applied: manifest 0: Not applied: configmaps \"settings\" in namespace \"app\" is applied by ManifestWork " + c.name + "/first of cluster " + c.name + ", which applied it first"))
	})
})
