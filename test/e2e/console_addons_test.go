package e2e

import (
	"encoding/json"
	"time"

	"github.com/chromedp/chromedp"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	addonv1alpha1 "github.com/flotilla-io/flotilla/api/addon/v1alpha1"
	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	"github.com/flotilla-io/flotilla/internal/addon"
	"github.com/flotilla-io/flotilla/test/framework"
)

var _ = Describe("flotilla console in headless Chromium: add-ons", func() {
	It("shows a template add-on on its cluster turning Available live, with its registration, Secret, configs and works, an unhealthy one with why, and the fleet's add-ons with their counts", func(ctx SpecContext) {
		browser, hub, _, onHub := consoleHub(ctx)
		admin := devClient(hub.Kubeconfig)

		By("joining and accepting cluster1, whose add-ons' namespace flotilla join makes, as the agent chart does")
		join := joinInfo(onHub("init", "-o", "json"))
		spoke, err := framework.Start(ctx, framework.Spoke)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(spoke.Stop)
		startJoin(ctx, spoke, join.Token, join.URL, "cluster1")
		res := onHub("accept", "--clusters", "cluster1", "--wait", "--timeout", "3m")
		Expect(res.code).To(Equal(0), res.stderr)
		Expect(spoke.Client.Get(ctx, client.ObjectKey{Name: addon.DefaultInstallNamespace}, &corev1.Namespace{})).To(Succeed())

		By("declaring two template add-ons, hello and broken, and enabling both on cluster1")
		for _, a := range []string{"hello", "broken"} {
			declareTemplateAddOn(ctx, admin, a)
		}
		res = onHub("addon", "enable", "--names", "hello,broken", "--clusters", "cluster1")
		Expect(res.code).To(Equal(0), res.stderr)

		By("opening cluster1's page before the add-ons' agents are ready")
		url, _ := startConsole(ctx, hub.Kubeconfig)
		Expect(chromedp.Do(browser, chromedp.Navigate(url))).To(Succeed())
		Eventually(func() string { return textOf(browser, `h1`) }).Should(Equal("Fleet"))
		Expect(chromedp.Do(browser, chromedp.Navigate(consoleBase(url)+"/clusters/cluster1"))).To(Succeed())
		hello, broken := `section[data-addon="hello"]`, `section[data-addon="broken"]`
		Eventually(func() string { return textOf(browser, hello+` .registrations`) }, time.Minute).Should(And(
			ContainSubstring("kubernetes.io/kube-apiserver-client"),
			ContainSubstring(addon.AgentUser("cluster1", "hello", "hello-agent")),
			ContainSubstring(addon.DefaultInstallNamespace+"/hello-hub-kubeconfig")))
		Eventually(func() string { return textOf(browser, hello+` .addon-works`) }, time.Minute).Should(ContainSubstring("addon-hello-deploy-0"))
		Expect(chromedp.Run(browser, chromedp.Evaluate[bool](`window.notReloaded = true`))).Error().NotTo(HaveOccurred())

		By("the agent wrote the Secret the page names, on the cluster")
		Eventually(func() error {
			return spoke.Client.Get(ctx, client.ObjectKey{Namespace: addon.DefaultInstallNamespace, Name: "hello-hub-kubeconfig"}, &corev1.Secret{})
		}, time.Minute).Should(Succeed())

		By("the Deployments' controller reports hello's agent ready and broken's not: the page turns hello Available and says why broken is not, without a reload")
		setDeploymentStatus(ctx, spoke, "hello-agent", appsv1.DeploymentStatus{Replicas: 1, ReadyReplicas: 1, AvailableReplicas: 1, UpdatedReplicas: 1})
		setDeploymentStatus(ctx, spoke, "broken-agent", appsv1.DeploymentStatus{Replicas: 1, UpdatedReplicas: 1, UnavailableReplicas: 1})
		Eventually(func() string { return textOf(browser, hello+` h3 .health`) }, 2*time.Minute).Should(Equal("✔ Available"))
		Expect(textOf(browser, hello+` tr[data-condition="Available"]`)).To(ContainSubstring("hello add-on is available."))
		Expect(textOf(browser, hello+` .why`)).To(BeEmpty())
		Eventually(func() string { return textOf(browser, broken+` h3 .health`) }, 2*time.Minute).Should(Equal("✖ Unavailable"))
		Expect(textOf(browser, broken+` .why`)).To(Equal("Available ProbeUnavailable: Deployment " + addon.DefaultInstallNamespace + "/broken-agent is not available: no replica is ready"))
		Eventually(func() string { return textOf(browser, hello+` .configs`) }, time.Minute).ShouldNot(ContainSubstring("Pending"))
		Expect(textOf(browser, hello+` .configs`)).To(ContainSubstring("addontemplates/hello-0.1.0 ("))
		same, err := chromedp.Run(browser, chromedp.Evaluate[bool](`window.notReloaded === true`))
		Expect(err).NotTo(HaveOccurred())
		Expect(same).To(BeTrue(), "the page was reloaded")
		screenshot(browser, "cluster-addons")

		By("the fleet's add-ons: each on one cluster, hello Available there, broken not")
		click(browser, `nav a[href="/addons"]`)
		Eventually(func() string { return textOf(browser, `tr[data-addon="hello"] .available`) }).Should(Equal("1 of 1"))
		Expect(textOf(browser, `tr[data-addon="broken"] .available`)).To(Equal("0 of 1"))
		Expect(textOf(browser, `tr[data-addon="hello"] .install`)).To(Equal("Manual"))
		screenshot(browser, "addons")
		click(browser, `tr[data-addon="broken"] th a`)
		Eventually(func() string { return textOf(browser, `#addon-clusters tr[data-cluster="cluster1"] .why`) }).Should(ContainSubstring("no replica is ready"))
		screenshot(browser, "addon")
	})
})

