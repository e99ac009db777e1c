package cli

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
	"github.com/flotilla-io/flotilla/deploy"
)

// Names of what join installs on the managed cluster besides the namespace
// and the secrets of agent.Options (deploy/charts/flotilla-agent).
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
)

// agentLabels mark every object join installs (the chart's labels); unjoin
// finds them by them.
func agentLabels() map[string]string {
	return map[string]string{"app.kubernetes.io/name": agentName, managedByLabel: managedByValue}
}

// agentNamespace is the namespace the agent runs in.
func agentNamespace() *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: agent.DefaultNamespace, Labels: agentLabels()}}
}

// agentInstall is what join's flags say about the agent it installs.
type agentInstall struct {
	cluster, image       string
	leaseDurationSeconds int32
	certExpiration       time.Duration
	// hubServers are further host:port addresses of the hub (the agent's
	// --hub-server).
	hubServers []string
}

// agentChartValues are the values of the flotilla-agent chart that make
// what join installs: the chart is the one source of both.
//
// Without a kubeconfig (an agent that holds its own hub credentials joins
// again) the chart leaves the cluster's bootstrap Secret alone.
func agentChartValues(a agentInstall, kubeconfig []byte) map[string]any {
	values := map[string]any{
		"clusterName":          a.cluster,
		"createNamespace":      true,
		"leaseDurationSeconds": a.leaseDurationSeconds,
		"image":                map[string]any{"reference": a.image},
		"bootstrap":            map[string]any{"create": kubeconfig != nil, "kubeconfig": string(kubeconfig)},
	}
	if len(a.hubServers) > 0 {
		servers := make([]any, len(a.hubServers))
		for i, s := range a.hubServers {
			servers[i] = s
		}
		values["hub"] = map[string]any{"servers": servers}
	}
	if a.certExpiration != agent.DefaultCertificateExpiration {
		values["extraArgs"] = []any{"--client-cert-expiration=" + a.certExpiration.String()}
	}
	return values
}

// agentObjects renders the flotilla-agent chart into the agent's namespace:
// the namespace, the bootstrap Secret, the agent's ServiceAccount and RBAC
// and its Deployment, in the order Helm installs them.
//
// The agent's own needs are small (see the chart's rbac.yaml), but it
// applies whatever the hub's ManifestWorks and Policies hold, so it is also
// bound to cluster-admin by a ClusterRoleBinding of its own, which the
// chart's execution.* values replace with a narrower role. Whoever may write
// ManifestWorks in the cluster's hub namespace is, in effect, administrator
// of this cluster.
func agentObjects(a agentInstall, kubeconfig []byte) ([]client.Object, error) {
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
