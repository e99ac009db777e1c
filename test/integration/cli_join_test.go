package integration

import (
	"os"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/flotilla/agent"
	"github.com/flotilla-io/flotilla/cli/cmdutil/handshake"
	"github.com/flotilla-io/flotilla/internal/addon"
	"github.com/flotilla-io/flotilla/test/framework"
)

var _ = Describe("CLI join", Ordered, func() {
	var (
		spoke *framework.ControlPlane
		token joinToken
	)
	// onSpoke runs a managed cluster command with the spoke's admin kubeconfig.
	onSpoke := func(ctx SpecContext, args ...string) cliResult {
		return flotilla(ctx, append(args, "--kubeconfig", spoke.AdminKubeconfig)...)
	}
	// writeFile writes data to a new file and returns its path.
	writeFile := func(name string, data []byte) string {
		path := filepath.Join(GinkgoT().TempDir(), name)
		Expect(os.WriteFile(path, data, 0o600)).To(Succeed())
		return path
	}
	// expectSpokeUntouched checks that a failed join changed nothing on the spoke.
	expectSpokeUntouched := func(ctx SpecContext) {
		GinkgoHelper()
		err := spoke.Client.Get(ctx, client.ObjectKey{Name: agent.DefaultNamespace}, &corev1.Namespace{})
		Expect(apierrors.IsNotFound(err)).To(BeTrue(), "namespace %s: %v", agent.DefaultNamespace, err)
	}

	BeforeAll(func(ctx SpecContext) {
		var err error
		spoke, err = framework.Start(ctx, framework.Spoke)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(spoke.Stop)
		token = hubInit(ctx)
	})

	It("rejects an invalid cluster name before contacting anything", func(ctx SpecContext) {
		res := onSpoke(ctx, "join", "--hub-token", token.HubToken, "--hub-apiserver", "https://127.0.0.1:1", "--cluster-name", "Bad_Name")
		Expect(res.Code).NotTo(Equal(0))
		Expect(res.Stderr).To(ContainSubstring(`--cluster-name: "Bad_Name" is not a valid cluster name`))
		Expect(res.Stderr).NotTo(ContainSubstring("cannot reach"), "the name is checked first")

		res = onSpoke(ctx, "join", "--hub-token", token.HubToken, "--hub-apiserver", token.HubAPIServer)
		Expect(res.Code).NotTo(Equal(0))
		Expect(res.Stderr).To(ContainSubstring("--cluster-name is required"))

		res = onSpoke(ctx, "join", "--hub-token", "not-a-token", "--hub-apiserver", token.HubAPIServer, "--cluster-name", "c1")
		Expect(res.Code).NotTo(Equal(0))
		Expect(res.Stderr).To(ContainSubstring("--hub-token does not have the form of a join token"))
		expectSpokeUntouched(ctx)
	})

	It("reports an unreachable hub", func(ctx SpecContext) {
		for _, extra := range [][]string{nil, {"--ca-file", writeFile("hub-ca.crt", hubCP.CAData)}} {
			res := onSpoke(ctx, append([]string{"join", "--hub-token", token.HubToken, "--hub-apiserver", "https://127.0.0.1:1", "--cluster-name", "c1"}, extra...)...)
			Expect(res.Code).NotTo(Equal(0))
			Expect(res.Stderr).To(ContainSubstring("cannot reach the hub at https://127.0.0.1:1"))
			Expect(res.Stderr).To(ContainSubstring("Check --hub-apiserver"))
		}
		expectSpokeUntouched(ctx)
	})

	It("reports a wrong token", func(ctx SpecContext) {
		id, _, _ := strings.Cut(token.HubToken, ".")
		wrong := id + ".ffffffffffffffff"

		By("finding that cluster-info's signature does not match the token")
		res := onSpoke(ctx, "join", "--hub-token", wrong, "--hub-apiserver", token.HubAPIServer, "--cluster-name", "c1")
		Expect(res.Code).NotTo(Equal(0))
		Expect(res.Stderr).To(ContainSubstring("does not match --hub-token"))
		Expect(res.Stderr).To(ContainSubstring("flotilla get token"))

		By("being rejected by the hub when the CA is given")
		res = onSpoke(ctx, "join", "--hub-token", wrong, "--hub-apiserver", token.HubAPIServer, "--cluster-name", "c1", "--ca-file", writeFile("hub-ca.crt", hubCP.CAData))
		Expect(res.Code).NotTo(Equal(0))
		Expect(res.Stderr).To(ContainSubstring("rejected --hub-token: it is wrong, has expired or was deleted"))
		expectSpokeUntouched(ctx)
	})

	It("reports a CA that did not sign the hub's certificate", func(ctx SpecContext) {
		res := onSpoke(ctx, "join", "--hub-token", token.HubToken, "--hub-apiserver", token.HubAPIServer, "--cluster-name", "c1", "--ca-file", writeFile("wrong-ca.crt", spoke.CAData))
		Expect(res.Code).NotTo(Equal(0))
		Expect(res.Stderr).To(ContainSubstring("presented a certificate that the CA in --ca-file"))

		res = onSpoke(ctx, "join", "--hub-token", token.HubToken, "--hub-apiserver", token.HubAPIServer, "--cluster-name", "c1", "--ca-file", writeFile("junk.crt", []byte("junk")))
		Expect(res.Code).NotTo(Equal(0))
		Expect(res.Stderr).To(ContainSubstring("holds no PEM certificate"))
		expectSpokeUntouched(ctx)
	})

	It("writes the bootstrap kubeconfig and installs the agent", func(ctx SpecContext) {
		res := onSpoke(ctx, "join", "--hub-token", token.HubToken, "--hub-apiserver", token.HubAPIServer, "--cluster-name", "cli-join", "--image", "example.com/agent:test")
		Expect(res.Code).To(Equal(0), res.Stderr)
		Expect(res.Stdout).To(ContainSubstring("flotilla accept --clusters cli-join"))

		Expect(spoke.Client.Get(ctx, client.ObjectKey{Name: agent.DefaultNamespace}, &corev1.Namespace{})).To(Succeed())
		secret := &corev1.Secret{}
		Expect(spoke.Client.Get(ctx, client.ObjectKey{Namespace: agent.DefaultNamespace, Name: agent.BootstrapSecretName}, secret)).To(Succeed())
		kc, err := clientcmd.Load(secret.Data["kubeconfig"])
		Expect(err).NotTo(HaveOccurred())
		cfg, err := clientcmd.NewDefaultClientConfig(*kc, nil).ClientConfig()
		Expect(err).NotTo(HaveOccurred())
		Expect(cfg.Host).To(Equal(hubCP.URL))
		Expect(cfg.CAData).To(Equal(hubCP.CAData))
		Expect(cfg.BearerToken).To(Equal(token.HubToken))
		Expect(whoAmI(ctx, cfg).Groups).To(ContainElement("system:bootstrappers:managedcluster"), "the bootstrap kubeconfig works")

		deploy := &appsv1.Deployment{}
		Expect(spoke.Client.Get(ctx, client.ObjectKey{Namespace: agent.DefaultNamespace, Name: "flotilla-agent"}, deploy)).To(Succeed())
		Expect(deploy.Spec.Template.Spec.Containers).To(ConsistOf(HaveField("Image", "example.com/agent:test")))
		Expect(deploy.Spec.Template.Spec.ServiceAccountName).To(Equal("flotilla-agent"))
		Expect(spoke.Client.Get(ctx, client.ObjectKey{Namespace: agent.DefaultNamespace, Name: "flotilla-agent"}, &corev1.ServiceAccount{})).To(Succeed())
		execution := &rbacv1.ClusterRoleBinding{}
		Expect(spoke.Client.Get(ctx, client.ObjectKey{Name: "open-cluster-management:flotilla-agent:execution"}, execution)).To(Succeed())
		Expect(execution.Subjects).To(ConsistOf(HaveField("Name", "flotilla-agent")))

		By("joining again with the CA from a file, idempotently")
		res = onSpoke(ctx, "join", "--hub-token", token.HubToken, "--hub-apiserver", token.HubAPIServer, "--cluster-name", "cli-join", "--ca-file", writeFile("hub-ca.crt", hubCP.CAData))
		Expect(res.Code).To(Equal(0), res.Stderr)
		Expect(spoke.Client.Get(ctx, client.ObjectKeyFromObject(deploy), deploy)).To(Succeed())
		Expect(deploy.Spec.Template.Spec.Containers[0].Image).To(HavePrefix("ghcr.io/flotilla-io/flotilla-agent:"))
	})

	It("reports what it still waits for with --wait", func(ctx SpecContext) {
		res := onSpoke(ctx, "join", "--hub-token", token.HubToken, "--hub-apiserver", token.HubAPIServer, "--cluster-name", "cli-join", "--wait", "--timeout", "2s")
		Expect(res.Code).NotTo(Equal(0))
		Expect(res.Stderr).To(ContainSubstring("Waiting: the agent is not running yet"))
		Expect(res.Stderr).To(ContainSubstring("timed out after --timeout 2s waiting for cluster cli-join to join"))
	})

	It("unjoins only the cluster it joined as, and leaves other objects", func(ctx SpecContext) {
		workload := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "applied-by-the-agent"}}
		Expect(spoke.Client.Create(ctx, workload)).To(Succeed())
		creds := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: agent.DefaultNamespace, Name: agent.HubKubeconfigSecretName},
			Data:       map[string][]byte{"cluster-name": []byte("cli-join")},
		}
		Expect(spoke.Client.Create(ctx, creds)).To(Succeed())

		res := onSpoke(ctx, "unjoin", "--cluster-name", "another")
		Expect(res.Code).NotTo(Equal(0))
		Expect(res.Stderr).To(ContainSubstring(`joined the hub as cluster "cli-join", not "another"`))

		res = onSpoke(ctx, "unjoin", "--cluster-name", "cli-join")
		Expect(res.Code).To(Equal(0), res.Stderr)
		Expect(res.Stdout).To(ContainSubstring("kubectl delete managedcluster cli-join"))
		for _, obj := range []client.Object{
			&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: agent.DefaultNamespace, Name: "flotilla-agent"}},
			&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: agent.DefaultNamespace, Name: agent.BootstrapSecretName}},
			&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: agent.DefaultNamespace, Name: agent.HubKubeconfigSecretName}},
			&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "open-cluster-management:flotilla-agent"}},
			&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "open-cluster-management:flotilla-agent"}},
			&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "open-cluster-management:flotilla-agent:execution"}},
			&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: agent.DefaultNamespace}},
			&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: addon.DefaultInstallNamespace, Name: addOnsRole}},
			&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: addon.DefaultInstallNamespace, Name: addOnsRole}},
			&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: addon.DefaultInstallNamespace}},
		} {
			Eventually(func() error {
				return spoke.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj)
			}).Should(Satisfy(apierrors.IsNotFound), "%T %s", obj, client.ObjectKeyFromObject(obj))
		}
		Expect(spoke.Client.Get(ctx, client.ObjectKeyFromObject(workload), workload)).To(Succeed())
		for _, removed := range []string{"Role " + addon.DefaultInstallNamespace + "/" + addOnsRole, "RoleBinding " + addon.DefaultInstallNamespace + "/" + addOnsRole, "Namespace " + addon.DefaultInstallNamespace} {
			Expect(res.Stderr).To(ContainSubstring("Cluster: removed "+removed), "unjoin says what it removed")
		}

		res = onSpoke(ctx, "unjoin", "--cluster-name", "cli-join")
		Expect(res.Code).To(Equal(0), res.Stderr)
		Expect(res.Stderr).To(ContainSubstring("Nothing to remove"))
	})

	It("leaves an add-ons' namespace a user made, and removes only the agent's Role and RoleBinding there", func(ctx SpecContext) {
		Eventually(func() error {
			return spoke.Client.Get(ctx, client.ObjectKey{Name: addon.DefaultInstallNamespace}, &corev1.Namespace{})
		}).Should(Satisfy(apierrors.IsNotFound), "the namespace of the spec before is gone")
		users := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: addon.DefaultInstallNamespace, Labels: map[string]string{"team": "platform"}}}
		Expect(spoke.Client.Create(ctx, users)).To(Succeed())
		DeferCleanup(func(ctx SpecContext) { Expect(client.IgnoreNotFound(spoke.Client.Delete(ctx, users))).To(Succeed()) })
		theirs := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: addon.DefaultInstallNamespace, Name: "the-users"}}
		Expect(spoke.Client.Create(ctx, theirs)).To(Succeed())

		res := onSpoke(ctx, "join", "--hub-token", token.HubToken, "--hub-apiserver", token.HubAPIServer, "--cluster-name", "cli-join")
		Expect(res.Code).To(Equal(0), res.Stderr)
		Expect(spoke.Client.Get(ctx, client.ObjectKeyFromObject(users), users)).To(Succeed())
		Expect(users.Labels).NotTo(HaveKey("app.kubernetes.io/name"), "join took the user's namespace over")
		Expect(spoke.Client.Get(ctx, client.ObjectKey{Namespace: addon.DefaultInstallNamespace, Name: addOnsRole}, &rbacv1.Role{})).To(Succeed(), "join lets the agent write add-on Secrets there")

		res = onSpoke(ctx, "unjoin", "--cluster-name", "cli-join")
		Expect(res.Code).To(Equal(0), res.Stderr)
		Expect(res.Stderr).To(ContainSubstring("Cluster: removed Role " + addon.DefaultInstallNamespace + "/" + addOnsRole))
		Expect(res.Stderr).NotTo(ContainSubstring("Cluster: removed Namespace " + addon.DefaultInstallNamespace))
		for _, obj := range []client.Object{
			&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: addon.DefaultInstallNamespace, Name: addOnsRole}},
			&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: addon.DefaultInstallNamespace, Name: addOnsRole}},
			&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: agent.DefaultNamespace}},
		} {
			Eventually(func() error {
				return spoke.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj)
			}).Should(Satisfy(apierrors.IsNotFound), "%T %s", obj, client.ObjectKeyFromObject(obj))
		}
		Consistently(func() error {
			return spoke.Client.Get(ctx, client.ObjectKeyFromObject(theirs), theirs)
		}, "2s").Should(Succeed(), "unjoin deleted the user's namespace")
		Expect(spoke.Client.Get(ctx, client.ObjectKeyFromObject(users), users)).To(Succeed())
		Expect(users.DeletionTimestamp).To(BeNil())
	})

	It("removes the add-ons' namespace of an agent join ran in the foreground, which has no Role there", func(ctx SpecContext) {
		Eventually(func() error {
			return spoke.Client.Get(ctx, client.ObjectKey{Name: addon.DefaultInstallNamespace}, &corev1.Namespace{})
		}).Should(Satisfy(apierrors.IsNotFound), "the namespace of the spec before is gone")
		By("applying what join --run applies: the Namespaces and Secrets the chart renders")
		objs, err := handshake.AgentObjects(handshake.AgentInstall{Cluster: "cli-join", Image: "example.com/agent:test", LeaseDurationSeconds: 60, CertExpiration: agent.DefaultCertificateExpiration}, []byte("kubeconfig"))
		Expect(err).NotTo(HaveOccurred())
		for _, o := range objs {
			if k := o.GetObjectKind().GroupVersionKind().Kind; k == "Namespace" || k == "Secret" {
				Expect(spoke.Client.Create(ctx, o)).To(Succeed(), "%s %s", k, o.GetName())
			}
		}
		Expect(spoke.Client.Get(ctx, client.ObjectKey{Namespace: addon.DefaultInstallNamespace, Name: addOnsRole}, &rbacv1.Role{})).To(Satisfy(apierrors.IsNotFound))

		res := onSpoke(ctx, "unjoin", "--cluster-name", "cli-join")
		Expect(res.Code).To(Equal(0), res.Stderr)
		Expect(res.Stderr).To(ContainSubstring("Cluster: removed Namespace " + addon.DefaultInstallNamespace))
		Eventually(func() error {
			return spoke.Client.Get(ctx, client.ObjectKey{Name: addon.DefaultInstallNamespace}, &corev1.Namespace{})
		}).Should(Satisfy(apierrors.IsNotFound))
	})
})

// addOnsRole names the agent chart's Role and RoleBinding in each add-on
// install namespace.
const addOnsRole = "open-cluster-management:flotilla-agent:addons"
