// Command flotilla-dev-cluster runs a small simulated Kubernetes cluster for
// development: an embedded API server, controllers, scheduler and kwok
// nodes, in one process and without a container engine; see package
// devcluster.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/flotilla-io/flotilla/devcluster"
	"github.com/flotilla-io/flotilla/internal/version"
)

func main() {
	// Embedded Kubernetes packages register flags of their own (--version
	// among them) on the global flag set, which cobra would merge into ours.
	pflag.CommandLine = pflag.NewFlagSet(os.Args[0], pflag.ExitOnError)
	if err := newCommand().Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "flotilla-dev-cluster:", err)
		os.Exit(1)
	}
}

func newCommand() *cobra.Command {
	opts := devcluster.DefaultOptions()
	cmd := &cobra.Command{
		Use:   "flotilla-dev-cluster",
		Short: "Run a simulated Kubernetes cluster for development",
		Long: `Run a small Kubernetes cluster for development, without a container engine.

It embeds etcd, kube-apiserver, the controllers that make workloads progress
(deployments, replica sets, stateful sets, daemon sets, jobs, namespaces,
garbage collection, service accounts and tokens, endpoint slices) and
kube-scheduler, and simulates --nodes nodes with kwok: they become Ready,
Pods scheduled to them become Running, Deployments become Available. No
container runs.

State lives in --data-dir; it writes <data-dir>/admin.kubeconfig. A later
start on the same directory keeps the objects, and gives the nodes the
capacity and labels of the new flags. "flotilla dev up" starts several of
these as the spokes of a local hub.`,
		Example: `  # Three nodes of 8 CPUs and 32 GiB in us-east-1, spread over two zones:
  flotilla-dev-cluster --data-dir /tmp/c1 --secure-port 7443 \
    --region us-east-1 --zone us-east-1a,us-east-1b
  kubectl --kubeconfig /tmp/c1/admin.kubeconfig get nodes -L topology.kubernetes.io/zone`,
		Version:       version.String(),
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctrl.SetLogger(klog.NewKlogr())
			opts.Ready = func(info devcluster.Info) {
				fmt.Fprintf(os.Stderr, "flotilla-dev-cluster is ready at %s\n  export KUBECONFIG=%s\n", info.URL, info.AdminKubeconfig)
			}
			return devcluster.Run(ctrl.SetupSignalHandler(), opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Name, "name", opts.Name, "name of the cluster, which prefixes its nodes' names (<name>-node-1, ...)")
	f.StringVar(&opts.DataDir, "data-dir", defaultDataDir(), "directory for the cluster's state: certificates, etcd data, admin.kubeconfig")
	f.StringVar(&opts.BindAddress, "bind-address", opts.BindAddress, "address the API server listens on")
	f.IntVar(&opts.SecurePort, "secure-port", 7443, "port of the API server (0 picks a free one)")
	f.IntVar(&opts.Nodes, "nodes", opts.Nodes, "number of simulated nodes")
	f.Var(quantityValue{&opts.NodeCPU}, "node-cpu", "CPU capacity of each node")
	f.Var(quantityValue{&opts.NodeMemory}, "node-memory", "memory capacity of each node")
	f.IntVar(&opts.NodePods, "node-pods", opts.NodePods, "Pod capacity of each node")
	f.StringVar(&opts.Region, "region", "", "topology.kubernetes.io/region label of the nodes (empty for none)")
	f.StringSliceVar(&opts.Zones, "zone", nil, "topology.kubernetes.io/zone labels, given to the nodes in turn (comma separated)")
	klogFlags := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(klogFlags)
	f.AddGoFlag(klogFlags.Lookup("v"))
	f.AddGoFlag(klogFlags.Lookup("vmodule"))
	return cmd
}

func defaultDataDir() string {
	if dir := os.Getenv("XDG_DATA_HOME"); dir != "" {
		return filepath.Join(dir, "flotilla", "dev-cluster")
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".local", "share", "flotilla", "dev-cluster")
	}
	return "flotilla-dev-cluster-data"
}

// quantityValue is a flag holding a Kubernetes quantity, such as 8 or 32Gi.
type quantityValue struct{ q *resource.Quantity }

func (v quantityValue) String() string {
	if v.q == nil {
		return ""
	}
	return v.q.String()
}

func (v quantityValue) Set(s string) error {
	q, err := resource.ParseQuantity(s)
	if err != nil {
		return fmt.Errorf("%q is not a quantity such as 8, 500m or 32Gi", s)
	}
	*v.q = q
	return nil
}

func (quantityValue) Type() string { return "quantity" }
