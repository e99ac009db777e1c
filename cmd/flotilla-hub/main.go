// Command flotilla-hub runs a Flotilla hub: by default an embedded
// Kubernetes control plane with the OCM APIs and the hub controllers, or,
// with --kubeconfig, the hub controllers against an existing cluster.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/flotilla-io/flotilla/hub"
	"github.com/flotilla-io/flotilla/hub/bootstraptoken"
	"github.com/flotilla-io/flotilla/hub/controlplane"
	"github.com/flotilla-io/flotilla/internal/memlimit"
	"github.com/flotilla-io/flotilla/internal/version"
)

func main() {
	// Embedded Kubernetes packages register flags of their own (--version
	// among them) on the global flag set, which cobra would merge into ours.
	pflag.CommandLine = pflag.NewFlagSet(os.Args[0], pflag.ExitOnError)
	if err := newCommand().Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "flotilla-hub:", err)
		os.Exit(1)
	}
}

func newCommand() *cobra.Command {
	opts := hub.Options{}
	var etcdServers []string
	var cacheWorks bool
	var etcdTLS controlplane.EtcdClientTLS
	member := controlplane.EtcdMember{}
	cmd := &cobra.Command{
		Use:   "flotilla-hub",
		Short: "Run a Flotilla hub",
		Long: `Run a Flotilla hub.

By default the hub is self-contained: it embeds etcd and kube-apiserver,
stores everything under --data-dir, and serves the Open Cluster Management
APIs (ManagedCluster, ManifestWork, Placement, Policy, ...) on --secure-port.
On first start it creates a CA, service-account keys and an admin client
certificate, and writes <data-dir>/admin.kubeconfig. Later starts reuse them.

With --kubeconfig it runs only the hub controllers, against an existing
cluster (for a highly available API server and etcd).

The hub also serves the admission webhook that refuses ManifestWorks over
500 KiB or with incomplete manifests, on --webhook-port, and registers it
with the API server (ValidatingWebhookConfiguration
manifestworkvalidators.admission.work.open-cluster-management.io) once it
answers. The embedded control plane issues its certificate; with
--kubeconfig, give --webhook-cert-dir and --webhook-advertise-url to serve it.
Every replica serves the webhook, leader or standby, and registers the same
address (a Service with --webhook-service, or one URL that every replica
answers, e.g. with --webhook-reuse-port on one machine): ManifestWorks can be
written while the controllers change hands. See docs/ha.md.`,
		Example: `  # Start a hub that keeps its state in /tmp/h, then talk to it:
  flotilla-hub --data-dir /tmp/h
  kubectl --kubeconfig /tmp/h/admin.kubeconfig api-resources

  # Keep the multi-cluster search index in PostgreSQL instead of the data directory:
  flotilla-hub --data-dir /tmp/h --search-database 'postgres://flotilla@db.example.com:5432/search?sslmode=verify-full'

  # Make the hub reachable from other machines, also by a DNS name:
  flotilla-hub --bind-address 0.0.0.0 --advertise-address 192.0.2.10 --tls-san hub.example.com

  # One of three members of a hub on one etcd cluster (the others from a copy
  # of the first one's pki/ CA and keys; see docs/ha.md):
  flotilla-hub --bind-address 0.0.0.0 --advertise-address 192.0.2.12 --tls-san 192.0.2.11,192.0.2.12,192.0.2.13 \
    --etcd-name hub-2 --etcd-peer-url https://192.0.2.12:2380 \
    --etcd-initial-cluster hub-1=https://192.0.2.11:2380,hub-2=https://192.0.2.12:2380,hub-3=https://192.0.2.13:2380

  # One of several hub processes that share an external etcd cluster over TLS
  # (each with its own --data-dir holding a copy of the first one's CA and
  # service-account keys; see docs/ha.md):
  flotilla-hub --bind-address 0.0.0.0 --advertise-address 192.0.2.21 --tls-san 192.0.2.21,192.0.2.22 \
    --etcd-servers https://192.0.2.31:2379,https://192.0.2.32:2379,https://192.0.2.33:2379 \
    --etcd-cafile /etc/etcd/ca.crt --etcd-certfile /etc/flotilla/etcd-client.crt --etcd-keyfile /etc/flotilla/etcd-client.key

  # Run the hub controllers against an existing cluster:
  flotilla-hub --kubeconfig ~/.kube/config

  # ... and serve the ManifestWork admission webhook to its API server:
  flotilla-hub --kubeconfig ~/.kube/config --webhook-bind-address 0.0.0.0 \
    --webhook-cert-dir /etc/flotilla/webhook --webhook-advertise-url https://hub-webhook.example.com:9443

  # Rotate the join token every 12 hours, each handed out valid for 4 hours at least:
  flotilla-hub --bootstrap-token-lifetime 16h --bootstrap-token-overlap 4h`,
		Version:       version.String(),
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := validate(cmd, opts); err != nil {
				return err
			}
			opts.ControlPlane.EtcdServers = etcdServers
			opts.ControlPlane.EtcdClientTLS = etcdTLS
			if cacheWorks {
				opts.ControlPlane.Uncached = []schema.GroupResource{}
			}
			if len(etcdServers) > 0 {
				// Several hub processes on one external etcd cluster: the
				// same hazards as members of one (below), and one webhook
				// configuration in the shared store.
				if opts.LeaderElect && opts.Lease.RenewDeadline < minMemberRenewDeadline {
					return fmt.Errorf("--leader-elect-renew-deadline %s is too short for a hub on an external etcd cluster: while its members elect a new etcd leader (a member died) writes fail for up to 7 s, and a hub leader that cannot renew for the deadline stops and exits; give at least %s", opts.Lease.RenewDeadline, minMemberRenewDeadline)
				}
				if !cmd.Flags().Changed("webhook-port") {
					opts.Webhook.Port = hub.DefaultWebhookPort
				}
			}
			if member.InitialCluster != "" {
				if opts.LeaderElect && opts.Lease.RenewDeadline < minMemberRenewDeadline {
					return fmt.Errorf("--leader-elect-renew-deadline %s is too short for a member of an etcd cluster: while the members elect a new etcd leader (a member died) writes fail for up to 7 s, and a hub leader that cannot renew for the deadline stops, taking its member down with it; give at least %s", opts.Lease.RenewDeadline, minMemberRenewDeadline)
				}
				opts.ControlPlane.EtcdMember = &member
				if !cmd.Flags().Changed("webhook-port") {
					// Every member registers the same webhook address, which
					// each API server must reach on its own machine.
					opts.Webhook.Port = hub.DefaultWebhookPort
				}
			}
			if opts.Kubeconfig != "" && !cmd.Flags().Changed("webhook-port") {
				// --webhook-advertise-url must name a port known beforehand.
				opts.Webhook.Port = hub.DefaultWebhookPort
			}
			ctrl.SetLogger(klog.NewKlogr())
			ctx := ctrl.SetupSignalHandler()
			opts.Ready = func(info hub.Info) {
				if info.AdminKubeconfig != "" {
					fmt.Fprintf(os.Stderr, "flotilla-hub is ready at %s\n  export KUBECONFIG=%s\n", info.URL, info.AdminKubeconfig)
				} else {
					fmt.Fprintf(os.Stderr, "flotilla-hub is ready against %s\n", info.URL)
				}
			}
			return hub.Run(ctx, opts)
		},
	}
	cmd.AddCommand(newSnapshotCommand(), newMemberCommand())
	f := cmd.Flags()
	f.StringVar(&opts.ControlPlane.DataDir, "data-dir", defaultDataDir(), "directory for the embedded control plane's state: certificates, etcd data, admin.kubeconfig")
	f.StringVar(&opts.ControlPlane.BindAddress, "bind-address", "127.0.0.1", "address the API server listens on (0.0.0.0 for every interface)")
	f.IntVar(&opts.ControlPlane.SecurePort, "secure-port", 6443, "port of the API server")
	f.StringVar(&opts.ControlPlane.AdvertiseAddress, "advertise-address", "", "address agents use to reach the hub, written into kubeconfigs and cluster-info (default: the bind address)")
	f.StringSliceVar(&opts.ControlPlane.ServingSANs, "tls-san", nil, "further DNS names and IP addresses in the API server's serving certificate, for agents and users that reach the hub by another name than --advertise-address (a load balancer's, a container's); repeatable or comma separated")
	f.StringSliceVar(&etcdServers, "etcd-servers", nil, "client URLs of the members of an external etcd cluster to use instead of the embedded etcd, comma separated (https:// with --etcd-cafile, --etcd-certfile, --etcd-keyfile; see docs/ha.md)")
	f.StringVar(&etcdTLS.CAFile, "etcd-cafile", "", "with --etcd-servers: PEM file of the CA that signed the etcd servers' certificates")
	f.StringVar(&etcdTLS.CertFile, "etcd-certfile", "", "with --etcd-servers: PEM client certificate the hub authenticates to etcd with (etcd's --client-cert-auth)")
	f.StringVar(&etcdTLS.KeyFile, "etcd-keyfile", "", "with --etcd-servers: PEM private key of --etcd-certfile")
	f.StringVar(&member.InitialCluster, "etcd-initial-cluster", "", "run the embedded etcd as a member of a cluster of hub processes: every member as name=https://address:port (its peer URL), comma separated, the same on each; the first one named makes the PKI, the others start from a copy (docs/ha.md)")
	f.StringVar(&member.Name, "etcd-name", "", "this member's name in --etcd-initial-cluster")
	f.StringVar(&member.PeerURL, "etcd-peer-url", "", "https://address:port at which the other members reach this one, as in --etcd-initial-cluster")
	f.StringVar(&member.ListenPeerURL, "etcd-listen-peer-url", "", "https://address:port this member listens on for its peers (default: every interface, on the port of --etcd-peer-url)")
	f.StringVar(&member.InitialClusterState, "etcd-initial-cluster-state", controlplane.ClusterStateNew, "new when the members of --etcd-initial-cluster start for the first time together, existing for a member added to a running cluster (read only when the member has no data yet)")
	f.StringVar(&opts.Kubeconfig, "kubeconfig", "", "run the hub controllers against the cluster of this kubeconfig instead of an embedded control plane")
	f.StringVar(&opts.SearchDatabase, "search-database", "", "multi-cluster search index: empty is SQLite at <data-dir>/search/index.db, postgres://user@host:port/db?sslmode=… a PostgreSQL database for large fleets and several hub members, off no search (a hub on --kubeconfig serves none)")
	f.StringVar(&opts.MetricsAddr, "metrics-bind-address", "127.0.0.1:9440", "address of the Prometheus /metrics endpoint (0 disables it)")
	f.StringVar(&opts.HealthProbeAddr, "health-probe-bind-address", "127.0.0.1:9441", "address of /healthz and /readyz (0 disables them)")
	f.StringVar(&opts.Webhook.BindAddress, "webhook-bind-address", "127.0.0.1", "address the ManifestWork admission webhook server listens on")
	f.IntVar(&opts.Webhook.Port, "webhook-port", 0, fmt.Sprintf("port of the ManifestWork admission webhook server (default: a free one, which the hub registers with its embedded API server; %d with --kubeconfig, --etcd-servers or --etcd-initial-cluster, where every hub process registers the same address)", hub.DefaultWebhookPort))
	f.StringVar(&opts.Webhook.CertDir, "webhook-cert-dir", "", "directory with the webhook server's tls.crt, tls.key and the ca.crt that signed them (default: issued from the hub's CA under --data-dir; required with --kubeconfig to serve the webhook)")
	f.StringVar(&opts.Webhook.AdvertiseURL, "webhook-advertise-url", "", "https://host:port at which the API server reaches the webhook server (default: https://<webhook-bind-address>:<webhook-port>)")
	f.StringVar(&opts.Webhook.Service, "webhook-service", "", "namespace/name of a Service (port 443) in front of the webhook server, through which the API server calls it instead of --webhook-advertise-url (as the flotilla-hub chart installs it)")
	f.BoolVar(&opts.Webhook.SelfSigned, "webhook-self-signed", false, "issue a self-signed serving certificate into --webhook-cert-dir at start when it holds none, and register it (for a single hub replica)")
	f.BoolVar(&cacheWorks, "watch-cache-manifestworks", false, "keep every ManifestWork in the embedded API server's watch cache, as kube-apiserver does with custom resources: more memory per work, less CPU per change of a work (docs/install.md)")
	f.Var(&memoryLimit{&opts.MemoryLimit}, "memory-limit", "soft limit of the hub's Go memory, e.g. 5Gi: the garbage collector works harder near it rather than let the heap grow by --gc-percent past what is live (default: GOMEMLIMIT if set, else 80% of the container's memory limit if any, else none)")
	f.IntVar(&opts.GCPercent, "gc-percent", 0, fmt.Sprintf("the garbage collector runs when the heap has grown by this percent of what it last found live: lower holds less memory for more CPU (default: GOGC if set, else %d)", memlimit.DefaultGCPercent))
	rotation := bootstraptoken.DefaultRotation
	opts.BootstrapTokens = &rotation
	f.DurationVar(&rotation.Lifetime, "bootstrap-token-lifetime", rotation.Lifetime, "lifetime of the bootstrap token the hub keeps and rotates itself, for clusters to join with (0 stops rotating: tokens then come only from flotilla init)")
	f.DurationVar(&rotation.Overlap, "bootstrap-token-overlap", rotation.Overlap, "the hub creates the next bootstrap token when the newest has this long left, so a token handed out stays valid at least this long")
	f.BoolVar(&opts.LeaderElect, "leader-elect", true, "elect one active hub among several processes (a Lease in namespace "+hub.Namespace+")")
	opts.Lease = hub.DefaultLease
	f.DurationVar(&opts.Lease.Duration, "leader-elect-lease-duration", opts.Lease.Duration, "how long a standby waits after the leader's last renewal before it takes over from a leader that stopped renewing (crashed)")
	f.DurationVar(&opts.Lease.RenewDeadline, "leader-elect-renew-deadline", opts.Lease.RenewDeadline, "how long the leader keeps trying to renew its lease before it stops leading (and the process exits)")
	f.DurationVar(&opts.Lease.RetryPeriod, "leader-elect-retry-period", opts.Lease.RetryPeriod, "how often standbys try to take the lease and the leader renews it")
	f.BoolVar(&opts.Webhook.ReusePort, "webhook-reuse-port", false, "listen on --webhook-port with SO_REUSEPORT, so that several hub replicas on one machine serve one --webhook-advertise-url between them (the kernel sends each connection to a live one)")
	klogFlags := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(klogFlags)
	f.AddGoFlag(klogFlags.Lookup("v"))
	f.AddGoFlag(klogFlags.Lookup("vmodule"))
	return cmd
}