// declareTemplateAddOn declares template add-on a as an admin would: a
// ClusterRole its agent gets in its cluster's namespace, the template (a
// Deployment <a>-agent with a kubeClient registration) and the
// ClusterManagementAddOn with the template as its default, installed by hand.
func declareTemplateAddOn(ctx SpecContext, admin client.Client, a string) {
	GinkgoHelper()
	Expect(admin.Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: a + "-hub"}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list", "watch"}},
	}})).To(Succeed())
	labels := map[string]string{"app": a}
	deployment, err := json.Marshal(&appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: a + "-agent", Namespace: addon.DefaultInstallNamespace},
		Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: labels},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "agent", Image: "quay.io/example/" + a + ":v1",
				Args: []string{"--cluster-name={{CLUSTER_NAME}}", "--hub-kubeconfig={{HUB_KUBECONFIG}}"}}}},
		}},
	})
	Expect(err).NotTo(HaveOccurred())
	Expect(admin.Create(ctx, &addonv1alpha1.AddOnTemplate{ObjectMeta: metav1.ObjectMeta{Name: a + "-0.1.0"}, Spec: addonv1alpha1.AddOnTemplateSpec{
		AddonName: a,
		AgentSpec: workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{Manifests: []workv1.Manifest{{RawExtension: runtime.RawExtension{Raw: deployment}}}}},
		Registration: []addonv1alpha1.RegistrationSpec{{Type: "KubeClient", KubeClient: &addonv1alpha1.KubeClientRegistrationConfig{
			HubPermissions: []addonv1alpha1.HubPermissionConfig{{Type: "CurrentCluster", CurrentCluster: &addonv1alpha1.CurrentClusterBindingConfig{ClusterRoleName: a + "-hub"}}},
		}}},
	}})).To(Succeed())
	Expect(admin.Create(ctx, &addonv1alpha1.ClusterManagementAddOn{ObjectMeta: metav1.ObjectMeta{Name: a}, Spec: addonv1alpha1.ClusterManagementAddOnSpec{
		SupportedConfigs: []addonv1alpha1.ConfigMeta{
			{ConfigGroupResource: addonv1alpha1.ConfigGroupResource{Group: addon.Group, Resource: addon.ConfigResourceTemplates}, DefaultConfig: &addonv1alpha1.ConfigReferent{Name: a + "-0.1.0"}},
		},
		InstallStrategy: addonv1alpha1.InstallStrategy{Type: addonv1alpha1.AddonInstallStrategyManual},
	}})).To(Succeed())
}

// setDeploymentStatus writes the status of Deployment name in the add-ons'
// namespace of spoke, once the work agent applied it, as the Deployment
// controller of a cluster would (the spoke runs none).
func setDeploymentStatus(ctx SpecContext, spoke *framework.ControlPlane, name string, status appsv1.DeploymentStatus) {
	GinkgoHelper()
	Eventually(func() error {
		d := &appsv1.Deployment{}
		if err := spoke.Client.Get(ctx, client.ObjectKey{Namespace: addon.DefaultInstallNamespace, Name: name}, d); err != nil {
			return err
		}
		d.Status = status
		d.Status.ObservedGeneration = d.Generation
		return spoke.Client.Status().Update(ctx, d)
	}, time.Minute).Should(Succeed())
}
