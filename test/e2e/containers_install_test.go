package e2e

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/flotilla/agent"
	policyv1 "github.com/flotilla-io/flotilla/api/policy/v1"
	"github.com/flotilla-io/flotilla/test/framework"
)

var _ = Describe("The images as containers", Label("containers"), func() {
	It("runs hub, spoke and agent each in a container of its own, delivers a ManifestWork and Policies, and resumes a new agent container with the stored certificate after the join token is gone", func(ctx SpecContext) {
		started := time.Now()
		d := requireDocker(ctx)
		f := startContainerFleet(ctx, d, "edge-1", true)
		GinkgoWriter.Printf("hub, spoke and agent containers up and the cluster accepted in %s\n", time.Since(started).Round(time.Second))

		By("join --dry-run on this machine, naming the hub by its container's name as docs/install.md does: join reaches it as docker routes it")
		res := runFlotilla(ctx, "join", "--dry-run", "-o", "yaml", "--hub-token", f.token, "--hub-apiserver", f.hubURL, "--cluster-name", f.cluster)
		Expect(res.code).To(Equal(0), res.stderr)
		Expect(res.stderr).To(ContainSubstring("names a Docker container"))
		var bootstrapSecret *unstructured.Unstructured
		for _, obj := range decodeYAML(res.stdout) {
			if obj.GetKind() == "Secret" && obj.GetName() == agent.BootstrapSecretName {
				bootstrapSecret = obj
			}
		}
		Expect(bootstrapSecret).NotTo(BeNil(), res.stdout)
		encoded, _, _ := unstructured.NestedString(bootstrapSecret.Object, "data", "kubeconfig")
		kubeconfig, err := base64.StdEncoding.DecodeString(encoded)
		Expect(err).NotTo(HaveOccurred())
		Expect(string(kubeconfig)).To(ContainSubstring("server: "+f.hubURL), "the agents, on the hub's network, resolve the container's name")

		By("a ManifestWork created on the hub is Applied on the spoke")
		Expect(f.hubClient.Create(ctx, workOf(f.cluster, "hello", configMap("hello", map[string]string{"greeting": "hi"})))).To(Succeed())
		Eventually(func() bool { return workApplied(ctx, f.hubClient, f.cluster, "hello") }).WithTimeout(time.Minute).
			Should(BeTrue(), func() string { return f.agent.Tail(ctx, 30) })
		cm := &corev1.ConfigMap{}
		Expect(f.spokeClient.Get(ctx, client.ObjectKey{Namespace: "default", Name: "hello"}, cm)).To(Succeed())
		Expect(cm.Data).To(HaveKeyWithValue("greeting", "hi"))

		By("a Policy the spoke satisfies is Compliant, one it does not NonCompliant, and inform changes nothing")
		res = f.onHub("clusterset", "bind", "global", "-n", "policies")
		Expect(res.code).To(Equal(0), res.stderr)
		res = f.onHub("create", "placement", "everywhere", "-n", "policies", "--clustersets", "global", "--wait")
		Expect(res.code).To(Equal(0), res.stderr)
		dir := GinkgoT().TempDir()
		for name, ns := range map[string]string{"has-default": "default", "has-prod": "prod"} {
			file := filepath.Join(dir, name+".yaml")
			Expect(os.WriteFile(file, policyYAML(name, ns), 0o600)).To(Succeed())
			res = f.onHub("create", "policy", "-f", file, "--placement", "everywhere")
			Expect(res.code).To(Equal(0), res.stderr)
		}
		compliance := func(name string) func() policyv1.ComplianceState {
			return func() policyv1.ComplianceState {
				p := &policyv1.Policy{}
				if err := f.hubClient.Get(ctx, client.ObjectKey{Namespace: "policies", Name: name}, p); err != nil {
					return ""
				}
				return p.Status.ComplianceState
			}
		}
		Eventually(compliance("has-default")).WithTimeout(2 * time.Minute).Should(Equal(policyv1.Compliant))
		Eventually(compliance("has-prod")).WithTimeout(2 * time.Minute).Should(Equal(policyv1.NonCompliant))
		Expect(f.spokeClient.Get(ctx, client.ObjectKey{Name: "prod"}, &corev1.Namespace{})).To(Satisfy(apierrors.IsNotFound))

		By("docker stop of the agent container: it ends cleanly on SIGTERM")
		csrs := countCSRs(ctx, f.hubClient)
		cert := storedCertificate(ctx, f.spokeClient)
		Expect(f.agent.Stop(ctx, 30*time.Second)).To(Succeed())
		status, code, err := f.agent.State(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(status).To(Equal("exited"))
		Expect(code).To(Equal(0), f.agent.Tail(ctx, 20))

		By("deleting the join token, then starting a new container of the agent image: it resumes with the stored certificate")
		tokenID, _, _ := strings.Cut(f.token, ".")
		Expect(f.hubClient.Delete(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespaceSystem, Name: bootstrapapi.BootstrapTokenSecretPrefix + tokenID}})).To(Succeed())
		restarted := time.Now()
		second := f.startAgent(ctx, "agent-2")
		Eventually(func() bool { return leaseRenewedAfter(ctx, f.hubClient, f.cluster, restarted) }).WithTimeout(time.Minute).
			Should(BeTrue(), func() string { return second.Tail(ctx, 30) })
		Expect(countCSRs(ctx, f.hubClient)).To(Equal(csrs), "the new agent asked for no certificate")
		Expect(storedCertificate(ctx, f.spokeClient).SerialNumber).To(Equal(cert.SerialNumber), "the new agent uses the stored certificate")
		Expect(f.available(ctx)).To(Equal(metav1.ConditionTrue))

		By("a new ManifestWork goes through the new agent container")
		Expect(f.hubClient.Create(ctx, workOf(f.cluster, "hello-again", configMap("hello-again", map[string]string{"greeting": "again"})))).To(Succeed())
		Eventually(func() bool { return workApplied(ctx, f.hubClient, f.cluster, "hello-again") }).WithTimeout(time.Minute).
			Should(BeTrue(), func() string { return second.Tail(ctx, 30) })
		Expect(f.spokeClient.Get(ctx, client.ObjectKey{Namespace: "default", Name: "hello-again"}, &corev1.ConfigMap{})).To(Succeed())

		By("the agent image with the spoke's kubeconfig docker cp'd out and mounted with -v, as docs/install.md does")
		Expect(second.Stop(ctx, 30*time.Second)).To(Succeed())
		file := filepath.Join(GinkgoT().TempDir(), f.cluster+".kubeconfig")
		_, err = d.Command(ctx, "cp", f.spoke.Name+":"+home+"/cluster/admin.kubeconfig", file)
		Expect(err).NotTo(HaveOccurred())
		st, err := os.Stat(file)
		Expect(err).NotTo(HaveOccurred())
		Expect(st.Mode().Perm()).To(Equal(os.FileMode(0o600)), "docker cp keeps the kubeconfig's mode")
		if sys, ok := st.Sys().(*syscall.Stat_t); ok && sys.Uid != uint32(os.Getuid()) {
			// docker cp run by root keeps the archive's owner (the image's
			// user); run by anyone else, the file is theirs: as most users'.
			Expect(os.Chown(file, os.Getuid(), os.Getgid())).To(Succeed())
		}
		mounted := func(c *framework.ContainerSpec) {
			c.Files = nil
			c.Mounts = []string{file + ":" + home + "/spoke.kubeconfig:ro"}
		}
		if os.Getuid() != 65532 {
			unreadable := f.startAgentWith(ctx, "agent-3", mounted)
			code, err := unreadable.Wait(ctx)
			Expect(err).NotTo(HaveOccurred())
			Expect(code).NotTo(Equal(0))
			Expect(unreadable.Output(ctx)).To(And(
				ContainSubstring("The agent runs as uid 65532, which may not read --kubeconfig "+home+"/spoke.kubeconfig (mode 0600)"),
				ContainSubstring(`docker run --user "$(id -u):$(id -g)"`)))
		}
		restarted = time.Now()
		asOwner := f.startAgentWith(ctx, "agent-4", func(c *framework.ContainerSpec) {
			mounted(c)
			c.User = fmt.Sprintf("%d:%d", os.Getuid(), os.Getgid())
		})
		Eventually(func() bool { return leaseRenewedAfter(ctx, f.hubClient, f.cluster, restarted) }).WithTimeout(time.Minute).
			Should(BeTrue(), func() string { return asOwner.Tail(ctx, 30) })
		GinkgoWriter.Printf("container install spec took %s\n", time.Since(started).Round(time.Second))
	})
})

// startAgentWith starts a container of the agent image named name, as
// startAgent does, with edit's changes to its spec.
func (f *containerFleet) startAgentWith(ctx context.Context, name string, edit func(*framework.ContainerSpec)) *framework.Container {
	GinkgoHelper()
	spec := f.agentSpec
	spec.Name = name
	edit(&spec)
	c, err := f.docker.Create(ctx, spec)
	Expect(err).NotTo(HaveOccurred())
	Expect(c.Connect(ctx, f.hubNet, "")).To(Succeed())
	Expect(c.Start(ctx)).To(Succeed())
	return c
}
