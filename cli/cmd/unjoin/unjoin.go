package unjoin

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/spf13/cobra"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/flotilla/agent"
	"github.com/flotilla-io/flotilla/cli/cmdutil"
	"github.com/flotilla-io/flotilla/cli/cmdutil/handshake"
	"github.com/flotilla-io/flotilla/internal/addon"
)

// NewCommand returns `flotilla unjoin`.
func NewCommand(g *cmdutil.Globals) *cobra.Command {
	var clusterName string
	cmd := &cobra.Command{
		Use:   "unjoin --cluster-name NAME",
		Short: "Remove the agent from this cluster",
		Long: `Remove the Flotilla agent from the cluster of --kubeconfig: its Deployment,
ServiceAccount, RBAC (ClusterRoles and ClusterRoleBindings
open-cluster-management:flotilla-agent...), its secrets (bootstrap and hub
credentials) and its namespace open-cluster-management-agent; the Role and
RoleBinding open-cluster-management:flotilla-agent:addons in the add-ons'
install namespaces, and namespace open-cluster-management-agent-addon when
join or the agent chart made it (with the add-on agents running there, as
OCM's klusterlet removes it), never when a user made it.

What the agent applied elsewhere stays: workloads from ManifestWorks, their
AppliedManifestWorks, objects enforced by policies, and the namespace named
after the cluster, where the agent keeps its policies' ConfigurationPolicies
and CertificatePolicies (as OCM's agent does). Once nothing else lives
there, remove it with "kubectl delete namespace <cluster-name>".

--cluster-name must match the name the cluster joined with, as a guard
against running this against the wrong cluster. The hub keeps the
ManagedCluster: remove it there with
"kubectl delete managedcluster <name>".

OCM's clusteradm unjoin does not find this agent: it removes an OCM
Klusterlet (klusterlets.operator.open-cluster-management.io), which a
Flotilla-joined cluster has none of, and says there is nothing to unjoin.
Run this command instead.`,
		Example: `  flotilla unjoin --kubeconfig cluster1.kubeconfig --cluster-name cluster1`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if clusterName == "" {
				return errors.New("--cluster-name is required: the name this cluster joined the hub with")
			}
			if err := cmdutil.ValidateClusterName(clusterName); err != nil {
				return fmt.Errorf("--cluster-name: %w", err)
			}
			c, err := g.ClientsFor(cmdutil.SpokeSide)
			if err != nil {
				return err
			}
			return unjoin(cmd.Context(), g, c, clusterName)
		},
	}
	cmd.Flags().StringVar(&clusterName, "cluster-name", "", "name the cluster joined the hub with")
	return cmd
}

