package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/flotilla/agent"
)

func newUnjoinCommand(g *globalOptions) *cobra.Command {
	var clusterName string
	cmd := &cobra.Command{
		Use:   "unjoin --cluster-name NAME",
		Short: "Remove the agent from this cluster",
		Long: `Remove the Flotilla agent from the cluster of --kubeconfig: its Deployment,
ServiceAccount, RBAC (ClusterRoles and ClusterRoleBindings
open-cluster-management:flotilla-agent...), its secrets (bootstrap and hub
credentials) and its namespace open-cluster-management-agent.

What the agent applied stays: workloads from ManifestWorks, their
AppliedManifestWorks, and objects enforced by policies.

--cluster-name must match the name the cluster joined with, as a guard
against running this against the wrong cluster. The hub keeps the
ManagedCluster: remove it there with
"kubectl delete managedcluster <name>".`,
		Example: `  flotilla unjoin --kubeconfig cluster1.kubeconfig --cluster-name cluster1`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if clusterName == "" {
				return errors.New("--cluster-name is required: the name this cluster joined the hub with")
			}
			if err := validateClusterName(clusterName); err != nil {
				return fmt.Errorf("--cluster-name: %w", err)
			}
			c, err := g.clientsFor(spokeSide)
			if err != nil {
				return err
			}
			return unjoin(cmd.Context(), g, c, clusterName)
		},
	}
	cmd.Flags().StringVar(&clusterName, "cluster-name", "", "name the cluster joined the hub with")
	return cmd
}

func unjoin(ctx context.Context, g *globalOptions, c *clients, clusterName string) error {
	ns := agent.DefaultNamespace
	// Guard: the hub credentials say which cluster this is.
	creds := &corev1.Secret{}
	err := c.ctrl.Get(ctx, client.ObjectKey{Namespace: ns, Name: agent.HubKubeconfigSecretName}, creds)
	switch {
	case err == nil:
		if joined := string(creds.Data["cluster-name"]); joined != "" && joined != clusterName {
			return fmt.Errorf("%s joined the hub as cluster %q, not %q: check --kubeconfig and --cluster-name", c.where, joined, clusterName)
		}
	case !apierrors.IsNotFound(err):
		return explain(err, c.where, "read Secret "+ns+"/"+agent.HubKubeconfigSecretName)
	}

	var removed []string
	remove := func(kind string, obj client.Object) error {
		err := c.ctrl.Delete(ctx, obj, client.PropagationPolicy("Background"))
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return explain(err, c.where, fmt.Sprintf("delete %s %s", kind, describe(obj)))
		}
		removed = append(removed, kind+" "+describe(obj))
		return nil
	}
	labels := client.MatchingLabels(agentLabels())
	// The agent stops first, so it cannot put anything back.
	for _, o := range []struct {
		kind string
		obj  client.Object
	}{
		{"Deployment", &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: agentName}}},
		{"Secret", &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: agent.BootstrapSecretName}}},
		{"Secret", &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: agent.HubKubeconfigSecretName}}},
	} {
		if err := remove(o.kind, o.obj); err != nil {
			return err
		}
	}
	bindings := &rbacv1.ClusterRoleBindingList{}
	if err := c.ctrl.List(ctx, bindings, labels); err != nil {
		return explain(err, c.where, "list the agent's ClusterRoleBindings")
	}
	for i := range bindings.Items {
		if err := remove("ClusterRoleBinding", &bindings.Items[i]); err != nil {
			return err
		}
	}
	roles := &rbacv1.ClusterRoleList{}
	if err := c.ctrl.List(ctx, roles, labels); err != nil {
		return explain(err, c.where, "list the agent's ClusterRoles")
	}
	for i := range roles.Items {
		if err := remove("ClusterRole", &roles.Items[i]); err != nil {
			return err
		}
	}
	// The namespace takes the ServiceAccount, Role and RoleBinding with it.
	if err := remove("Namespace", &corev1.Namespace{ObjectMeta: agentNamespace().ObjectMeta}); err != nil {
		return err
	}
	if len(removed) == 0 {
		g.notef("Nothing to remove: %s has no Flotilla agent.", c.where)
		return nil
	}
	for _, r := range removed {
		g.notef("Cluster: removed %s", r)
	}
	fmt.Fprintf(g.streams.Out, `The agent of cluster %q is removed; what it applied stays.
To remove the cluster from the hub, run there:

    kubectl delete managedcluster %s
`, clusterName, clusterName)
	return nil
}
