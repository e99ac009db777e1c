package integration

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/flotilla-io/flotilla/agent"
	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	"github.com/flotilla-io/flotilla/internal/tunnel"
	"github.com/flotilla-io/flotilla/test/framework"
)

// The specs run in order and share the hub and the two agents: the hub's
// restart comes before the agent's, whose replacement this spec's cleanup
// stops, and the denial of the second cluster comes last.
var _ = Describe("Cluster proxy", Ordered, func() {
	var (
		env1, env2     *agentEnv
		c1, c2         string
		opts1          agent.Options
		agent1         *runningAgent
		alice          *rest.Config
		sharedHub      *framework.ControlPlane
		aliceOnSpoke   = "flotilla:alice"
		aliceTeamGroup = "flotilla:team-a"
	)

	// through is alice's clientset for cluster c, through the hub.
	through := func(c string) kubernetes.Interface {
		cfg := rest.CopyConfig(alice)
		cfg.Host = hubCP.URL + tunnel.ProxyPath(c)
		return kubernetes.NewForConfigOrDie(cfg)
	}
	tunnelCondition := func(ctx context.Context, c string) func() *metav1.Condition {
		return func() *metav1.Condition {
			return meta.FindStatusCondition(getCluster(ctx, c).Status.Conditions, tunnel.ConditionConnected)
		}
	}
	connected := And(Not(BeNil()), HaveField("Status", metav1.ConditionTrue))

	BeforeAll(func(ctx SpecContext) {
		By("starting a hub of this Describe's own, which it restarts")
		sharedHub = hubCP
		hub, err := framework.Start(ctx, framework.Hub)
		Expect(err).NotTo(HaveOccurred())
		hubCP = hub
		DeferCleanup(func() { hubCP.Stop(); hubCP = sharedHub })

		By("joining two clusters, each with its agent's tunnel")
		env1, env2 = newAgentEnv(ctx), newAgentEnv(ctx)
		c1, c2 = newClusterName("proxy-a"), newClusterName("proxy-b")
		opts1 = env1.options(c1)
		opts1.Proxy = true
		opts2 := env2.options(c2)
		opts2.Proxy = true
		for _, j := range []struct {
			env  *agentEnv
			opts agent.Options
		}{{env1, opts1}, {env2, opts2}} {
			j.env.storeBootstrapSecret(ctx, j.opts.Namespace, bootstrapKubeconfig(hubCP.URL, hubCP.CAData, j.env.token))
			a := startAgent(j.opts)
			if j.opts.ClusterName == c1 {
				agent1 = a
			}
			acceptAgent(ctx, j.opts.ClusterName)
		}
		Eventually(tunnelCondition(ctx, c1), "60s").Should(connected)
		Eventually(tunnelCondition(ctx, c2), "60s").Should(connected)

		By("granting alice (group team-a) the hub's proxy of the first cluster only")
		alice = userConfig("alice", "team-a")
		grant(ctx, rbacv1.Subject{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: "alice"}, rbacv1.PolicyRule{
			APIGroups: []string{clusterv1.GroupName}, Resources: []string{"managedclusters/proxy"}, ResourceNames: []string{c1}, Verbs: []string{"create"},
		})
		By("granting flotilla:alice pods and configmaps on the first cluster's spoke")
		spokeGrant(ctx, env1.spoke, rbacv1.Subject{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: aliceOnSpoke},
			rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods", "configmaps"}, Verbs: []string{"get", "list", "watch"}})
	})

	It("reaches the granted cluster as flotilla:<user>, and the hub refuses the other with 403", func(ctx SpecContext) {
		Eventually(func() error {
			_, err := through(c1).CoreV1().Pods("").List(ctx, metav1.ListOptions{})
			return err
		}).Should(Succeed())

		By("the spoke seeing the impersonated user and groups")
		review, err := through(c1).AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(review.Status.UserInfo.Username).To(Equal(aliceOnSpoke))
		Expect(review.Status.UserInfo.Groups).To(ContainElements(aliceTeamGroup, "flotilla:system:authenticated"))

		By("the spoke's RBAC deciding what alice may do there")
		_, err = through(c1).CoreV1().Secrets("default").List(ctx, metav1.ListOptions{})
		Expect(apierrors.IsForbidden(err)).To(BeTrue(), "%v", err)
		Expect(err.Error()).To(ContainSubstring(aliceOnSpoke))

		By("the hub refusing the cluster alice has no grant for")
		_, err = through(c2).CoreV1().Pods("").List(ctx, metav1.ListOptions{})
		Expect(apierrors.IsForbidden(err)).To(BeTrue(), "%v", err)
		Expect(err.Error()).To(ContainSubstring("managedclusters/proxy"))

		By("the hub refusing an anonymous caller")
		anon := &rest.Config{Host: hubCP.URL + tunnel.ProxyPath(c1), TLSClientConfig: rest.TLSClientConfig{CAData: hubCP.CAData}}
		_, err = kubernetes.NewForConfigOrDie(anon).CoreV1().Pods("").List(ctx, metav1.ListOptions{})
		Expect(apierrors.IsForbidden(err)).To(BeTrue(), "%v", err)

		By("refusing a cluster's agent on another cluster's tunnel")
		other := agentConfig(ctx, c1, "intruder")
		other.Host = hubCP.URL + tunnel.TunnelPath(c2)
		_, err = kubernetes.NewForConfigOrDie(other).CoreV1().Pods("").List(ctx, metav1.ListOptions{})
		Expect(apierrors.IsForbidden(err)).To(BeTrue(), "%v", err)
		Expect(err.Error()).To(ContainSubstring("only the agent of cluster " + c2))
	})

	It("delivers a watch's events through the tunnel", func(ctx SpecContext) {
		w, err := through(c1).CoreV1().ConfigMaps("default").Watch(ctx, metav1.ListOptions{})
		Expect(err).NotTo(HaveOccurred())
		defer w.Stop()
		Expect(env1.spoke.Client.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "seen-through-the-hub", Namespace: "default"}})).To(Succeed())
		Eventually(w.ResultChan()).Should(Receive(And(
			HaveField("Type", watch.Added),
			HaveField("Object", HaveField("ObjectMeta.Name", "seen-through-the-hub")),
		)))
	})

	It("opens the tunnel again with each certificate the agent rotates to", func(ctx SpecContext) {
		By("a third cluster, on the second spoke, whose agent renews its certificate every few seconds")
		c3 := newClusterName("proxy-rotate")
		deleteClusterAfterSpec(c3)
		opts := env2.options(c3)
		opts.Proxy = true
		// The signer issues ten minutes at least: renew three seconds
		// after issuance instead of after seven and a half minutes.
		opts.CertificateExpiration = 10 * time.Minute
		opts.RenewBefore = opts.CertificateExpiration - 3*time.Second
		env2.storeBootstrapSecret(ctx, opts.Namespace, bootstrapKubeconfig(hubCP.URL, hubCP.CAData, env2.token))
		startAgent(opts)
		acceptAgent(ctx, c3)
		Eventually(tunnelCondition(ctx, c3), "60s").Should(connected)
		t, ok := hubCP.Proxy.Server.Lookup(c3)
		Expect(ok).To(BeTrue())
		Expect(t.Expires).NotTo(BeZero(), "the hub must know when the tunnel's certificate expires")
		first := t.Expires

		By("the hub's tunnel being opened with the certificate the agent holds now, not the first one")
		Eventually(func(g Gomega) {
			t, ok := hubCP.Proxy.Server.Lookup(c3)
			g.Expect(ok).To(BeTrue())
			g.Expect(t.Expires).To(BeTemporally(">", first))
			g.Expect(t.Expires).To(BeTemporally("==", storedCertificate(env2.hubSecret(ctx, opts.Namespace)).NotAfter))
		}, "60s").Should(Succeed())
		Eventually(tunnelCondition(ctx, c3), "30s").Should(connected)
	})

	It("opens the tunnel again after the hub restarts", func(ctx SpecContext) {
		hub, err := hubCP.Restart(ctx)
		Expect(err).NotTo(HaveOccurred())
		hubCP = hub
		back := time.Now()
		// The agents wait for the hub by polling it, not on a backoff
		// that grew while it was down: the tunnels are back within
		// moments of the hub (20 s leaves room for a loaded machine).
		Eventually(func() error {
			_, err := through(c1).CoreV1().Pods("").List(ctx, metav1.ListOptions{})
			return err
		}, "20s", "100ms").Should(Succeed())
		GinkgoWriter.Printf("the tunnel carried requests again %s after the hub's restart returned\n", time.Since(back).Round(time.Millisecond))
		Eventually(tunnelCondition(ctx, c1), "20s").Should(connected)
		Eventually(tunnelCondition(ctx, c2), "20s").Should(connected)
	})

	It("opens the tunnel again after the agent restarts", func(ctx SpecContext) {
		agent1.stop()
		Eventually(tunnelCondition(ctx, c1)).Should(HaveField("Reason", "AgentNotConnected"))
		agent1 = startAgent(opts1)
		Eventually(tunnelCondition(ctx, c1), "60s").Should(connected)
		Eventually(func() error {
			_, err := through(c1).CoreV1().Pods("").List(ctx, metav1.ListOptions{})
			return err
		}, "60s").Should(Succeed())
	})

	It("closes a denied cluster's tunnel at once", func(ctx SpecContext) {
		Eventually(func() bool { _, ok := hubCP.Proxy.Server.Lookup(c2); return ok }, "60s").Should(BeTrue())
		setAccepted(ctx, c2, false)
		Eventually(func() bool { _, ok := hubCP.Proxy.Server.Lookup(c2); return ok }).Should(BeFalse())
		Eventually(tunnelCondition(ctx, c2)).Should(HaveField("Reason", "HubClusterAdminDenied"))
		Consistently(func() bool { _, ok := hubCP.Proxy.Server.Lookup(c2); return ok }, "3s").Should(BeFalse())
	})
})

