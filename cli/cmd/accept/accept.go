package accept

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/flotilla-io/flotilla/cli/cmdutil"
	"github.com/flotilla-io/flotilla/cli/cmdutil/handshake"
)

// NewCommand returns `flotilla accept`.
func NewCommand(g *cmdutil.Globals) *cobra.Command {
	o := &handshake.AcceptOptions{Globals: g}
	cmd := &cobra.Command{
		Use:   "accept --clusters NAME[,NAME...]",
		Short: "Accept clusters that asked to join: approve their CSRs and set hubAcceptsClient",
		Long: `Accept managed clusters whose agents asked to join the hub.

For each cluster it approves the pending certificate signing requests
labelled open-cluster-management.io/cluster-name=<cluster>, and sets
spec.hubAcceptsClient on its ManagedCluster. The hub then creates the
cluster's namespace and RBAC, and signs the approved CSRs; the agent stores
its new credentials and the cluster joins.

A CSR is approved only if a join identity requested it (a bootstrap token
in group system:bootstrappers:managedcluster, or OCM's bootstrap service
account agent-registration-bootstrap or cluster-bootstrap), and it asks for exactly an agent's client certificate for
that cluster: signer kubernetes.io/kube-apiserver-client, subject
CN=system:open-cluster-management:<cluster>:<agent-id> with
O=system:open-cluster-management:<cluster> (and, optionally,
system:open-cluster-management:managed-clusters). Any other pending CSR for
the cluster is refused. When the cluster has a CSR that passes the checks,
the refused ones (someone spoofing the cluster's name) are ignored, and the
command says so, naming each with who requested it; when it has none, the
command approves and accepts nothing for that cluster, and fails, naming
the CSRs and what is wrong with them.
--skip-approve-check approves whatever is pending for the cluster: use it
only for CSRs you have inspected.

A cluster that already has an accepted agent is never given another by a
plain accept: whoever holds a join token (and every joined cluster keeps
one until its agent removes it) can ask for any cluster's name. accept
refuses such a CSR, naming the cluster's agent and who asked, even with
--skip-approve-check. When the cluster's agent really is replaced (it lost
its certificate, or the cluster was rebuilt), check who asked, then name the
new agent with --replace-agent: accept records it as the cluster's agent
and approves its CSR, and the hub gives the cluster's access to it alone,
so the old agent's certificate is refused from then on.

Without --wait the cluster must already have asked (run join first). With
--wait, accept waits until the ManagedCluster and a CSR exist, accepts, and
then waits until the hub has accepted the cluster and its agent has joined.`,
		Example: `  # Accept one cluster.
  flotilla accept --clusters cluster1

  # Accept two, waiting up to 10 minutes for them to ask and to join.
  flotilla accept --clusters cluster1,cluster2 --wait --timeout 10m

  # Replace the agent of cluster1, after checking that the new one asked.
  kubectl get csr -l open-cluster-management.io/cluster-name=cluster1
  flotilla accept --clusters cluster1 --replace-agent x7k2pqz9ab

  # Approve a CSR that the checks refused, after inspecting it.
  kubectl get csr -l open-cluster-management.io/cluster-name=cluster1 -o yaml
  flotilla accept --clusters cluster1 --skip-approve-check`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.Clusters = cmdutil.CleanClusterList(o.Clusters)
			if err := cmdutil.ValidateClusterList(o.Clusters); err != nil {
				return err
			}
			if o.ReplaceAgent != "" && len(o.Clusters) != 1 {
				return fmt.Errorf("--replace-agent names the new agent of one cluster: give exactly one with --clusters, not %d", len(o.Clusters))
			}
			if o.Timeout <= 0 {
				return fmt.Errorf("--timeout %s must be positive", o.Timeout)
			}
			return o.Run(cmd.Context())
		},
	}
	f := cmd.Flags()
	f.StringSliceVar(&o.Clusters, "clusters", nil, "names of the clusters to accept, comma separated")
	f.BoolVar(&o.Wait, "wait", false, "wait until each cluster has asked to join, then until it has joined")
	f.DurationVar(&o.Timeout, "timeout", cmdutil.DefaultWaitTimeout, "how long --wait waits in all")
	f.BoolVar(&o.SkipCheck, "skip-approve-check", false, "approve every pending CSR of the clusters, even those that fail the checks")
	f.StringVar(&o.ReplaceAgent, "replace-agent", "", "the agent id of a cluster's new agent, which replaces its accepted agent (whose certificate is then refused)")
	cmdutil.AliasClusterFlag(g, cmd)
	return cmd
}
