package integration

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	certificatesv1 "k8s.io/api/certificates/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/flotilla/agent"
	addonv1alpha1 "github.com/flotilla-io/flotilla/api/addon/v1alpha1"
	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	"github.com/flotilla-io/flotilla/internal/addon"
	"github.com/flotilla-io/flotilla/internal/identity"
)

// The add-on registration specs run one real agent, whose cluster's
// add-ons are declared on the hub by each spec. The specs write what the
// add-on's manager writes on the ManagedClusterAddOn (registrations,
// namespace), the same as the hub's template manager would, so that they
// hold whether or not it runs beside them.
var _ = Describe("addon registration", Ordered, func() {
	var (
		env     *agentEnv
		c       string
		opts    agent.Options
		agentRC *rest.Config
		running *runningAgent
	)

	BeforeAll(func(ctx SpecContext) {
		env = newAgentEnv(ctx)
		c = newClusterName("addon-reg")
		opts = env.options(c)
		// Certificates are asked for an hour and renewed 25 s after they
		// were issued, so that a spec sees an add-on's rotate.
		opts.RenewBefore = time.Hour - 25*time.Second
		opts.AddOnLeaseCheckInterval = time.Second
		env.storeBootstrapSecret(ctx, opts.Namespace, bootstrapKubeconfig(hubCP.URL, hubCP.CAData, env.token))
		deleteClusterAfterSpec(c)
		running = startAgentUnmanaged(opts)
		// The agent the container ends with, which a spec may have restarted.
		DeferCleanup(func() { running.stop() })
		acceptAgent(ctx, c)
		Eventually(clusterCondition(ctx, c, clusterv1.ManagedClusterConditionJoined)).Should(HaveField("Status", metav1.ConditionTrue))
		Eventually(func() string { return getCluster(ctx, c).Annotations[identity.AcceptedAgentAnnotation] }).ShouldNot(BeEmpty())
		data := env.hubSecret(ctx, opts.Namespace)
		agentRC = hubCP.ConfigFor(data["tls.crt"], data["tls.key"], "")
	})

	It("registers a template add-on's kubeClient: driver, CSR, hub approval, a kubeconfig that reaches exactly what was granted, rotation", func(ctx SpecContext) {
		a := newClusterName("kc")
		ns := "install-" + a
		declareTemplateAddOn(ctx, a, ns, addonv1alpha1.RegistrationSpec{Type: "KubeClient"})
		createMCA(ctx, c, a, ns)
		user, groups := addon.AgentUser(c, a, a+"-agent"), addon.AgentGroups(c, a)
		writeAddOnManagerStatus(ctx, c, a, ns, addonv1alpha1.RegistrationConfig{SignerName: addon.KubeAPIServerClientSigner, Subject: addonv1alpha1.Subject{User: user, Groups: groups}})

		By("writing driver csr")
		Eventually(func() string { return getMCA(ctx, c, a).Status.KubeClientDriver }).Should(Equal("csr"))

		By("creating no CSR while the install namespace does not exist, and none itself")
		Consistently(func() []certificatesv1.CertificateSigningRequest { return addOnCSRs(ctx, c, a) }, "3s").Should(BeEmpty())
		_, err := env.spoke.Kube.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the agent created the install namespace")
		createAddOnNamespace(ctx, env, ns)

		By("asking with a CSR as the contract spells it, which the hub approves")
		var csr certificatesv1.CertificateSigningRequest
		Eventually(func() []certificatesv1.CertificateSigningRequest { return addOnCSRs(ctx, c, a) }).Should(HaveLen(1))
		csr = addOnCSRs(ctx, c, a)[0]
		Expect(csr.GenerateName).To(Equal("addon-" + c + "-" + a + "-"))
		Expect(csr.Spec.SignerName).To(Equal(certificatesv1.KubeAPIServerClientSignerName))
		Expect(csr.Spec.Usages).To(ConsistOf(certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment, certificatesv1.UsageClientAuth))
		Expect(csr.Spec.ExpirationSeconds).To(HaveValue(BeEquivalentTo(3600)))
		Expect(csr.Spec.Username).To(Equal(agentUser(c, getCluster(ctx, c).Annotations[identity.AcceptedAgentAnnotation])))
		req := parseCertificateRequest(csr.Spec.Request)
		Expect(req.Subject.CommonName).To(Equal(user))
		Expect(req.Subject.Organization).To(ConsistOf(groups))
		Expect(req.DNSNames).To(Equal([]string{a + ".addon.open-cluster-management.io"}))
		Expect(req.PublicKeyAlgorithm).To(Equal(x509.ECDSA))
		Eventually(func() []certificatesv1.CertificateSigningRequestCondition {
			return getCSR(ctx, csr.Name).Status.Conditions
		}).Should(ContainElement(And(
			HaveField("Type", certificatesv1.CertificateApproved),
			HaveField("Reason", addon.ReasonCSRAutoApproved), HaveField("Message", addon.MessageCSRAutoApproved))))

		By("storing the certificate and a kubeconfig in <addon>-hub-kubeconfig, and saying so")
		secret := waitForAddOnSecret(ctx, env, ns, a+"-hub-kubeconfig", "")
		Expect(secret.Data).To(HaveKey("kubeconfig"))
		Expect(string(secret.Data["cluster-name"])).To(Equal(c))
		cert := storedCertificate(secret.Data)
		Expect(cert.Subject.CommonName).To(Equal(user))
		Expect(cert.PublicKey).To(Equal(req.PublicKey))
		kc, err := clientcmd.Load(secret.Data["kubeconfig"])
		Expect(err).NotTo(HaveOccurred())
		Expect(kc.CurrentContext).To(Equal("default-context"))
		Expect(kc.Contexts["default-context"].AuthInfo).To(Equal("default-auth"))
		Expect(kc.AuthInfos["default-auth"].ClientCertificate).To(Equal("tls.crt"))
		Expect(kc.Clusters[kc.Contexts["default-context"].Cluster].Server).To(Equal(hubCP.URL))
		Eventually(func() *metav1.Condition {
			return meta.FindStatusCondition(getMCA(ctx, c, a).Status.Conditions, addon.ConditionClusterCertificateRotated)
		}).Should(And(Not(BeNil()), HaveField("Status", metav1.ConditionTrue), HaveField("Reason", addon.ReasonClientCertificateUpdated),
			HaveField("Message", HavePrefix("client certificate rotated starting from "))))

		By("saying so again when the condition was lost (a status write that failed after the Secret was stored)")
		Eventually(func() error {
			mca := getMCA(ctx, c, a)
			meta.RemoveStatusCondition(&mca.Status.Conditions, addon.ConditionClusterCertificateRotated)
			return hubCP.Client.Status().Update(ctx, mca)
		}).Should(Succeed())
		Eventually(func() *metav1.Condition {
			return meta.FindStatusCondition(getMCA(ctx, c, a).Status.Conditions, addon.ConditionClusterCertificateRotated)
		}).Should(And(Not(BeNil()), HaveField("Status", metav1.ConditionTrue), HaveField("Reason", addon.ReasonClientCertificateUpdated)))
		Expect(storedCertificate(waitForAddOnSecret(ctx, env, ns, a+"-hub-kubeconfig", "").Data).SerialNumber).To(Equal(cert.SerialNumber), "asked for a new certificate instead")

		By("reaching the hub with the kubeconfig as the add-on, with exactly the access granted to it")
		grantConfigMapReader(ctx, c, user)
		_, err = hubCP.Kube.CoreV1().ConfigMaps(c).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "hello"}}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		addOnKube := addOnClient(secret)
		Eventually(func() error {
			_, err := addOnKube.CoreV1().ConfigMaps(c).Get(ctx, "hello", metav1.GetOptions{})
			return err
		}).Should(Succeed())
		_, err = addOnKube.CoreV1().Secrets(c).List(ctx, metav1.ListOptions{})
		Expect(err).To(beForbidden(), "list Secrets in its cluster's namespace")
		_, err = addOnKube.CoreV1().ConfigMaps("default").Get(ctx, "hello", metav1.GetOptions{})
		Expect(err).To(beForbidden(), "read another namespace")
		_, err = addOnKube.CoreV1().ConfigMaps(c).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x"}}, metav1.CreateOptions{})
		Expect(err).To(beForbidden(), "create what it may only read")

		By("rotating the certificate before it runs out, with a new key, to a kubeconfig that works")
		Eventually(func() string {
			return storedCertificate(waitForAddOnSecret(ctx, env, ns, a+"-hub-kubeconfig", "").Data).SerialNumber.String()
		}, "90s").ShouldNot(Equal(cert.SerialNumber.String()))
		rotated := waitForAddOnSecret(ctx, env, ns, a+"-hub-kubeconfig", "")
		Expect(rotated.Data["tls.key"]).NotTo(Equal(secret.Data["tls.key"]))
		Eventually(func() error {
			_, err := addOnClient(rotated).CoreV1().ConfigMaps(c).Get(ctx, "hello", metav1.GetOptions{})
			return err
		}).Should(Succeed())
	})

	It("registers a framework add-on whose own manager approves, reports its Lease, follows a changed registration and deletes its Secrets with it", func(ctx SpecContext) {
		a := newClusterName("fw")
		ns := "install-" + a
		Expect(hubCP.Client.Create(ctx, &addonv1alpha1.ClusterManagementAddOn{
			ObjectMeta: metav1.ObjectMeta{Name: a, Annotations: map[string]string{addon.LifecycleAnnotation: addon.LifecycleSelf}},
		})).To(Succeed())
		DeferCleanup(deleteHubObject, &addonv1alpha1.ClusterManagementAddOn{ObjectMeta: metav1.ObjectMeta{Name: a}})
		createAddOnNamespace(ctx, env, ns)
		createMCA(ctx, c, a, ns)
		subject := addonv1alpha1.Subject{User: addon.AgentUser(c, a, "agent"), Groups: addon.AgentGroups(c, a)}
		writeAddOnManagerStatus(ctx, c, a, ns, addonv1alpha1.RegistrationConfig{SignerName: addon.KubeAPIServerClientSigner, Subject: subject})

		By("leaving the CSR of an add-on that runs its own manager to that manager")
		Eventually(func() []certificatesv1.CertificateSigningRequest { return addOnCSRs(ctx, c, a) }).Should(HaveLen(1))
		first := addOnCSRs(ctx, c, a)[0]
		Consistently(func() []certificatesv1.CertificateSigningRequestCondition {
			return getCSR(ctx, first.Name).Status.Conditions
		}, "2s").Should(BeEmpty())
		approveAsManager(ctx, first.Name)
		secret := waitForAddOnSecret(ctx, env, ns, a+"-hub-kubeconfig", subject.User)

		By("reporting Available from the add-on's Lease: Unknown without one, True while renewed, False once it stops")
		available := func() *metav1.Condition {
			return meta.FindStatusCondition(getMCA(ctx, c, a).Status.Conditions, addon.ConditionAvailable)
		}
		Eventually(available).Should(And(Not(BeNil()), HaveField("Status", metav1.ConditionUnknown),
			HaveField("Reason", addon.ReasonLeaseNotFound), HaveField("Message", "The status of "+a+" add-on is unknown.")))
		lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: a},
			Spec: coordinationv1.LeaseSpec{LeaseDurationSeconds: ptr.To[int32](60), RenewTime: ptr.To(metav1.NewMicroTime(time.Now()))}}
		Expect(env.spoke.Client.Create(ctx, lease)).To(Succeed())
		Eventually(available).Should(And(HaveField("Status", metav1.ConditionTrue),
			HaveField("Reason", addon.ReasonLeaseUpdated), HaveField("Message", a+" add-on is available.")))
		lease.Spec.RenewTime = ptr.To(metav1.NewMicroTime(time.Now().Add(-6 * time.Minute)))
		Expect(env.spoke.Client.Update(ctx, lease)).To(Succeed())
		Eventually(available).Should(And(HaveField("Status", metav1.ConditionFalse),
			HaveField("Reason", addon.ReasonLeaseUpdateStopped), HaveField("Message", a+" add-on is not available.")))

		By("deleting the Secret of a changed registration and registering again for the new subject")
		subject.User = addon.AgentUser(c, a, "agent2")
		writeAddOnManagerStatus(ctx, c, a, ns, addonv1alpha1.RegistrationConfig{SignerName: addon.KubeAPIServerClientSigner, Subject: subject})
		Eventually(func() bool {
			s, err := env.spoke.Kube.CoreV1().Secrets(ns).Get(ctx, a+"-hub-kubeconfig", metav1.GetOptions{})
			return apierrors.IsNotFound(err) || err == nil && s.UID != secret.UID
		}).Should(BeTrue())
		var second certificatesv1.CertificateSigningRequest
		Eventually(func() string {
			for _, csr := range addOnCSRs(ctx, c, a) {
				if parseCertificateRequest(csr.Spec.Request).Subject.CommonName == subject.User {
					second = csr
				}
			}
			return second.Name
		}).ShouldNot(BeEmpty())
		approveAsManager(ctx, second.Name)
		renewed := waitForAddOnSecret(ctx, env, ns, a+"-hub-kubeconfig", subject.User)
		Expect(renewed.UID).NotTo(Equal(secret.UID))

		By("keeping the Secret while the ManagedClusterAddOn is being deleted, and deleting it once it is gone")
		const hold = "test.flotilla.io/hold"
		Eventually(func() error {
			mca := getMCA(ctx, c, a)
			mca.Finalizers = append(mca.Finalizers, hold)
			return hubCP.Client.Update(ctx, mca)
		}).Should(Succeed())
		Expect(hubCP.Client.Delete(ctx, getMCA(ctx, c, a))).To(Succeed())
		Eventually(func() bool { return getMCA(ctx, c, a).DeletionTimestamp != nil }).Should(BeTrue())
		Consistently(func() error {
			_, err := env.spoke.Kube.CoreV1().Secrets(ns).Get(ctx, a+"-hub-kubeconfig", metav1.GetOptions{})
			return err
		}, "2s").Should(Succeed())
		Eventually(func() error {
			mca := getMCA(ctx, c, a)
			mca.Finalizers = slices.DeleteFunc(mca.Finalizers, func(f string) bool { return f == hold })
			return hubCP.Client.Update(ctx, mca)
		}).Should(Succeed())
		Eventually(func() bool {
			_, err := env.spoke.Kube.CoreV1().Secrets(ns).Get(ctx, a+"-hub-kubeconfig", metav1.GetOptions{})
			return apierrors.IsNotFound(err)
		}).Should(BeTrue())
	})

	It("deletes, when it starts, the Secrets of an add-on that went while it was stopped", func(ctx SpecContext) {
		a := newClusterName("away")
		ns := "install-" + a
		Expect(hubCP.Client.Create(ctx, &addonv1alpha1.ClusterManagementAddOn{
			ObjectMeta: metav1.ObjectMeta{Name: a, Annotations: map[string]string{addon.LifecycleAnnotation: addon.LifecycleSelf}},
		})).To(Succeed())
		DeferCleanup(deleteHubObject, &addonv1alpha1.ClusterManagementAddOn{ObjectMeta: metav1.ObjectMeta{Name: a}})
		createAddOnNamespace(ctx, env, ns)
		createMCA(ctx, c, a, ns)
		subject := addonv1alpha1.Subject{User: addon.AgentUser(c, a, "agent"), Groups: addon.AgentGroups(c, a)}
		writeAddOnManagerStatus(ctx, c, a, ns, addonv1alpha1.RegistrationConfig{SignerName: addon.KubeAPIServerClientSigner, Subject: subject})
		Eventually(func() []certificatesv1.CertificateSigningRequest { return addOnCSRs(ctx, c, a) }).Should(HaveLen(1))
		approveAsManager(ctx, addOnCSRs(ctx, c, a)[0].Name)
		waitForAddOnSecret(ctx, env, ns, a+"-hub-kubeconfig", subject.User)

		running.stop()
		Expect(hubCP.Client.Delete(ctx, getMCA(ctx, c, a))).To(Succeed())
		Eventually(exists(ctx, &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: c, Name: a}})).Should(BeFalse())
		running = startAgentUnmanaged(opts)
		Eventually(func() bool {
			_, err := env.spoke.Kube.CoreV1().Secrets(ns).Get(ctx, a+"-hub-kubeconfig", metav1.GetOptions{})
			return apierrors.IsNotFound(err)
		}, "60s").Should(BeTrue())
	})

	It("stops creating CSRs while ten of the add-on's are on the hub", func(ctx SpecContext) {
		a := newClusterName("many")
		ns := "install-" + a
		Expect(hubCP.Client.Create(ctx, &addonv1alpha1.ClusterManagementAddOn{
			ObjectMeta: metav1.ObjectMeta{Name: a, Annotations: map[string]string{addon.LifecycleAnnotation: addon.LifecycleSelf}},
		})).To(Succeed())
		DeferCleanup(deleteHubObject, &addonv1alpha1.ClusterManagementAddOn{ObjectMeta: metav1.ObjectMeta{Name: a}})
		subject := addonv1alpha1.Subject{User: addon.AgentUser(c, a, "agent"), Groups: addon.AgentGroups(c, a)}
		for range addon.MaxCSRs {
			createAddOnCSR(ctx, hubCP.Kube, c, a, subject.User, subject.Groups)
		}
		createAddOnNamespace(ctx, env, ns)
		createMCA(ctx, c, a, ns)
		writeAddOnManagerStatus(ctx, c, a, ns, addonv1alpha1.RegistrationConfig{SignerName: addon.KubeAPIServerClientSigner, Subject: subject})
		Eventually(func() *metav1.Condition {
			return meta.FindStatusCondition(getMCA(ctx, c, a).Status.Conditions, addon.ConditionClusterCertificateRotated)
		}).Should(And(Not(BeNil()), HaveField("Status", metav1.ConditionFalse),
			HaveField("Reason", addon.ReasonClientCertificateUpdateFailed), HaveField("Message", addon.MessageTooManyCSRs)))
		Expect(addOnCSRs(ctx, c, a)).To(HaveLen(addon.MaxCSRs))
	})

	It("registers a template add-on's custom signer, signed by the hub with the template's CA", func(ctx SpecContext) {
		a := newClusterName("cs")
		ns := "install-" + a
		signer := "example.com/" + a
		caCert, caPEM, caKeyPEM := newRSACA()
		caSecret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "open-cluster-management-hub", Name: a + "-ca"}, Type: corev1.SecretTypeTLS,
			Data: map[string][]byte{"tls.crt": caPEM, "tls.key": caKeyPEM}}
		Expect(hubCP.Client.Create(ctx, caSecret)).To(Succeed())
		DeferCleanup(deleteHubObject, caSecret)
		subject := &addonv1alpha1.Subject{User: a + "-user", Groups: []string{a + "-group"}, OrganizationUnits: []string{"unit"}}
		declareTemplateAddOn(ctx, a, ns, addonv1alpha1.RegistrationSpec{Type: "CustomSigner", CustomSigner: &addonv1alpha1.CustomSignerRegistrationConfig{
			SignerName: signer, Subject: subject, SigningCA: addonv1alpha1.SigningCARef{Name: a + "-ca"},
		}})
		createAddOnNamespace(ctx, env, ns)
		createMCA(ctx, c, a, ns)
		writeAddOnManagerStatus(ctx, c, a, ns, addonv1alpha1.RegistrationConfig{SignerName: signer, Subject: *subject})

		secretName := a + "-example.com-" + a + "-client-cert"
		secret := waitForAddOnSecret(ctx, env, ns, secretName, subject.User)
		Expect(secret.Data).NotTo(HaveKey("kubeconfig"))
		Expect(string(secret.Data["cluster-name"])).To(Equal(c))
		cert := storedCertificate(secret.Data)
		Expect(cert.CheckSignatureFrom(caCert)).To(Succeed(), "signed by the template's CA")
		Expect(cert.Subject.Organization).To(Equal(subject.Groups))
		Expect(cert.Subject.OrganizationalUnit).To(Equal(subject.OrganizationUnits))
		Expect(cert.DNSNames).To(Equal([]string{a + ".addon.open-cluster-management.io"}))
		Expect(cert.ExtKeyUsage).To(ConsistOf(x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth))
		Expect(cert.NotAfter.Sub(cert.NotBefore)).To(BeNumerically("<=", 24*time.Hour+time.Minute))
		csrs := addOnCSRs(ctx, c, a)
		Expect(csrs).To(HaveLen(1))
		Expect(csrs[0].Spec.SignerName).To(Equal(signer))
		Expect(csrs[0].Status.Conditions).To(ContainElement(HaveField("Reason", addon.ReasonCSRAutoApproved)))
	})

	It("refuses CSRs for another cluster's add-on, and approves none the accepted agent did not ask for", func(ctx SpecContext) {
		a := newClusterName("rf")
		ns := "install-" + a
		other := newClusterName("addon-other")
		createCluster(ctx, other)
		acceptCluster(ctx, other)
		declareTemplateAddOn(ctx, a, ns, addonv1alpha1.RegistrationSpec{Type: "KubeClient"})
		createMCA(ctx, c, a, ns)
		createMCA(ctx, other, a, ns)
		agentKube := kubernetes.NewForConfigOrDie(agentRC)
		ownUser, ownGroups := addon.AgentUser(c, a, a+"-agent"), addon.AgentGroups(c, a)
		otherUser, otherGroups := addon.AgentUser(other, a, a+"-agent"), addon.AgentGroups(other, a)

		By("refusing the agent a CSR labelled with, or asking for, another cluster's add-on identity")
		for _, tc := range []struct {
			label, cn string
			orgs      []string
		}{{other, otherUser, otherGroups}, {c, otherUser, otherGroups}, {c, ownUser, otherGroups}, {c, ownUser, append([]string{"system:masters"}, ownGroups...)}} {
			_, err := tryAddOnCSR(ctx, agentKube, tc.label, a, tc.cn, tc.orgs)
			Expect(err).To(beForbidden(), "a CSR labelled %s for %s %v", tc.label, tc.cn, tc.orgs)
		}

		By("not letting the agent approve a CSR")
		bootKube, _ := bootstrapClients(createBootstrapToken(ctx))
		byToken := createAddOnCSR(ctx, bootKube, c, a, ownUser, ownGroups)
		csr := getCSR(ctx, byToken)
		csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
			Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, Reason: "ByTheAgent", Message: "approved by the agent",
		})
		_, err := agentKube.CertificatesV1().CertificateSigningRequests().UpdateApproval(ctx, byToken, csr, metav1.UpdateOptions{})
		Expect(err).To(beForbidden())

		By("leaving pending, with the reason in an event, a CSR for the add-on's identity that a join token, or an agent the hub recorded for no cluster, asked for")
		_, otherCSRPEM := newCSR(otherUser, otherGroups)
		otherKube := kubernetes.NewForConfigOrDie(agentConfig(ctx, other, "agent1"))
		byOther := createAddOnCSRFromPEM(ctx, otherKube, other, a, otherCSRPEM)
		for name, reason := range map[string]string{byToken: "is not a cluster agent", byOther: "is not the accepted agent"} {
			Eventually(func() []string { return csrEventNotes(ctx, name) }).Should(ContainElement(ContainSubstring(reason)), "CSR %s", name)
			Expect(getCSR(ctx, name).Status.Conditions).To(BeEmpty())
		}

		By("approving the same request from the cluster's accepted agent")
		own, err := tryAddOnCSR(ctx, agentKube, c, a, ownUser, ownGroups)
		Expect(err).NotTo(HaveOccurred())
		Eventually(func() []certificatesv1.CertificateSigningRequestCondition { return getCSR(ctx, own).Status.Conditions }).
			Should(ContainElement(HaveField("Reason", addon.ReasonCSRAutoApproved)))
	})

	It("approves a CSR left pending for a ManagedClusterAddOn not made yet, once it is made", func(ctx SpecContext) {
		a := newClusterName("late")
		ns := "install-" + a
		declareTemplateAddOn(ctx, a, ns, addonv1alpha1.RegistrationSpec{Type: "KubeClient"})
		agentKube := kubernetes.NewForConfigOrDie(agentRC)
		name, err := tryAddOnCSR(ctx, agentKube, c, a, addon.AgentUser(c, a, a+"-agent"), addon.AgentGroups(c, a))
		Expect(err).NotTo(HaveOccurred())
		Eventually(func() []string { return csrEventNotes(ctx, name) }).Should(ContainElement(ContainSubstring("has no ManagedClusterAddOn")))
		Expect(getCSR(ctx, name).Status.Conditions).To(BeEmpty())

		createMCA(ctx, c, a, ns)
		Eventually(func() []certificatesv1.CertificateSigningRequestCondition { return getCSR(ctx, name).Status.Conditions }).
			Should(ContainElement(HaveField("Reason", addon.ReasonCSRAutoApproved)))
	})
})

