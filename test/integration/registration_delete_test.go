package integration

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	"github.com/flotilla-io/flotilla/hub/registration"
)

var _ = Describe("Registration: deleting a cluster", func() {
	It("removes its RBAC, then its ManifestWorks (letting their finalizers run), then its namespace, then itself", func(ctx SpecContext) {
		c := newClusterName("delete")
		createCluster(ctx, c)
		acceptCluster(ctx, c)
		agent := crClient(agentConfig(ctx, c, "agent1"))

		By("giving the cluster a ManifestWork that its agent holds with a finalizer")
		work := &workv1.ManifestWork{
			ObjectMeta: metav1.ObjectMeta{Name: "hello", Namespace: c, Finalizers: []string{workv1.ManifestWorkFinalizer}},
			Spec: workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{Manifests: []workv1.Manifest{{RawExtension: runtime.RawExtension{
				Raw: []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"hello","namespace":"default"}}`),
			}}}}},
		}
		Expect(hubCP.Client.Create(ctx, work)).To(Succeed())
		Eventually(func() error { return agent.Get(ctx, client.ObjectKeyFromObject(work), &workv1.ManifestWork{}) }).Should(Succeed())

		Expect(hubCP.Client.Delete(ctx, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: c}})).To(Succeed())

		By("first removing the RBAC other than the agent's access to its works")
		for _, obj := range []client.Object{
			&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: registration.ClusterRoleName(c)}},
			&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: registration.ClusterRoleName(c)}},
			&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: c, Name: registration.RegistrationRoleBindingName(c)}},
		} {
			Eventually(exists(ctx, obj)).Should(BeFalse(), "%T %s", obj, client.ObjectKeyFromObject(obj))
		}

		By("then deleting the ManifestWork, and waiting for its finalizer while keeping the namespace")
		Eventually(func() *metav1.Time {
			got := &workv1.ManifestWork{}
			Expect(hubCP.Client.Get(ctx, client.ObjectKeyFromObject(work), got)).To(Succeed())
			return got.DeletionTimestamp
		}).ShouldNot(BeNil())
		Consistently(func(g Gomega) {
			ns := &corev1.Namespace{}
			g.Expect(hubCP.Client.Get(ctx, client.ObjectKey{Name: c}, ns)).To(Succeed())
			g.Expect(ns.DeletionTimestamp).To(BeNil(), "namespace deleted before the ManifestWorks were gone")
			g.Expect(hubCP.Client.Get(ctx, client.ObjectKey{Name: c}, &clusterv1.ManagedCluster{})).To(Succeed())
			g.Expect(hubCP.Client.Get(ctx, client.ObjectKey{Namespace: c, Name: registration.WorkRoleBindingName(c)}, &rbacv1.RoleBinding{})).To(Succeed())
		}, 2*time.Second, 200*time.Millisecond).Should(Succeed())

		By("letting the agent, which still may, remove the work's finalizer")
		Eventually(func() error {
			got := &workv1.ManifestWork{}
			if err := agent.Get(ctx, client.ObjectKeyFromObject(work), got); err != nil {
				return err
			}
			got.Finalizers = nil
			return agent.Update(ctx, got)
		}).Should(Succeed())

		By("then removing the namespace and, last, the ManagedCluster")
		Eventually(exists(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: c}}), time.Minute).Should(BeFalse())
		Eventually(exists(ctx, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: c}})).Should(BeFalse())
		Expect(exists(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: c, Name: registration.WorkRoleBindingName(c)}})()).To(BeFalse())
	})
})
