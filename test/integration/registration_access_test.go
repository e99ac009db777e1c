package integration

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	certificatesv1 "k8s.io/api/certificates/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	"github.com/flotilla-io/flotilla/hub/registration"
)

// namespacedResources are what an agent could want to read in another
// cluster's namespace.
var namespacedResources = []schema.GroupVersionResource{
	{Group: "work.open-cluster-management.io", Version: "v1", Resource: "manifestworks"},
	{Group: "coordination.k8s.io", Version: "v1", Resource: "leases"},
	{Version: "v1", Resource: "secrets"},
	{Version: "v1", Resource: "configmaps"},
	{Version: "v1", Resource: "events"},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "rolebindings"},
}

var _ = Describe("Registration: accepting a cluster", func() {
	It("creates its namespace, its RBAC and its lease, and says so in HubAcceptedManagedCluster", func(ctx SpecContext) {
		c := newClusterName("accept")
		createCluster(ctx, c)

		By("granting nothing before acceptance")
		Eventually(func() []string { return getCluster(ctx, c).Finalizers }).Should(ContainElement(registration.ClusterFinalizer))
		Expect(exists(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: c}})()).To(BeFalse())
		Expect(exists(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: registration.ClusterRoleName(c)}})()).To(BeFalse())
		Expect(clusterCondition(ctx, c, clusterv1.ManagedClusterConditionHubAccepted)()).To(BeNil())

		acceptCluster(ctx, c)
		Expect(clusterCondition(ctx, c, clusterv1.ManagedClusterConditionHubAccepted)()).To(HaveField("Reason", clusterv1.ReasonHubClusterAdminAccepted))

		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: c}}
		Eventually(exists(ctx, ns)).Should(BeTrue())
		Expect(ns.Labels).To(HaveKeyWithValue(clusterv1.ClusterNameLabel, c))

		group := rbacv1.Subject{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: "system:open-cluster-management:" + c}
		role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "open-cluster-management:managedcluster:" + c}}
		Expect(exists(ctx, role)()).To(BeTrue())
		Expect(role.Rules).To(ContainElements(
			And(HaveField("Resources", ConsistOf("managedclusters")), HaveField("ResourceNames", ConsistOf(c)), HaveField("Verbs", ContainElements("get", "update"))),
			And(HaveField("Resources", ConsistOf("managedclusters/status")), HaveField("ResourceNames", ConsistOf(c)), HaveField("Verbs", ContainElements("patch", "update"))),
			And(HaveField("Resources", ConsistOf("certificatesigningrequests")), HaveField("Verbs", ConsistOf("create", "get", "list", "watch"))),
			And(HaveField("APIGroups", ConsistOf("register.open-cluster-management.io")), HaveField("Resources", ConsistOf("managedclusters/clientcertificates")), HaveField("Verbs", ConsistOf("renew"))),
		))
		crb := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: role.Name}}
		Expect(exists(ctx, crb)()).To(BeTrue())
		Expect(crb.RoleRef.Name).To(Equal(role.Name))
		Expect(crb.Subjects).To(ConsistOf(group))
		for _, shared := range []string{"open-cluster-management:managedcluster:registration", "open-cluster-management:managedcluster:work"} {
			Expect(exists(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: shared}})()).To(BeTrue(), "shared ClusterRole %s", shared)
			bindings := &rbacv1.RoleBindingList{}
			Expect(hubCP.Client.List(ctx, bindings, client.InNamespace(c))).To(Succeed())
			Expect(bindings.Items).To(ContainElement(And(
				HaveField("RoleRef", rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: shared}),
				HaveField("Subjects", ConsistOf(group)),
			)), "a RoleBinding in %s to %s", c, shared)
		}
		Eventually(exists(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: c, Name: clusterv1.ManagedClusterLeaseName}})).Should(BeTrue())
	})

	It("leaves out of its namespace what only pods use: the default ServiceAccount and the root CA ConfigMap", func(ctx SpecContext) {
		c := newClusterName("no-pods")
		createCluster(ctx, c)
		acceptCluster(ctx, c)
		Eventually(exists(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: c}})).Should(BeTrue())

		By("still giving both to a namespace created after it, which is no cluster's")
		// Each controller handles namespaces one at a time, in the order
		// they came: once the later one has its objects, the cluster's
		// namespace, had it been given any, would have them too.
		other := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "no-cluster-"}}
		Expect(hubCP.Client.Create(ctx, other)).To(Succeed())
		DeferCleanup(func(ctx SpecContext) { Expect(client.IgnoreNotFound(hubCP.Client.Delete(ctx, other))).To(Succeed()) })
		Eventually(exists(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: other.Name, Name: "default"}})).Should(BeTrue())
		Eventually(exists(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: other.Name, Name: "kube-root-ca.crt"}})).Should(BeTrue())

		Expect(exists(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: c, Name: "default"}})()).To(BeFalse())
		Expect(exists(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: c, Name: "kube-root-ca.crt"}})()).To(BeFalse())
	})

	It("keeps cluster A's agent out of cluster B's namespace, ManagedCluster and CSR approvals", func(ctx SpecContext) {
		a, b := newClusterName("iso-a"), newClusterName("iso-b")
		createCluster(ctx, a)
		createCluster(ctx, b)
		acceptCluster(ctx, a)
		acceptCluster(ctx, b)
		agentA := agentConfig(ctx, a, "agent1")
		dynA := dynamic.NewForConfigOrDie(agentA)
		kubeA := kubernetes.NewForConfigOrDie(agentA)

		By("letting A read its own ManifestWorks and lease (so that the refusals below are RBAC's)")
		Eventually(func() error {
			_, err := dynA.Resource(namespacedResources[0]).Namespace(a).List(ctx, metav1.ListOptions{})
			return err
		}).Should(Succeed())
		_, err := dynA.Resource(namespacedResources[1]).Namespace(a).Get(ctx, clusterv1.ManagedClusterLeaseName, metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred())

		By("refusing A every get, list and watch in namespace B")
		for _, gvr := range namespacedResources {
			_, err := dynA.Resource(gvr).Namespace(b).Get(ctx, "anything", metav1.GetOptions{})
			Expect(err).To(beForbidden(), "get %s in %s", gvr.Resource, b)
			_, err = dynA.Resource(gvr).Namespace(b).List(ctx, metav1.ListOptions{})
			Expect(err).To(beForbidden(), "list %s in %s", gvr.Resource, b)
			w, err := dynA.Resource(gvr).Namespace(b).Watch(ctx, metav1.ListOptions{})
			if w != nil {
				w.Stop()
			}
			Expect(err).To(beForbidden(), "watch %s in %s", gvr.Resource, b)
		}

		By("refusing A updates to ManagedCluster B, and to its status")
		clientA := crClient(agentA)
		mcB := getCluster(ctx, b)
		mcB.Labels = map[string]string{"stolen": "true"}
		Expect(clientA.Update(ctx, mcB)).To(beForbidden())
		Expect(clientA.Status().Update(ctx, getCluster(ctx, b))).To(beForbidden())
		Expect(clientA.Get(ctx, client.ObjectKey{Name: b}, &clusterv1.ManagedCluster{})).To(beForbidden())

		By("refusing A the approval of a CSR")
		_, csrPEM := newCSR(agentSubject(b, "agent1"))
		name := createClusterCSR(ctx, hubCP.Kube, b, csrPEM)
		csr := getCSR(ctx, name)
		csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
			Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, Reason: "Stolen", Message: "approved by another cluster's agent",
		})
		_, err = kubeA.CertificatesV1().CertificateSigningRequests().UpdateApproval(ctx, name, csr, metav1.UpdateOptions{})
		Expect(err).To(beForbidden())
		Expect(getCSR(ctx, name).Status.Conditions).To(BeEmpty())
	})

	It("removes the RBAC again when the cluster is denied", func(ctx SpecContext) {
		c := newClusterName("deny")
		createCluster(ctx, c)
		acceptCluster(ctx, c)
		agent := crClient(agentConfig(ctx, c, "agent1"))
		Eventually(func() error { return agent.Get(ctx, client.ObjectKey{Name: c}, &clusterv1.ManagedCluster{}) }).Should(Succeed())

		setAccepted(ctx, c, false)
		Eventually(clusterCondition(ctx, c, clusterv1.ManagedClusterConditionHubAccepted)).Should(And(
			HaveField("Status", metav1.ConditionFalse), HaveField("Reason", clusterv1.ReasonHubClusterAdminDenied)))
		for _, obj := range []client.Object{
			&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: registration.ClusterRoleName(c)}},
			&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: registration.ClusterRoleName(c)}},
			&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: c, Name: registration.RegistrationRoleBindingName(c)}},
			&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: c, Name: registration.WorkRoleBindingName(c)}},
		} {
			Eventually(exists(ctx, obj)).Should(BeFalse(), "%T %s", obj, client.ObjectKeyFromObject(obj))
		}
		Eventually(func() error { return agent.Get(ctx, client.ObjectKey{Name: c}, &clusterv1.ManagedCluster{}) }).Should(beForbidden())
		Eventually(func() error {
			return agent.List(ctx, &coordinationv1.LeaseList{}, client.InNamespace(c))
		}).Should(beForbidden())
		Expect(exists(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: c}})()).To(BeTrue(), "denying keeps the namespace")
	})
})
