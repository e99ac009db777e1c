package init

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/flotilla/cli/cmdutil"
	"github.com/flotilla-io/flotilla/cli/cmdutil/handshake"
	"github.com/flotilla-io/flotilla/deploy"
	"github.com/flotilla-io/flotilla/hub/bootstraptoken"
	"github.com/flotilla-io/flotilla/internal/version"
)

type initOptions struct {
	handshake.TokenOptions
	joinCommandFile string
	newToken        bool
	dryRun          bool
	// clusterName, when set, makes the token one for that cluster alone.
	clusterName string
}

// NewCommand returns `flotilla init`.
func NewCommand(g *cmdutil.Globals) *cobra.Command {
	o := &initOptions{TokenOptions: handshake.TokenOptions{Globals: g}}
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Prepare a hub for clusters to join, and print the join command",
		Long: `Prepare a running Flotilla hub for clusters to join, and print the command
that joins a cluster.

init talks to the hub with its admin kubeconfig and makes sure that:
  - a join token exists: a bootstrap token Secret kube-system/bootstrap-token-<id>
    in group system:bootstrappers:managedcluster that expires after --token-ttl.
    A token that stays valid long enough is reused; --new-token makes another.
  - the ClusterRole open-cluster-management:bootstrap exists and is bound to that
    group. It allows no more than joining: get configmaps; create, get, list and
    watch certificatesigningrequests; get, create, list and watch managedclusters;
    create managedclustersets/join.
  - OCM's bootstrap ServiceAccount open-cluster-management/agent-registration-bootstrap
    (whose tokens clusteradm get token hands out) exists and is bound to that role.

clusteradm delete token deletes that ClusterRole, the ServiceAccount and its
binding, which closes the join path: the hub then makes no join token and
flotilla get token refuses to hand one out. init is how to open it again.
  - the ConfigMap kube-public/cluster-info exists, from which agents learn the
    hub's CA.

It is safe to run again: it repairs what is missing and changes nothing else.

With --cluster-name, the join token is one for that cluster alone, and for
one join: the hub refuses a ManagedCluster or CSR of any other cluster made
with it, and ends it once a hub admin accepted the cluster's first CSR made
with it (it expires 5 minutes after the certificate is signed, and the hub
then deletes it). A token for any cluster, which init hands out without
--cluster-name, lets whoever reads it ask for any cluster's name, as often
as they like, until it expires: prefer one token per cluster (see
docs/security.md).

With --dry-run, init instead prints what installs the hub controllers on an
existing cluster (CRDs, RBAC, the leader-elected Deployment, the webhook and
metrics Services): the objects of the flotilla-hub Helm chart, for
kubectl apply or a GitOps repository. It contacts nothing.`,
		Example: `  # Prepare the hub and print the join command.
  flotilla init --kubeconfig ~/.local/share/flotilla/hub/admin.kubeconfig

  # A token that joins cluster1 alone, once (the safe default for a fleet).
  flotilla init --cluster-name cluster1 -o json

  # Agents reach the hub through a load balancer, not the kubeconfig's address.
  flotilla init --hub-apiserver https://hub.example.com:6443

  # A short-lived token, with the join command saved for automation.
  flotilla init --token-ttl 1h --output-join-command-file join.sh

  # What installs the hub controllers on an existing cluster, for GitOps.
  flotilla init --dry-run --hub-apiserver https://hub.example.com:6443 -o yaml > hub.yaml

  # For scripts: the token and the address as JSON.
  flotilla init -o json | jq -r '."hub-token"'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.dryRun {
				return o.printHub()
			}
			if err := o.Validate(); err != nil {
				return err
			}
			if o.clusterName != "" {
				if err := cmdutil.ValidateClusterName(o.clusterName); err != nil {
					return fmt.Errorf("--cluster-name: %w", err)
				}
			}
			return o.run(cmd.Context())
		},
	}
	o.AddFlags(cmd)
	cmd.Flags().BoolVar(&o.dryRun, "dry-run", false, "print the objects that install the hub controllers on an existing cluster (the flotilla-hub chart's, with --hub-apiserver as the address agents use) as YAML (-o json: a List), contacting nothing")
	cmd.Flags().StringVar(&o.joinCommandFile, "output-join-command-file", "", "also write the join command to this file (mode 0600: it holds the token)")
	cmd.Flags().BoolVar(&o.newToken, "new-token", false, "create a new join token even if a valid one exists")
	cmd.Flags().StringVar(&o.clusterName, "cluster-name", "", "make the join token one for this cluster alone, accepted once")
	return cmd
}

// printHub prints the flotilla-hub chart's objects for --dry-run.
func (o *initOptions) printHub() error {
	if err := cmdutil.CheckOutput(o.Output, cmdutil.OutputJSON, cmdutil.OutputYAML); err != nil {
		return err
	}
	values := map[string]any{"createNamespace": true, "image": map[string]any{"reference": version.Image("flotilla-hub")}}
	if o.HubAPIServer != "" {
		if _, err := handshake.ParseHubURL(o.HubAPIServer); err != nil {
			return err
		}
		values["apiServer"] = o.HubAPIServer
	}
	rendered, err := deploy.Render(deploy.HubChart, deploy.HubNamespace, values)
	if err != nil {
		return err
	}
	objs := make([]client.Object, len(rendered))
	for i, obj := range rendered {
		objs[i] = obj
	}
	format := o.Output
	if format == cmdutil.OutputText {
		format = cmdutil.OutputYAML
	}
	return cmdutil.PrintObjects(o.Streams.Out, format, objs)
}

func (o *initOptions) run(ctx context.Context) error {
	c, err := o.ClientsFor(cmdutil.HubSide)
	if err != nil {
		return err
	}
	if err := handshake.CheckIsHub(c); err != nil {
		return err
	}
	hubURL := o.AgentURL(c)
	if err := handshake.EnsureClusterInfo(ctx, c, hubURL); err != nil {
		return err
	}
	changed, err := handshake.EnsureBootstrapRBAC(ctx, c)
	for _, what := range changed {
		o.Notef("Hub: %s", what)
	}
	if err != nil {
		return err
	}
	// What clusteradm delete token deletes besides: the bootstrap
	// ServiceAccount and its binding.
	changed, err = bootstraptoken.Open(ctx, c.Kube)
	for _, what := range changed {
		o.Notef("Hub: %s", what)
	}
	if err != nil {
		return cmdutil.Explain(err, c.Where, "open the join path")
	}
	t, created, err := handshake.EnsureTokenFor(ctx, c, o.TokenTTL, o.newToken, o.clusterName)
	if err != nil {
		return err
	}
	forWhom := ""
	if o.clusterName != "" {
		forWhom = " for cluster " + o.clusterName + " alone, once,"
	}
	if created {
		o.Notef("Hub: created join token %s,%s valid until %s", t.ID, forWhom, t.Expires.Local().Format(time.RFC3339))
	} else {
		o.Notef("Hub: reusing join token %s,%s valid until %s (--new-token makes another)", t.ID, forWhom, t.Expires.Local().Format(time.RFC3339))
	}
	info := handshake.JoinInfo{HubToken: t.String(), HubAPIServer: hubURL, ClusterName: o.clusterName}
	if o.joinCommandFile != "" {
		if err := os.WriteFile(o.joinCommandFile, []byte(info.JoinCommand()+"\n"), 0o600); err != nil {
			return fmt.Errorf("--output-join-command-file: %w", err)
		}
		o.Notef("Wrote the join command to %s", o.joinCommandFile)
	}
	return o.PrintJoin(info, t.Expires)
}
