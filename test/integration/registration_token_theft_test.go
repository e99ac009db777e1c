package integration

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/flotilla/agent"
	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	"github.com/flotilla-io/flotilla/internal/identity"
)

// joiner asks the hub for an agent's certificate with a bootstrap
// kubeconfig, as an agent's join does: it creates the ManagedCluster
// (unless it exists) and a CSR for agent id of cluster.
type joiner struct {
	cfg *rest.Config
}

func newJoiner(kubeconfig []byte) joiner {
	GinkgoHelper()
	cfg, err := clientcmd.RESTConfigFromKubeConfig(kubeconfig)
	Expect(err).NotTo(HaveOccurred())
	return joiner{cfg: cfg}
}

// ask returns the CSR's name and the key its certificate will belong to.
func (j joiner) ask(ctx SpecContext, cluster, agent string) (csr string, keyPEM []byte) {
	GinkgoHelper()
	err := crClient(j.cfg).Create(ctx, newManagedCluster(cluster))
	Expect(client.IgnoreAlreadyExists(err)).To(Succeed())
	cn, orgs := agentSubject(cluster, agent)
	keyPEM, csrPEM := newCSR(cn, orgs)
	return createClusterCSR(ctx, kubernetes.NewForConfigOrDie(j.cfg), cluster, csrPEM), keyPEM
}

// issued waits for CSR name's certificate and returns a configuration that
// authenticates with it and keyPEM alone.
func issued(ctx SpecContext, name string, keyPEM []byte) *rest.Config {
	GinkgoHelper()
	var certPEM []byte
	Eventually(func() []byte { certPEM = getCSR(ctx, name).Status.Certificate; return certPEM }).ShouldNot(BeEmpty(), "CSR %s is signed", name)
	return hubCP.ConfigFor(certPEM, keyPEM, "")
}

// readWorks lists the ManifestWorks of cluster's namespace with cfg.
func readWorks(ctx SpecContext, cfg *rest.Config, cluster string) func() error {
	return func() error {
		return crClient(cfg).List(ctx, &workv1.ManifestWorkList{}, client.InNamespace(cluster))
	}
}

// bindingSubjects are the subjects of cluster's ClusterRoleBinding.
func bindingSubjects(ctx SpecContext, cluster string) func() []rbacv1.Subject {
	return func() []rbacv1.Subject {
		crb := &rbacv1.ClusterRoleBinding{}
		if err := hubCP.Client.Get(ctx, client.ObjectKey{Name: "open-cluster-management:managedcluster:" + cluster}, crb); err != nil {
			return nil
		}
		return crb.Subjects
	}
}

