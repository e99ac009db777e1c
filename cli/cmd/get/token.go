package get

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/flotilla/cli/cmdutil"
	"github.com/flotilla-io/flotilla/cli/cmdutil/handshake"
	"github.com/flotilla-io/flotilla/hub/bootstraptoken"
)

func newGetTokenCommand(g *cmdutil.Globals) *cobra.Command {
	o := &handshake.TokenOptions{Globals: g}
	cmd := &cobra.Command{
		Use:   "token",
		Short: "Print the join command with a valid join token, creating a token if none is left",
		Long: `Print the command that joins a cluster to this hub, with a join token that
stays valid for a while yet. When every join token has expired (or would
soon), a new one is created that lives --token-ttl.

Unlike init, it does not repair the hub's bootstrap RBAC or cluster-info:
run init once per hub.

When the join path is closed (the ClusterRole open-cluster-management:bootstrap
is missing, as after clusteradm delete token), no cluster could join with a
token: get token then fails, hands out no token, and says to run init, which
opens the join path again.`,
		Example: `  # The join command to paste on a new cluster.
  flotilla get token

  # Just the token, for a script.
  flotilla get token -o json | jq -r '."hub-token"'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.Validate(); err != nil {
				return err
			}
			return runGetToken(cmd.Context(), o)
		},
	}
	o.AddFlags(cmd)
	return cmd
}

func runGetToken(ctx context.Context, o *handshake.TokenOptions) error {
	c, err := o.ClientsFor(cmdutil.HubSide)
	if err != nil {
		return err
	}
	if err := checkJoinPathOpen(ctx, c); err != nil {
		return err
	}
	t, created, err := handshake.EnsureToken(ctx, c, o.TokenTTL, false)
	if err != nil {
		return err
	}
	if created {
		o.Notef("Hub: no join token was valid long enough; created token %s", t.ID)
	}
	// A token without the bootstrap role can authenticate but not join.
	if _, err := c.Kube.RbacV1().ClusterRoleBindings().Get(ctx, handshake.BootstrapRoleName, metav1.GetOptions{}); apierrors.IsNotFound(err) {
		o.Notef("Warning: ClusterRoleBinding %s is missing on the hub, so joins will fail: run `flotilla init`", handshake.BootstrapRoleName)
	}
	return o.PrintJoin(handshake.JoinInfo{HubToken: t.String(), HubAPIServer: o.AgentURL(c)}, t.Expires)
}

// checkJoinPathOpen fails when no cluster could join with a token: the
// bootstrap ClusterRole is missing (clusteradm delete token deletes it).
func checkJoinPathOpen(ctx context.Context, c *cmdutil.Clients) error {
	_, err := c.Kube.RbacV1().ClusterRoles().Get(ctx, handshake.BootstrapRoleName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("the join path of %s is closed: the ClusterRole %s, which every join token needs, is missing "+
			"(clusteradm delete token deletes it, with the ServiceAccount %s/%s and its binding), so no cluster could join: no token is handed out\n"+
			"Run `flotilla init` against the hub to open it again: it re-creates what was deleted and prints the join command",
			c.Where, handshake.BootstrapRoleName, bootstraptoken.Namespace, bootstraptoken.ServiceAccountName)
	}
	return cmdutil.Explain(err, c.Where, "read ClusterRole "+handshake.BootstrapRoleName)
}
