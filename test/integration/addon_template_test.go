package integration

import (
	"context"
	"encoding/json"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	addonv1alpha1 "github.com/flotilla-io/flotilla/api/addon/v1alpha1"
	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	"github.com/flotilla-io/flotilla/hub"
	"github.com/flotilla-io/flotilla/hub/addon/template"
	"github.com/flotilla-io/flotilla/internal/addon"
)

// The template add-on specs run the hub's add-on manager and template
// controller as they are; a real work agent applies the works on a spoke
// where the specs say so. The agent's add-on registration (CSR, Secret) is
// the "addon registration" specs' business.

// atCluster creates and accepts cluster c, with a lease its agent renewed
// for an hour and Available=True, so that only the specs change it.
func atCluster(ctx SpecContext, prefix string) workCluster {
	GinkgoHelper()
	c := newClusterName(prefix)
	createCluster(ctx, c, func(mc *clusterv1.ManagedCluster) { mc.Spec.LeaseDurationSeconds = 3600 })
	DeferCleanup(func(ctx SpecContext) { releaseWorks(ctx, hubCP, c) })
	acceptCluster(ctx, c)
	cfg := agentConfig(ctx, c, "agent1")
	Eventually(func() error {
		_, err := hubCP.Kube.CoreV1().Namespaces().Get(ctx, c, metav1.GetOptions{})
		return err
	}).Should(Succeed())
	renewLeaseAt(ctx, crClient(cfg), c, time.Now())
	hubSvcAvailable(ctx, c, metav1.ConditionTrue)
	return workCluster{name: c, hubCfg: cfg}
}

// atDeployment is the hello agent's Deployment manifest: args with the
// built-in variables (and LOG_LEVEL, a customized one).
func atDeployment(a string) map[string]any {
	labels := map[string]any{"app": a}
	return map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": a + "-agent", "namespace": addon.DefaultInstallNamespace},
		"spec": map[string]any{
			"replicas": 1,
			"selector": map[string]any{"matchLabels": labels},
			"template": map[string]any{
				"metadata": map[string]any{"labels": labels},
				"spec": map[string]any{"containers": []any{map[string]any{
					"name": "agent", "image": "quay.io/example/hello:v1",
					"args": []any{"--cluster-name={{CLUSTER_NAME}}", "--hub-kubeconfig={{HUB_KUBECONFIG}}", "--log-level={{LOG_LEVEL}}"},
				}}},
			},
		},
	}
}

// atHookPod is a pre-delete hook Pod.
func atHookPod(a string) map[string]any {
	return map[string]any{
		"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": a + "-cleanup", "namespace": addon.DefaultInstallNamespace, "labels": map[string]any{addon.PreDeleteHookLabel: ""}},
		"spec":     map[string]any{"restartPolicy": "Never", "containers": []any{map[string]any{"name": "cleanup", "image": "quay.io/example/hello:v1"}}},
	}
}

// atTemplate creates AddOnTemplate name of add-on a with these manifests,
// a kubeClient registration with the CurrentCluster permission role, and
// deletes it when the spec ends.
func atTemplate(ctx SpecContext, name, a, role string, manifests ...any) {
	GinkgoHelper()
	t := &addonv1alpha1.AddOnTemplate{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: addonv1alpha1.AddOnTemplateSpec{
		AddonName: a,
		Registration: []addonv1alpha1.RegistrationSpec{{Type: "KubeClient", KubeClient: &addonv1alpha1.KubeClientRegistrationConfig{
			HubPermissions: []addonv1alpha1.HubPermissionConfig{{Type: "CurrentCluster", CurrentCluster: &addonv1alpha1.CurrentClusterBindingConfig{ClusterRoleName: role}}},
		}}},
	}}
	for _, m := range manifests {
		if s, ok := m.(string); ok {
			t.Spec.AgentSpec.Workload.Manifests = append(t.Spec.AgentSpec.Workload.Manifests, workv1.Manifest{RawExtension: runtime.RawExtension{Raw: []byte(s)}})
			continue
		}
		t.Spec.AgentSpec.Workload.Manifests = append(t.Spec.AgentSpec.Workload.Manifests, manifest(m))
	}
	Expect(hubCP.Client.Create(ctx, t)).To(Succeed())
	DeferCleanup(deleteHubObject, &addonv1alpha1.AddOnTemplate{ObjectMeta: metav1.ObjectMeta{Name: name}})
}

