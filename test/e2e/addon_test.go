package e2e

import (
	"context"
	"os"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	addonv1alpha1 "github.com/flotilla-io/flotilla/api/addon/v1alpha1"
	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	"github.com/flotilla-io/flotilla/internal/addon"
)

// The add-on spec declares a template add-on on a sandbox's hub as an
// admin would, enables it with the CLI, and then plays the add-on's agent:
// the dev cluster runs the agent's Deployment on simulated nodes, so no
// process of the add-on's runs there; the spec reads the kubeconfig the
// Flotilla agent wrote for it from the cluster and talks to the hub with
// it, as the add-on's process would from its mounted Secret.
var _ = Describe("OCM add-ons in the sandbox", func() {
	It("enables a template add-on with flotilla addon enable: its hub kubeconfig lands on the cluster and reaches exactly what was granted; disable takes it all away", func(ctx SpecContext) {
		dir, hub, onHub := startSandbox(ctx, 2)
		spoke := devKube(filepath.Join(dir, "cluster1", "admin.kubeconfig"))
		const a, ns = "hello", addon.DefaultInstallNamespace

		By("declaring add-on hello: a ClusterRole reading ConfigMaps, a template with a Deployment and a kubeClient registration granted it in the cluster's namespace, and its ClusterManagementAddOn")
		declareHelloAddOn(ctx, hub, a, ns)
		for _, c := range []string{"cluster1", "cluster2"} {
			Expect(hub.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: c, Name: "settings"}, Data: map[string]string{"cluster": c}})).To(Succeed())
		}

		By("enabling it on cluster1 with the CLI")
		res := onHub("addon", "enable", "--names", a, "--clusters", "cluster1")
		Expect(res.code).To(Equal(0), res.stderr)

		By("the hub installs it, the agent registers it, and the Deployment's feedback makes it Available")
		Eventually(func(g Gomega) {
			mca := &addonv1alpha1.ManagedClusterAddOn{}
			g.Expect(hub.Get(ctx, client.ObjectKey{Namespace: "cluster1", Name: a}, mca)).To(Succeed())
			for _, t := range []string{addon.ConditionRegistrationApplied, addon.ConditionManifestApplied, addon.ConditionAvailable} {
				g.Expect(meta.IsStatusConditionTrue(mca.Status.Conditions, t)).To(BeTrue(), "%s: %v", t, mca.Status.Conditions)
			}
			g.Expect(mca.Status.KubeClientDriver).To(Equal("csr"))
		}, 2*time.Minute).Should(Succeed())
		Eventually(func(g Gomega) {
			d, err := spoke.AppsV1().Deployments(ns).Get(ctx, a+"-agent", metav1.GetOptions{})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(d.Status.AvailableReplicas).To(BeEquivalentTo(1))
		}).WithContext(ctx).Should(Succeed())
		res = onHub("get", "addons", a)
		Expect(res.code).To(Equal(0), res.stderr)
		Expect(res.stdout).To(MatchRegexp(`hello\s+cluster1\s+True\s+`))

		By("its hub kubeconfig Secret is in the install namespace on cluster1, and nowhere on cluster2")
		var secret *corev1.Secret
		Eventually(func(g Gomega) {
			var err error
			secret, err = spoke.CoreV1().Secrets(ns).Get(ctx, a+"-hub-kubeconfig", metav1.GetOptions{})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(secret.Data).To(HaveKey("kubeconfig"))
			g.Expect(secret.Data).To(HaveKey("tls.crt"))
		}).WithContext(ctx).Should(Succeed())
		Expect(string(secret.Data["cluster-name"])).To(Equal("cluster1"))
		cluster2 := devKube(filepath.Join(dir, "cluster2", "admin.kubeconfig"))
		_, err := cluster2.CoreV1().Secrets(ns).Get(ctx, a+"-hub-kubeconfig", metav1.GetOptions{})
		Expect(apierrors.IsNotFound(err)).To(BeTrue(), "cluster2 has the add-on's Secret: %v", err)

		By("with it, the add-on reads ConfigMaps in cluster1's namespace on the hub, and does nothing else")
		asAddOn := mountedHubClient(secret)
		cm, err := asAddOn.CoreV1().ConfigMaps("cluster1").Get(ctx, "settings", metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(cm.Data).To(HaveKeyWithValue("cluster", "cluster1"))
		Expect(asAddOn.CoreV1().ConfigMaps("cluster1").List(ctx, metav1.ListOptions{})).Error().NotTo(HaveOccurred())
		forbidden := map[string]error{
			"get a ConfigMap in cluster2's namespace": func() error {
				_, err := asAddOn.CoreV1().ConfigMaps("cluster2").Get(ctx, "settings", metav1.GetOptions{})
				return err
			}(),
			"list ConfigMaps in cluster2's namespace": func() error {
				_, err := asAddOn.CoreV1().ConfigMaps("cluster2").List(ctx, metav1.ListOptions{})
				return err
			}(),
			"list ConfigMaps of every namespace": func() error {
				_, err := asAddOn.CoreV1().ConfigMaps("").List(ctx, metav1.ListOptions{})
				return err
			}(),
			"create a ConfigMap in cluster1's namespace": func() error {
				_, err := asAddOn.CoreV1().ConfigMaps("cluster1").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "mine"}}, metav1.CreateOptions{})
				return err
			}(),
			"list Secrets in cluster1's namespace": func() error {
				_, err := asAddOn.CoreV1().Secrets("cluster1").List(ctx, metav1.ListOptions{})
				return err
			}(),
			"list namespaces": func() error {
				_, err := asAddOn.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
				return err
			}(),
		}
		for what, err := range forbidden {
			Expect(apierrors.IsForbidden(err)).To(BeTrue(), "the add-on could %s: %v", what, err)
		}

		By("disabling it: the ManagedClusterAddOn, its work, its binding, the Deployment and the Secret go, and the old kubeconfig reaches nothing")
		res = onHub("addon", "disable", "--names", a, "--clusters", "cluster1")
		Expect(res.code).To(Equal(0), res.stderr)
		Eventually(func() error {
			return hub.Get(ctx, client.ObjectKey{Namespace: "cluster1", Name: a}, &addonv1alpha1.ManagedClusterAddOn{})
		}, 2*time.Minute).Should(Satisfy(apierrors.IsNotFound))
		Eventually(func() error {
			return hub.Get(ctx, client.ObjectKey{Namespace: "cluster1", Name: "addon-" + a + "-deploy-0"}, &workv1.ManifestWork{})
		}, 2*time.Minute).Should(Satisfy(apierrors.IsNotFound))
		Eventually(func() error {
			_, err := spoke.CoreV1().Secrets(ns).Get(ctx, a+"-hub-kubeconfig", metav1.GetOptions{})
			return err
		}, 2*time.Minute).Should(Satisfy(apierrors.IsNotFound))
		Eventually(func() error {
			_, err := spoke.AppsV1().Deployments(ns).Get(ctx, a+"-agent", metav1.GetOptions{})
			return err
		}, 2*time.Minute).Should(Satisfy(apierrors.IsNotFound))
		Eventually(func() error {
			_, err := asAddOn.CoreV1().ConfigMaps("cluster1").Get(ctx, "settings", metav1.GetOptions{})
			return err
		}).WithContext(ctx).Should(Satisfy(apierrors.IsForbidden))
		res = onHub("get", "addons", a)
		Expect(res.code).To(Equal(0), res.stderr)
		Expect(res.stdout).NotTo(MatchRegexp(`hello\s+cluster1\s+True`))
	})
})

