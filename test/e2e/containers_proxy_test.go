package e2e

import (
	"context"
	"os/exec"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/flotilla/test/framework"
)

var _ = Describe("The cluster proxy between containers", Label("containers"), func() {
	It("reaches a spoke that the hub's container cannot route to, through the tunnel its agent opened", func(ctx SpecContext) {
		if _, err := exec.LookPath(kubectl); err != nil {
			Fail("kubectl is not installed at " + kubectl)
		}
		started := time.Now()
		d := requireDocker(ctx)
		f := startContainerFleet(ctx, d, "edge-3", true)
		refs := imageRefs(ctx, d)
		spokeKubeconfig, err := f.spoke.CopyOut(ctx, home+"/cluster/admin.kubeconfig")
		Expect(err).NotTo(HaveOccurred())

		By("the hub's network has no route to the spoke; the spoke's network has one")
		// flotilla version prints the server's version only when it answers.
		probe := func(name string, n *framework.Network) (string, string) {
			c, err := d.Create(ctx, framework.ContainerSpec{
				Name: name, Image: refs["flotilla"], Network: n,
				Files: []framework.File{{Path: home + "/spoke.kubeconfig", Data: spokeKubeconfig}},
				Args:  []string{"version", "--kubeconfig", home + "/spoke.kubeconfig"},
			})
			Expect(err).NotTo(HaveOccurred())
			Expect(c.Start(ctx)).To(Succeed())
			_, err = c.Wait(ctx)
			Expect(err).NotTo(HaveOccurred())
			stdout, stderr, err := c.Logs(ctx)
			Expect(err).NotTo(HaveOccurred())
			return stdout, stderr
		}
		stdout, stderr := probe("probe-hub-net", f.hubNet)
		Expect(stdout).NotTo(ContainSubstring("Server Version"))
		Expect(stderr).To(ContainSubstring("cannot reach the API server"))
		stdout, _ = probe("probe-spoke-net", f.spokeNet)
		Expect(stdout).To(ContainSubstring("Server Version"))

		By("kubectl through the hub, as the hub's admins with a read grant on the spoke, lists its nodes and sees a ConfigMap made there")
		// Through the proxy the hub's admins are group flotilla:system:masters
		// on the spoke, where its own admin grants them what it wants.
		reader := &rbacv1.ClusterRole{
			ObjectMeta: metav1.ObjectMeta{Name: "hub-admins-read"},
			Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"nodes", "configmaps"}, Verbs: []string{"get", "list", "watch"}}},
		}
		Expect(f.spokeClient.Create(ctx, reader)).To(Succeed())
		Expect(f.spokeClient.Create(ctx, &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "hub-admins-read"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: reader.Name},
			Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: "flotilla:system:masters"}},
		})).To(Succeed())
		kubeconfig := filepath.Join(GinkgoT().TempDir(), "through-hub.kubeconfig")
		res := f.onHub("kubeconfig", "--clusters", f.cluster, "--output-file", kubeconfig)
		Expect(res.code).To(Equal(0), res.stderr)
		kubectlThroughHub := func(args ...string) string {
			cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
			defer cancel()
			out, err := exec.CommandContext(cctx, kubectl, append([]string{"--kubeconfig", kubeconfig}, args...)...).CombinedOutput()
			GinkgoWriter.Printf("$ kubectl %v\n%s(%v)\n", args, out, err)
			return string(out)
		}
		Eventually(func() string { return kubectlThroughHub("get", "nodes", "-o", "name") }).WithTimeout(time.Minute).WithPolling(time.Second).
			Should(ContainSubstring("node/"+f.cluster+"-node-1"), func() string { return f.agent.Tail(ctx, 30) })
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "made-on-the-spoke"}}
		Expect(f.spokeClient.Create(ctx, cm)).To(Succeed())
		Expect(kubectlThroughHub("get", "configmap", "made-on-the-spoke", "-n", "default", "-o", "name")).To(Equal("configmap/made-on-the-spoke\n"))
		GinkgoWriter.Printf("container proxy spec took %s\n", time.Since(started).Round(time.Second))
	})
})
