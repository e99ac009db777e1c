package cmdutil

import (
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// ClusterSetFlag is the flag of the commands that select by
// ManagedClusterSet; ClusterSetsFlagAlias is its plural spelling, accepted
// and hidden from help, as --cluster is for --clusters.
const (
	ClusterSetFlag       = "clusterset"
	ClusterSetsFlagAlias = "clustersets"
)

// AliasClusterSetFlag makes --clustersets a spelling of cmd's --clusterset
// flag, keeping the normalisation cmd already has (such as --cluster for
// --clusters): call it after AddClustersFlag.
func AliasClusterSetFlag(cmd *cobra.Command) {
	inner := cmd.Flags().GetNormalizeFunc()
	cmd.Flags().SetNormalizeFunc(func(fs *pflag.FlagSet, name string) pflag.NormalizedName {
		if name == ClusterSetsFlagAlias {
			name = ClusterSetFlag
		}
		return inner(fs, name)
	})
}