var _ = Describe("A cluster's join token is not a key to another cluster", func() {
	It("refuses a second agent that asks as an accepted cluster with another cluster's bootstrap kubeconfig, at accept and at the hub, until --replace-agent replaces the agent and the old certificate is refused", func(ctx SpecContext) {
		donor, victim := newClusterName("theft-donor"), newClusterName("theft-victim")
		deleteClusterAfterSpec(donor)
		deleteClusterAfterSpec(victim)
		token := hubInit(ctx).HubToken
		tokenID, _, _ := strings.Cut(token, ".")
		// What `flotilla join` leaves on the donor's spoke.
		leftover := newJoiner(bootstrapKubeconfig(hubCP.URL, hubCP.CAData, token))

		By("joining both clusters, each with an agent of its own")
		donorCSR, donorKey := leftover.ask(ctx, donor, "donor-agent")
		victimCSR, victimKey := leftover.ask(ctx, victim, "victim-agent")
		res := onHub(ctx, "accept", "--clusters", donor+","+victim)
		Expect(res.Code).To(Equal(0), res.Stderr)
		issued(ctx, donorCSR, donorKey)
		victimAgent := issued(ctx, victimCSR, victimKey)
		Eventually(readWorks(ctx, victimAgent, victim)).Should(Succeed())
		reportJoined(ctx, victimAgent, victim)

		By("asking as the victim with the donor's leftover bootstrap kubeconfig")
		thiefCSR, thiefKey := leftover.ask(ctx, victim, "thief")
		// Each accept must refuse; the message names the agent the hub
		// recorded, which it does as soon as it sees the approval.
		Eventually(func() string {
			res = onHub(ctx, "accept", "--clusters", victim)
			Expect(res.Code).NotTo(Equal(0), "accept must not approve a second agent for an accepted cluster:\n%s", res.Stderr)
			return res.Stderr
		}).Should(ContainSubstring(fmt.Sprintf(
			"refused to approve 1 CSR(s) of cluster %[1]s: it already has an accepted agent, system:open-cluster-management:%[1]s:victim-agent, and a plain accept never replaces it:\n"+
				"  CSR %[2]s asks for a new agent, system:open-cluster-management:%[1]s:thief (requested by system:bootstrap:%[3]s)\n"+
				"Whoever holds a join token can ask for any cluster's name. If you have checked that the requester is the cluster's new agent (the old one is gone, e.g. it lost its certificate), "+
				"run `flotilla accept --clusters %[1]s --replace-agent thief`: the hub then gives the cluster's access to the new agent alone and refuses the old agent's certificate. "+
				"Otherwise delete the CSR (kubectl delete csr %[2]s) and the join token it was made with (kubectl -n kube-system delete secret bootstrap-token-%[3]s)",
			victim, thiefCSR, tokenID)))
		Expect(csrApproved(ctx, thiefCSR)).To(BeFalse())

		By("refusing it with --skip-approve-check and --wait too")
		res = onHub(ctx, "accept", "--clusters", victim, "--skip-approve-check")
		Expect(res.Code).NotTo(Equal(0))
		Expect(res.Stderr).To(ContainSubstring("a plain accept never replaces it"))
		res = onHub(ctx, "accept", "--clusters", victim, "--wait", "--timeout", "1m")
		Expect(res.Code).NotTo(Equal(0))
		Expect(res.Stderr).To(ContainSubstring("a plain accept never replaces it"))
		Expect(csrApproved(ctx, thiefCSR)).To(BeFalse())

		By("giving no access to a certificate a hub admin approved past accept")
		Eventually(bindingSubjects(ctx, victim)).Should(ConsistOf(rbacv1.Subject{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: identity.AgentUser(victim, "victim-agent")}),
			"the hub grants the victim's access to its accepted agent by name")
		approveAsAdmin(ctx, thiefCSR)
		thief := issued(ctx, thiefCSR, thiefKey)
		Expect(readWorks(ctx, thief, victim)()).To(beForbidden(), "the thief's certificate reads none of the victim's works")
		Expect(readWorks(ctx, victimAgent, victim)()).To(Succeed(), "the victim's agent keeps its access")
		Expect(getCluster(ctx, victim).Annotations).To(HaveKeyWithValue(identity.AcceptedAgentAnnotation, "victim-agent"))

		By("replacing the agent with --replace-agent, which the old agent's certificate does not survive")
		successorCSR, successorKey := leftover.ask(ctx, victim, "successor")
		res = onHub(ctx, "accept", "--clusters", victim, "--replace-agent", "successor")
		Expect(res.Code).To(Equal(0), res.Stderr)
		Expect(res.Stderr).To(ContainSubstring(fmt.Sprintf("Hub: agent system:open-cluster-management:%[1]s:successor replaces system:open-cluster-management:%[1]s:victim-agent as the agent of cluster %[1]s", victim)))
		successor := issued(ctx, successorCSR, successorKey)
		Eventually(readWorks(ctx, successor, victim)).Should(Succeed())
		Eventually(readWorks(ctx, victimAgent, victim)).Should(beForbidden(), "the replaced agent's certificate is refused")
		Expect(readWorks(ctx, thief, victim)()).To(beForbidden())
	})

	It("lets no join identity name a cluster's accepted agent", func(ctx SpecContext) {
		name := newClusterName("theft-claim")
		deleteClusterAfterSpec(name)
		_, c := bootstrapClients(hubInit(ctx).HubToken)
		mc := newManagedCluster(name)
		mc.Annotations = map[string]string{identity.AcceptedAgentAnnotation: "thief"}
		err := c.Create(ctx, mc)
		Expect(err).To(beForbidden())
		Expect(err.Error()).To(ContainSubstring("may not set annotation " + identity.AcceptedAgentAnnotation + " on ManagedCluster " + name))
	})
})