// spokeGrant binds a new ClusterRole with rules to subject on spoke; the
// spoke's RBAC sees it a moment later, so callers poll their first use.
func spokeGrant(ctx SpecContext, spoke *framework.ControlPlane, subject rbacv1.Subject, rules ...rbacv1.PolicyRule) {
	GinkgoHelper()
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{GenerateName: "test-grant-"}, Rules: rules}
	Expect(spoke.Client.Create(ctx, role)).To(Succeed())
	Expect(spoke.Client.Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: role.Name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{subject},
	})).To(Succeed())
}

// userConfig is a hub client configuration for user name in groups, with
// a client certificate signed by the hub's CA.
func userConfig(name string, groups ...string) *rest.Config {
	GinkgoHelper()
	caBlock, _ := pem.Decode(hubCP.CAData)
	Expect(caBlock).NotTo(BeNil())
	caCert, err := x509.ParseCertificate(caBlock.Bytes)
	Expect(err).NotTo(HaveOccurred())
	keyPEM, err := os.ReadFile(hubCP.CAKeyFile)
	Expect(err).NotTo(HaveOccurred())
	keyBlock, _ := pem.Decode(keyPEM)
	Expect(keyBlock).NotTo(BeNil())
	var caKey crypto.Signer
	if k, err := x509.ParsePKCS8PrivateKey(keyBlock.Bytes); err == nil {
		caKey = k.(crypto.Signer)
	} else if k, err := x509.ParseECPrivateKey(keyBlock.Bytes); err == nil {
		caKey = k
	} else {
		k, err := x509.ParsePKCS1PrivateKey(keyBlock.Bytes)
		Expect(err).NotTo(HaveOccurred())
		caKey = k
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	Expect(err).NotTo(HaveOccurred())
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: name, Organization: groups},
		NotBefore:    time.Now().Add(-time.Minute),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
	Expect(err).NotTo(HaveOccurred())
	keyDER, err := x509.MarshalECPrivateKey(key)
	Expect(err).NotTo(HaveOccurred())
	return hubCP.ConfigFor(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), "")
}
