package kubeconfig

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	"github.com/flotilla-io/flotilla/cli/cmdutil"
	"github.com/flotilla-io/flotilla/internal/tunnel"
)

type proxyKubeconfigOptions struct {
	*cmdutil.Globals
	clusters   []string
	outputFile string
	search     bool
}

// NewCommand returns `flotilla kubeconfig`.
func NewCommand(g *cmdutil.Globals) *cobra.Command {
	o := &proxyKubeconfigOptions{Globals: g}
	cmd := &cobra.Command{
		Use:   "kubeconfig --clusters NAME[,NAME...] | --search [--clusters NAME[,NAME...]]",
		Short: "Print a kubeconfig that reaches managed clusters through the hub",
		Long: `Print a kubeconfig with one context per named cluster, each reaching that
cluster's API through the hub's cluster proxy, with your hub credentials
(those of the current kubeconfig context). The cluster needs no inbound
port: its agent keeps a tunnel open to the hub.

The hub lets you through if hub RBAC allows you create on
managedclusters/proxy (group cluster.open-cluster-management.io) named
after the cluster. On the cluster you act as flotilla:<your hub user>, with
groups flotilla:<each hub group> (the agent's prefixes), so the cluster's
own RBAC decides what you may do there.

The first cluster's context is the current one. Whether a cluster's tunnel
is open shows in flotilla get clusters -o wide (TUNNEL).

With --search, the kubeconfig's one context, search, points kubectl at the
hub's search index instead: kubectl get lists the indexed objects of every
cluster you may see (or of the --clusters named), with a CLUSTER column,
without reaching the clusters (see docs/search.md).`,
		Example: `  flotilla kubeconfig --cluster cluster1 > cluster1.kubeconfig
  kubectl --kubeconfig cluster1.kubeconfig get pods -A

  flotilla kubeconfig --cluster cluster1 --cluster cluster2 --output-file fleet.kubeconfig
  kubectl --kubeconfig fleet.kubeconfig --context cluster2 get pods -w

  # kubectl over the hub's search index of every cluster
  flotilla kubeconfig --search --output-file search.kubeconfig
  kubectl --kubeconfig search.kubeconfig get pods -A -l app=web

  # grant alice cluster1 on the hub
  kubectl create clusterrole use-cluster1 --verb=create \
    --resource=managedclusters.cluster.open-cluster-management.io/proxy --resource-name=cluster1
  kubectl create clusterrolebinding alice-cluster1 --clusterrole=use-cluster1 --user=alice`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.search {
				return o.runSearch()
			}
			if len(o.clusters) == 0 {
				return fmt.Errorf("name the clusters to reach with --clusters (or pass --search for the hub's search index)\nSee '%s --help' for the flags.", cmd.CommandPath())
			}
			return o.run(cmd.Context())
		},
	}
	f := cmd.Flags()
	// --clusters as every command names clusters; --cluster is the same flag.
	cmdutil.AddClustersFlag(g, cmd, &o.clusters, "the managed clusters to reach through the hub, comma separated or repeated (required without --search; with it, the clusters the search context is pinned to)")
	f.StringVarP(&o.outputFile, "output-file", "f", "", "write the kubeconfig to this file (mode 0600) instead of standard output")
	f.BoolVar(&o.search, "search", false, "write a context that points kubectl at the hub's search index of every cluster instead")
	return cmd
}

func (o *proxyKubeconfigOptions) run(ctx context.Context) error {
	raw, err := o.ClientConfig().RawConfig()
	if err != nil {
		return fmt.Errorf("cannot load the hub's kubeconfig from %s: %w", o.KubeconfigSource(), err)
	}
	out, err := proxyKubeconfig(raw, o.Context, o.clusters)
	if err != nil {
		return err
	}
	c, err := o.ClientsFor(cmdutil.HubSide)
	if err != nil {
		return err
	}
	for _, name := range o.clusters {
		var mc clusterv1.ManagedCluster
		if err := c.Ctrl.Get(ctx, types.NamespacedName{Name: name}, &mc); err != nil {
			if apierrors.IsNotFound(err) {
				return fmt.Errorf("cluster %s is not a managed cluster of %s: see flotilla get clusters", name, c.Where)
			}
			return fmt.Errorf("read cluster %s from %s: %w", name, c.Where, err)
		}
		if cond := meta.FindStatusCondition(mc.Status.Conditions, tunnel.ConditionConnected); cond == nil || cond.Status != metav1.ConditionTrue {
			o.Notef("Note: cluster %s has no tunnel open to the hub yet (TunnelConnected is not True); requests to it fail until its agent connects.", name)
		}
	}
	return o.write(out, fmt.Sprintf("contexts %s; e.g. kubectl --kubeconfig %s --context %s get pods -A", strings.Join(o.clusters, ", "), o.outputFile, o.clusters[0]))
}

// write prints the kubeconfig or writes it to --output-file, noting what
// it holds.
func (o *proxyKubeconfigOptions) write(out *clientcmdapi.Config, note string) error {
	data, err := clientcmd.Write(*out)
	if err != nil {
		return err
	}
	if o.outputFile == "" {
		_, err = o.Streams.Out.Write(data)
		return err
	}
	if err := os.WriteFile(o.outputFile, data, 0o600); err != nil {
		return fmt.Errorf("write the kubeconfig: %w", err)
	}
	o.Notef("Wrote %s with %s", o.outputFile, note)
	return nil
}

// proxyKubeconfig builds, from the hub kubeconfig raw and its context
// contextName (empty: the current one), a kubeconfig with one context per
// cluster, each going through the hub's cluster proxy with the hub
// context's credentials.
func proxyKubeconfig(raw clientcmdapi.Config, contextName string, clusters []string) (*clientcmdapi.Config, error) {
	hub, out, userName, err := hubCredentials(raw, contextName)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, name := range clusters {
		if seen[name] {
			continue
		}
		seen[name] = true
		c := hub.DeepCopy()
		c.Server = strings.TrimSuffix(hub.Server, "/") + tunnel.ProxyPath(name)
		c.LocationOfOrigin = ""
		out.Clusters[name] = c
		out.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: userName}
		if out.CurrentContext == "" {
			out.CurrentContext = name
		}
	}
	return out, nil
}

// hubCredentials finds the hub's cluster entry of raw's context
// contextName (empty: the current one) and starts a kubeconfig holding
// its user under userName.
func hubCredentials(raw clientcmdapi.Config, contextName string) (hub *clientcmdapi.Cluster, out *clientcmdapi.Config, userName string, err error) {
	if contextName == "" {
		contextName = raw.CurrentContext
	}
	hubCtx, ok := raw.Contexts[contextName]
	if !ok {
		return nil, nil, "", fmt.Errorf("the hub kubeconfig has no context %q: pass --context", contextName)
	}
	hub, ok = raw.Clusters[hubCtx.Cluster]
	if !ok {
		return nil, nil, "", fmt.Errorf("context %q names cluster %q, which the hub kubeconfig lacks", contextName, hubCtx.Cluster)
	}
	user, ok := raw.AuthInfos[hubCtx.AuthInfo]
	if !ok {
		return nil, nil, "", fmt.Errorf("context %q names user %q, which the hub kubeconfig lacks", contextName, hubCtx.AuthInfo)
	}
	out = clientcmdapi.NewConfig()
	userName = "flotilla-hub-" + hubCtx.AuthInfo
	out.AuthInfos[userName] = user.DeepCopy()
	return hub, out, userName, nil
}