// minMemberRenewDeadline is the shortest leader renew deadline of a hub
// whose etcd is a member of a cluster: longer than the 7 s that writes may
// fail while the etcd members elect a leader (etcd's 5 s request timeout
// plus twice its 1 s election timeout).
const minMemberRenewDeadline = 10 * time.Second

// validate rejects flag combinations that cannot mean anything.
func validate(cmd *cobra.Command, opts hub.Options) error {
	if opts.BootstrapTokens != nil {
		if err := opts.BootstrapTokens.Validate(); err != nil {
			return err
		}
	}
	if err := opts.Lease.Validate(); err != nil {
		return err
	}
	if cmd.Flags().Changed("gc-percent") && opts.GCPercent <= 0 {
		return fmt.Errorf("--gc-percent %d: give a percent above 0, such as %d (or leave it out for GOGC or the default)", opts.GCPercent, memlimit.DefaultGCPercent)
	}
	if !cmd.Flags().Changed("etcd-initial-cluster") {
		for _, name := range []string{"etcd-name", "etcd-peer-url", "etcd-listen-peer-url", "etcd-initial-cluster-state"} {
			if cmd.Flags().Changed(name) {
				return fmt.Errorf("--%s configures a member of an etcd cluster: give --etcd-initial-cluster too", name)
			}
		}
	}
	if opts.Kubeconfig == "" {
		return nil
	}
	if (opts.Webhook.CertDir == "") != (opts.Webhook.AdvertiseURL == "" && opts.Webhook.Service == "") {
		return fmt.Errorf("--webhook-cert-dir and --webhook-advertise-url (or --webhook-service) go together with --kubeconfig: the API server of that cluster must reach this process and trust its certificate; give both, or neither to serve no ManifestWork admission webhook from this process")
	}
	for _, name := range []string{"data-dir", "watch-cache-manifestworks", "bind-address", "secure-port", "advertise-address", "tls-san", "etcd-servers", "etcd-cafile", "etcd-certfile", "etcd-keyfile", "etcd-initial-cluster", "etcd-name", "etcd-peer-url", "etcd-listen-peer-url", "etcd-initial-cluster-state"} {
		if cmd.Flags().Changed(name) {
			return fmt.Errorf("--%s configures the embedded control plane, which --kubeconfig replaces: use one or the other", name)
		}
	}
	if _, err := os.Stat(opts.Kubeconfig); err != nil {
		return fmt.Errorf("--kubeconfig: %w", err)
	}
	return nil
}

func defaultDataDir() string {
	if dir := os.Getenv("XDG_DATA_HOME"); dir != "" {
		return filepath.Join(dir, "flotilla", "hub")
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".local", "share", "flotilla", "hub")
	}
	return "flotilla-hub-data"
}

// memoryLimit is --memory-limit: a Kubernetes quantity ("5Gi", "5368709120").
type memoryLimit struct{ bytes *int64 }

func (m *memoryLimit) String() string {
	if m.bytes == nil || *m.bytes == 0 {
		return ""
	}
	return resource.NewQuantity(*m.bytes, resource.BinarySI).String()
}

func (m *memoryLimit) Set(s string) error {
	q, err := resource.ParseQuantity(s)
	if err != nil || q.Sign() <= 0 {
		return fmt.Errorf("want a positive size such as 5Gi or 5368709120, not %q", s)
	}
	*m.bytes = q.Value()
	return nil
}

func (m *memoryLimit) Type() string { return "quantity" }
