package deny

import (
	"fmt"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	"github.com/flotilla-io/flotilla/cli/cmdutil"
	"github.com/flotilla-io/flotilla/cli/cmdutil/handshake"
)

// NewCommand returns `flotilla deny`.
func NewCommand(g *cmdutil.Globals) *cobra.Command {
	var clusters []string
	cmd := &cobra.Command{
		Use:   "deny --clusters NAME[,NAME...]",
		Short: "Stop accepting clusters: clear spec.hubAcceptsClient",
		Long: `Stop accepting managed clusters: set spec.hubAcceptsClient to false on their
ManagedClusters. The hub removes the clusters' RBAC, so their agents can no
longer read their work or report status; the ManagedClusters and their
namespaces stay, and "flotilla accept" takes them back.`,
		Example: `  flotilla deny --clusters cluster1`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			clusters = cmdutil.CleanClusterList(clusters)
			if err := cmdutil.ValidateClusterList(clusters); err != nil {
				return err
			}
			c, err := g.ClientsFor(cmdutil.HubSide)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			for _, name := range clusters {
				mc := &clusterv1.ManagedCluster{}
				if err := c.Ctrl.Get(ctx, client.ObjectKey{Name: name}, mc); err != nil {
					if apierrors.IsNotFound(err) {
						return fmt.Errorf("ManagedCluster %s not found on %s (see `flotilla get clusters`)", name, c.Where)
					}
					return cmdutil.ExplainClusterAPI(err, c, "get ManagedCluster "+name)
				}
				if !mc.Spec.HubAcceptsClient {
					g.Notef("Hub: ManagedCluster %s was not accepted; nothing to do", name)
					continue
				}
				if err := handshake.SetHubAcceptsClient(ctx, c, mc, false); err != nil {
					return err
				}
				g.Notef("Hub: cleared hubAcceptsClient on ManagedCluster %s", name)
			}
			return nil
		},
	}
	cmd.Flags().StringSliceVar(&clusters, "clusters", nil, "names of the clusters to deny, comma separated")
	cmdutil.AliasClusterFlag(g, cmd)
	return cmd
}
