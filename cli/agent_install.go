package cli

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/flotilla-io/flotilla/agent"
)

// Names of what join installs on the managed cluster besides the namespace
// and the secrets of agent.Options.
const (
	// agentName names the agent's Deployment, ServiceAccount, Role and RoleBinding.
	agentName = "flotilla-agent"
	// agentClusterRoleName names the ClusterRole (and binding) with what the
	// agent itself needs.
	agentClusterRoleName = "open-cluster-management:flotilla-agent"
	// agentExecutionBindingName binds the agent to cluster-admin, so that it
	// can apply whatever ManifestWorks and Policies hold.
	agentExecutionBindingName = "open-cluster-management:flotilla-agent:execution"
	// fieldManager owns what flotilla applies.
	fieldManager = "flotilla"
	// agentHealthPort serves the agent's /healthz in its pod.
	agentHealthPort = 9447
)

// agentLabels mark every object join installs; unjoin finds them by them.
func agentLabels() map[string]string {
	return map[string]string{"app.kubernetes.io/name": agentName, managedByLabel: managedByValue}
}

// agentNamespace is the namespace the agent runs in.
func agentNamespace() *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: agent.DefaultNamespace, Labels: agentLabels()}}
}

// bootstrapSecret holds the kubeconfig the agent joins the hub with.
func bootstrapSecret(kubeconfig []byte) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: agent.BootstrapSecretName, Namespace: agent.DefaultNamespace, Labels: agentLabels()},
		Type:       corev1.SecretTypeOpaque,
		Data:       map[string][]byte{"kubeconfig": kubeconfig},
	}
}

// agentObjects are what runs the agent in the cluster: its ServiceAccount,
// RBAC and Deployment.
//
// The agent's own needs are small: read nodes and namespaces (inventory),
// manage ClusterClaims, AppliedManifestWorks and ConfigurationPolicies,
// check /livez, and keep secrets, leases and events in its namespace. But the
// agent applies whatever the hub's ManifestWorks and Policies hold, which
// may be any kind of object, RBAC included; so it is also bound to
// cluster-admin, by a ClusterRoleBinding of its own that an administrator
// may replace with a narrower role. Whoever may write ManifestWorks in the
// cluster's hub namespace is, in effect, administrator of this cluster.
func agentObjects(cluster, image string, leaseDurationSeconds int32) []client.Object {
	ns := agent.DefaultNamespace
	meta := func(name, namespace string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: agentLabels()}
	}
	sa := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: agentName, Namespace: ns}}
	all := []string{"get", "list", "watch", "create", "update", "patch", "delete"}
	read := []string{"get", "list", "watch"}
	return []client.Object{
		&corev1.ServiceAccount{ObjectMeta: meta(agentName, ns)},
		&rbacv1.Role{
			ObjectMeta: meta(agentName, ns),
			Rules: []rbacv1.PolicyRule{
				{APIGroups: []string{""}, Resources: []string{"secrets", "configmaps"}, Verbs: all},
				{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: all},
			},
		},
		&rbacv1.RoleBinding{
			ObjectMeta: meta(agentName, ns),
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: agentName},
			Subjects:   sa,
		},
		&rbacv1.ClusterRole{
			ObjectMeta: meta(agentClusterRoleName, ""),
			Rules: []rbacv1.PolicyRule{
				{APIGroups: []string{""}, Resources: []string{"nodes", "namespaces"}, Verbs: read},
				{APIGroups: []string{"", "events.k8s.io"}, Resources: []string{"events"}, Verbs: []string{"create", "update", "patch"}},
				{APIGroups: []string{"cluster.open-cluster-management.io"}, Resources: []string{"clusterclaims"}, Verbs: all},
				{APIGroups: []string{"work.open-cluster-management.io"}, Resources: []string{"appliedmanifestworks", "appliedmanifestworks/status", "appliedmanifestworks/finalizers"}, Verbs: all},
				{APIGroups: []string{"policy.open-cluster-management.io"}, Resources: []string{"configurationpolicies", "configurationpolicies/status", "configurationpolicies/finalizers"}, Verbs: all},
				{APIGroups: []string{"apiextensions.k8s.io"}, Resources: []string{"customresourcedefinitions"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch"}},
				{APIGroups: []string{"authorization.k8s.io"}, Resources: []string{"subjectaccessreviews", "selfsubjectaccessreviews"}, Verbs: []string{"create"}},
				{NonResourceURLs: []string{"/livez", "/readyz", "/healthz", "/version"}, Verbs: []string{"get"}},
				// The cluster proxy (agent/proxy) acts as hub users, always
				// under the agent's prefixes (flotilla: by default): RBAC
				// cannot limit impersonation to a prefix, the agent does.
				{APIGroups: []string{""}, Resources: []string{"users", "groups"}, Verbs: []string{"impersonate"}},
			},
		},
		&rbacv1.ClusterRoleBinding{
			ObjectMeta: meta(agentClusterRoleName, ""),
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: agentClusterRoleName},
			Subjects:   sa,
		},
		&rbacv1.ClusterRoleBinding{
			ObjectMeta: meta(agentExecutionBindingName, ""),
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
			Subjects:   sa,
		},
		agentDeployment(cluster, image, leaseDurationSeconds),
	}
}