// atAddOn declares add-on a (ClusterRole <a>-hub reading configmaps,
// template <a>-0.1.0 with manifests, CMA with that template as default,
// install strategy Manual), and deletes it all when the spec ends.
func atAddOn(ctx SpecContext, a string, manifests ...any) {
	GinkgoHelper()
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: a + "-hub"}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list", "watch"}},
	}}
	Expect(hubCP.Client.Create(ctx, role)).To(Succeed())
	DeferCleanup(deleteHubObject, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: role.Name}})
	atTemplate(ctx, a+"-0.1.0", a, role.Name, manifests...)
	cma := &addonv1alpha1.ClusterManagementAddOn{ObjectMeta: metav1.ObjectMeta{Name: a}, Spec: addonv1alpha1.ClusterManagementAddOnSpec{
		SupportedConfigs: []addonv1alpha1.ConfigMeta{
			{ConfigGroupResource: addonv1alpha1.ConfigGroupResource{Group: addon.Group, Resource: addon.ConfigResourceTemplates}, DefaultConfig: &addonv1alpha1.ConfigReferent{Name: a + "-0.1.0"}},
			{ConfigGroupResource: addonv1alpha1.ConfigGroupResource{Group: addon.Group, Resource: addon.ConfigResourceDeploymentConfigs}},
		},
		InstallStrategy: addonv1alpha1.InstallStrategy{Type: addonv1alpha1.AddonInstallStrategyManual},
	}}
	Expect(hubCP.Client.Create(ctx, cma)).To(Succeed())
	DeferCleanup(deleteHubObject, &addonv1alpha1.ClusterManagementAddOn{ObjectMeta: metav1.ObjectMeta{Name: a}})
}

// atEnable creates MCA c/a as clusteradm addon enable does, with configs.
func atEnable(ctx SpecContext, c, a string, configs ...addonv1alpha1.AddOnConfig) {
	GinkgoHelper()
	Expect(hubCP.Client.Create(ctx, &addonv1alpha1.ManagedClusterAddOn{
		ObjectMeta: metav1.ObjectMeta{Namespace: c, Name: a},
		Spec:       addonv1alpha1.ManagedClusterAddOnSpec{InstallNamespace: addon.DefaultInstallNamespace, Configs: configs},
	})).To(Succeed())
}

// atSpecHash is the contract's spec hash of the hub object of that kind,
// computed here from the object as served.
func atSpecHash(ctx SpecContext, kind, ns, name string) string {
	GinkgoHelper()
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(addonv1alpha1.GroupVersion.String())
	u.SetKind(kind)
	Expect(hubCP.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, u)).To(Succeed())
	h, err := addon.SpecHash(u.Object)
	Expect(err).NotTo(HaveOccurred())
	return h
}

func atMCA(ctx context.Context, c, a string) func() *addonv1alpha1.ManagedClusterAddOn {
	return func() *addonv1alpha1.ManagedClusterAddOn {
		mca := &addonv1alpha1.ManagedClusterAddOn{}
		if err := hubCP.Client.Get(ctx, client.ObjectKey{Namespace: c, Name: a}, mca); err != nil {
			return nil
		}
		return mca
	}
}

func atWork(ctx context.Context, c, name string) func() *workv1.ManifestWork {
	return func() *workv1.ManifestWork {
		w := &workv1.ManifestWork{}
		if err := hubCP.Client.Get(ctx, client.ObjectKey{Namespace: c, Name: name}, w); err != nil {
			return nil
		}
		return w
	}
}

// haveAddOnCondition matches an MCA with condition t of status s and reason r.
func haveAddOnCondition(t string, s metav1.ConditionStatus, r string) OmegaMatcher {
	return WithTransform(func(mca *addonv1alpha1.ManagedClusterAddOn) *metav1.Condition {
		if mca == nil {
			return nil
		}
		return meta.FindStatusCondition(mca.Status.Conditions, t)
	}, And(Not(BeNil()), HaveField("Status", s), HaveField("Reason", r)))
}

