package integration

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/flotilla-io/flotilla/agent"
	addonv1alpha1 "github.com/flotilla-io/flotilla/api/addon/v1alpha1"
	clusterv1beta1 "github.com/flotilla-io/flotilla/api/cluster/v1beta1"
	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	"github.com/flotilla-io/flotilla/deploy"
	"github.com/flotilla-io/flotilla/hub"
	"github.com/flotilla-io/flotilla/hub/addon/template"
	hubpolicy "github.com/flotilla-io/flotilla/hub/policy"
	"github.com/flotilla-io/flotilla/hub/work"
	rsadmission "github.com/flotilla-io/flotilla/hub/workreplicaset/admission"
	"github.com/flotilla-io/flotilla/internal/addon"
	"github.com/flotilla-io/flotilla/test/framework"
)

// The charts on "existing clusters": plain control planes that the test
// starts. The hub controllers and the agent run with nothing but the
// credentials of their chart's ServiceAccount, which proves the charts'
// RBAC sufficient; access reviews prove it short of cluster-admin.
var _ = Describe("Charts on existing clusters", Ordered, func() {
	var (
		hubCluster, spoke *framework.ControlPlane
		// stops stop the hub controllers and the agent after the last
		// spec: the specs after the one that starts them use them.
		stops []func()
	)
	const (
		cluster = "charted"
		// chartedAddOnRole is the ClusterRole the hub chart lets template
		// add-ons bind their agents to (addons.hubPermissions.clusterRoles).
		chartedAddOnRole = "charted-hello-hub"
	)

	BeforeAll(func(ctx SpecContext) {
		var err error
		hubCluster, err = framework.Start(ctx, framework.Spoke)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(hubCluster.Stop)
		spoke, err = framework.Start(ctx, framework.Spoke)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(spoke.Stop)
		DeferCleanup(func() {
			for _, stop := range slices.Backward(stops) {
				stop()
			}
		})
	})

	It("installs the hub chart and runs the hub controllers as its ServiceAccount", func(ctx SpecContext) {
		_, err := deploy.Render(deploy.HubChart, deploy.HubNamespace, map[string]any{"apiServer": hubCluster.URL})
		Expect(err).To(MatchError(ContainSubstring("is a loopback address")), "the chart refuses the loopback address this test's API server listens on: no agent in a pod reaches it")
		// Two replicas with cert-manager's certificate, as a production hub
		// runs. apiServer is the address agents use; the controllers here
		// reach the test's API server with the ServiceAccount's kubeconfig
		// below instead of the chart's, which names the in-cluster address.
		objs, err := deploy.Render(deploy.HubChart, deploy.HubNamespace, map[string]any{
			"createNamespace": true, "apiServer": "https://hub.charted.example:6443", "replicas": 2,
			// The add-on grants the specs below use, and no more.
			"addons": map[string]any{
				"hubPermissions": map[string]any{"clusterRoles": []any{chartedAddOnRole}},
				"customSigners":  []any{"charted.example.com/*"},
			},
			"webhook":                   map[string]any{"certificate": map[string]any{"certManager": map[string]any{"enabled": true, "issuerRef": map[string]any{"name": "charted-ca"}}}},
			"podLabels":                 map[string]any{"team": "fleet"},
			"serviceAccount":            map[string]any{"annotations": map[string]any{"iam.example.com/role": "fleet"}},
			"topologySpreadConstraints": []any{map[string]any{"maxSkew": 1, "topologyKey": "kubernetes.io/hostname", "whenUnsatisfiable": "DoNotSchedule"}},
		})
		Expect(err).NotTo(HaveOccurred())
		// cert-manager's Certificate kind, as far as this API server needs
		// to store one: nothing here issues it.
		applyRendered(ctx, hubCluster.Client, append([]*unstructured.Unstructured{certificateCRD()}, objs...))
		pdb := &policyv1.PodDisruptionBudget{}
		Expect(hubCluster.Client.Get(ctx, client.ObjectKey{Namespace: deploy.HubNamespace, Name: "flotilla-hub"}, pdb)).To(Succeed())
		Expect(pdb.Spec.MinAvailable.IntValue()).To(Equal(1))

		kubeconfig := serviceAccountKubeconfig(ctx, hubCluster, deploy.HubNamespace, "flotilla-hub")
		hubCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		done, ready := make(chan error, 1), make(chan struct{})
		go func() {
			defer GinkgoRecover()
			done <- hub.Run(hubCtx, hub.Options{
				Kubeconfig: kubeconfig, MetricsAddr: "0", HealthProbeAddr: "0", LeaderElect: true,
				// The mounted Secret cert-manager would write: a certificate
				// in a directory, here one the hub issues itself.
				Webhook: hub.WebhookOptions{CertDir: GinkgoT().TempDir(), SelfSigned: true},
				Ready:   func(hub.Info) { close(ready) },
			})
		}()
		stops = append(stops, func() { cancel(); Eventually(done, "30s").Should(Receive()) })
		select {
		case <-ready:
		case err := <-done:
			Fail("the hub controllers stopped with the chart's ServiceAccount: " + err.Error())
		case <-time.After(2 * time.Minute):
			Fail("the hub controllers were not ready within 2m with the chart's ServiceAccount")
		}

		By("the hub fills in the webhook configurations the chart made, keeping cert-manager's CA-injection annotation")
		for _, name := range []string{work.WebhookName, hubpolicy.WebhookName} {
			Eventually(func(g Gomega) {
				vwc := &admissionregistrationv1.ValidatingWebhookConfiguration{}
				g.Expect(hubCluster.Client.Get(ctx, client.ObjectKey{Name: name}, vwc)).To(Succeed())
				g.Expect(vwc.Annotations).To(HaveKeyWithValue("cert-manager.io/inject-ca-from", deploy.HubNamespace+"/flotilla-hub-webhook"))
				g.Expect(vwc.Webhooks).NotTo(BeEmpty())
				g.Expect(vwc.Webhooks[0].ClientConfig.CABundle).NotTo(BeEmpty())
			}, "30s").Should(Succeed(), "ValidatingWebhookConfiguration %s", name)
		}
		Eventually(func(g Gomega) {
			mwc := &admissionregistrationv1.MutatingWebhookConfiguration{}
			g.Expect(hubCluster.Client.Get(ctx, client.ObjectKey{Name: rsadmission.WebhookName}, mwc)).To(Succeed())
			g.Expect(mwc.Annotations).To(HaveKeyWithValue("cert-manager.io/inject-ca-from", deploy.HubNamespace+"/flotilla-hub-webhook"))
			g.Expect(mwc.Webhooks).NotTo(BeEmpty())
			g.Expect(mwc.Webhooks[0].ClientConfig.CABundle).NotTo(BeEmpty())
		}, "30s").Should(Succeed(), "MutatingWebhookConfiguration %s", rsadmission.WebhookName)
	})

	It("installs the agent chart with a narrow execution role and joins as its ServiceAccount", func(ctx SpecContext) {
		res := flotilla(ctx, "init", "-o", "json", "--kubeconfig", hubCluster.AdminKubeconfig)
		Expect(res.Code).To(Equal(0), res.Stderr)
		token := hubInitToken(res.Stdout)

		// The chart refuses the hub's loopback address, which no pod
		// reaches; it is given a name, and the test stands in for the DNS
		// that would resolve it, writing the hub's address into the
		// bootstrap Secret before applying it.
		const hubName = "https://hub.charted.example:6443"
		objs, err := deploy.Render(deploy.AgentChart, agent.DefaultNamespace, map[string]any{
			"clusterName":     cluster,
			"createNamespace": true,
			"hub":             map[string]any{"apiServer": hubName, "caCert": string(hubCluster.CAData)},
			"bootstrap":       map[string]any{"token": token},
			// Only what the specs below deliver: ConfigMaps and Namespaces.
			"execution": map[string]any{"rules": []any{map[string]any{
				"apiGroups": []any{""}, "resources": []any{"configmaps", "namespaces"}, "verbs": []any{"*"},
			}}},
			// The cluster proxy may act as these hub names only.
			"clusterProxy": map[string]any{
				"impersonateUsers":  []any{"flotilla:alice"},
				"impersonateGroups": []any{"flotilla:system:authenticated"},
			},
		})
		Expect(err).NotTo(HaveOccurred())
		var probe *corev1.Probe
		var addOnNamespaces []string
		for _, o := range objs {
			switch {
			case o.GetKind() == "Secret" && o.GetName() == agent.BootstrapSecretName:
				data, _, _ := unstructured.NestedString(o.Object, "data", "kubeconfig")
				kc, err := base64.StdEncoding.DecodeString(data)
				Expect(err).NotTo(HaveOccurred())
				Expect(string(kc)).To(ContainSubstring("server: " + hubName))
				kc = []byte(strings.Replace(string(kc), "server: "+hubName, "server: "+hubCluster.URL, 1))
				Expect(unstructured.SetNestedField(o.Object, base64.StdEncoding.EncodeToString(kc), "data", "kubeconfig")).To(Succeed())
			case o.GetKind() == "Deployment":
				d := &appsv1.Deployment{}
				Expect(runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, d)).To(Succeed())
				probe = d.Spec.Template.Spec.Containers[0].ReadinessProbe
				for _, arg := range d.Spec.Template.Spec.Containers[0].Args {
					if v, ok := strings.CutPrefix(arg, "--addon-install-namespaces="); ok {
						addOnNamespaces = strings.Split(v, ",")
					}
				}
			}
		}
		Expect(addOnNamespaces).To(Equal([]string{addon.DefaultInstallNamespace}), "the agent's Deployment names the chart's add-on install namespaces")
		Expect(probe).NotTo(BeNil(), "the agent's Deployment has a readiness probe")
		Expect(probe.HTTPGet).NotTo(BeNil())
		applyRendered(ctx, spoke.Client, objs)

		healthPort, err := framework.FreePort()
		Expect(err).NotTo(HaveOccurred())
		opts := agent.Options{
			ClusterName:     cluster,
			Namespace:       agent.DefaultNamespace,
			SpokeKubeconfig: serviceAccountKubeconfig(ctx, spoke, agent.DefaultNamespace, "flotilla-agent"),
			MetricsAddr:     "0",
			HealthProbeAddr: fmt.Sprintf("127.0.0.1:%d", healthPort),
			// The chart's flag; the Lease of an add-on is read every 2 s
			// instead of 30 s.
			AddOnInstallNamespaces:  addOnNamespaces,
			AddOnLeaseCheckInterval: 2 * time.Second,
		}
		stops = append(stops, startAgentUnmanaged(opts).stop)
		By("the agent answers its chart's readiness probe")
		Eventually(func() int {
			res, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d%s", healthPort, probe.HTTPGet.Path))
			if err != nil {
				return 0
			}
			res.Body.Close()
			return res.StatusCode
		}, "60s", "500ms").Should(Equal(http.StatusOK))
		Eventually(func() int {
			return flotilla(ctx, "accept", "--clusters", cluster, "--kubeconfig", hubCluster.AdminKubeconfig).Code
		}, "60s", "1s").Should(Equal(0))
		Eventually(func(g Gomega) {
			s := &corev1.Secret{}
			g.Expect(spoke.Client.Get(ctx, client.ObjectKey{Namespace: agent.DefaultNamespace, Name: agent.HubKubeconfigSecretName}, s)).To(Succeed())
			g.Expect(s.Data).To(HaveKey("kubeconfig"))
		}, "60s").Should(Succeed())
	})

	It("delivers a ManifestWork", func(ctx SpecContext) {
		file := filepath.Join(GinkgoT().TempDir(), "cm.yaml")
		Expect(os.WriteFile(file, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: charted, namespace: default}\ndata: {from: hub}\n"), 0o600)).To(Succeed())
		// The hub makes the cluster's namespace soon after accepting it.
		Eventually(func() string {
			res := flotilla(ctx, "create", "work", "charted", "-f", file, "--clusters", cluster, "--kubeconfig", hubCluster.AdminKubeconfig)
			if res.Code == 0 {
				return ""
			}
			return res.Stderr
		}, "30s", "500ms").Should(BeEmpty())
		Eventually(func(g Gomega) {
			cm := &corev1.ConfigMap{}
			g.Expect(spoke.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: "charted"}, cm)).To(Succeed())
			g.Expect(cm.Data).To(HaveKeyWithValue("from", "hub"))
		}, "60s").Should(Succeed())
	})

	It("enforces a Policy", func(ctx SpecContext) {
		const ns = "charted-policies"
		Expect(hubCluster.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
		res := flotilla(ctx, "clusterset", "bind", "default", "--namespace", ns, "--kubeconfig", hubCluster.AdminKubeconfig)
		Expect(res.Code).To(Equal(0), res.Stderr)
		Expect(hubCluster.Client.Create(ctx, &clusterv1beta1.Placement{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "all"},
			Spec:       clusterv1beta1.PlacementSpec{ClusterSets: []string{"default"}},
		})).To(Succeed())
		res = flotilla(ctx, "create", "policy", "-f", sharedExample("policy-namespace.yaml"), "-n", ns,
			"--placement", "all", "--wait", "--timeout", "90s", "--kubeconfig", hubCluster.AdminKubeconfig)
		Expect(res.Code).To(Equal(0), res.Stderr)
		Expect(spoke.Client.Get(ctx, client.ObjectKey{Name: "prod"}, &corev1.Namespace{})).To(Succeed())
	})

	It("runs a template add-on with the charts' identities: approved, registered, granted, applied and Available", func(ctx SpecContext) {
		const a = "charted-hello"
		hc := hubCluster.Client
		// The listed role grants what the hub holds not itself (pods), so
		// that only the chart's bind lets the hub grant it.
		for _, role := range []*rbacv1.ClusterRole{
			{ObjectMeta: metav1.ObjectMeta{Name: chartedAddOnRole}, Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list"}}}},
			{ObjectMeta: metav1.ObjectMeta{Name: "charted-greedy-hub"}, Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"create"}}}},
		} {
			Expect(hc.Create(ctx, role)).To(Succeed())
		}
		chartedTemplateAddOn(ctx, hc, a, chartedAddOnRole)
		chartedTemplateAddOn(ctx, hc, "charted-greedy", "charted-greedy-hub")
		mca := func(name string) func() *addonv1alpha1.ManagedClusterAddOn {
			return func() *addonv1alpha1.ManagedClusterAddOn {
				m := &addonv1alpha1.ManagedClusterAddOn{}
				if err := hc.Get(ctx, client.ObjectKey{Namespace: cluster, Name: name}, m); err != nil {
					return nil
				}
				return m
			}
		}

		By("the hub binds the listed role, approves the agent's CSR; the agent writes the Secret in the install namespace")
		Eventually(mca(a), "60s").Should(haveAddOnCondition(addon.ConditionRegistrationApplied, metav1.ConditionTrue, template.ReasonSetPermissionApplied))
		var secret *corev1.Secret
		Eventually(func(g Gomega) {
			var err error
			secret, err = spoke.Kube.CoreV1().Secrets(addon.DefaultInstallNamespace).Get(ctx, addon.KubeconfigSecretName(a), metav1.GetOptions{})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(secret.Data).To(HaveKey("kubeconfig"))
		}, "60s").Should(Succeed())
		Eventually(mca(a), "30s").Should(haveAddOnCondition(addon.ConditionClusterCertificateRotated, metav1.ConditionTrue, addon.ReasonClientCertificateUpdated))

		By("the add-on's kubeconfig reaches what the listed role grants, in its cluster's namespace only")
		kube := addOnClient(secret)
		Eventually(func() error {
			_, err := kube.CoreV1().Pods(cluster).List(ctx, metav1.ListOptions{})
			return err
		}, "30s").Should(Succeed())
		_, err := kube.CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
		Expect(apierrors.IsForbidden(err)).To(BeTrue(), "pods in another namespace: %v", err)

		By("the agent applies the add-on's work, and the hub says it is Available")
		Eventually(func(g Gomega) {
			cm := &corev1.ConfigMap{}
			g.Expect(spoke.Client.Get(ctx, client.ObjectKey{Namespace: addon.DefaultInstallNamespace, Name: a}, cm)).To(Succeed())
			g.Expect(cm.Data).To(HaveKeyWithValue("cluster", cluster))
		}, "60s").Should(Succeed())
		Eventually(mca(a), "60s").Should(haveAddOnCondition(addon.ConditionAvailable, metav1.ConditionTrue, template.ReasonProbeAvailable))

		By("a role the values do not list is not bound: the API server refuses the hub, and the add-on says so")
		Eventually(mca("charted-greedy"), "60s").Should(And(
			haveAddOnCondition(addon.ConditionRegistrationApplied, metav1.ConditionFalse, template.ReasonSetPermissionFailed),
			WithTransform(func(m *addonv1alpha1.ManagedClusterAddOn) string {
				return meta.FindStatusCondition(m.Status.Conditions, addon.ConditionRegistrationApplied).Message
			}, ContainSubstring("forbidden"))))
		err = hc.Get(ctx, client.ObjectKey{Namespace: cluster, Name: template.BindingName("charted-greedy", "ClusterRole")}, &rbacv1.RoleBinding{})
		Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the greedy add-on's RoleBinding: %v", err)
	})

	It("signs a template add-on's custom signer the values name with the template's CA, and approves no other", func(ctx SpecContext) {
		hc := hubCluster.Client
		caCert, caPEM, caKeyPEM := newRSACA()
		Expect(hc.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: deploy.HubNamespace, Name: "charted-ca"}, Type: corev1.SecretTypeTLS,
			Data: map[string][]byte{"tls.crt": caPEM, "tls.key": caKeyPEM}})).To(Succeed())
		signed := func(a, signer string) {
			chartedAddOn(ctx, hc, a, addonv1alpha1.RegistrationSpec{Type: "CustomSigner", CustomSigner: &addonv1alpha1.CustomSignerRegistrationConfig{
				SignerName: signer, SigningCA: addonv1alpha1.SigningCARef{Name: "charted-ca"},
			}})
		}
		signed("charted-signed", "charted.example.com/agents")
		signed("charted-unlisted", "other.example.com/agents")

		By("a signer of the listed domain: approved, signed, and the Secret in the install namespace")
		var secret *corev1.Secret
		Eventually(func(g Gomega) {
			var err error
			secret, err = spoke.Kube.CoreV1().Secrets(addon.DefaultInstallNamespace).Get(ctx, addon.CustomSignerSecretName("charted-signed", "charted.example.com/agents"), metav1.GetOptions{})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(secret.Data).To(HaveKey("tls.crt"))
		}, "60s").Should(Succeed())
		Expect(storedCertificate(secret.Data).CheckSignatureFrom(caCert)).To(Succeed(), "signed by the template's CA")

		By("a signer the values do not name: the API server refuses the hub's approval, and the CSR stays pending")
		unlisted := func(g Gomega) []certificatesv1.CertificateSigningRequest {
			csrs := &certificatesv1.CertificateSigningRequestList{}
			g.Expect(hc.List(ctx, csrs, client.MatchingLabels{addon.AddOnNameLabel: "charted-unlisted"})).To(Succeed())
			return csrs.Items
		}
		Eventually(unlisted, "60s").ShouldNot(BeEmpty())
		Consistently(func(g Gomega) {
			for _, csr := range unlisted(g) {
				g.Expect(csr.Status.Conditions).To(BeEmpty(), "CSR %s", csr.Name)
			}
		}, "5s").Should(Succeed())
		_, err := spoke.Kube.CoreV1().Secrets(addon.DefaultInstallNamespace).Get(ctx, addon.CustomSignerSecretName("charted-unlisted", "other.example.com/agents"), metav1.GetOptions{})
		Expect(apierrors.IsNotFound(err)).To(BeTrue(), "%v", err)
	})

	It("reports an add-on's health from its Lease, and registers nothing outside the chart's install namespaces", func(ctx SpecContext) {
		hc := hubCluster.Client
		// Framework add-ons of the test's own: their manager is the test,
		// so the hub leaves them alone.
		for _, name := range []string{"charted-leased", "charted-elsewhere"} {
			Expect(hc.Create(ctx, &addonv1alpha1.ClusterManagementAddOn{
				ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{addon.LifecycleAnnotation: addon.LifecycleSelf}},
			})).To(Succeed())
		}
		Expect(hc.Create(ctx, &addonv1alpha1.ManagedClusterAddOn{
			ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: "charted-leased"},
			Spec:       addonv1alpha1.ManagedClusterAddOnSpec{InstallNamespace: addon.DefaultInstallNamespace},
		})).To(Succeed())
		key := client.ObjectKey{Namespace: cluster, Name: "charted-leased"}
		leased := func() *addonv1alpha1.ManagedClusterAddOn {
			m := &addonv1alpha1.ManagedClusterAddOn{}
			if err := hc.Get(ctx, key, m); err != nil {
				return nil
			}
			return m
		}
		Eventually(leased, "30s").Should(haveAddOnCondition(addon.ConditionAvailable, metav1.ConditionUnknown, addon.ReasonLeaseNotFound))
		By("the add-on renews its Lease in the install namespace")
		now := metav1.NewMicroTime(time.Now())
		Expect(spoke.Client.Create(ctx, &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Namespace: addon.DefaultInstallNamespace, Name: "charted-leased"},
			Spec:       coordinationv1.LeaseSpec{LeaseDurationSeconds: ptr.To[int32](60), RenewTime: &now},
		})).To(Succeed())
		Eventually(leased, "30s").Should(haveAddOnCondition(addon.ConditionAvailable, metav1.ConditionTrue, addon.ReasonLeaseUpdated))

		By("an add-on whose manager installs it in a namespace the chart does not name")
		const elsewhere = "charted-elsewhere"
		Expect(spoke.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: elsewhere}})).To(Succeed())
		m := &addonv1alpha1.ManagedClusterAddOn{
			ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: elsewhere},
			Spec:       addonv1alpha1.ManagedClusterAddOnSpec{InstallNamespace: elsewhere},
		}
		Expect(hc.Create(ctx, m)).To(Succeed())
		m.Status.Namespace = elsewhere
		m.Status.Registrations = []addonv1alpha1.RegistrationConfig{{SignerName: addon.KubeAPIServerClientSigner,
			Subject: addonv1alpha1.Subject{User: addon.AgentUser(cluster, elsewhere, elsewhere), Groups: addon.AgentGroups(cluster, elsewhere)}}}
		Expect(hc.Status().Update(ctx, m)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(hc.Get(ctx, client.ObjectKeyFromObject(m), m)).To(Succeed())
			c := meta.FindStatusCondition(m.Status.Conditions, addon.ConditionClusterCertificateRotated)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(c.Message).To(ContainSubstring("addons.installNamespaces"))
		}, "30s").Should(Succeed())
		csrs := &certificatesv1.CertificateSigningRequestList{}
		Expect(hc.List(ctx, csrs, client.MatchingLabels{addon.AddOnNameLabel: elsewhere})).To(Succeed())
		Expect(csrs.Items).To(BeEmpty(), "the agent asks for no certificate it could not keep")
	})

	It("grants the add-on permissions the values name, and no more", func(ctx SpecContext) {
		hubSA := "system:serviceaccount:" + deploy.HubNamespace + ":flotilla-hub"
		agentSA := "system:serviceaccount:" + agent.DefaultNamespace + ":flotilla-agent"
		for _, check := range []struct {
			on    *framework.ControlPlane
			user  string
			attr  authorizationv1.ResourceAttributes
			allow bool
		}{
			{hubCluster, hubSA, authorizationv1.ResourceAttributes{Verb: "bind", Group: "rbac.authorization.k8s.io", Resource: "clusterroles", Name: chartedAddOnRole, Namespace: cluster}, true},
			{hubCluster, hubSA, authorizationv1.ResourceAttributes{Verb: "bind", Group: "rbac.authorization.k8s.io", Resource: "clusterroles", Name: "cluster-admin", Namespace: cluster}, false},
			{hubCluster, hubSA, authorizationv1.ResourceAttributes{Verb: "bind", Group: "rbac.authorization.k8s.io", Resource: "roles", Name: "any", Namespace: cluster}, false},
			// Custom signers: the API server asks for the signer's name and
			// for its domain's "<domain>/*"; the values name the latter.
			{hubCluster, hubSA, authorizationv1.ResourceAttributes{Verb: "sign", Group: "certificates.k8s.io", Resource: "signers", Name: "charted.example.com/*"}, true},
			{hubCluster, hubSA, authorizationv1.ResourceAttributes{Verb: "approve", Group: "certificates.k8s.io", Resource: "signers", Name: "other.example.com/*"}, false},
			{hubCluster, hubSA, authorizationv1.ResourceAttributes{Verb: "sign", Group: "certificates.k8s.io", Resource: "signers", Name: "kubernetes.io/kube-apiserver-client"}, false},
			{hubCluster, hubSA, authorizationv1.ResourceAttributes{Verb: "list", Group: "addon.open-cluster-management.io", Resource: "addondeploymentconfigs"}, true},
			{hubCluster, hubSA, authorizationv1.ResourceAttributes{Verb: "list", Group: "proxy.open-cluster-management.io", Resource: "managedproxyconfigurations"}, false},
			// Revisions of ManifestWorkReplicaSets are ControllerRevisions; the hub's apps rights end there.
			{hubCluster, hubSA, authorizationv1.ResourceAttributes{Verb: "create", Group: "apps", Resource: "controllerrevisions", Namespace: "default"}, true},
			{hubCluster, hubSA, authorizationv1.ResourceAttributes{Verb: "create", Group: "apps", Resource: "deployments", Namespace: "default"}, false},
			{spoke, agentSA, authorizationv1.ResourceAttributes{Verb: "create", Resource: "secrets", Namespace: addon.DefaultInstallNamespace}, true},
			{spoke, agentSA, authorizationv1.ResourceAttributes{Verb: "get", Group: "coordination.k8s.io", Resource: "leases", Namespace: addon.DefaultInstallNamespace}, true},
			{spoke, agentSA, authorizationv1.ResourceAttributes{Verb: "create", Resource: "secrets", Namespace: "charted-elsewhere"}, false},
			{spoke, agentSA, authorizationv1.ResourceAttributes{Verb: "list", Resource: "secrets"}, false},
			{spoke, agentSA, authorizationv1.ResourceAttributes{Verb: "update", Group: "coordination.k8s.io", Resource: "leases", Namespace: addon.DefaultInstallNamespace}, false},
			{spoke, agentSA, authorizationv1.ResourceAttributes{Verb: "get", Group: "coordination.k8s.io", Resource: "leases", Namespace: "kube-system"}, false},
		} {
			sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
				User: check.user, Groups: []string{"system:serviceaccounts"}, ResourceAttributes: ptr.To(check.attr),
			}}
			Expect(check.on.Client.Create(ctx, sar)).To(Succeed())
			Expect(sar.Status.Allowed).To(Equal(check.allow), "%s may %s %s/%s %s in %q: %v", check.user, check.attr.Verb, check.attr.Group, check.attr.Resource, check.attr.Name, check.attr.Namespace, sar.Status.Allowed)
		}
	})

	It("grants neither ServiceAccount cluster-admin", func(ctx SpecContext) {
		hubSA := "system:serviceaccount:" + deploy.HubNamespace + ":flotilla-hub"
		agentSA := "system:serviceaccount:" + agent.DefaultNamespace + ":flotilla-agent"
		for _, check := range []struct {
			on   *framework.ControlPlane
			user string
			attr authorizationv1.ResourceAttributes
		}{
			{hubCluster, hubSA, authorizationv1.ResourceAttributes{Verb: "*", Group: "*", Resource: "*"}},
			{hubCluster, hubSA, authorizationv1.ResourceAttributes{Verb: "create", Resource: "pods", Namespace: "default"}},
			// kube-system holds the join tokens the hub rotates; elsewhere it may not delete Secrets.
			{hubCluster, hubSA, authorizationv1.ResourceAttributes{Verb: "delete", Resource: "secrets", Namespace: "default"}},
			{hubCluster, hubSA, authorizationv1.ResourceAttributes{Verb: "escalate", Group: "rbac.authorization.k8s.io", Resource: "clusterroles"}},
			{spoke, agentSA, authorizationv1.ResourceAttributes{Verb: "*", Group: "*", Resource: "*"}},
			{spoke, agentSA, authorizationv1.ResourceAttributes{Verb: "create", Resource: "pods", Namespace: "default"}},
			{spoke, agentSA, authorizationv1.ResourceAttributes{Verb: "create", Group: "rbac.authorization.k8s.io", Resource: "clusterrolebindings"}},
			// clusterProxy's exact names: anyone else is refused, even under the prefix.
			{spoke, agentSA, authorizationv1.ResourceAttributes{Verb: "impersonate", Resource: "users", Name: "flotilla:bob"}},
			{spoke, agentSA, authorizationv1.ResourceAttributes{Verb: "impersonate", Resource: "users", Name: "system:admin"}},
			{spoke, agentSA, authorizationv1.ResourceAttributes{Verb: "impersonate", Resource: "groups", Name: "system:masters"}},
		} {
			sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
				User: check.user, Groups: []string{"system:serviceaccounts"}, ResourceAttributes: ptr.To(check.attr),
			}}
			Expect(check.on.Client.Create(ctx, sar)).To(Succeed())
			Expect(sar.Status.Allowed).To(BeFalse(), "%s may %s %s/%s %s", check.user, check.attr.Verb, check.attr.Group, check.attr.Resource, check.attr.Name)
		}
		// The names the values list stay allowed.
		for _, attr := range []authorizationv1.ResourceAttributes{
			{Verb: "impersonate", Resource: "users", Name: "flotilla:alice"},
			{Verb: "impersonate", Resource: "groups", Name: "flotilla:system:authenticated"},
		} {
			sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
				User: agentSA, Groups: []string{"system:serviceaccounts"}, ResourceAttributes: ptr.To(attr),
			}}
			Expect(spoke.Client.Create(ctx, sar)).To(Succeed())
			Expect(sar.Status.Allowed).To(BeTrue(), "%s may not impersonate %s %s", agentSA, attr.Resource, attr.Name)
		}
	})
})

