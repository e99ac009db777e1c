package devcluster

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/cmd/kube-controller-manager/names"

	"github.com/flotilla-io/flotilla/hub/controlplane"
)

// Controllers are the kube-controller-manager controllers of a dev
// cluster: those that make workloads progress (Deployments, ReplicaSets,
// StatefulSets, DaemonSets, Jobs and CronJobs, EndpointSlices), delete
// namespaces and garbage, create service accounts, their tokens and the
// root CA ConfigMap, aggregate cluster roles, and clean up finished Jobs and
// orphaned Pods, and taint nodes by their conditions (which lifts the
// not-ready taint that new nodes get once kwok reports them Ready).
var Controllers = []string{
	names.NamespaceController,
	names.GarbageCollectorController,
	names.ServiceAccountController,
	names.ServiceAccountTokenController,
	names.RootCACertificatePublisherController,
	names.ClusterRoleAggregationController,
	names.DeploymentController,
	names.ReplicaSetController,
	names.StatefulSetController,
	names.DaemonSetController,
	names.JobController,
	names.CronJobController,
	names.TTLAfterFinishedController,
	names.PodGarbageCollectorController,
	names.EndpointSliceController,
	names.DisruptionController,
	names.NodeLifecycleController,
	names.TaintEvictionController,
}

// Options configure a dev cluster.
type Options struct {
	// Name prefixes the nodes' names.
	Name string
	// DataDir holds the certificates, etcd's data and admin.kubeconfig.
	DataDir string
	// BindAddress is the address the API server listens on.
	BindAddress string
	// SecurePort is the API server's port; 0 picks a free one.
	SecurePort int
	// Nodes is the number of simulated nodes.
	Nodes int
	// NodeCPU is each node's CPU capacity.
	NodeCPU resource.Quantity
	// NodeMemory is each node's memory capacity.
	NodeMemory resource.Quantity
	// NodePods is how many Pods each node takes.
	NodePods int
	// Region is the nodes' topology.kubernetes.io/region label; empty for none.
	Region string
	// Zones are the nodes' topology.kubernetes.io/zone labels, given to the
	// nodes in turn; empty for none.
	Zones []string
	// Ready, if set, is called once the cluster serves and its nodes are Ready.
	Ready func(Info)
}

// DefaultOptions are a dev cluster of three nodes with 8 CPUs, 32 GiB and
// 110 Pods each.
func DefaultOptions() Options {
	return Options{
		Name:        "dev",
		BindAddress: "127.0.0.1",
		Nodes:       3,
		NodeCPU:     resource.MustParse("8"),
		NodeMemory:  resource.MustParse("32Gi"),
		NodePods:    110,
	}
}

// Info says where a running dev cluster can be reached.
type Info struct {
	// URL is the API server's address.
	URL string
	// AdminKubeconfig is the path of a kubeconfig with cluster-admin rights.
	AdminKubeconfig string
}

// startTimeout bounds the wait for the nodes to become Ready.
const startTimeout = time.Minute

// Cluster is a running dev cluster.
type Cluster struct {
	*controlplane.ControlPlane

	cancel    context.CancelFunc
	scheduler <-chan struct{}
	stopOnce  sync.Once
}

// Start brings up a dev cluster and returns once it serves, its
// controllers and scheduler run and its nodes are Ready. Stop it with Stop.
func Start(ctx context.Context, opts Options) (_ *Cluster, err error) {
	logger := klog.FromContext(ctx)
	if err := opts.validate(); err != nil {
		return nil, err
	}
	started := time.Now()
	cp, err := controlplane.Start(ctx, controlplane.Options{
		DataDir:     opts.DataDir,
		BindAddress: opts.BindAddress,
		SecurePort:  opts.SecurePort,
		Controllers: Controllers,
	})
	if err != nil {
		return nil, err
	}
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	c := &Cluster{ControlPlane: cp, cancel: cancel}
	defer func() {
		if err != nil {
			c.Stop()
		}
	}()
	client, err := kubernetes.NewForConfig(cp.Config)
	if err != nil {
		return nil, err
	}
	if err := ensureNodes(ctx, client, opts); err != nil {
		return nil, err
	}
	if err := runKwok(runCtx, cp.AdminKubeconfig); err != nil {
		return nil, err
	}
	if c.scheduler, err = runScheduler(runCtx, schedulerArgs(cp.AdminKubeconfig)); err != nil {
		return nil, err
	}
	if err := waitNodesReady(ctx, client, opts); err != nil {
		return nil, err
	}
	logger.Info("Dev cluster ready", "url", cp.URL, "nodes", opts.Nodes, "startup", time.Since(started).Round(time.Millisecond))
	return c, nil
}

// Run starts a dev cluster and blocks until ctx ends or a component fails.
// On return, everything it started has stopped.
func Run(ctx context.Context, opts Options) error {
	c, err := Start(ctx, opts)
	if err != nil {
		return err
	}
	defer c.Stop()
	if opts.Ready != nil {
		opts.Ready(Info{URL: c.URL, AdminKubeconfig: c.AdminKubeconfig})
	}
	select {
	case <-ctx.Done():
		return nil
	case err := <-c.Failed():
		return err
	case <-c.scheduler:
		return errors.New("kube-scheduler stopped")
	}
}

// Stop stops the scheduler and kwok, then the control plane. Calling it
// again does nothing.
func (c *Cluster) Stop() {
	c.stopOnce.Do(func() {
		c.cancel()
		if c.scheduler != nil {
			<-c.scheduler
		}
		c.ControlPlane.Stop()
	})
}

func (o *Options) validate() error {
	if o.Name == "" {
		o.Name = "dev"
	}
	if errs := validation.IsDNS1123Label(o.Name); len(errs) > 0 {
		return fmt.Errorf("--name %q: %v", o.Name, errs)
	}
	if o.Nodes < 1 {
		return fmt.Errorf("--nodes %d: a dev cluster needs at least one node", o.Nodes)
	}
	if o.NodeCPU.Sign() <= 0 {
		return fmt.Errorf("--node-cpu %s must be positive", o.NodeCPU.String())
	}
	if o.NodeMemory.Sign() <= 0 {
		return fmt.Errorf("--node-memory %s must be positive", o.NodeMemory.String())
	}
	if o.NodePods < 1 {
		return fmt.Errorf("--node-pods %d must be positive", o.NodePods)
	}
	for flag, values := range map[string][]string{"--region": {o.Region}, "--zone": o.Zones} {
		for _, v := range values {
			if v == "" {
				continue
			}
			if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
				return fmt.Errorf("%s %q is not a valid label value: %v", flag, v, errs)
			}
		}
	}
	return nil
}

// waitNodesReady waits until kwok has made every node Ready.
func waitNodesReady(ctx context.Context, client kubernetes.Interface, o Options) error {
	var notReady string
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, startTimeout, true, func(ctx context.Context) (bool, error) {
		ready, name, err := nodesReady(ctx, client, o)
		notReady = name
		return ready, err
	})
	if err != nil && notReady != "" {
		return fmt.Errorf("node %s did not become Ready within %s: %w", notReady, startTimeout, err)
	}
	return err
}
