package handshake

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/flotilla-io/flotilla/agent"
	"github.com/flotilla-io/flotilla/cli/cmdutil"
	"github.com/flotilla-io/flotilla/deploy"
	"github.com/flotilla-io/flotilla/internal/version"
)

// Names of what join installs on the managed cluster besides the namespace
// and the secrets of agent.Options (deploy/charts/flotilla-agent).
const (
	// AgentName names the agent's Deployment, ServiceAccount, Role and RoleBinding.
	AgentName = "flotilla-agent"
	// agentClusterRoleName names the ClusterRole (and binding) with what the
	// agent itself needs.
	agentClusterRoleName = "open-cluster-management:flotilla-agent"
	// agentExecutionBindingName binds the agent to cluster-admin, so that it
	// can apply whatever ManifestWorks and Policies hold.
	agentExecutionBindingName = "open-cluster-management:flotilla-agent:execution"
	// fieldManager owns what flotilla applies.
	fieldManager = "flotilla"
)

// AgentLabels mark every object join installs (the chart's labels); unjoin
// finds them by them.
func AgentLabels() map[string]string {
	return map[string]string{"app.kubernetes.io/name": AgentName, ManagedByLabel: ManagedByValue}
}

// AgentNamespace is the namespace the agent runs in.
func AgentNamespace() *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: agent.DefaultNamespace, Labels: AgentLabels()}}
}

// AgentInstall is what join's flags say about the agent it installs.
type AgentInstall struct {
	Cluster, Image       string
	LeaseDurationSeconds int32
	CertExpiration       time.Duration
	// HubServers are further host:port addresses of the hub (the agent's
	// --hub-server).
	HubServers []string
	// UserAddOnNamespace: the add-ons' namespace exists and was not made by
	// join or the chart. Join leaves it as it is (the chart's
	// addons.createNamespaces false), so that unjoin never deletes it.
	UserAddOnNamespace bool
}

// OwnsAddOnNamespace says whether ns, the add-ons' namespace, was made
// by join or the agent chart: it carries the chart's name label.
func OwnsAddOnNamespace(ns *corev1.Namespace) bool {
	return ns.Labels["app.kubernetes.io/name"] == AgentName
}

// agentChartValues are the values of the flotilla-agent chart that make
// what join installs: the chart is the one source of both.
//
// Without a kubeconfig (an agent that holds its own hub credentials joins
// again) the chart leaves the cluster's bootstrap Secret alone.
func agentChartValues(a AgentInstall, kubeconfig []byte) map[string]any {
	values := map[string]any{
		"clusterName":          a.Cluster,
		"createNamespace":      true,
		"leaseDurationSeconds": a.LeaseDurationSeconds,
		"image":                map[string]any{"reference": a.Image},
		"bootstrap":            map[string]any{"create": kubeconfig != nil, "kubeconfig": string(kubeconfig)},
	}
	if a.UserAddOnNamespace {
		values["addons"] = map[string]any{"createNamespaces": false}
	}
	if len(a.HubServers) > 0 {
		servers := make([]any, len(a.HubServers))
		for i, s := range a.HubServers {
			servers[i] = s
		}
		values["hub"] = map[string]any{"servers": servers}
	}
	if a.CertExpiration != agent.DefaultCertificateExpiration {
		values["extraArgs"] = []any{"--client-cert-expiration=" + a.CertExpiration.String()}
	}
	return values
}

// AgentObjects renders the flotilla-agent chart into the agent's namespace:
// the namespace, the bootstrap Secret, the agent's ServiceAccount and RBAC
// and its Deployment, in the order Helm installs them.
//
// The agent's own needs are small (see the chart's rbac.yaml), but it
// applies whatever the hub's ManifestWorks and Policies hold, so it is also
// bound to cluster-admin by a ClusterRoleBinding of its own, which the
// chart's execution.* values replace with a narrower role. Whoever may write
// ManifestWorks in the cluster's hub namespace is, in effect, administrator
// of this cluster.
func AgentObjects(a AgentInstall, kubeconfig []byte) ([]client.Object, error) {
	rendered, err := deploy.Render(deploy.AgentChart, agent.DefaultNamespace, agentChartValues(a, kubeconfig))
	if err != nil {
		return nil, err
	}
	objs := make([]client.Object, len(rendered))
	for i, o := range rendered {
		objs[i] = o
	}
	return objs, nil
}

// Apply creates or updates objs with server-side apply, taking over fields
// that others changed: join is the source of truth for what it installs.
func Apply(ctx context.Context, c *cmdutil.Clients, objs ...client.Object) error {
	for _, obj := range objs {
		gvk, err := apiutil.GVKForObject(obj, cmdutil.Scheme)
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
		if err := c.Ctrl.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(fieldManager), client.ForceOwnership); err != nil {
			return cmdutil.Explain(err, c.Where, fmt.Sprintf("apply %s %s", gvk.Kind, Describe(obj)))
		}
	}
	return nil
}

// Describe names an object as namespace/name.
func Describe(obj client.Object) string {
	if obj.GetNamespace() == "" {
		return obj.GetName()
	}
	return obj.GetNamespace() + "/" + obj.GetName()
}

// DefaultAgentImage is the agent image of this build: the one `make images` tags.
var DefaultAgentImage = version.Image("flotilla-agent")