// declareTemplateAddOn creates AddOnTemplate <a>-0.1.0, with a Deployment
// in namespace ns and the registration reg, and ClusterManagementAddOn a
// defaulting to it, deleting both when the spec ends.
func declareTemplateAddOn(ctx SpecContext, a, ns string, reg addonv1alpha1.RegistrationSpec) {
	GinkgoHelper()
	deployment := []byte(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"` + a + `-agent","namespace":"` + ns + `"},` +
		`"spec":{"replicas":0,"selector":{"matchLabels":{"app":"` + a + `"}},"template":{"metadata":{"labels":{"app":"` + a + `"}},` +
		`"spec":{"containers":[{"name":"agent","image":"example.com/agent:1"}]}}}}`)
	tmpl := &addonv1alpha1.AddOnTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: a + "-0.1.0"},
		Spec: addonv1alpha1.AddOnTemplateSpec{
			AddonName:    a,
			AgentSpec:    workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{Manifests: []workv1.Manifest{{RawExtension: runtime.RawExtension{Raw: deployment}}}}},
			Registration: []addonv1alpha1.RegistrationSpec{reg},
		},
	}
	Expect(hubCP.Client.Create(ctx, tmpl)).To(Succeed())
	DeferCleanup(deleteHubObject, &addonv1alpha1.AddOnTemplate{ObjectMeta: metav1.ObjectMeta{Name: tmpl.Name}})
	Expect(hubCP.Client.Create(ctx, &addonv1alpha1.ClusterManagementAddOn{
		ObjectMeta: metav1.ObjectMeta{Name: a},
		Spec: addonv1alpha1.ClusterManagementAddOnSpec{SupportedConfigs: []addonv1alpha1.ConfigMeta{{
			ConfigGroupResource: addonv1alpha1.ConfigGroupResource{Group: addon.Group, Resource: addon.ConfigResourceTemplates},
			DefaultConfig:       &addonv1alpha1.ConfigReferent{Name: tmpl.Name},
		}}},
	})).To(Succeed())
	DeferCleanup(deleteHubObject, &addonv1alpha1.ClusterManagementAddOn{ObjectMeta: metav1.ObjectMeta{Name: a}})
}

func deleteHubObject(ctx SpecContext, obj client.Object) {
	Expect(client.IgnoreNotFound(hubCP.Client.Delete(ctx, obj))).To(Succeed())
}

// createMCA enables add-on a on cluster c, as clusteradm addon enable does.
func createMCA(ctx SpecContext, c, a, ns string) {
	GinkgoHelper()
	Expect(hubCP.Client.Create(ctx, &addonv1alpha1.ManagedClusterAddOn{
		ObjectMeta: metav1.ObjectMeta{Namespace: c, Name: a},
		Spec:       addonv1alpha1.ManagedClusterAddOnSpec{InstallNamespace: ns},
	})).To(Succeed())
}

func getMCA(ctx SpecContext, c, a string) *addonv1alpha1.ManagedClusterAddOn {
	GinkgoHelper()
	mca := &addonv1alpha1.ManagedClusterAddOn{}
	Expect(hubCP.Client.Get(ctx, client.ObjectKey{Namespace: c, Name: a}, mca)).To(Succeed())
	return mca
}

// writeAddOnManagerStatus writes what the add-on's manager writes for the
// agent: the install namespace and the registration.
func writeAddOnManagerStatus(ctx SpecContext, c, a, ns string, reg addonv1alpha1.RegistrationConfig) {
	GinkgoHelper()
	Eventually(func() error {
		mca := getMCA(ctx, c, a)
		before := mca.DeepCopy()
		mca.Status.Namespace = ns
		mca.Status.Registrations = []addonv1alpha1.RegistrationConfig{reg}
		return hubCP.Client.Status().Patch(ctx, mca, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}))
	}).Should(Succeed())
}

func createAddOnNamespace(ctx SpecContext, env *agentEnv, ns string) {
	GinkgoHelper()
	_, err := env.spoke.Kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())
}

// addOnCSRs lists the CSRs of add-on a of cluster c.
func addOnCSRs(ctx SpecContext, c, a string) []certificatesv1.CertificateSigningRequest {
	GinkgoHelper()
	list, err := hubCP.Kube.CertificatesV1().CertificateSigningRequests().List(ctx, metav1.ListOptions{
		LabelSelector: labels.Set{addon.ClusterNameLabel: c, addon.AddOnNameLabel: a}.String(),
	})
	Expect(err).NotTo(HaveOccurred())
	return list.Items
}

// approveAsManager approves a CSR as an add-on's own manager does.
func approveAsManager(ctx SpecContext, name string) {
	GinkgoHelper()
	csr := getCSR(ctx, name)
	csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
		Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, Reason: "AutoApprovedByTheAddOnsManager", Message: "approved in a test",
	})
	_, err := hubCP.Kube.CertificatesV1().CertificateSigningRequests().UpdateApproval(ctx, name, csr, metav1.UpdateOptions{})
	Expect(err).NotTo(HaveOccurred())
}

// waitForAddOnSecret waits until Secret ns/name on the spoke holds a
// certificate (for user cn, unless empty) and returns it.
func waitForAddOnSecret(ctx SpecContext, env *agentEnv, ns, name, cn string) *corev1.Secret {
	GinkgoHelper()
	var secret *corev1.Secret
	Eventually(func(g Gomega) {
		var err error
		secret, err = env.spoke.Kube.CoreV1().Secrets(ns).Get(ctx, name, metav1.GetOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(secret.Data).To(HaveKey("tls.crt"))
		if cn != "" {
			block, _ := pem.Decode(secret.Data["tls.crt"])
			g.Expect(block).NotTo(BeNil())
			cert, err := x509.ParseCertificate(block.Bytes)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(cert.Subject.CommonName).To(Equal(cn))
		}
	}).Should(Succeed())
	return secret
}

// addOnClient is a client of the hub built from the add-on's Secret as
// the add-on mounts it: a directory holding the kubeconfig beside the key
// and certificate it names by file.
func addOnClient(secret *corev1.Secret) kubernetes.Interface {
	GinkgoHelper()
	dir := GinkgoT().TempDir()
	for k, v := range secret.Data {
		Expect(os.WriteFile(filepath.Join(dir, k), v, 0o600)).To(Succeed())
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(dir, "kubeconfig"))
	Expect(err).NotTo(HaveOccurred())
	// Loaded now: the files go with the spec.
	Expect(rest.LoadTLSFiles(cfg)).To(Succeed())
	return kubernetes.NewForConfigOrDie(cfg)
}

// grantConfigMapReader lets user read ConfigMaps in namespace ns.
func grantConfigMapReader(ctx SpecContext, ns, user string) {
	GinkgoHelper()
	name := "addon-configmap-reader-" + strings.ToLower(strings.ReplaceAll(user[strings.LastIndex(user, ":")+1:], ".", "-"))
	Expect(hubCP.Client.Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get"}}}})).To(Succeed())
	Expect(hubCP.Client.Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}}})).To(Succeed())
}

// tryAddOnCSR creates, with kube's credentials, a CSR for add-on a
// labelled with cluster label, for the subject cn and orgs.
func tryAddOnCSR(ctx SpecContext, kube kubernetes.Interface, label, a, cn string, orgs []string) (string, error) {
	_, csrPEM := newCSR(cn, orgs)
	csr, err := kube.CertificatesV1().CertificateSigningRequests().Create(ctx, &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{GenerateName: addon.CSRGenerateName(label, a), Labels: map[string]string{addon.ClusterNameLabel: label, addon.AddOnNameLabel: a}},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			Request: csrPEM, SignerName: certificatesv1.KubeAPIServerClientSignerName,
			Usages:            []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment, certificatesv1.UsageClientAuth},
			ExpirationSeconds: ptr.To[int32](3600),
		},
	}, metav1.CreateOptions{})
	if err != nil {
		return "", err
	}
	return csr.Name, nil
}

func createAddOnCSR(ctx SpecContext, kube kubernetes.Interface, label, a, cn string, orgs []string) string {
	GinkgoHelper()
	name, err := tryAddOnCSR(ctx, kube, label, a, cn, orgs)
	Expect(err).NotTo(HaveOccurred())
	return name
}

func createAddOnCSRFromPEM(ctx SpecContext, kube kubernetes.Interface, label, a string, csrPEM []byte) string {
	GinkgoHelper()
	csr, err := kube.CertificatesV1().CertificateSigningRequests().Create(ctx, &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{GenerateName: addon.CSRGenerateName(label, a), Labels: map[string]string{addon.ClusterNameLabel: label, addon.AddOnNameLabel: a}},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			Request: csrPEM, SignerName: certificatesv1.KubeAPIServerClientSignerName,
			Usages: []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment, certificatesv1.UsageClientAuth},
		},
	}, metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())
	return csr.Name
}

// csrEventNotes are the notes of the events about CSR name.
func csrEventNotes(ctx SpecContext, name string) []string {
	GinkgoHelper()
	list, err := hubCP.Kube.EventsV1().Events(metav1.NamespaceDefault).List(ctx, metav1.ListOptions{})
	Expect(err).NotTo(HaveOccurred())
	var notes []string
	for _, e := range list.Items {
		if e.Regarding.Kind == "CertificateSigningRequest" && e.Regarding.Name == name {
			notes = append(notes, e.Note)
		}
	}
	return notes
}

// newRSACA is a self-signed RSA CA valid for a week.
func newRSACA() (*x509.Certificate, []byte, []byte) {
	GinkgoHelper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	Expect(err).NotTo(HaveOccurred())
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "addon-signer"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(7 * 24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	Expect(err).NotTo(HaveOccurred())
	cert, err := x509.ParseCertificate(der)
	Expect(err).NotTo(HaveOccurred())
	return cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
}
