package integration

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	addonv1alpha1 "github.com/flotilla-io/flotilla/api/addon/v1alpha1"
	addonv1beta1 "github.com/flotilla-io/flotilla/api/addon/v1beta1"
	"github.com/flotilla-io/flotilla/internal/addon"
)

// OCM v1.3's agent and addon-framework read and write the add-on API as
// v1beta1; clusteradm and older releases as v1alpha1, the stored version.
// The hub's conversion webhook serves each its own shape of one object.
var _ = Describe("Add-on API versions", func() {
	It("serves one ManagedClusterAddOn and ClusterManagementAddOn in both versions' shapes, both ways", func(ctx SpecContext) {
		cluster := newNamespace(ctx, "conv")

		By("writing a ManagedClusterAddOn as v1alpha1, with an install namespace and registrations")
		mca := &addonv1alpha1.ManagedClusterAddOn{
			ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: "hello", Annotations: map[string]string{"team": "a"}},
			Spec:       addonv1alpha1.ManagedClusterAddOnSpec{InstallNamespace: "hello-agent"},
		}
		Expect(hubCP.Client.Create(ctx, mca)).To(Succeed())
		DeferCleanup(func(ctx context.Context) { Expect(client.IgnoreNotFound(hubCP.Client.Delete(ctx, mca))).To(Succeed()) })
		registrations := []addonv1alpha1.RegistrationConfig{
			{SignerName: "kubernetes.io/kube-apiserver-client", Subject: addonv1alpha1.Subject{User: "system:open-cluster-management:cluster:" + cluster + ":addon:hello:agent:hello-agent", Groups: []string{"hello-group"}}},
			{SignerName: "example.com/hello", Subject: addonv1alpha1.Subject{User: "hello", OrganizationUnits: []string{"ou"}}},
		}
		// The hub's add-on manager writes the status too (no
		// ClusterManagementAddOn is named hello): retry on conflicts.
		Eventually(func() error {
			if err := hubCP.Client.Get(ctx, client.ObjectKeyFromObject(mca), mca); err != nil {
				return err
			}
			mca.Status.Registrations, mca.Status.KubeClientDriver = registrations, "csr"
			return hubCP.Client.Status().Update(ctx, mca)
		}).Should(Succeed())

		By("reading it as v1beta1: typed registrations, the install namespace as an annotation")
		beta := &addonv1beta1.ManagedClusterAddOn{}
		Expect(hubCP.Client.Get(ctx, client.ObjectKeyFromObject(mca), beta)).To(Succeed())
		Expect(beta.Annotations).To(HaveKeyWithValue(addon.InstallNamespaceAnnotation, "hello-agent"))
		Expect(beta.Annotations).To(HaveKeyWithValue("team", "a"))
		Expect(beta.Status.Registrations).To(HaveLen(2))
		Expect(beta.Status.Registrations[0].Type).To(Equal("kubeClient"))
		Expect(beta.Status.Registrations[0].KubeClient).NotTo(BeNil())
		Expect(beta.Status.Registrations[0].KubeClient.Subject.Groups).To(Equal([]string{"hello-group"}))
		Expect(beta.Status.Registrations[0].KubeClient.Driver).To(Equal("csr"))
		Expect(beta.Status.Registrations[1].Type).To(Equal("customSigner"))
		Expect(beta.Status.Registrations[1].CustomSigner.SignerName).To(Equal("example.com/hello"))

		By("writing its status as v1beta1, as OCM's agent does, and reading v1alpha1 back")
		Eventually(func() error {
			if err := hubCP.Client.Get(ctx, client.ObjectKeyFromObject(mca), beta); err != nil {
				return err
			}
			beta.Status.Registrations[0].KubeClient.Driver = "token"
			beta.Status.Namespace = "hello-agent"
			return hubCP.Client.Status().Update(ctx, beta)
		}).Should(Succeed())
		back := &addonv1alpha1.ManagedClusterAddOn{}
		Expect(hubCP.Client.Get(ctx, client.ObjectKeyFromObject(mca), back)).To(Succeed())
		Expect(back.Spec.InstallNamespace).To(Equal("hello-agent"))
		Expect(back.Annotations).NotTo(HaveKey(addon.InstallNamespaceAnnotation))
		Expect(back.Status.KubeClientDriver).To(Equal("token"))
		Expect(back.Status.Namespace).To(Equal("hello-agent"))
		Expect(back.Status.Registrations).To(Equal(registrations))

		By("writing a ClusterManagementAddOn as v1beta1 with default configs, and reading it as v1alpha1")
		cma := &addonv1beta1.ClusterManagementAddOn{
			ObjectMeta: metav1.ObjectMeta{Name: cluster},
			Spec: addonv1beta1.ClusterManagementAddOnSpec{
				DefaultConfigs: []addonv1alpha1.AddOnConfig{
					{ConfigGroupResource: amADCGR, ConfigReferent: addonv1alpha1.ConfigReferent{Namespace: cluster, Name: "defaults"}},
					{ConfigGroupResource: addonv1alpha1.ConfigGroupResource{Group: addon.Group, Resource: "addontemplates"}, ConfigReferent: addonv1alpha1.ConfigReferent{Name: "__reserved_no_default__"}},
				},
				InstallStrategy: addonv1alpha1.InstallStrategy{Type: addonv1alpha1.AddonInstallStrategyManual},
			},
		}
		Expect(hubCP.Client.Create(ctx, cma)).To(Succeed())
		DeferCleanup(func(ctx context.Context) { Expect(client.IgnoreNotFound(hubCP.Client.Delete(ctx, cma))).To(Succeed()) })
		alpha := &addonv1alpha1.ClusterManagementAddOn{}
		Expect(hubCP.Client.Get(ctx, client.ObjectKeyFromObject(cma), alpha)).To(Succeed())
		Expect(alpha.Spec.SupportedConfigs).To(Equal([]addonv1alpha1.ConfigMeta{
			{ConfigGroupResource: amADCGR, DefaultConfig: &addonv1alpha1.ConfigReferent{Namespace: cluster, Name: "defaults"}},
			{ConfigGroupResource: addonv1alpha1.ConfigGroupResource{Group: addon.Group, Resource: "addontemplates"}},
		}))
	})
})