// atDeploymentOf decodes the Deployment in work w.
func atDeploymentOf(w *workv1.ManifestWork) *appsv1.Deployment {
	GinkgoHelper()
	for _, m := range w.Spec.Workload.Manifests {
		d := &appsv1.Deployment{}
		Expect(json.Unmarshal(m.Raw, d)).To(Succeed())
		if d.Kind == "Deployment" {
			return d
		}
	}
	Fail("no Deployment in work " + w.Name)
	return nil
}

// atImpersonating is a clientset acting as user with groups.
func atImpersonating(user string, groups ...string) kubernetes.Interface {
	GinkgoHelper()
	cfg := rest.CopyConfig(hubCP.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: groups}
	kube, err := kubernetes.NewForConfig(cfg)
	Expect(err).NotTo(HaveOccurred())
	return kube
}

// atReasons collects, from a watch started now, every reason condition t
// of MCA c/a takes, in order.
func atReasons(ctx SpecContext, c, a, t string) func() []string {
	GinkgoHelper()
	wc, err := client.NewWithWatch(hubCP.Config, client.Options{Scheme: hub.Scheme()})
	Expect(err).NotTo(HaveOccurred())
	w, err := wc.Watch(ctx, &addonv1alpha1.ManagedClusterAddOnList{}, client.InNamespace(c))
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(w.Stop)
	var reasons []string
	return func() []string {
		for {
			select {
			case ev := <-w.ResultChan():
				mca, ok := ev.Object.(*addonv1alpha1.ManagedClusterAddOn)
				if !ok || ev.Type == watch.Deleted || mca.Name != a {
					continue
				}
				if cond := meta.FindStatusCondition(mca.Status.Conditions, t); cond != nil && (len(reasons) == 0 || reasons[len(reasons)-1] != cond.Reason) {
					reasons = append(reasons, cond.Reason)
				}
			default:
				return reasons
			}
		}
	}
}

