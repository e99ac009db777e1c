package create

import (
	"github.com/spf13/cobra"

	"github.com/flotilla-io/flotilla/cli/cmdutil"
)

// NewCommand returns `flotilla create` with all its kinds.
func NewCommand(g *cmdutil.Globals) *cobra.Command {
	return withPolicyCreates(g, withPlacementCreates(g, newCreateCommand(g)))
}

// withPlacementCreates adds `create clusterset` and `create placement` to the create command.
func withPlacementCreates(g *cmdutil.Globals, create *cobra.Command) *cobra.Command {
	create.AddCommand(newCreateClusterSetCommand(g), newCreatePlacementCommand(g))
	return create
}

// newCreateCommand returns `flotilla create` with its kind work.
func newCreateCommand(g *cmdutil.Globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "create KIND NAME",
		Short: "Create objects on the hub",
		Long:  "Create objects on the hub: ManifestWorks that deliver Kubernetes objects to managed clusters (one by one, or to the clusters of a Placement with a ManifestWorkReplicaSet), cluster sets and Placements that choose clusters, and Policies bound to Placements.",
		Example: `  flotilla create work hello -f hello.yaml --clusters cluster1
  flotilla create work hello -f hello.yaml --placement apps/web --rollout Progressive --max-concurrency 1`,
		RunE: cmdutil.RunKindVerb,
	}
	cmd.AddCommand(newCreateWorkCommand(g))
	return cmd
}
