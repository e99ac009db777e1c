package integration

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	certificatesv1 "k8s.io/api/certificates/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	"github.com/flotilla-io/flotilla/internal/identity"
)

// approved says whether CSR name has been approved, for Eventually.
func approved(ctx SpecContext, name string) func() bool {
	return func() bool {
		for _, c := range getCSR(ctx, name).Status.Conditions {
			if c.Type == certificatesv1.CertificateApproved {
				return true
			}
		}
		return false
	}
}

var _ = Describe("Registration: certificate renewal", func() {
	It("auto-approves an agent's own renewal, and no renewal that names another cluster or more rights", func(ctx SpecContext) {
		a, b := newClusterName("renew-a"), newClusterName("renew-b")
		createCluster(ctx, a)
		createCluster(ctx, b)
		acceptCluster(ctx, a)
		acceptCluster(ctx, b)
		kubeA := kubernetes.NewForConfigOrDie(agentConfig(ctx, a, "agent1"))

		By("having A's agent send renewals that it must not get")
		cnA, orgsA := agentSubject(a, "agent1")
		cnB, orgsB := agentSubject(b, "agent1")
		_, forB := newCSR(cnB, orgsB)
		_, aUserBGroups := newCSR(cnA, orgsB)
		_, extraGroup := newCSR(cnA, append(orgsA, identity.ClusterGroup(b)))
		_, otherAgent := newCSR(identity.AgentUser(a, "agent2"), orgsA)
		csrsA := kubeA.CertificatesV1().CertificateSigningRequests()
		Eventually(func() error {
			// A's RBAC may take a moment to reach the authorizer's cache.
			_, err := csrsA.List(ctx, metav1.ListOptions{Limit: 1, LabelSelector: clusterv1.ClusterNameLabel + "=" + a})
			return err
		}).Should(Succeed())
		// Those naming another cluster are refused at admission (see
		// registration_trust_test.go); another agent's name in cluster A
		// is created, and must never be approved.
		for _, csrPEM := range [][]byte{forB, aUserBGroups, extraGroup} {
			_, err := csrsA.Create(ctx, &certificatesv1.CertificateSigningRequest{
				ObjectMeta: metav1.ObjectMeta{GenerateName: a + "-", Labels: map[string]string{clusterv1.ClusterNameLabel: a}},
				Spec: certificatesv1.CertificateSigningRequestSpec{
					Request: csrPEM, SignerName: certificatesv1.KubeAPIServerClientSignerName,
					Usages: []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment, certificatesv1.UsageClientAuth},
				},
			}, metav1.CreateOptions{})
			Expect(err).To(beForbidden())
		}
		refused := []string{createClusterCSR(ctx, kubeA, a, otherAgent)}

		By("approving its own renewal")
		keyPEM, own := newCSR(cnA, orgsA)
		name := createClusterCSR(ctx, kubeA, a, own)
		Eventually(approved(ctx, name)).Should(BeTrue())
		var certPEM []byte
		Eventually(func() []byte { certPEM = getCSR(ctx, name).Status.Certificate; return certPEM }).ShouldNot(BeEmpty())
		Expect(whoAmI(ctx, hubCP.ConfigFor(certPEM, keyPEM, ""))).To(And(HaveField("Username", cnA), HaveField("Groups", ContainElements(orgsA))))

		By("leaving the others alone")
		Consistently(func(g Gomega) {
			for _, name := range refused {
				g.Expect(approved(ctx, name)()).To(BeFalse(), "CSR %s", name)
			}
		}, 3*time.Second, 250*time.Millisecond).Should(Succeed())
	})

	It("does not approve a renewal that a SubjectAccessReview does not allow", func(ctx SpecContext) {
		c := newClusterName("renew-sar")
		createCluster(ctx, c)
		acceptCluster(ctx, c)

		By("issuing a certificate with an agent's user name but none of the cluster's groups")
		user := identity.AgentUser(c, "rogue")
		rogue := kubernetes.NewForConfigOrDie(issueCertificate(ctx, c, user, nil))
		csrCreator := &rbacv1.ClusterRole{
			ObjectMeta: metav1.ObjectMeta{Name: "test-csr-creator-" + c},
			Rules:      []rbacv1.PolicyRule{{APIGroups: []string{"certificates.k8s.io"}, Resources: []string{"certificatesigningrequests"}, Verbs: []string{"create", "get"}}},
		}
		Expect(hubCP.Client.Create(ctx, csrCreator)).To(Succeed())
		binding := &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: csrCreator.Name},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: csrCreator.Name},
			Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}},
		}
		Expect(hubCP.Client.Create(ctx, binding)).To(Succeed())
		DeferCleanup(func(ctx SpecContext) {
			Expect(client.IgnoreNotFound(hubCP.Client.Delete(ctx, binding))).To(Succeed())
			Expect(client.IgnoreNotFound(hubCP.Client.Delete(ctx, csrCreator))).To(Succeed())
		})

		By("sending a renewal that is right in every other respect")
		_, request := newCSR(agentSubject(c, "rogue"))
		var name string
		Eventually(func() error {
			csr, err := rogue.CertificatesV1().CertificateSigningRequests().Create(ctx, &certificatesv1.CertificateSigningRequest{
				ObjectMeta: metav1.ObjectMeta{GenerateName: c + "-", Labels: map[string]string{"open-cluster-management.io/cluster-name": c}},
				Spec: certificatesv1.CertificateSigningRequestSpec{
					Request:    request,
					SignerName: certificatesv1.KubeAPIServerClientSignerName,
					Usages:     []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment, certificatesv1.UsageClientAuth},
				},
			}, metav1.CreateOptions{})
			if err == nil {
				name = csr.Name
			}
			return err
		}).Should(Succeed())
		Expect(getCSR(ctx, name).Spec.Username).To(Equal(user))
		Consistently(approved(ctx, name), 3*time.Second, 250*time.Millisecond).Should(BeFalse())
	})
})