var _ = Describe("addon template", func() {
	It("installs add-on hello on a cluster: registration, hub permissions, the work the agent applies, health, and removal", func(ctx SpecContext) {
		a := "hello-" + utilrand.String(5)
		c1 := atCluster(ctx, "at-hello")
		c2 := atCluster(ctx, "at-other")
		spoke := newWorkSpoke(ctx)
		_, err := spoke.Kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: addon.DefaultInstallNamespace}}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		startWorkAgent(c1, spoke)

		By("declaring the add-on: the CMA's default template gets its spec hash")
		atAddOn(ctx, a, atDeployment(a))
		hash := atSpecHash(ctx, "AddOnTemplate", "", a+"-0.1.0")
		Eventually(func() []addonv1alpha1.DefaultConfigReference {
			cma := &addonv1alpha1.ClusterManagementAddOn{}
			Expect(hubCP.Client.Get(ctx, client.ObjectKey{Name: a}, cma)).To(Succeed())
			return cma.Status.DefaultConfigReferences
		}).Should(ContainElement(HaveField("DesiredConfig", HaveField("SpecHash", hash))))

		By("enabling it on the cluster")
		reasons := atReasons(ctx, c1.name, a, addon.ConditionRegistrationApplied)
		atEnable(ctx, c1.name, a)
		mca := atMCA(ctx, c1.name, a)
		Eventually(mca).Should(haveAddOnCondition(addon.ConditionRegistrationApplied, metav1.ConditionTrue, template.ReasonSetPermissionApplied))
		Eventually(reasons).Should(Equal([]string{template.ReasonPermissionConfigPending, template.ReasonSetPermissionApplied}), "one pass of PermissionConfigPending first")
		got := mca()
		Expect(got.Status.SupportedConfigs).To(ConsistOf(
			addonv1alpha1.ConfigGroupResource{Group: addon.Group, Resource: addon.ConfigResourceDeploymentConfigs},
			addonv1alpha1.ConfigGroupResource{Group: addon.Group, Resource: addon.ConfigResourceTemplates}))
		user := addon.AgentUser(c1.name, a, a+"-agent")
		Expect(got.Status.Registrations).To(Equal([]addonv1alpha1.RegistrationConfig{{
			SignerName: addon.KubeAPIServerClientSigner,
			Subject:    addonv1alpha1.Subject{User: user, Groups: addon.AgentGroups(c1.name, a)},
		}}))
		Expect(got.Status.Namespace).To(Equal(addon.DefaultInstallNamespace))
		Expect(metav1.GetControllerOf(got)).To(HaveField("Kind", "ClusterManagementAddOn"))

		rb := &rbacv1.RoleBinding{}
		Expect(hubCP.Client.Get(ctx, client.ObjectKey{Namespace: c1.name, Name: template.BindingName(a, "ClusterRole")}, rb)).To(Succeed())
		Expect(rb.Name).To(Equal("open-cluster-management:" + a + ":clusterrole:agent"))
		Expect(rb.RoleRef).To(Equal(rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: a + "-hub"}))
		Expect(rb.Subjects).To(ConsistOf(
			rbacv1.Subject{APIGroup: rbacv1.GroupName, Kind: "User", Name: user},
			rbacv1.Subject{APIGroup: rbacv1.GroupName, Kind: "Group", Name: addon.ClusterAddOnGroup(c1.name, a)}))
		Expect(rb.Labels).To(Equal(map[string]string{addon.AddOnNameLabel: a, addon.TemplateNameLabel: ""}))
		Expect(rb.OwnerReferences).To(ConsistOf(And(HaveField("Kind", "ManagedClusterAddOn"), HaveField("UID", got.UID), HaveField("Controller", BeNil()))))

		By("the add-on's identity reads what it was granted, and nothing else")
		self := atImpersonating(user, addon.AgentGroups(c1.name, a)...)
		_, err = self.CoreV1().ConfigMaps(c1.name).List(ctx, metav1.ListOptions{})
		Expect(err).NotTo(HaveOccurred())
		_, err = self.CoreV1().Secrets(c1.name).List(ctx, metav1.ListOptions{})
		Expect(err).To(beForbidden())
		_, err = self.CoreV1().ConfigMaps(c2.name).List(ctx, metav1.ListOptions{})
		Expect(err).To(beForbidden())
		other := atImpersonating(addon.AgentUser(c2.name, a, a+"-agent"), addon.AgentGroups(c2.name, a)...)
		_, err = other.CoreV1().ConfigMaps(c1.name).List(ctx, metav1.ListOptions{})
		Expect(err).To(beForbidden(), "the add-on's agent of another cluster stays out of this cluster's namespace")

		By("the deploy work")
		work := atWork(ctx, c1.name, addon.DeployWorkName(a, 0))
		Eventually(work).ShouldNot(BeNil())
		w := work()
		Expect(w.Labels).To(HaveKeyWithValue(addon.AddOnNameLabel, a))
		Expect(w.Annotations).To(HaveKeyWithValue(addon.ConfigSpecHashAnnotation,
			`{"`+addon.ConfigKey(addon.Group, addon.ConfigResourceTemplates, "", a+"-0.1.0")+`":"`+hash+`"}`))
		Expect(metav1.GetControllerOf(w)).To(And(Not(BeNil()), HaveField("Kind", "ManagedClusterAddOn"), HaveField("UID", got.UID)))
		Expect(w.Spec.ManifestConfigs).To(ConsistOf(And(
			HaveField("ResourceIdentifier", workv1.ResourceIdentifier{Group: "apps", Resource: "deployments", Name: a + "-agent", Namespace: addon.DefaultInstallNamespace}),
			HaveField("FeedbackRules", ConsistOf(HaveField("Type", workv1.WellKnownStatusType))))))
		Expect(w.Spec.DeleteOption).To(BeNil())
		d := atDeploymentOf(w)
		container := d.Spec.Template.Spec.Containers[0]
		Expect(container.Args).To(Equal([]string{"--cluster-name=" + c1.name, "--hub-kubeconfig=" + template.HubKubeconfigPath, "--log-level="}))
		Expect(container.Env).To(Equal([]corev1.EnvVar{{Name: "HUB_KUBECONFIG", Value: template.HubKubeconfigPath}, {Name: "CLUSTER_NAME", Value: c1.name}}))
		Expect(container.VolumeMounts).To(Equal([]corev1.VolumeMount{{Name: "hub-kubeconfig", MountPath: "/managed/hub-kubeconfig"}}))
		Expect(d.Spec.Template.Spec.Volumes).To(Equal([]corev1.Volume{{Name: "hub-kubeconfig", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: a + "-hub-kubeconfig"}}}}))
		Eventually(mca).Should(haveAddOnCondition(addon.ConditionManifestApplied, metav1.ConditionTrue, template.ReasonManifestApplied))
		Expect(mca().Status.HealthCheck.Mode).To(Equal(addon.HealthCheckModeCustomized))

		By("the work agent applies it; the Deployment turns ready")
		dep := &appsv1.Deployment{}
		Eventually(func() error {
			return spoke.Client.Get(ctx, client.ObjectKey{Namespace: addon.DefaultInstallNamespace, Name: a + "-agent"}, dep)
		}).Should(Succeed())
		Eventually(mca).Should(haveAddOnCondition(addon.ConditionAvailable, metav1.ConditionUnknown, template.ReasonNoProbeResult))
		Eventually(func() error {
			if err := spoke.Client.Get(ctx, client.ObjectKeyFromObject(dep), dep); err != nil {
				return err
			}
			dep.Status = appsv1.DeploymentStatus{Replicas: 1, ReadyReplicas: 1, AvailableReplicas: 1, UpdatedReplicas: 1}
			return spoke.Client.Status().Update(ctx, dep)
		}).Should(Succeed())
		Eventually(mca, "60s").Should(haveAddOnCondition(addon.ConditionAvailable, metav1.ConditionTrue, template.ReasonProbeAvailable))
		Expect(meta.FindStatusCondition(mca().Status.Conditions, addon.ConditionAvailable).Message).To(Equal(a + " add-on is available."))
		Eventually(mca, "60s").Should(haveAddOnCondition(addon.ConditionProgressing, metav1.ConditionFalse, addon.ReasonCompleted))
		Expect(mca().Status.ConfigReferences).To(ContainElement(HaveField("LastAppliedConfig", HaveField("SpecHash", hash))))
		Eventually(func() map[string]string { return getCluster(ctx, c1.name).Labels }).Should(HaveKeyWithValue(addon.FeatureLabel(a), addon.FeatureAvailable))

		By("disabling it: the work, the binding and the Deployment go")
		Expect(hubCP.Client.Delete(ctx, &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: c1.name, Name: a}})).To(Succeed())
		Eventually(mca).Should(BeNil())
		Eventually(work, "60s").Should(BeNil())
		Eventually(func() bool {
			return apierrors.IsNotFound(hubCP.Client.Get(ctx, client.ObjectKeyFromObject(rb), &rbacv1.RoleBinding{}))
		}, "60s").Should(BeTrue())
		Eventually(func() bool {
			return apierrors.IsNotFound(spoke.Client.Get(ctx, client.ObjectKeyFromObject(dep), &appsv1.Deployment{}))
		}, "60s").Should(BeTrue())
	})

	It("follows an AddOnDeploymentConfig and the cluster's image mirrors: variables, placement, registries and namespace reach the work, and a change changes the work and the hash", func(ctx SpecContext) {
		a := "adc-" + utilrand.String(5)
		c := atCluster(ctx, "at-adc")
		atAddOn(ctx, a, atDeployment(a))
		adc := &addonv1alpha1.AddOnDeploymentConfig{ObjectMeta: metav1.ObjectMeta{Namespace: c.name, Name: "cfg"}, Spec: addonv1alpha1.AddOnDeploymentConfigSpec{
			CustomizedVariables: []addonv1alpha1.CustomizedVariable{{Name: "LOG_LEVEL", Value: "2"}},
			NodePlacement:       &addonv1alpha1.NodePlacement{NodeSelector: map[string]string{"role": "infra"}},
			Registries:          []addonv1alpha1.ImageMirror{{Source: "quay.io/example", Mirror: "mirror.example.com/hello"}},
		}}
		Expect(hubCP.Client.Create(ctx, adc)).To(Succeed())
		atEnable(ctx, c.name, a, addonv1alpha1.AddOnConfig{
			ConfigGroupResource: addonv1alpha1.ConfigGroupResource{Group: addon.Group, Resource: addon.ConfigResourceDeploymentConfigs},
			ConfigReferent:      addonv1alpha1.ConfigReferent{Namespace: c.name, Name: "cfg"},
		})
		work := atWork(ctx, c.name, addon.DeployWorkName(a, 0))
		adcKey := addon.ConfigKey(addon.Group, addon.ConfigResourceDeploymentConfigs, c.name, "cfg")
		hashOf := func(w *workv1.ManifestWork) string {
			if w == nil {
				return ""
			}
			m := map[string]string{}
			_ = json.Unmarshal([]byte(w.Annotations[addon.ConfigSpecHashAnnotation]), &m)
			return m[adcKey]
		}
		first := atSpecHash(ctx, "AddOnDeploymentConfig", c.name, "cfg")
		Eventually(func() string { return hashOf(work()) }).Should(Equal(first))
		d := atDeploymentOf(work())
		// The CRD default of agentInstallNamespace moves the agent into it (OCM's behaviour).
		Expect(d.Namespace).To(Equal(addon.DefaultInstallNamespace))
		Expect(d.Spec.Template.Spec.NodeSelector).To(Equal(map[string]string{"role": "infra"}))
		Expect(d.Spec.Template.Spec.Containers[0].Image).To(Equal("mirror.example.com/hello/hello:v1"))
		Expect(d.Spec.Template.Spec.Containers[0].Args).To(ContainElement("--log-level=2"))
		Expect(d.Spec.Template.Spec.Containers[0].Env).To(ContainElement(corev1.EnvVar{Name: "INSTALL_NAMESPACE", Value: addon.DefaultInstallNamespace}))

		By("changing the config")
		Eventually(func() error {
			if err := hubCP.Client.Get(ctx, client.ObjectKeyFromObject(adc), adc); err != nil {
				return err
			}
			adc.Spec.CustomizedVariables[0].Value = "5"
			adc.Spec.AgentInstallNamespace = "hello-moved"
			adc.Spec.Registries = nil
			return hubCP.Client.Update(ctx, adc)
		}).Should(Succeed())
		second := atSpecHash(ctx, "AddOnDeploymentConfig", c.name, "cfg")
		Expect(second).NotTo(Equal(first))
		Eventually(func() string { return hashOf(work()) }).Should(Equal(second))
		d = atDeploymentOf(work())
		Expect(d.Namespace).To(Equal("hello-moved"))
		Expect(d.Spec.Template.Spec.Containers[0].Args).To(ContainElement("--log-level=5"))
		Eventually(atMCA(ctx, c.name, a)).Should(HaveField("Status.Namespace", "hello-moved"))
		Expect(d.Spec.Template.Spec.Containers[0].Image).To(Equal("quay.io/example/hello:v1"))

		By("mirroring the cluster's images with its annotation")
		Expect(updateCluster(ctx, hubCP.Client, c.name, func(mc *clusterv1.ManagedCluster) {
			mc.Annotations = map[string]string{addon.ImageRegistriesAnnotation: `{"registries":[{"source":"quay.io/example","mirror":"cluster-mirror.example.com"}]}`}
		})).To(Succeed())
		Eventually(func() string { return atDeploymentOf(work()).Spec.Template.Spec.Containers[0].Image }).Should(Equal("cluster-mirror.example.com/hello:v1"))
	})

	It("runs the pre-delete hook when the add-on is removed, and lets the ManagedClusterAddOn go once the hook succeeded", func(ctx SpecContext) {
		a := "hook-" + utilrand.String(5)
		c := atCluster(ctx, "at-hook")
		spoke := newWorkSpoke(ctx)
		_, err := spoke.Kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: addon.DefaultInstallNamespace}}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		startWorkAgent(c, spoke)
		atAddOn(ctx, a, atDeployment(a), atHookPod(a))
		atEnable(ctx, c.name, a)
		mca := atMCA(ctx, c.name, a)
		Eventually(mca).Should(HaveField("Finalizers", ContainElement(addon.PreDeleteHookFinalizer)))
		work := atWork(ctx, c.name, addon.DeployWorkName(a, 0))
		Eventually(work).ShouldNot(BeNil())
		Expect(work().Spec.Workload.Manifests).To(HaveLen(1), "the hook is not deployed with the agent")
		Expect(atWork(ctx, c.name, addon.PreDeleteWorkName(a))()).To(BeNil(), "no hook work before the add-on is removed")

		By("removing the add-on: the hook runs")
		Expect(hubCP.Client.Delete(ctx, &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: c.name, Name: a}})).To(Succeed())
		hookWork := atWork(ctx, c.name, addon.PreDeleteWorkName(a))
		Eventually(hookWork).ShouldNot(BeNil())
		Expect(metav1.GetControllerOf(hookWork())).To(HaveField("Kind", "ManagedClusterAddOn"))
		pod := &corev1.Pod{}
		Eventually(func() error {
			return spoke.Client.Get(ctx, client.ObjectKey{Namespace: addon.DefaultInstallNamespace, Name: a + "-cleanup"}, pod)
		}).Should(Succeed())
		Eventually(mca).Should(haveAddOnCondition(addon.ConditionHookManifestCompleted, metav1.ConditionFalse, template.ReasonHookNotCompleted))
		Consistently(mca, "2s").ShouldNot(BeNil(), "the finalizer holds the add-on while the hook runs")
		Expect(work()).NotTo(BeNil())

		By("the hook succeeds")
		Eventually(func() error {
			if err := spoke.Client.Get(ctx, client.ObjectKeyFromObject(pod), pod); err != nil {
				return err
			}
			pod.Status.Phase = corev1.PodSucceeded
			return spoke.Client.Status().Update(ctx, pod)
		}).Should(Succeed())
		Eventually(mca, "60s").Should(BeNil())
		Eventually(work, "60s").Should(BeNil())
		Eventually(hookWork, "60s").Should(BeNil())
	})

	It("says why a template does not render, and creates or changes no work", func(ctx SpecContext) {
		a := "bad-" + utilrand.String(5)
		c := atCluster(ctx, "at-bad")
		atAddOn(ctx, a, atDeployment(a))
		atEnable(ctx, c.name, a)
		mca := atMCA(ctx, c.name, a)
		work := atWork(ctx, c.name, addon.DeployWorkName(a, 0))
		Eventually(work).ShouldNot(BeNil())
		Eventually(mca).Should(haveAddOnCondition(addon.ConditionManifestApplied, metav1.ConditionTrue, template.ReasonManifestApplied))
		before := work()

		By("pointing the add-on at a template whose second manifest does not render")
		atTemplate(ctx, a+"-0.2.0", a, a+"-hub", atDeployment(a), `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"{{CLUSTER_NAME"}}`)
		Eventually(func() error {
			cma := &addonv1alpha1.ClusterManagementAddOn{}
			if err := hubCP.Client.Get(ctx, client.ObjectKey{Name: a}, cma); err != nil {
				return err
			}
			cma.Spec.SupportedConfigs[0].DefaultConfig.Name = a + "-0.2.0"
			return hubCP.Client.Update(ctx, cma)
		}).Should(Succeed())
		Eventually(mca).Should(haveAddOnCondition(addon.ConditionManifestApplied, metav1.ConditionFalse, template.ReasonManifestApplyFailed))
		msg := meta.FindStatusCondition(mca().Status.Conditions, addon.ConditionManifestApplied).Message
		Expect(msg).To(And(ContainSubstring("manifest 1 of AddOnTemplate "+a+"-0.2.0"), ContainSubstring("not a JSON object once its variables are substituted")))
		Consistently(func() string { return work().ResourceVersion }, "2s").Should(Equal(before.ResourceVersion), "the work is left as it was")
		Expect(atWork(ctx, c.name, addon.DeployWorkName(a, 1))()).To(BeNil())

		By("on another cluster, no work is created at all")
		c2 := atCluster(ctx, "at-bad")
		atEnable(ctx, c2.name, a)
		Eventually(atMCA(ctx, c2.name, a)).Should(haveAddOnCondition(addon.ConditionManifestApplied, metav1.ConditionFalse, template.ReasonManifestApplyFailed))
		Consistently(func() []workv1.ManifestWork {
			list := &workv1.ManifestWorkList{}
			Expect(hubCP.Client.List(ctx, list, client.InNamespace(c2.name))).To(Succeed())
			return list.Items
		}, "2s").Should(BeEmpty())
		Expect(msg).To(HavePrefix("nothing was applied: "))
	})
})