// declareHelloAddOn creates what an admin declares for template add-on a
// on the hub: ClusterRole <a>-hub (read ConfigMaps), AddOnTemplate
// <a>-0.1.0 (the install namespace ns and a one-replica Deployment whose
// args name the built-in variables; a kubeClient registration granted
// that ClusterRole in the cluster's namespace) and a ClusterManagementAddOn
// defaulting to it, installed by hand.
func declareHelloAddOn(ctx context.Context, hub client.Client, a, ns string) {
	GinkgoHelper()
	Expect(hub.Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: a + "-hub"}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list", "watch"}},
	}})).To(Succeed())
	labels := map[string]string{"app": a}
	deployment := &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: a + "-agent"},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: "agent", Image: "quay.io/example/hello:v1",
					Args: []string{"--cluster-name={{CLUSTER_NAME}}", "--hub-kubeconfig={{HUB_KUBECONFIG}}"},
				}}},
			},
		},
	}
	namespace := &corev1.Namespace{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"}, ObjectMeta: metav1.ObjectMeta{Name: ns}}
	Expect(hub.Create(ctx, &addonv1alpha1.AddOnTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: a + "-0.1.0"},
		Spec: addonv1alpha1.AddOnTemplateSpec{
			AddonName: a,
			AgentSpec: workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{Manifests: []workv1.Manifest{
				{RawExtension: runtime.RawExtension{Object: namespace}},
				{RawExtension: runtime.RawExtension{Object: deployment}},
			}}},
			Registration: []addonv1alpha1.RegistrationSpec{{Type: "KubeClient", KubeClient: &addonv1alpha1.KubeClientRegistrationConfig{
				HubPermissions: []addonv1alpha1.HubPermissionConfig{{Type: "CurrentCluster", CurrentCluster: &addonv1alpha1.CurrentClusterBindingConfig{ClusterRoleName: a + "-hub"}}},
			}}},
		},
	})).To(Succeed())
	Expect(hub.Create(ctx, &addonv1alpha1.ClusterManagementAddOn{
		ObjectMeta: metav1.ObjectMeta{Name: a},
		Spec: addonv1alpha1.ClusterManagementAddOnSpec{
			SupportedConfigs: []addonv1alpha1.ConfigMeta{{
				ConfigGroupResource: addonv1alpha1.ConfigGroupResource{Group: addon.Group, Resource: addon.ConfigResourceTemplates},
				DefaultConfig:       &addonv1alpha1.ConfigReferent{Name: a + "-0.1.0"},
			}},
			InstallStrategy: addonv1alpha1.InstallStrategy{Type: addonv1alpha1.AddonInstallStrategyManual},
		},
	})).To(Succeed())
}

// mountedHubClient is a client of the hub as an add-on's process makes
// one from its Secret mounted at /managed/hub-kubeconfig: the kubeconfig
// names the certificate and key beside it by relative path.
func mountedHubClient(secret *corev1.Secret) kubernetes.Interface {
	GinkgoHelper()
	mount := GinkgoT().TempDir()
	for k, v := range secret.Data {
		Expect(os.WriteFile(filepath.Join(mount, k), v, 0o600)).To(Succeed())
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(mount, "kubeconfig"))
	Expect(err).NotTo(HaveOccurred())
	Expect(rest.LoadTLSFiles(cfg)).To(Succeed())
	return kubernetes.NewForConfigOrDie(cfg)
}