// chartedTemplateAddOn declares template add-on a on the hub c: a ConfigMap
// in the install namespace, a kubeClient registration whose agent the
// template binds to ClusterRole role in its cluster's namespace.
func chartedTemplateAddOn(ctx SpecContext, c client.Client, a, role string) {
	GinkgoHelper()
	chartedAddOn(ctx, c, a, addonv1alpha1.RegistrationSpec{Type: "KubeClient", KubeClient: &addonv1alpha1.KubeClientRegistrationConfig{
		HubPermissions: []addonv1alpha1.HubPermissionConfig{{Type: "CurrentCluster", CurrentCluster: &addonv1alpha1.CurrentClusterBindingConfig{ClusterRoleName: role}}},
	}})
}

// chartedAddOn declares template add-on a with registration reg and a
// ConfigMap, and enables it on cluster charted as clusteradm does.
func chartedAddOn(ctx SpecContext, c client.Client, a string, reg addonv1alpha1.RegistrationSpec) {
	GinkgoHelper()
	cm := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"` + a + `","namespace":"` + addon.DefaultInstallNamespace + `"},"data":{"cluster":"{{CLUSTER_NAME}}"}}`
	Expect(c.Create(ctx, &addonv1alpha1.AddOnTemplate{ObjectMeta: metav1.ObjectMeta{Name: a + "-0.1.0"}, Spec: addonv1alpha1.AddOnTemplateSpec{
		AddonName:    a,
		AgentSpec:    workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{Manifests: []workv1.Manifest{{RawExtension: runtime.RawExtension{Raw: []byte(cm)}}}}},
		Registration: []addonv1alpha1.RegistrationSpec{reg},
	}})).To(Succeed())
	Expect(c.Create(ctx, &addonv1alpha1.ClusterManagementAddOn{ObjectMeta: metav1.ObjectMeta{Name: a}, Spec: addonv1alpha1.ClusterManagementAddOnSpec{
		SupportedConfigs: []addonv1alpha1.ConfigMeta{
			{ConfigGroupResource: addonv1alpha1.ConfigGroupResource{Group: addon.Group, Resource: addon.ConfigResourceTemplates}, DefaultConfig: &addonv1alpha1.ConfigReferent{Name: a + "-0.1.0"}},
		},
		InstallStrategy: addonv1alpha1.InstallStrategy{Type: addonv1alpha1.AddonInstallStrategyManual},
	}})).To(Succeed())
	Expect(c.Create(ctx, &addonv1alpha1.ManagedClusterAddOn{
		ObjectMeta: metav1.ObjectMeta{Namespace: "charted", Name: a},
		Spec:       addonv1alpha1.ManagedClusterAddOnSpec{InstallNamespace: addon.DefaultInstallNamespace},
	})).To(Succeed())
}

// applyRendered applies a chart's objects server-side, as helm or kubectl
// apply --server-side would, waiting for CRDs to be served.
func applyRendered(ctx context.Context, c client.Client, objs []*unstructured.Unstructured) {
	GinkgoHelper()
	for _, o := range objs {
		Eventually(func() error {
			return c.Apply(ctx, client.ApplyConfigurationFromUnstructured(o.DeepCopy()), client.FieldOwner("chart-test"), client.ForceOwnership)
		}, "30s").Should(Succeed(), "apply %s %s", o.GetKind(), o.GetName())
	}
}

// serviceAccountKubeconfig writes a kubeconfig with a token of ServiceAccount
// ns/name and nothing else, and returns its path.
func serviceAccountKubeconfig(ctx context.Context, cp *framework.ControlPlane, ns, name string) string {
	GinkgoHelper()
	var tr *authenticationv1.TokenRequest
	Eventually(func() error {
		var err error
		tr, err = cp.Kube.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name, &authenticationv1.TokenRequest{
			Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)},
		}, metav1.CreateOptions{})
		return err
	}, "30s").Should(Succeed())
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["c"] = &clientcmdapi.Cluster{Server: cp.URL, CertificateAuthorityData: cp.CAData}
	cfg.AuthInfos["sa"] = &clientcmdapi.AuthInfo{Token: tr.Status.Token}
	cfg.Contexts["c"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "sa"}
	cfg.CurrentContext = "c"
	path := filepath.Join(GinkgoT().TempDir(), name+".kubeconfig")
	Expect(clientcmd.WriteToFile(*cfg, path)).To(Succeed())
	return path
}

// hubInitToken is the join token of init -o json's output.
func hubInitToken(out string) string {
	GinkgoHelper()
	var t joinToken
	Expect(json.Unmarshal([]byte(out), &t)).To(Succeed(), "init -o json printed %q", out)
	return t.HubToken
}

// sharedExample is framework.SharedExample for a spec.
func sharedExample(name string) string {
	GinkgoHelper()
	p, err := framework.SharedExample(name)
	Expect(err).NotTo(HaveOccurred())
	return p
}

// certificateCRD serves cert-manager's Certificate kind, whatever its
// fields, for a chart that makes one.
func certificateCRD() *unstructured.Unstructured {
	GinkgoHelper()
	crd := &unstructured.Unstructured{}
	Expect(yaml.Unmarshal([]byte(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: certificates.cert-manager.io}
spec:
  group: cert-manager.io
  names: {plural: certificates, singular: certificate, kind: Certificate, listKind: CertificateList}
  scope: Namespaced
  versions:
    - name: v1
      served: true
      storage: true
      schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
`), &crd.Object)).To(Succeed())
	return crd
}
