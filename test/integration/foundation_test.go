package integration

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"os"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	authenticationv1 "k8s.io/api/authentication/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/flotilla-io/flotilla/test/framework"
)

// contractKinds is the table of kinds in shared/docs/contract.md.
var contractKinds = []schema.GroupVersionKind{
	{Group: "cluster.open-cluster-management.io", Version: "v1", Kind: "ManagedCluster"},
	{Group: "cluster.open-cluster-management.io", Version: "v1beta2", Kind: "ManagedClusterSet"},
	{Group: "cluster.open-cluster-management.io", Version: "v1beta2", Kind: "ManagedClusterSetBinding"},
	{Group: "cluster.open-cluster-management.io", Version: "v1beta1", Kind: "Placement"},
	{Group: "cluster.open-cluster-management.io", Version: "v1beta1", Kind: "PlacementDecision"},
	{Group: "cluster.open-cluster-management.io", Version: "v1alpha1", Kind: "AddOnPlacementScore"},
	{Group: "cluster.open-cluster-management.io", Version: "v1alpha1", Kind: "ClusterClaim"},
	{Group: "work.open-cluster-management.io", Version: "v1", Kind: "ManifestWork"},
	{Group: "work.open-cluster-management.io", Version: "v1", Kind: "AppliedManifestWork"},
	{Group: "work.open-cluster-management.io", Version: "v1alpha1", Kind: "ManifestWorkReplicaSet"},
	{Group: "policy.open-cluster-management.io", Version: "v1", Kind: "Policy"},
	{Group: "policy.open-cluster-management.io", Version: "v1", Kind: "PlacementBinding"},
	{Group: "policy.open-cluster-management.io", Version: "v1", Kind: "ConfigurationPolicy"},
	{Group: "policy.open-cluster-management.io", Version: "v1beta1", Kind: "PolicySet"},
}

var _ = Describe("The hub control plane", func() {
	It("serves every kind of the contract", func() {
		for _, gvk := range contractKinds {
			resources, err := hubCP.Kube.Discovery().ServerResourcesForGroupVersion(gvk.GroupVersion().String())
			Expect(err).NotTo(HaveOccurred(), "group version %s", gvk.GroupVersion())
			Expect(resources.APIResources).To(ContainElement(HaveField("Kind", gvk.Kind)), "kind %s", gvk)
		}
	})

	It("stores the example ManifestWork unchanged", func(ctx SpecContext) {
		data, err := os.ReadFile(sharedExample("manifestwork-hello.yaml"))
		Expect(err).NotTo(HaveOccurred())
		want := &unstructured.Unstructured{}
		Expect(yaml.Unmarshal(data, &want.Object)).To(Succeed())
		Expect(hubCP.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: want.GetNamespace()}})).To(Succeed())

		Expect(hubCP.Client.Create(ctx, want.DeepCopy())).To(Succeed())
		got := &unstructured.Unstructured{}
		got.SetGroupVersionKind(want.GroupVersionKind())
		Expect(hubCP.Client.Get(ctx, client.ObjectKeyFromObject(want), got)).To(Succeed())
		Expect(equality.Semantic.DeepEqual(got.Object["spec"], want.Object["spec"])).To(BeTrue(),
			"spec changed on the way through the API server:\nsent %v\ngot  %v", want.Object["spec"], got.Object["spec"])
	})

	It("signs an approved kube-apiserver-client CSR, and the certificate authenticates with its CN and groups", func(ctx SpecContext) {
		user := "system:open-cluster-management:cluster1:agent1"
		groups := []string{"system:open-cluster-management:cluster1", "system:open-cluster-management:managed-clusters"}
		keyPEM, csrPEM := newCSR(user, groups)
		csrs := hubCP.Kube.CertificatesV1().CertificateSigningRequests()
		csr, err := csrs.Create(ctx, &certificatesv1.CertificateSigningRequest{
			ObjectMeta: metav1.ObjectMeta{GenerateName: "cluster1-"},
			Spec: certificatesv1.CertificateSigningRequestSpec{
				Request:           csrPEM,
				SignerName:        certificatesv1.KubeAPIServerClientSignerName,
				Usages:            []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment, certificatesv1.UsageClientAuth},
				ExpirationSeconds: ptr.To[int32](3600),
			},
		}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())

		By("leaving an unapproved CSR unsigned")
		Consistently(func() []byte { return getCSR(ctx, csr.Name).Status.Certificate }, "1s").Should(BeEmpty())

		By("approving it")
		csr = getCSR(ctx, csr.Name)
		csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
			Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, Reason: "Test", Message: "approved by the test",
		})
		_, err = csrs.UpdateApproval(ctx, csr.Name, csr, metav1.UpdateOptions{})
		Expect(err).NotTo(HaveOccurred())
		var certPEM []byte
		Eventually(func() []byte { certPEM = getCSR(ctx, csr.Name).Status.Certificate; return certPEM }).ShouldNot(BeEmpty())

		info := whoAmI(ctx, hubCP.ConfigFor(certPEM, keyPEM, ""))
		Expect(info.Username).To(Equal(user))
		Expect(info.Groups).To(ContainElements(groups))
	})

	It("authenticates a bootstrap token with only its groups", func(ctx SpecContext) {
		// A token of its own: other specs use well-known "wrong" tokens.
		id, secret := "f1a7c3", "0123456789abcdef"
		_, err := hubCP.Kube.CoreV1().Secrets(metav1.NamespaceSystem).Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: bootstrapapi.BootstrapTokenSecretPrefix + id},
			Type:       bootstrapapi.SecretTypeBootstrapToken,
			StringData: map[string]string{
				bootstrapapi.BootstrapTokenIDKey:               id,
				bootstrapapi.BootstrapTokenSecretKey:           secret,
				bootstrapapi.BootstrapTokenUsageAuthentication: "true",
				bootstrapapi.BootstrapTokenExtraGroupsKey:      "system:bootstrappers:managedcluster",
			},
		}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())

		cfg := hubCP.ConfigFor(nil, nil, id+"."+secret)
		By("authenticating once the API server's token cache has the Secret")
		var info authenticationv1.UserInfo
		Eventually(func() error {
			review, err := kubernetes.NewForConfigOrDie(cfg).AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
			if err == nil {
				info = review.Status.UserInfo
			}
			return err
		}).Should(Succeed())
		Expect(info.Username).To(Equal("system:bootstrap:" + id))
		Expect(info.Groups).To(ConsistOf("system:bootstrappers", "system:bootstrappers:managedcluster", "system:authenticated"))

		By("granting it nothing without RBAC")
		_, err = kubernetes.NewForConfigOrDie(cfg).CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
		Expect(apierrors.IsForbidden(err)).To(BeTrue(), "listing namespaces: %v", err)

		By("refusing a wrong secret")
		_, err = kubernetes.NewForConfigOrDie(hubCP.ConfigFor(nil, nil, id+".ffffffffffffffff")).
			AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
		Expect(apierrors.IsUnauthorized(err)).To(BeTrue(), "wrong secret: %v", err)
	})

	It("publishes cluster-info to anonymous clients", func(ctx SpecContext) {
		anonymous := kubernetes.NewForConfigOrDie(hubCP.ConfigFor(nil, nil, ""))
		cm, err := anonymous.CoreV1().ConfigMaps(metav1.NamespacePublic).Get(ctx, bootstrapapi.ConfigMapClusterInfo, metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(cm.Data[bootstrapapi.KubeConfigKey]).To(ContainSubstring(hubCP.URL))
	})
})

