package integration

import (
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"sigs.k8s.io/controller-runtime/pkg/client"

	addonv1alpha1 "github.com/flotilla-io/flotilla/api/addon/v1alpha1"
	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	"github.com/flotilla-io/flotilla/hub/addon/template"
	"github.com/flotilla-io/flotilla/internal/addon"
)

// clusteradm addon enable, get addon and addon disable (clusteradm's
// pkg/cmd/addon/enable, get/addon and addon/disable), reproduced request
// by request against the hub of this process, whose add-on manager runs:
// the hub takes up what clusteradm writes, and clusteradm reads back what
// the hub wrote.
var _ = Describe("clusteradm addon enable, get addon and addon disable", func() {
	It("installs a template add-on clusteradm enables, with its config file; get addon shows it healthy; disable removes it", func(ctx SpecContext) {
		a := "cadm-" + utilrand.String(5)
		c := atCluster(ctx, "cadm")
		spoke := newWorkSpoke(ctx)
		_, err := spoke.Kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: addon.DefaultInstallNamespace}}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		startWorkAgent(c, spoke)
		atAddOn(ctx, a, map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": a, "namespace": addon.DefaultInstallNamespace},
			"data":     map[string]any{"greeting": "{{GREETING}}"},
		})

		By("each command's hub check: discovery of cluster.open-cluster-management.io/v1 lists managedclusters")
		resources, err := hubCP.Kube.Discovery().ServerResourcesForGroupVersion("cluster.open-cluster-management.io/v1")
		Expect(err).NotTo(HaveOccurred())
		Expect(resources.APIResources).To(ContainElement(HaveField("Name", "managedclusters")))

		By("addon enable --names " + a + " --cluster " + c.name + " --config-file adc.yaml --annotate --labels")
		Expect(hubCP.Client.Get(ctx, client.ObjectKey{Name: c.name}, &clusterv1.ManagedCluster{})).To(Succeed())
		// The config file's objects are applied, then referenced by the
		// resource their kind maps to.
		adc := &addonv1alpha1.AddOnDeploymentConfig{
			ObjectMeta: metav1.ObjectMeta{Namespace: c.name, Name: a + "-config"},
			Spec:       addonv1alpha1.AddOnDeploymentConfigSpec{CustomizedVariables: []addonv1alpha1.CustomizedVariable{{Name: "GREETING", Value: "hello"}}},
		}
		Expect(hubCP.Client.Create(ctx, adc)).To(Succeed())
		mapping, err := hubCP.Client.RESTMapper().RESTMapping(addonv1alpha1.GroupVersion.WithKind("AddOnDeploymentConfig").GroupKind(), addonv1alpha1.GroupVersion.Version)
		Expect(err).NotTo(HaveOccurred())
		configs := []addonv1alpha1.AddOnConfig{{
			ConfigGroupResource: addonv1alpha1.ConfigGroupResource{Group: mapping.Resource.Group, Resource: mapping.Resource.Resource},
			ConfigReferent:      addonv1alpha1.ConfigReferent{Namespace: adc.Namespace, Name: adc.Name},
		}}
		Expect(hubCP.Client.Get(ctx, client.ObjectKey{Name: a}, &addonv1alpha1.ClusterManagementAddOn{})).To(Succeed())
		key := client.ObjectKey{Namespace: c.name, Name: a}
		err = hubCP.Client.Get(ctx, key, &addonv1alpha1.ManagedClusterAddOn{})
		Expect(apierrors.IsNotFound(err)).To(BeTrue(), "%v", err)
		Expect(hubCP.Client.Create(ctx, &addonv1alpha1.ManagedClusterAddOn{
			ObjectMeta: metav1.ObjectMeta{Namespace: c.name, Name: a, Annotations: map[string]string{"team": "fleet"}, Labels: map[string]string{"tier": "one"}},
			Spec:       addonv1alpha1.ManagedClusterAddOnSpec{InstallNamespace: addon.DefaultInstallNamespace, Configs: configs},
		})).To(Succeed())

		By("the hub takes it up: owner, the config file's config with its hash, registration, the work, health")
		mca := atMCA(ctx, c.name, a)
		adcHash := atSpecHash(ctx, "AddOnDeploymentConfig", adc.Namespace, adc.Name)
		Eventually(mca, "60s").Should(And(
			haveAddOnCondition(addon.ConditionRegistrationApplied, metav1.ConditionTrue, template.ReasonSetPermissionApplied),
			haveAddOnCondition(addon.ConditionManifestApplied, metav1.ConditionTrue, template.ReasonManifestApplied),
			haveAddOnCondition(addon.ConditionAvailable, metav1.ConditionTrue, template.ReasonProbeAvailable),
		))
		got := mca()
		Expect(metav1.GetControllerOf(got)).To(And(Not(BeNil()), HaveField("Kind", "ClusterManagementAddOn"), HaveField("Name", a)))
		Expect(got.Status.ConfigReferences).To(ContainElement(And(
			HaveField("ConfigGroupResource", configs[0].ConfigGroupResource),
			HaveField("DesiredConfig", HaveField("SpecHash", adcHash)))))
		Eventually(func(g Gomega) {
			cm := &corev1.ConfigMap{}
			g.Expect(spoke.Client.Get(ctx, client.ObjectKey{Namespace: addon.DefaultInstallNamespace, Name: a}, cm)).To(Succeed())
			g.Expect(cm.Data).To(HaveKeyWithValue("greeting", "hello"))
		}, "60s").Should(Succeed())

		By("addon enable again, other annotations and labels: clusteradm's update replaces them, and the hub keeps the add-on")
		// clusteradm gets and updates once; the hub writes the status
		// meanwhile, so a run may meet a conflict, and is run again.
		Eventually(func() error {
			m := &addonv1alpha1.ManagedClusterAddOn{}
			if err := hubCP.Client.Get(ctx, key, m); err != nil {
				return err
			}
			m.Annotations, m.Labels = map[string]string{"team": "platform"}, map[string]string{"tier": "two"}
			m.Spec.InstallNamespace, m.Spec.Configs = addon.DefaultInstallNamespace, configs
			return hubCP.Client.Update(ctx, m)
		}, "30s").Should(Succeed())
		got = mca()
		Expect(got.Annotations).To(Equal(map[string]string{"team": "platform"}))
		Expect(got.Labels).To(Equal(map[string]string{"tier": "two"}))
		Expect(metav1.GetControllerOf(got)).NotTo(BeNil())
		Consistently(mca, "3s").Should(haveAddOnCondition(addon.ConditionAvailable, metav1.ConditionTrue, template.ReasonProbeAvailable))

		By("get addon " + a + ": ClusterManagementAddOns, ManagedClusterAddOns of every namespace (v1alpha1), the add-ons' works, ManagedClusters")
		Expect(hubCP.Client.List(ctx, &clusterv1.ManagedClusterList{})).To(Succeed())
		cmas := &addonv1alpha1.ClusterManagementAddOnList{}
		Expect(hubCP.Client.List(ctx, cmas)).To(Succeed())
		Expect(cmas.Items).To(ContainElement(HaveField("Name", a)))
		mcas := &addonv1alpha1.ManagedClusterAddOnList{}
		Expect(hubCP.Client.List(ctx, mcas)).To(Succeed())
		var installed []addonv1alpha1.ManagedClusterAddOn
		for _, m := range mcas.Items {
			if m.Name == a {
				installed = append(installed, m)
			}
		}
		Expect(installed).To(HaveLen(1), "InstalledClusters")
		Expect(clusteradmAddOnTree(installed[0])).To(Equal(map[string]string{
			"Available": "true", "ManifestApplied": "true", "RegistrationApplied": "true",
		}))
		works := &workv1.ManifestWorkList{}
		Expect(hubCP.Client.List(ctx, works, client.HasLabels{addon.AddOnNameLabel})).To(Succeed())
		var names []string
		for _, w := range works.Items {
			if w.Namespace == c.name && w.Labels[addon.AddOnNameLabel] == a {
				names = append(names, w.Name)
				Expect(meta.IsStatusConditionTrue(w.Status.Conditions, workv1.WorkApplied)).To(BeTrue(), "work %s", w.Name)
			}
		}
		Expect(names).To(Equal([]string{addon.DeployWorkName(a, 0)}))

		By("addon enable of an add-on the hub does not declare: the GET clusteradm reports as 'enabling the unknown addon'")
		err = hubCP.Client.Get(ctx, client.ObjectKey{Name: a + "-undeclared"}, &addonv1alpha1.ClusterManagementAddOn{})
		Expect(apierrors.IsNotFound(err)).To(BeTrue(), "%v", err)

		By("addon disable --names " + a + " --clusters " + c.name + ": the ManagedClusterAddOn, its work and what it applied go")
		Expect(hubCP.Client.Get(ctx, client.ObjectKey{Name: c.name}, &clusterv1.ManagedCluster{})).To(Succeed())
		Expect(hubCP.Client.Delete(ctx, &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: c.name, Name: a}})).To(Succeed())
		Eventually(mca, "60s").Should(BeNil())
		Eventually(atWork(ctx, c.name, addon.DeployWorkName(a, 0)), "60s").Should(BeNil())
		Eventually(func() bool {
			return apierrors.IsNotFound(spoke.Client.Get(ctx, client.ObjectKey{Namespace: addon.DefaultInstallNamespace, Name: a}, &corev1.ConfigMap{}))
		}, "60s").Should(BeTrue())
		Eventually(func() map[string]string { return getCluster(ctx, c.name).Labels }, "30s").ShouldNot(HaveKey(addon.FeatureLabel(a)))

		By("addon disable again: NotFound, which clusteradm reports as 'not found in cluster' and succeeds")
		err = hubCP.Client.Delete(ctx, &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: c.name, Name: a}})
		Expect(apierrors.IsNotFound(err)).To(BeTrue(), "%v", err)
	}, SpecTimeout(3*time.Minute))
})

// clusteradmAddOnTree is what clusteradm get addon's tree prints of a
// ManagedClusterAddOn: true, false or unknown for each of three conditions.
func clusteradmAddOnTree(m addonv1alpha1.ManagedClusterAddOn) map[string]string {
	out := map[string]string{}
	for _, t := range []string{"Available", "ManifestApplied", "RegistrationApplied"} {
		switch c := meta.FindStatusCondition(m.Status.Conditions, t); {
		case c == nil:
			out[t] = "unknown"
		case c.Status == metav1.ConditionTrue:
			out[t] = "true"
		default:
			out[t] = fmt.Sprintf("false (%s)", c.Reason)
		}
	}
	return out
}