func unjoin(ctx context.Context, g *cmdutil.Globals, c *cmdutil.Clients, clusterName string) error {
	ns := agent.DefaultNamespace
	// Guard: the hub credentials say which cluster this is.
	creds := &corev1.Secret{}
	err := c.Ctrl.Get(ctx, client.ObjectKey{Namespace: ns, Name: agent.HubKubeconfigSecretName}, creds)
	switch {
	case err == nil:
		if joined := string(creds.Data["cluster-name"]); joined != "" && joined != clusterName {
			return fmt.Errorf("%s joined the hub as cluster %q, not %q: check --kubeconfig and --cluster-name", c.Where, joined, clusterName)
		}
	case !apierrors.IsNotFound(err):
		return cmdutil.Explain(err, c.Where, "read Secret "+ns+"/"+agent.HubKubeconfigSecretName)
	}

	var removed []string
	remove := func(kind string, obj client.Object) error {
		err := c.Ctrl.Delete(ctx, obj, client.PropagationPolicy("Background"))
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return cmdutil.Explain(err, c.Where, fmt.Sprintf("delete %s %s", kind, handshake.Describe(obj)))
		}
		removed = append(removed, kind+" "+handshake.Describe(obj))
		return nil
	}
	// By name alone: the chart's managed-by says Helm where helm installed it.
	labels := client.MatchingLabels{"app.kubernetes.io/name": handshake.AgentName}
	// The agent stops first, so it cannot put anything back.
	for _, o := range []struct {
		kind string
		obj  client.Object
	}{
		{"Deployment", &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: handshake.AgentName}}},
		{"Secret", &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: agent.BootstrapSecretName}}},
		{"Secret", &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: agent.HubKubeconfigSecretName}}},
	} {
		if err := remove(o.kind, o.obj); err != nil {
			return err
		}
	}
	bindings := &rbacv1.ClusterRoleBindingList{}
	if err := c.Ctrl.List(ctx, bindings, labels); err != nil {
		return cmdutil.Explain(err, c.Where, "list the agent's ClusterRoleBindings")
	}
	for i := range bindings.Items {
		if err := remove("ClusterRoleBinding", &bindings.Items[i]); err != nil {
			return err
		}
	}
	roles := &rbacv1.ClusterRoleList{}
	if err := c.Ctrl.List(ctx, roles, labels); err != nil {
		return cmdutil.Explain(err, c.Where, "list the agent's ClusterRoles")
	}
	for i := range roles.Items {
		if err := remove("ClusterRole", &roles.Items[i]); err != nil {
			return err
		}
	}
	if err := removeAddOnObjects(ctx, c, labels, remove); err != nil {
		return err
	}
	// The namespace takes the ServiceAccount, Role and RoleBinding with it.
	if err := remove("Namespace", &corev1.Namespace{ObjectMeta: handshake.AgentNamespace().ObjectMeta}); err != nil {
		return err
	}
	if len(removed) == 0 {
		g.Notef("Nothing to remove: %s has no Flotilla agent.", c.Where)
		return nil
	}
	for _, r := range removed {
		g.Notef("Cluster: removed %s", r)
	}
	fmt.Fprintf(g.Streams.Out, `The agent of cluster %q is removed; what it applied stays, and so does
namespace %s, which holds its policies' ConfigurationPolicies (remove it
here with "kubectl delete namespace %s" once nothing else lives there).
To remove the cluster from the hub, run there:

    kubectl delete managedcluster %s
`, clusterName, clusterName, clusterName, clusterName)
	return nil
}

// addOnsRoleName names the chart's Role (and RoleBinding) in each add-on
// install namespace (deploy/charts/flotilla-agent/templates/addons.yaml).
const addOnsRoleName = "open-cluster-management:flotilla-agent:addons"

// removeAddOnObjects removes what join (the agent chart) made for add-ons:
// in each install namespace the Role and RoleBinding that let the agent
// write add-on Secrets there, and the namespace itself when the chart made
// it (it carries the chart's labels; join leaves one a user made as it is).
func removeAddOnObjects(ctx context.Context, c *cmdutil.Clients, labels client.MatchingLabels, remove func(string, client.Object) error) error {
	roles := &rbacv1.RoleList{}
	if err := c.Ctrl.List(ctx, roles, labels); err != nil {
		return cmdutil.Explain(err, c.Where, "list the agent's Roles")
	}
	bindings := &rbacv1.RoleBindingList{}
	if err := c.Ctrl.List(ctx, bindings, labels); err != nil {
		return cmdutil.Explain(err, c.Where, "list the agent's RoleBindings")
	}
	// join --run makes the default one without a Role.
	installNamespaces := []string{addon.DefaultInstallNamespace}
	for _, r := range roles.Items {
		if r.Name == addOnsRoleName && r.Namespace != agent.DefaultNamespace && !slices.Contains(installNamespaces, r.Namespace) {
			installNamespaces = append(installNamespaces, r.Namespace)
		}
	}
	for _, ns := range installNamespaces {
		for i := range bindings.Items {
			if b := &bindings.Items[i]; b.Namespace == ns && b.Name == addOnsRoleName {
				if err := remove("RoleBinding", b); err != nil {
					return err
				}
			}
		}
		for i := range roles.Items {
			if r := &roles.Items[i]; r.Namespace == ns && r.Name == addOnsRoleName {
				if err := remove("Role", r); err != nil {
					return err
				}
			}
		}
		namespace := &corev1.Namespace{}
		if err := c.Ctrl.Get(ctx, client.ObjectKey{Name: ns}, namespace); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return cmdutil.Explain(err, c.Where, "read Namespace "+ns)
		}
		if handshake.OwnsAddOnNamespace(namespace) && namespace.DeletionTimestamp.IsZero() {
			if err := remove("Namespace", namespace); err != nil {
				return err
			}
		}
	}
	return nil
}
