package integration

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/storage/names"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	"github.com/flotilla-io/flotilla/hub"
	"github.com/flotilla-io/flotilla/internal/identity"
)

// newClusterName returns a cluster name no other spec uses.
func newClusterName(prefix string) string {
	return names.SimpleNameGenerator.GenerateName(prefix + "-")
}

// createCluster creates ManagedCluster name as a joining agent does (not
// accepted), and deletes it when the spec ends.
func createCluster(ctx SpecContext, name string, mutate ...func(*clusterv1.ManagedCluster)) {
	GinkgoHelper()
	mc := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: name}}
	for _, m := range mutate {
		m(mc)
	}
	Expect(hubCP.Client.Create(ctx, mc)).To(Succeed())
	DeferCleanup(func(ctx SpecContext) {
		err := hubCP.Client.Delete(ctx, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: name}})
		Expect(client.IgnoreNotFound(err)).To(Succeed())
	})
}

// setAccepted sets spec.hubAcceptsClient as the hub admin.
func setAccepted(ctx SpecContext, name string, accepted bool) {
	GinkgoHelper()
	Eventually(func() error {
		mc := getCluster(ctx, name)
		before := mc.DeepCopy()
		mc.Spec.HubAcceptsClient = accepted
		return hubCP.Client.Patch(ctx, mc, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}))
	}).Should(Succeed())
}

// acceptCluster accepts a cluster as the hub admin and waits until the hub
// says so.
func acceptCluster(ctx SpecContext, name string) {
	GinkgoHelper()
	setAccepted(ctx, name, true)
	Eventually(func() *metav1.Condition {
		return meta.FindStatusCondition(getCluster(ctx, name).Status.Conditions, clusterv1.ManagedClusterConditionHubAccepted)
	}).Should(And(Not(BeNil()), HaveField("Status", metav1.ConditionTrue)))
}

func getCluster(ctx context.Context, name string) *clusterv1.ManagedCluster {
	GinkgoHelper()
	mc := &clusterv1.ManagedCluster{}
	Expect(hubCP.Client.Get(ctx, client.ObjectKey{Name: name}, mc)).To(Succeed())
	return mc
}

// clusterCondition returns a condition of a ManagedCluster, for Eventually.
func clusterCondition(ctx context.Context, name, conditionType string) func() *metav1.Condition {
	return func() *metav1.Condition {
		return meta.FindStatusCondition(getCluster(ctx, name).Status.Conditions, conditionType)
	}
}

// agentSubject is the certificate subject the contract gives agent a of cluster c.
func agentSubject(c, a string) (cn string, orgs []string) {
	return identity.AgentUser(c, a), []string{identity.ClusterGroup(c), identity.ManagedClustersGroup}
}

// issueCertificate gets a client certificate for cn and orgs the way an
// agent's first one is got: a CSR labelled with the cluster, approved by
// the hub admin, signed by the hub. It returns a configuration that
// authenticates with it and nothing else.
func issueCertificate(ctx SpecContext, cluster, cn string, orgs []string) *rest.Config {
	GinkgoHelper()
	keyPEM, csrPEM := newCSR(cn, orgs)
	name := createClusterCSR(ctx, hubCP.Kube, cluster, csrPEM)
	csr := getCSR(ctx, name)
	csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
		Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, Reason: "Test", Message: "approved by the hub admin in a test",
	})
	_, err := hubCP.Kube.CertificatesV1().CertificateSigningRequests().UpdateApproval(ctx, name, csr, metav1.UpdateOptions{})
	Expect(err).NotTo(HaveOccurred())
	var certPEM []byte
	Eventually(func() []byte { certPEM = getCSR(ctx, name).Status.Certificate; return certPEM }).ShouldNot(BeEmpty())
	return hubCP.ConfigFor(certPEM, keyPEM, "")
}

// agentConfig issues agent a of cluster c its certificate.
func agentConfig(ctx SpecContext, c, a string) *rest.Config {
	GinkgoHelper()
	cn, orgs := agentSubject(c, a)
	return issueCertificate(ctx, c, cn, orgs)
}

// createClusterCSR creates, with the given client, a client-certificate CSR
// labelled with cluster, as the contract says an agent does.
func createClusterCSR(ctx SpecContext, cs kubernetes.Interface, cluster string, csrPEM []byte) string {
	GinkgoHelper()
	csr, err := cs.CertificatesV1().CertificateSigningRequests().Create(ctx, &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{GenerateName: cluster + "-", Labels: map[string]string{clusterv1.ClusterNameLabel: cluster}},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			Request:           csrPEM,
			SignerName:        certificatesv1.KubeAPIServerClientSignerName,
			Usages:            []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment, certificatesv1.UsageClientAuth},
			ExpirationSeconds: ptr.To[int32](3600),
		},
	}, metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())
	return csr.Name
}

// updateCluster applies change to a fresh copy of ManagedCluster name and
// updates it with cl, again while it conflicts with the hub's own writes.
func updateCluster(ctx context.Context, cl client.Client, name string, change func(*clusterv1.ManagedCluster)) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		mc := &clusterv1.ManagedCluster{}
		if err := cl.Get(ctx, client.ObjectKey{Name: name}, mc); err != nil {
			return err
		}
		change(mc)
		return cl.Update(ctx, mc)
	})
}

// crClient is a controller-runtime client with the hub's types for cfg.
func crClient(cfg *rest.Config) client.Client {
	GinkgoHelper()
	c, err := client.New(cfg, client.Options{Scheme: hub.Scheme()})
	Expect(err).NotTo(HaveOccurred())
	return c
}

// beForbidden matches an error the API server returned with 403.
func beForbidden() OmegaMatcher {
	return Satisfy(apierrors.IsForbidden)
}

// exists says whether obj (named by its key) exists, for Eventually.
func exists(ctx context.Context, obj client.Object) func() bool {
	key := client.ObjectKeyFromObject(obj)
	return func() bool {
		err := hubCP.Client.Get(ctx, key, obj)
		if err != nil && !apierrors.IsNotFound(err) {
			Fail("get " + key.String() + ": " + err.Error())
		}
		return err == nil
	}
}
