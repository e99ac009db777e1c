// Command flotilla-agent runs the Flotilla agent of one managed cluster: it
// registers the cluster with a hub (OCM's registration protocol), keeps it
// registered, and applies the hub's ManifestWorks.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/flotilla-io/flotilla/agent"
	agentproxy "github.com/flotilla-io/flotilla/agent/proxy"
	"github.com/flotilla-io/flotilla/agent/work"
	"github.com/flotilla-io/flotilla/internal/version"
)

func main() {
	if err := newCommand().Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "flotilla-agent:", err)
		os.Exit(1)
	}
}

func newCommand() *cobra.Command {
	opts := agent.Options{}
	var spokeCAFile string
	cmd := &cobra.Command{
		Use:   "flotilla-agent --cluster-name NAME",
		Short: "Run the Flotilla agent of a managed cluster",
		Long: `Run the Flotilla agent of a managed cluster: one process per cluster.

Joining is a double opt-in, the same as Open Cluster Management's:

 1. With the bootstrap kubeconfig (Secret ` + agent.BootstrapSecretName + `, key
    "kubeconfig", in --namespace, which 'flotilla join' creates; or the file
    --bootstrap-kubeconfig), the agent creates the cluster's ManagedCluster on
    the hub and a CSR for a client certificate. Its private key never leaves
    the managed cluster.
 2. A hub admin accepts the cluster ('flotilla accept --clusters NAME'): the
    CSR is approved and spec.hubAcceptsClient set.
 3. The agent stores key, certificate and kubeconfig in Secret
    ` + agent.HubKubeconfigSecretName + ` in --namespace, and from then on uses them:
    it renews Lease managed-cluster-lease in the hub namespace NAME, reports
    the cluster's health, version, resources and ClusterClaims in the
    ManagedCluster's status, and renews its certificate when 20-25 % of its
    life is left. A restarted agent reuses the stored certificate; it joins
    again only when the certificate expired or the hub's CA changed.
 4. While it holds hub credentials, the agent applies the ManifestWorks in
    the hub namespace NAME on this cluster, puts back objects changed here
    (counting each correction in the work's status), and reports their
    status. Objects of a ManifestWork gone from the hub are removed after
    --appliedmanifestwork-eviction-grace-period; an unreachable hub removes
    nothing.

Mistakes that can never work (an invalid cluster name, say) stop the agent at
once. Everything else (a wrong or expired token, a wrong CA, an unreachable
hub, a cluster not yet accepted, a name already held by another cluster) is
logged in one line and retried with a backoff of up to a minute.`,
		Example: `  # Join the hub named by the bootstrap secret that 'flotilla join' created:
  flotilla-agent --cluster-name edge-1

  # Outside the cluster, with explicit kubeconfigs:
  flotilla-agent --cluster-name edge-1 --kubeconfig ~/.kube/edge-1 \
    --bootstrap-kubeconfig ./bootstrap.kubeconfig

  # Tell the hub an address at which it can reach this cluster:
  flotilla-agent --cluster-name edge-1 --spoke-api-server-url https://edge-1.example.com:6443`,
		Version:       version.String(),
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if spokeCAFile != "" {
				data, err := os.ReadFile(spokeCAFile)
				if err != nil {
					return fmt.Errorf("--spoke-ca-file: %w", err)
				}
				opts.SpokeCAData = data
			}
			// controller-runtime's own servers (metrics, probes) log through
			// its global logger: name the cluster there too.
			ctrl.SetLogger(klog.NewKlogr().WithValues("cluster", opts.ClusterName))
			return agent.Run(ctrl.SetupSignalHandler(), opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.ClusterName, "cluster-name", "", "the cluster's name on the hub: a DNS-1123 label, which also names its hub namespace (required)")
	f.StringVar(&opts.AgentID, "agent-id", "", "name of this agent instance, part of its certificate's user name (default: the stored one, or a random one)")
	f.StringVar(&opts.Namespace, "namespace", agent.DefaultNamespace, "namespace on the managed cluster holding the bootstrap and hub kubeconfig secrets")
	f.StringVar(&opts.SpokeKubeconfig, "kubeconfig", "", "kubeconfig of the managed cluster (default: the in-cluster configuration)")
	f.StringVar(&opts.BootstrapKubeconfig, "bootstrap-kubeconfig", "", "kubeconfig file to join the hub with, instead of Secret "+agent.BootstrapSecretName)
	f.StringSliceVar(&opts.HubServers, "hub-server", nil, "further address (host:port) of the hub's API server, for a hub of several members: dialled in turn when the hub kubeconfig's server does not answer; every member's serving certificate must name that server's host; repeatable or comma separated")
	f.StringSliceVar(&opts.AddOnInstallNamespaces, "addon-install-namespaces", nil, "the only namespaces add-ons may be installed in: the agent writes their hub kubeconfig Secrets and reads their Leases there, and lists no Secrets elsewhere (default: any namespace; the agent then lists Secrets only in the default one, its add-ons' install namespaces and those it wrote Secrets in, and needs Secrets there alone); comma separated")
	f.StringVar(&opts.SpokeAPIServerURL, "spoke-api-server-url", "", "API server URL reported to the hub in spec.managedClusterClientConfigs (default: the one in --kubeconfig)")
	f.StringVar(&spokeCAFile, "spoke-ca-file", "", "CA bundle reported with --spoke-api-server-url (default: the one in --kubeconfig)")
	f.Int32Var(&opts.LeaseDurationSeconds, "lease-duration-seconds", 60, "spec.leaseDurationSeconds of a ManagedCluster the agent creates; the hub's value rules afterwards")
	f.DurationVar(&opts.CertificateExpiration, "client-cert-expiration", agent.DefaultCertificateExpiration, "lifetime asked for the hub client certificate (at least 10m; a Flotilla hub signs at most 720h); renewed when a fifth to a quarter of it is left")
	f.DurationVar(&opts.RenewBefore, "renew-before", 0, "renew the certificate this long before it expires, instead of when 20-25 % of its life is left (for tests)")
	f.DurationVar(&opts.WorkResyncInterval, "work-resync-interval", work.DefaultResyncInterval, "how often each ManifestWork is checked against the managed cluster besides the events that ask for it (jittered by up to 10 %)")
	f.DurationVar(&opts.AppliedManifestWorkEvictionGracePeriod, "appliedmanifestwork-eviction-grace-period", work.DefaultEvictionGracePeriod, "how long the objects of a ManifestWork that is gone from a reachable hub are kept before they are removed")
	f.StringVar(&opts.MetricsAddr, "metrics-bind-address", "127.0.0.1:9446", "address of the Prometheus /metrics endpoint (0 disables it)")
	f.StringVar(&opts.HealthProbeAddr, "health-probe-bind-address", "127.0.0.1:9447", "address of /healthz and /readyz (0 disables them)")
	f.BoolVar(&opts.Proxy, "cluster-proxy", true, "keep a tunnel open to the hub so that hub users reach this cluster's API through the hub, as themselves under --proxy-user-prefix and --proxy-group-prefix")
	f.BoolVar(&opts.Search, "search", true, "index this cluster's objects (the kinds the hub's SearchConfig default lists; Secrets and ConfigMaps by their metadata only) in the hub's multi-cluster search")
	f.StringVar(&opts.ProxyUserPrefix, "proxy-user-prefix", agentproxy.DefaultPrefix, "prefix of the user name a hub user has on this cluster through the hub (never empty)")
	f.StringVar(&opts.ProxyGroupPrefix, "proxy-group-prefix", agentproxy.DefaultPrefix, "prefix of the group names a hub user has on this cluster through the hub (never empty)")
	f.BoolVar(&opts.Profiling, "profiling", false, "serve /debug/pprof/ and /debug/memory on the metrics address (not for exposed addresses: they reveal the process's internals)")
	_ = cmd.MarkFlagRequired("cluster-name")
	klogFlags := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(klogFlags)
	f.AddGoFlag(klogFlags.Lookup("v"))
	f.AddGoFlag(klogFlags.Lookup("vmodule"))
	return cmd
}