var _ = Describe("Control planes", Ordered, func() {
	It("keep objects across a restart on the same data directory", func(ctx SpecContext) {
		cp, err := framework.Start(ctx, framework.Hub)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { cp.Stop() })
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "survivor"}}
		Expect(cp.Client.Create(ctx, ns)).To(Succeed())
		caBefore := cp.CAData

		cp, err = cp.Restart(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(cp.Client.Get(ctx, client.ObjectKeyFromObject(ns), &corev1.Namespace{})).To(Succeed())
		Expect(cp.CAData).To(Equal(caBefore), "the CA must be reused, not recreated")
	})

	It("are independent of each other", func(ctx SpecContext) {
		spoke, err := framework.Start(ctx, framework.Spoke)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(spoke.Stop)
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "only-on-the-spoke"}}
		Expect(spoke.Client.Create(ctx, ns)).To(Succeed())
		err = hubCP.Client.Get(ctx, client.ObjectKeyFromObject(ns), &corev1.Namespace{})
		Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the hub must not see the spoke's namespace: %v", err)
		Expect(spoke.CAData).NotTo(Equal(hubCP.CAData))

		By("rejecting the hub's admin credentials on the spoke")
		hubAdmin := rest.CopyConfig(hubCP.Config)
		hubAdmin.Host, hubAdmin.CAData = spoke.URL, spoke.CAData
		_, err = kubernetes.NewForConfigOrDie(hubAdmin).CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
		Expect(apierrors.IsUnauthorized(err)).To(BeTrue(), "hub admin on the spoke: %v", err)
	})
})

func getCSR(ctx SpecContext, name string) *certificatesv1.CertificateSigningRequest {
	GinkgoHelper()
	csr, err := hubCP.Kube.CertificatesV1().CertificateSigningRequests().Get(ctx, name, metav1.GetOptions{})
	Expect(err).NotTo(HaveOccurred())
	return csr
}

func whoAmI(ctx SpecContext, cfg *rest.Config) authenticationv1.UserInfo {
	GinkgoHelper()
	review, err := kubernetes.NewForConfigOrDie(cfg).AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())
	return review.Status.UserInfo
}

// newCSR returns a new private key and a PEM certificate request for it.
func newCSR(cn string, orgs []string) (keyPEM, csrPEM []byte) {
	GinkgoHelper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	Expect(err).NotTo(HaveOccurred())
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: cn, Organization: orgs}}, key)
	Expect(err).NotTo(HaveOccurred())
	keyDER, err := x509.MarshalECPrivateKey(key)
	Expect(err).NotTo(HaveOccurred())
	return pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
		pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
}
