package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func newGetCommand(g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "get",
		Short: "Show join tokens, managed clusters and ManifestWorks of the hub",
		Long:  "Show what the hub holds: a join command with a valid token, the managed clusters, or the ManifestWorks.",
		Example: `  flotilla get token
  flotilla get clusters -o wide
  flotilla get works --cluster cluster1`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return errors.New("name what to get: flotilla get clusters, flotilla get works, or flotilla get token")
			}
			return fmt.Errorf("flotilla get does not know %q: it gets clusters, works or token", args[0])
		},
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
