package get

import (
	"github.com/spf13/cobra"

	"github.com/flotilla-io/flotilla/cli/cmdutil"
)

// NewCommand returns `flotilla get` with all its kinds.
func NewCommand(g *cmdutil.Globals) *cobra.Command {
	return withAddOnGets(g, withServiceGets(g, withPolicyGets(g, withPlacementGets(g, newGetCommand(g)))))
}

// withPlacementGets adds `get clustersets` and `get placements` to the get command.
func withPlacementGets(g *cmdutil.Globals, get *cobra.Command) *cobra.Command {
	get.AddCommand(newGetClusterSetsCommand(g), newGetPlacementsCommand(g))
	return get
}

// newGetCommand returns `flotilla get` with its kinds token, clusters and works.
func newGetCommand(g *cmdutil.Globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "get KIND [NAME]",
		Short: "Show objects of the hub",
		Long:  "Show what the hub holds, as a table (or -o json|yaml): one kind of object at a time.",
		Example: `  flotilla get token
  flotilla get clusters -o wide
  flotilla get works --clusters cluster1
  flotilla get placements -n apps
  flotilla get policies --matrix
  flotilla get serviceexports
  flotilla get serviceimports --clusterset shop
  flotilla get addons --clusters cluster1`,
		// The kinds it gets and what it says of an unknown one come from
		// its subcommands: see finishKindVerbs.
		RunE: cmdutil.RunKindVerb,
	}
	cmd.AddCommand(newGetTokenCommand(g), newGetClustersCommand(g), newGetWorksCommand(g))
	return cmd
}
