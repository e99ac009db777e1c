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
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/flotilla-io/flotilla/agent"
	clusterv1beta1 "github.com/flotilla-io/flotilla/api/cluster/v1beta1"
	"github.com/flotilla-io/flotilla/deploy"
	"github.com/flotilla-io/flotilla/hub"
	hubpolicy "github.com/flotilla-io/flotilla/hub/policy"
	"github.com/flotilla-io/flotilla/hub/work"
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
	const cluster = "charted"

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
			}
		}
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
