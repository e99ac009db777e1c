package cli

import (
	"context"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func newGetCommand(g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "get KIND [NAME]",
		Short: "Show objects of the hub",
		Long:  "Show what the hub holds, as a table (or -o json|yaml): one kind of object at a time.",
		Example: `  flotilla get token
  flotilla get clusters -o wide
  flotilla get works --clusters cluster1
  flotilla get placements -n apps
  flotilla get policies --matrix`,
		// The kinds it gets and what it says of an unknown one come from
		// its subcommands: see finishKindVerbs.
		RunE: runKindVerb,
	}
	cmd.AddCommand(newGetTokenCommand(g), newGetClustersCommand(g), newGetWorksCommand(g))
	return cmd
}

func newGetTokenCommand(g *globalOptions) *cobra.Command {
	o := &tokenOptions{globalOptions: g}
	cmd := &cobra.Command{
		Use:   "token",
		Short: "Print the join command with a valid join token, creating a token if none is left",
		Long: `Print the command that joins a cluster to this hub, with a join token that
stays valid for a while yet. When every join token has expired (or would
soon), a new one is created that lives --token-ttl.

Unlike init, it does not repair the hub's bootstrap RBAC or cluster-info:
run init once per hub.`,
		Example: `  # The join command to paste on a new cluster.
  flotilla get token

  # Just the token, for a script.
  flotilla get token -o json | jq -r '."hub-token"'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.validate(); err != nil {
				return err
			}
			return runGetToken(cmd.Context(), o)
		},
	}
	o.addFlags(cmd)
	return cmd
}

func runGetToken(ctx context.Context, o *tokenOptions) error {
	c, err := o.clientsFor(hubSide)
	if err != nil {
		return err
	}
	t, created, err := ensureToken(ctx, c, o.tokenTTL, false)
	if err != nil {
		return err
	}
	if created {
		o.notef("Hub: no join token was valid long enough; created token %s", t.ID)
	}
	// A token without the bootstrap role can authenticate but not join.
	if _, err := c.kube.RbacV1().ClusterRoleBindings().Get(ctx, bootstrapRoleName, metav1.GetOptions{}); apierrors.IsNotFound(err) {
		o.notef("Warning: ClusterRoleBinding %s is missing on the hub, so joins will fail: run `flotilla init`", bootstrapRoleName)
	}
	return o.printJoin(joinInfo{HubToken: t.String(), HubAPIServer: o.agentURL(c)}, t.Expires)
}