func agentDeployment(cluster, image string, leaseDurationSeconds int32) *appsv1.Deployment {
	selector := map[string]string{"app.kubernetes.io/name": agentName}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: agentName, Namespace: agent.DefaultNamespace, Labels: agentLabels()},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: selector},
			// Never two agents at once: they would race for one CSR and lease.
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: agentLabels()},
				Spec: corev1.PodSpec{
					ServiceAccountName: agentName,
					SecurityContext: &corev1.PodSecurityContext{
						RunAsNonRoot:   ptr.To(true),
						SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
					},
					Containers: []corev1.Container{{
						Name:  "agent",
						Image: image,
						Args: []string{
							"--cluster-name=" + cluster,
							"--namespace=" + agent.DefaultNamespace,
							fmt.Sprintf("--lease-duration-seconds=%d", leaseDurationSeconds),
							fmt.Sprintf("--health-probe-bind-address=:%d", agentHealthPort),
						},
						Ports: []corev1.ContainerPort{{Name: "health", ContainerPort: agentHealthPort}},
						// Liveness only: readiness would tie availability to the
						// hub's acceptance, and join --wait reports those apart.
						LivenessProbe: &corev1.Probe{
							ProbeHandler:        corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromString("health")}},
							InitialDelaySeconds: 10,
							PeriodSeconds:       20,
						},
						Resources: corev1.ResourceRequirements{
							Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50m"), corev1.ResourceMemory: resource.MustParse("64Mi")},
							Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("512Mi")},
						},
						SecurityContext: &corev1.SecurityContext{
							AllowPrivilegeEscalation: ptr.To(false),
							ReadOnlyRootFilesystem:   ptr.To(true),
							Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
						},
					}},
				},
			},
		},
	}
}

// apply creates or updates objs with server-side apply, taking over fields
// that others changed: join is the source of truth for what it installs.
func apply(ctx context.Context, c *clients, objs ...client.Object) error {
	for _, obj := range objs {
		gvk, err := apiutil.GVKForObject(obj, scheme)
		if err != nil {
			return err
		}
		content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			return err
		}
		u := &unstructured.Unstructured{Object: content}
		u.SetGroupVersionKind(gvk)
		unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
		unstructured.RemoveNestedField(u.Object, "spec", "template", "metadata", "creationTimestamp")
		unstructured.RemoveNestedField(u.Object, "status")
		if err := c.ctrl.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(fieldManager), client.ForceOwnership); err != nil {
			return explain(err, c.where, fmt.Sprintf("apply %s %s", gvk.Kind, describe(obj)))
		}
	}
	return nil
}

// describe names an object as namespace/name.
func describe(obj client.Object) string {
	if obj.GetNamespace() == "" {
		return obj.GetName()
	}
	return obj.GetNamespace() + "/" + obj.GetName()
}