// reportJoined sets ManagedClusterJoined on cluster's status as its agent
// does once it stored its certificate, with the agent's own credentials.
func reportJoined(ctx SpecContext, agent *rest.Config, cluster string) {
	GinkgoHelper()
	c := crClient(agent)
	Eventually(func() error {
		mc := &clusterv1.ManagedCluster{}
		if err := c.Get(ctx, client.ObjectKey{Name: cluster}, mc); err != nil {
			return err
		}
		before := mc.DeepCopy()
		meta.SetStatusCondition(&mc.Status.Conditions, metav1.Condition{
			Type: clusterv1.ManagedClusterConditionJoined, Status: metav1.ConditionTrue, Reason: clusterv1.ReasonManagedClusterJoined, Message: "joined in a test",
		})
		return c.Status().Patch(ctx, mc, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}))
	}).Should(Succeed())
}

// approveAsAdmin approves CSR name as a hub admin would with kubectl,
// without flotilla accept's checks.
func approveAsAdmin(ctx SpecContext, name string) {
	GinkgoHelper()
	csr := getCSR(ctx, name)
	csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
		Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, Reason: "Test", Message: "approved by a hub admin with kubectl, in a test",
	})
	_, err := hubCP.Kube.CertificatesV1().CertificateSigningRequests().UpdateApproval(ctx, name, csr, metav1.UpdateOptions{})
	Expect(err).NotTo(HaveOccurred())
}

