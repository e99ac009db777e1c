package integration

import (
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	schedulingv1 "k8s.io/kubernetes/pkg/apis/scheduling/v1"
	"k8s.io/kubernetes/plugin/pkg/auth/authorizer/rbac/bootstrappolicy"

	"github.com/flotilla-io/flotilla/hub"
	"github.com/flotilla-io/flotilla/manifests"
)

// adminUser is the user of the hub's admin certificate, which the specs'
// clients (and the hub controllers of the suite's hub) use.
const adminUser = "flotilla:admin"

var _ = Describe("A control plane's start", func() {
	It("bootstraps the API server's default roles, bindings and system priority classes, and is ready only after", func(ctx SpecContext) {
		rbac := hubCP.Kube.RbacV1()
		for _, want := range append(bootstrappolicy.ClusterRoles(), bootstrappolicy.ControllerRoles()...) {
			got, err := rbac.ClusterRoles().Get(ctx, want.Name, metav1.GetOptions{})
			Expect(err).NotTo(HaveOccurred(), "ClusterRole %s", want.Name)
			Expect(got.Rules).To(ContainElements(want.Rules), "ClusterRole %s", want.Name)
		}
		for _, want := range append(bootstrappolicy.ClusterRoleBindings(), bootstrappolicy.ControllerRoleBindings()...) {
			got, err := rbac.ClusterRoleBindings().Get(ctx, want.Name, metav1.GetOptions{})
			Expect(err).NotTo(HaveOccurred(), "ClusterRoleBinding %s", want.Name)
			Expect(got.RoleRef).To(Equal(want.RoleRef), "ClusterRoleBinding %s", want.Name)
			Expect(got.Subjects).To(ContainElements(want.Subjects), "ClusterRoleBinding %s", want.Name)
		}
		for ns, roles := range bootstrappolicy.NamespaceRoles() {
			for _, want := range roles {
				got, err := rbac.Roles(ns).Get(ctx, want.Name, metav1.GetOptions{})
				Expect(err).NotTo(HaveOccurred(), "Role %s/%s", ns, want.Name)
				Expect(got.Rules).To(ContainElements(want.Rules), "Role %s/%s", ns, want.Name)
			}
		}
		for ns, bindings := range bootstrappolicy.NamespaceRoleBindings() {
			for _, want := range bindings {
				got, err := rbac.RoleBindings(ns).Get(ctx, want.Name, metav1.GetOptions{})
				Expect(err).NotTo(HaveOccurred(), "RoleBinding %s/%s", ns, want.Name)
				Expect(got.Subjects).To(ContainElements(want.Subjects), "RoleBinding %s/%s", ns, want.Name)
			}
		}
		for _, want := range schedulingv1.SystemPriorityClasses() {
			got, err := hubCP.Kube.SchedulingV1().PriorityClasses().Get(ctx, want.Name, metav1.GetOptions{})
			Expect(err).NotTo(HaveOccurred(), "PriorityClass %s", want.Name)
			Expect(got.Value).To(Equal(want.Value), "PriorityClass %s", want.Name)
		}

		By("counting the hooks that did it among what /readyz waits for, instead of the API server's own")
		raw, err := hubCP.Kube.Discovery().RESTClient().Get().AbsPath("/readyz").Param("verbose", "true").DoRaw(ctx)
		Expect(err).NotTo(HaveOccurred())
		checks := strings.Split(string(raw), "\n")
		Expect(checks).To(ContainElements(
			"[+]poststarthook/flotilla/bootstrap-roles ok",
			"[+]poststarthook/flotilla/bootstrap-system-priority-classes ok"))
		Expect(checks).NotTo(ContainElement(ContainSubstring("poststarthook/rbac/bootstrap-roles")))
		Expect(checks).NotTo(ContainElement(ContainSubstring("poststarthook/scheduling/bootstrap-system-priority-classes")))
	})

	It("installs the hub's CRDs again by reading each once, and writes only the one that differs", func(ctx SpecContext) {
		crds, err := manifests.AllCRDs()
		Expect(err).NotTo(HaveOccurred())
		counts := func() (gets, writes int) {
			c := hubCP.Requests.Counts(adminUser)
			return c["get customresourcedefinitions"], c["create customresourcedefinitions"] + c["update customresourcedefinitions"]
		}

		gets, writes := counts()
		Expect(hub.Prepare(ctx, hubCP.Config, hubCP.URL)).To(Succeed())
		getsAfter, writesAfter := counts()
		Expect(writesAfter-writes).To(BeZero(), "every CRD is as the hub defines it: nothing to write")
		Expect(getsAfter-gets).To(Equal(len(crds)), "one read per CRD, none to wait for one served already")

		By("putting back a CRD someone changed")
		api := apiextensionsclient.NewForConfigOrDie(hubCP.Config).ApiextensionsV1().CustomResourceDefinitions()
		const name = "addontemplates.addon.open-cluster-management.io"
		crd, err := api.Get(ctx, name, metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred())
		want := crd.Spec.DeepCopy()
		crd.Spec.Versions[0].AdditionalPrinterColumns = append(crd.Spec.Versions[0].AdditionalPrinterColumns,
			apiextensionsv1.CustomResourceColumnDefinition{Name: "Changed", Type: "string", JSONPath: ".metadata.name"})
		_, err = api.Update(ctx, crd, metav1.UpdateOptions{})
		Expect(err).NotTo(HaveOccurred())

		_, writes = counts()
		Expect(hub.Prepare(ctx, hubCP.Config, hubCP.URL)).To(Succeed())
		_, writesAfter = counts()
		Expect(writesAfter - writes).To(Equal(1))
		crd, err = api.Get(ctx, name, metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(crd.Spec).To(Equal(*want))
	})
})
