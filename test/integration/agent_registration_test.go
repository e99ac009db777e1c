package integration

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/flotilla/agent"
	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
)

var _ = Describe("Agent: registration", Ordered, func() {
	var (
		env *agentEnv
		// joined is the cluster the first spec joins and the second restarts.
		joined     string
		joinedOpts agent.Options
	)

	BeforeAll(func(ctx SpecContext) {
		env = newAgentEnv(ctx)
		By("giving the spoke two nodes")
		for _, n := range []struct{ name, cpu, memory string }{{"node-a", "4", "16Gi"}, {"node-b", "2", "8Gi"}} {
			node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n.name}}
			Expect(env.spoke.Client.Create(ctx, node)).To(Succeed())
			node.Status.Capacity = corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse(n.cpu), corev1.ResourceMemory: resource.MustParse(n.memory), corev1.ResourcePods: resource.MustParse("110"),
			}
			node.Status.Allocatable = corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse(n.cpu), corev1.ResourceMemory: resource.MustParse("1Gi"), corev1.ResourcePods: resource.MustParse("100"),
			}
			Expect(env.spoke.Client.Status().Update(ctx, node)).To(Succeed())
		}
	})

	It("joins as the contract says and reports the cluster's health and inventory", func(ctx SpecContext) {
		joined = newClusterName("agent-join")
		joinedOpts = env.options(joined)
		env.storeBootstrapSecret(ctx, joinedOpts.Namespace, bootstrapKubeconfig(hubCP.URL, hubCP.CAData, env.token))
		a := startAgent(joinedOpts)
		By("installing the ClusterClaim CRD on the spoke")
		Eventually(func() error {
			return env.spoke.Client.Create(ctx, &clusterv1alpha1.ClusterClaim{
				ObjectMeta: metav1.ObjectMeta{Name: "region"}, Spec: clusterv1alpha1.ClusterClaimSpec{Value: "eu-west"},
			})
		}).Should(Succeed())

		By("creating its ManagedCluster, not accepted, with the spoke's API server and CA")
		mc := &clusterv1.ManagedCluster{}
		Eventually(func() error { return hubCP.Client.Get(ctx, client.ObjectKey{Name: joined}, mc) }).Should(Succeed())
		Expect(mc.Spec.HubAcceptsClient).To(BeFalse())
		Expect(mc.Spec.ManagedClusterClientConfigs).To(Equal([]clusterv1.ClientConfig{{URL: env.spoke.URL, CABundle: env.spoke.CAData}}))
		Expect(mc.Spec.LeaseDurationSeconds).To(BeEquivalentTo(2))

		By("asking for a client certificate with a CSR as the contract spells it")
		var csrs []certificatesv1.CertificateSigningRequest
		Eventually(func() []certificatesv1.CertificateSigningRequest { csrs = clusterCSRs(ctx, joined); return csrs }).Should(HaveLen(1))
		csr := csrs[0]
		Expect(csr.GenerateName).To(Equal(joined + "-"))
		Expect(csr.Spec.SignerName).To(Equal(certificatesv1.KubeAPIServerClientSignerName))
		Expect(csr.Spec.Usages).To(ConsistOf(certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment, certificatesv1.UsageClientAuth))
		Expect(csr.Spec.ExpirationSeconds).To(HaveValue(BeEquivalentTo(3600)))
		Expect(csr.Spec.Username).To(HavePrefix("system:bootstrap:"))
		block := parseCertificateRequest(csr.Spec.Request)
		Expect(block.Subject.CommonName).To(HavePrefix("system:open-cluster-management:" + joined + ":"))
		Expect(block.Subject.Organization).To(ConsistOf("system:open-cluster-management:"+joined, "system:open-cluster-management:managed-clusters"))

		By("joining once a hub admin accepts the cluster")
		acceptAgent(ctx, joined)
		Eventually(clusterCondition(ctx, joined, clusterv1.ManagedClusterConditionJoined)).Should(HaveField("Status", metav1.ConditionTrue))
		AddReportEntry("time to join (agent start to Joined=True, acceptance included)", time.Since(a.started).Round(time.Millisecond).String())
		Eventually(clusterCondition(ctx, joined, clusterv1.ManagedClusterConditionAvailable)).Should(And(
			HaveField("Status", metav1.ConditionTrue), HaveField("Reason", clusterv1.ReasonManagedClusterAvailable)))

		By("storing key, certificate, kubeconfig, cluster name and agent id on the spoke; the key is the CSR's")
		data := env.hubSecret(ctx, joinedOpts.Namespace)
		Expect(data).To(HaveKey("kubeconfig"))
		Expect(string(data["cluster-name"])).To(Equal(joined))
		Expect(block.Subject.CommonName).To(Equal(agentUser(joined, string(data["agent-name"]))))
		stored := storedCertificate(data)
		Expect(stored.Subject.CommonName).To(Equal(block.Subject.CommonName))
		Expect(stored.PublicKey).To(Equal(block.PublicKey))

		By("renewing its lease")
		accepted := time.Now()
		Eventually(func() time.Time { return leaseRenewTime(ctx, joined) }).Should(BeTemporally(">", accepted))

		By("reporting version, resources summed over nodes, and claims")
		version, err := env.spoke.Kube.Discovery().ServerVersion()
		Expect(err).NotTo(HaveOccurred())
		kubeSystem := &corev1.Namespace{}
		Expect(env.spoke.Client.Get(ctx, client.ObjectKey{Name: metav1.NamespaceSystem}, kubeSystem)).To(Succeed())
		Eventually(func(g Gomega) {
			status := getCluster(ctx, joined).Status
			g.Expect(status.Version.Kubernetes).To(Equal(version.GitVersion))
			g.Expect(quantityStrings(status.Capacity)).To(Equal(map[clusterv1.ResourceName]string{"cpu": "6", "memory": "24Gi", "pods": "220"}))
			g.Expect(quantityStrings(status.Allocatable)).To(Equal(map[clusterv1.ResourceName]string{"cpu": "6", "memory": "2Gi", "pods": "200"}))
			g.Expect(status.ClusterClaims).To(Equal([]clusterv1.ManagedClusterClaim{
				{Name: clusterv1.ClusterClaimID, Value: string(kubeSystem.UID)},
				{Name: clusterv1.ClusterClaimKubeVersion, Value: version.GitVersion},
				{Name: "region", Value: "eu-west"},
			}))
		}).Should(Succeed())

		By("following ClusterClaims as they change")
		Expect(env.spoke.Client.Create(ctx, &clusterv1alpha1.ClusterClaim{
			ObjectMeta: metav1.ObjectMeta{Name: "env"}, Spec: clusterv1alpha1.ClusterClaimSpec{Value: "prod"},
		})).To(Succeed())
		Eventually(func() []clusterv1.ManagedClusterClaim { return getCluster(ctx, joined).Status.ClusterClaims }).
			Should(ContainElement(clusterv1.ManagedClusterClaim{Name: "env", Value: "prod"}))
		Expect(a.logs.matching("Joining the hub")).To(HaveLen(1))

		By("writing the status only when something changed")
		rv := getCluster(ctx, joined).ResourceVersion
		Consistently(func() string { return getCluster(ctx, joined).ResourceVersion }, "5s").Should(Equal(rv),
			"two lease periods: the agent looked twice and found nothing new")

		By("looking at its ManagedCluster through one watch, not asking the hub every lease period")
		user := agentUser(joined, string(data["agent-name"]))
		before := hubCP.Requests.Counts(user)
		Expect(before).To(HaveKeyWithValue("watch managedclusters", BeNumerically(">=", 1)))
		Eventually(func() int { return hubCP.Requests.Counts(user)["update leases"] }).
			Should(BeNumerically(">=", before["update leases"]+3), "three lease renewals")
		after := hubCP.Requests.Counts(user)
		Expect(after["get managedclusters"]).To(Equal(before["get managedclusters"]),
			"the status controller looked at the cluster three times, from its watch")
		Expect(after["patch managedclusters/status"]).To(Equal(before["patch managedclusters/status"]))
	})

	It("reuses the stored credentials after a restart, without a new CSR", func(ctx SpecContext) {
		Expect(joined).NotTo(BeEmpty(), "needs the cluster the first spec joined")
		csrsBefore := clusterCSRs(ctx, joined)
		certBefore := env.hubSecret(ctx, joinedOpts.Namespace)["tls.crt"]

		restarted := time.Now()
		a := startAgent(joinedOpts)
		Eventually(func() time.Time { return leaseRenewTime(ctx, joined) }).Should(BeTemporally(">", restarted))
		Expect(clusterCSRs(ctx, joined)).To(HaveLen(len(csrsBefore)), "a restarted agent must not ask for another certificate")
		Expect(env.hubSecret(ctx, joinedOpts.Namespace)["tls.crt"]).To(Equal(certBefore))
		Expect(a.logs.matching("Joining the hub")).To(BeEmpty())
		Expect(clusterCondition(ctx, joined, clusterv1.ManagedClusterConditionJoined)()).To(HaveField("Status", metav1.ConditionTrue))
	})

	It("joins again with the bootstrap kubeconfig when the hub's CA changes", func(ctx SpecContext) {
		Expect(joined).NotTo(BeEmpty(), "needs the cluster the first spec joined")
		deleteClusterAfterSpec(joined)
		a := startAgent(joinedOpts)
		started := time.Now()
		Eventually(func() time.Time { return leaseRenewTime(ctx, joined) }).Should(BeTemporally(">", started))

		By("publishing a new CA bundle in the bootstrap kubeconfig, as a hub whose CA rotates does")
		bundle := append(append([]byte{}, hubCP.CAData...), env.spoke.CAData...)
		secret := &corev1.Secret{}
		Expect(env.spoke.Client.Get(ctx, client.ObjectKey{Namespace: joinedOpts.Namespace, Name: agent.BootstrapSecretName}, secret)).To(Succeed())
		secret.Data["kubeconfig"] = bootstrapKubeconfig(hubCP.URL, bundle, env.token)
		Expect(env.spoke.Client.Update(ctx, secret)).To(Succeed())
		Eventually(a.logs.count("Hub credentials are no longer usable; joining again")).Should(Equal(1))
		Expect(a.logs.matching("Hub credentials are no longer usable")[0]).To(ContainSubstring("another hub CA"))

		By("joining again once a hub admin accepts the new CSR")
		acceptAgent(ctx, joined)
		Eventually(func() []byte {
			kc, err := clientcmd.Load(env.hubSecret(ctx, joinedOpts.Namespace)["kubeconfig"])
			Expect(err).NotTo(HaveOccurred())
			return kc.Clusters[kc.Contexts[kc.CurrentContext].Cluster].CertificateAuthorityData
		}).Should(Equal(bundle))
		storedCertificate(env.hubSecret(ctx, joinedOpts.Namespace))
		rejoined := time.Now()
		Eventually(func() time.Time { return leaseRenewTime(ctx, joined) }).Should(BeTemporally(">", rejoined))
		Expect(a.done).NotTo(Receive(), "the agent must not stop")
	})

	It("rotates its certificate with a CSR that the current one authenticates, and uses the new one without a restart", func(ctx SpecContext) {
		name := newClusterName("agent-rotate")
		deleteClusterAfterSpec(name)
		opts := env.options(name)
		opts.AgentID = "rotator"
		// The signer issues ten minutes at least: renew three seconds
		// after issuance instead of after seven and a half minutes.
		opts.CertificateExpiration = 10 * time.Minute
		opts.RenewBefore = opts.CertificateExpiration - 3*time.Second
		env.storeBootstrapSecret(ctx, opts.Namespace, bootstrapKubeconfig(hubCP.URL, hubCP.CAData, env.token))
		a := startAgent(opts)
		acceptAgent(ctx, name)
		Eventually(clusterCondition(ctx, name, clusterv1.ManagedClusterConditionJoined)).Should(HaveField("Status", metav1.ConditionTrue))

		By("renewing twice, each time authenticated with the certificate that the last CSR issued")
		first := func() certificatesv1.CertificateSigningRequest {
			for _, csr := range clusterCSRs(ctx, name) {
				if csr.Spec.Username != agentUser(name, "rotator") {
					return csr
				}
			}
			Fail("no bootstrap CSR")
			return certificatesv1.CertificateSigningRequest{}
		}()
		Expect(first.Spec.Username).To(HavePrefix("system:bootstrap:"))
		var chain []certificatesv1.CertificateSigningRequest
		Eventually(func() int {
			chain = renewalChain(clusterCSRs(ctx, name), first)
			return len(chain)
		}).Should(BeNumerically(">=", 2))
		for _, csr := range chain {
			Expect(csr.Spec.Username).To(Equal(agentUser(name, "rotator")))
			Expect(csr.Spec.Groups).To(ContainElement("system:open-cluster-management:" + name))
		}

		By("storing the new certificate and key, and staying joined without a restart")
		Eventually(func() string { return credentialID(env.hubSecret(ctx, opts.Namespace)["tls.crt"]) }).
			ShouldNot(Equal(credentialID(first.Status.Certificate)))
		storedCertificate(env.hubSecret(ctx, opts.Namespace))
		rotated := time.Now()
		Eventually(func() time.Time { return leaseRenewTime(ctx, name) }).Should(BeTemporally(">", rotated))
		Expect(a.done).NotTo(Receive(), "the agent must not stop")
		Expect(a.logs.matching("Joining the hub")).To(HaveLen(1), "the agent must not fall back to the bootstrap kubeconfig")
	})
})

// renewalChain follows, from CSR first, the issued CSRs each created with
// the certificate that the one before issued.
func renewalChain(csrs []certificatesv1.CertificateSigningRequest, first certificatesv1.CertificateSigningRequest) []certificatesv1.CertificateSigningRequest {
	byCredential := map[string]certificatesv1.CertificateSigningRequest{}
	for _, csr := range csrs {
		if len(csr.Status.Certificate) > 0 {
			byCredential[requesterCredential(csr)] = csr
		}
	}
	var chain []certificatesv1.CertificateSigningRequest
	for cur := first; len(cur.Status.Certificate) > 0; {
		next, ok := byCredential[credentialID(cur.Status.Certificate)]
		if !ok {
			break
		}
		chain = append(chain, next)
		cur = next
	}
	return chain
}

// quantityStrings says each quantity in its canonical form.
func quantityStrings(l clusterv1.ResourceList) map[clusterv1.ResourceName]string {
	out := map[clusterv1.ResourceName]string{}
	for name, q := range l {
		out[name] = q.String()
	}
	return out
}