var _ = Describe("Join tokens", func() {
	It("are removed from the cluster by its agent once it holds a certificate of its own", func(ctx SpecContext) {
		env := newAgentEnv(ctx)
		name := newClusterName("token-removed")
		deleteClusterAfterSpec(name)
		opts := env.options(name)
		env.storeBootstrapSecret(ctx, opts.Namespace, bootstrapKubeconfig(hubCP.URL, hubCP.CAData, env.token))
		a := startAgent(opts)
		acceptAgent(ctx, name)
		Eventually(func() time.Time { return leaseRenewTime(ctx, name) }).ShouldNot(BeZero(), "the agent joined")

		By("leaving the hub's address and CA in the bootstrap kubeconfig, and no credentials")
		secret := &corev1.Secret{}
		Eventually(func() map[string]string {
			Expect(env.spoke.Client.Get(ctx, client.ObjectKey{Namespace: opts.Namespace, Name: agent.BootstrapSecretName}, secret)).To(Succeed())
			return secret.Annotations
		}).Should(HaveKey("registration.flotilla.io/join-credentials-removed"))
		kc, err := clientcmd.Load(secret.Data["kubeconfig"])
		Expect(err).NotTo(HaveOccurred())
		Expect(kc.Clusters[kc.Contexts[kc.CurrentContext].Cluster]).To(And(HaveField("Server", hubCP.URL), HaveField("CertificateAuthorityData", hubCP.CAData)))
		for user, info := range kc.AuthInfos {
			Expect(info.Token).To(BeEmpty(), "user %s of the bootstrap kubeconfig keeps no token", user)
		}
		Expect(string(secret.Data["kubeconfig"])).NotTo(ContainSubstring(env.token))
		Expect(a.logs.matching("Removed the join token from the bootstrap kubeconfig")).To(HaveLen(1))

		By("going on with its certificate after a restart")
		a.stop()
		restarted := time.Now()
		startAgent(opts)
		Eventually(func() time.Time { return leaseRenewTime(ctx, name) }).Should(BeTemporally(">", restarted))
	})

	It("made for one cluster join that cluster alone, once", func(ctx SpecContext) {
		name, other := newClusterName("token-one"), newClusterName("token-other")
		deleteClusterAfterSpec(name)
		deleteClusterAfterSpec(other)
		res := onHub(ctx, "init", "--cluster-name", name, "-o", "json")
		Expect(res.Code).To(Equal(0), res.Stderr)
		Expect(res.Stdout).To(ContainSubstring(`"cluster-name": "` + name + `"`))
		Expect(res.Stderr).To(ContainSubstring("for cluster " + name + " alone, once,"))
		var bound joinToken
		Expect(json.Unmarshal([]byte(res.Stdout), &bound)).To(Succeed())
		Expect(hubInit(ctx).HubToken).NotTo(Equal(bound.HubToken), "init without --cluster-name never hands out a token for one cluster")
		kube, c := bootstrapClients(bound.HubToken)
		tokenID, _, _ := strings.Cut(bound.HubToken, ".")

		By("refusing another cluster's ManagedCluster and CSRs")
		err := c.Create(ctx, newManagedCluster(other))
		Expect(err).To(beForbidden())
		Expect(err.Error()).To(ContainSubstring(fmt.Sprintf("user system:bootstrap:%s joins with a token for cluster %s alone (flotilla init --cluster-name), so it may not ask for cluster %s: join that cluster with a token of its own", tokenID, name, other)))
		cn, orgs := agentSubject(other, "a1")
		_, csrPEM := newCSR(cn, orgs)
		_, err = kube.CertificatesV1().CertificateSigningRequests().Create(ctx, clusterCSR(other, csrPEM), metav1.CreateOptions{})
		Expect(err).To(beForbidden())
		Expect(err.Error()).To(ContainSubstring("so it may not ask for cluster " + other))
		_, err = kube.CertificatesV1().CertificateSigningRequests().Create(ctx, clusterCSR(name, csrPEM), metav1.CreateOptions{})
		Expect(err).To(beForbidden(), "a CSR labelled for the cluster whose subject names another")
		Expect(err.Error()).To(ContainSubstring(fmt.Sprintf("user system:bootstrap:%s is joining with a token for cluster %s and may ask only for that cluster's certificates", tokenID, name)))

		By("joining the cluster it is for, once")
		createManagedCluster(ctx, c, name)
		csr := createCSR(ctx, kube, name, name)
		res = onHub(ctx, "accept", "--clusters", name)
		Expect(res.Code).To(Equal(0), res.Stderr)
		Eventually(func() []byte { return getCSR(ctx, csr).Status.Certificate }).ShouldNot(BeEmpty())
		token := &corev1.Secret{}
		Eventually(func() map[string]string {
			Expect(hubCP.Client.Get(ctx, client.ObjectKey{Namespace: metav1.NamespaceSystem, Name: "bootstrap-token-" + tokenID}, token)).To(Succeed())
			return token.Annotations
		}).Should(HaveKeyWithValue("registration.flotilla.io/token-used-by", csr), "the hub retires the token once its CSR is signed")
		expires, err := time.Parse(time.RFC3339, string(token.Data["expiration"]))
		Expect(err).NotTo(HaveOccurred())
		Expect(expires).To(BeTemporally("<=", time.Now().Add(5*time.Minute)), "the used token expires within minutes, not after its TTL")
		res = onHub(ctx, "init", "--cluster-name", name, "-o", "json")
		Expect(res.Code).To(Equal(0), res.Stderr)
		Expect(res.Stdout).NotTo(ContainSubstring(bound.HubToken), "init hands out no used token again")
	})
})

// clusterCSR is a client-certificate CSR labelled with cluster.
func clusterCSR(cluster string, csrPEM []byte) *certificatesv1.CertificateSigningRequest {
	return &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{GenerateName: cluster + "-", Labels: map[string]string{clusterv1.ClusterNameLabel: cluster}},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			Request:    csrPEM,
			SignerName: certificatesv1.KubeAPIServerClientSignerName,
			Usages:     []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment, certificatesv1.UsageClientAuth},
		},
	}
}
