package agent

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"os"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/flotilla-io/flotilla/agent/addon"
	"github.com/flotilla-io/flotilla/agent/policy"
	"github.com/flotilla-io/flotilla/agent/proxy"
	"github.com/flotilla-io/flotilla/agent/registration"
	"github.com/flotilla-io/flotilla/agent/search"
	"github.com/flotilla-io/flotilla/agent/services"
	"github.com/flotilla-io/flotilla/agent/spokeclient"
	"github.com/flotilla-io/flotilla/agent/work"
	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/kubeapply"
	"github.com/flotilla-io/flotilla/manifests"
)

// userAgent is what the agent's requests to the spoke say they come from.
const userAgent = "flotilla-agent"

// Run runs the agent until ctx ends. It refuses options that can never
// work; everything else (an unreachable hub or spoke, a wrong token, a
// cluster that is not accepted yet) it retries with a backoff and logs.
func Run(ctx context.Context, opts Options) error {
	if err := opts.Validate(); err != nil {
		return err
	}
	if opts.Namespace == "" {
		opts.Namespace = DefaultNamespace
	}
	if opts.CertificateExpiration == 0 {
		opts.CertificateExpiration = DefaultCertificateExpiration
	}
	logger := klog.FromContext(ctx).WithValues("cluster", opts.ClusterName)
	ctx = klog.NewContext(ctx, logger)

	spokeConfig, err := loadSpokeConfig(opts.SpokeKubeconfig)
	if err != nil {
		return err
	}
	spoke, err := kubernetes.NewForConfig(spokeConfig)
	if err != nil {
		return err
	}
	reported, err := clientConfig(opts, spokeConfig)
	if err != nil {
		return err
	}
	if err := prepareSpoke(ctx, spokeConfig, spoke, opts.Namespace); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}

	// One REST mapper of the managed cluster for the manager, the work
	// agent and the policy agent: each holds what it discovered.
	mapper := opts.SpokeMapper
	if mapper == nil {
		if mapper, err = spokeclient.NewMapper(spokeConfig, nil); err != nil {
			return fmt.Errorf("create the managed cluster's REST mapper: %w", err)
		}
	}
	mgr, err := newManager(spokeConfig, mapper, opts, logger)
	if err != nil {
		return err
	}
	workAgent, err := work.New(work.Config{
		ClusterName:         opts.ClusterName,
		Spoke:               spokeConfig,
		ResyncInterval:      opts.WorkResyncInterval,
		EvictionGracePeriod: opts.AppliedManifestWorkEvictionGracePeriod,
		HubHash:             opts.HubHash,
		SpokeMapper:         mapper,
	})
	if err != nil {
		return err
	}
	policyAgent, err := policy.New(policy.Config{ClusterName: opts.ClusterName, Namespace: opts.Namespace, Spoke: spokeConfig, SpokeMapper: mapper})
	if err != nil {
		return err
	}
	servicesAgent, err := services.New(services.Config{ClusterName: opts.ClusterName, Spoke: spokeConfig, SpokeMapper: mapper})
	if err != nil {
		return err
	}
	addOnAgent, err := addon.New(addon.Config{
		ClusterName: opts.ClusterName, Spoke: spokeConfig, CertificateExpiration: opts.CertificateExpiration,
		RenewBefore: opts.RenewBefore, LeaseCheckInterval: opts.AddOnLeaseCheckInterval,
		InstallNamespaces: opts.AddOnInstallNamespaces, Namespace: opts.Namespace,
	})
	if err != nil {
		return err
	}
	sessionFuncs := []func(context.Context, registration.HubSession){runWork(workAgent), runPolicy(policyAgent), runServices(servicesAgent), runAddOns(addOnAgent)}
	if opts.Proxy {
		sessionFuncs = append(sessionFuncs, runProxy(spokeConfig, opts))
	}
	if opts.Search {
		searchAgent, err := search.New(search.Config{ClusterName: opts.ClusterName, Spoke: spokeConfig})
		if err != nil {
			return err
		}
		sessionFuncs = append(sessionFuncs, runSearch(searchAgent))
	}
	reg := registration.New(registration.Config{
		ClusterName:           opts.ClusterName,
		AgentID:               opts.AgentID,
		Namespace:             opts.Namespace,
		Spoke:                 spoke,
		BootstrapKubeconfig:   opts.BootstrapKubeconfig,
		HubServers:            opts.HubServers,
		ClientConfig:          reported,
		LeaseDurationSeconds:  opts.LeaseDurationSeconds,
		CertificateExpiration: opts.CertificateExpiration,
		RenewBefore:           opts.RenewBefore,
		SessionFuncs:          sessionFuncs,
	})
	if err := reg.SetupWithManager(mgr); err != nil {
		return err
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	mgrDone := make(chan error, 1)
	go func() { mgrDone <- mgr.Start(ctx) }()
	regDone := make(chan error, 1)
	go func() { regDone <- reg.Run(ctx) }()
	select {
	case err = <-mgrDone:
		cancel()
		<-regDone
	case err = <-regDone:
		cancel()
		err = errors.Join(err, <-mgrDone)
	}
	if err != nil {
		return fmt.Errorf("agent of cluster %s: %w", opts.ClusterName, err)
	}
	return nil
}

// runWork runs the work agent for as long as each hub session lasts.
func runWork(a *work.Agent) func(context.Context, registration.HubSession) {
	return restarting("work", func(ctx context.Context, s registration.HubSession) error { return a.Run(ctx, s.Config, s.AgentID) })
}

// runPolicy runs the policy agent for as long as each hub session lasts.
func runPolicy(a *policy.Agent) func(context.Context, registration.HubSession) {
	return restarting("policy", func(ctx context.Context, s registration.HubSession) error { return a.Run(ctx, s.Config) })
}

// runServices runs the multi-cluster services agent for as long as each
// hub session lasts.
func runServices(a *services.Agent) func(context.Context, registration.HubSession) {
	return restarting("services", func(ctx context.Context, s registration.HubSession) error { return a.Run(ctx, s.Config) })
}

// runAddOns registers the cluster's add-ons for as long as each hub
// session lasts.
func runAddOns(a *addon.Agent) func(context.Context, registration.HubSession) {
	return restarting("addon", func(ctx context.Context, s registration.HubSession) error { return a.Run(ctx, s.Config, s.Hub) })
}

// runSearch indexes the cluster's objects in the hub's search index for as
// long as each hub session lasts.
func runSearch(a *search.Agent) func(context.Context, registration.HubSession) {
	return restarting("search", func(ctx context.Context, s registration.HubSession) error { return a.Run(ctx, s.Config) })
}

// restarting runs run for as long as each hub session lasts, starting it
// again with a backoff whenever it stops before the session ends.
func restarting(name string, run func(context.Context, registration.HubSession) error) func(context.Context, registration.HubSession) {
	return func(ctx context.Context, s registration.HubSession) {
		backoff := wait.Backoff{Duration: time.Second, Factor: 2, Jitter: 0.1, Steps: math.MaxInt32, Cap: time.Minute}
		for ctx.Err() == nil {
			err := run(ctx, s)
			if ctx.Err() != nil {
				return
			}
			d := backoff.Step()
			klog.FromContext(ctx).Info("The "+name+" agent stopped; restarting it", "reason", fmt.Sprint(err), "retryIn", d.Round(time.Millisecond))
			select {
			case <-ctx.Done():
			case <-time.After(d):
			}
		}
	}
}

// runProxy keeps the cluster proxy's tunnel open for as long as the hub
// session lasts.
func runProxy(spoke *rest.Config, opts Options) func(context.Context, registration.HubSession) {
	return func(ctx context.Context, s registration.HubSession) {
		err := proxy.Run(ctx, proxy.Config{
			ClusterName: s.ClusterName, AgentID: s.AgentID, Hub: s.Config, HubTLS: s.TLSConfig, HubDial: s.Dial, Spoke: spoke,
			UserPrefix: opts.ProxyUserPrefix, GroupPrefix: opts.ProxyGroupPrefix,
		})
		if err != nil && ctx.Err() == nil {
			klog.FromContext(ctx).Error(err, "The cluster proxy cannot run; hub users cannot reach this cluster through the hub")
		}
	}
}

// loadSpokeConfig returns the managed cluster's client configuration.
func loadSpokeConfig(kubeconfig string) (*rest.Config, error) {
	var (
		cfg *rest.Config
		err error
	)
	if kubeconfig == "" {
		if cfg, err = rest.InClusterConfig(); err != nil {
			return nil, fmt.Errorf("not running in a cluster (%w): give the managed cluster's kubeconfig (--kubeconfig)", err)
		}
	} else if cfg, err = clientcmd.BuildConfigFromFlags("", kubeconfig); err != nil {
		return nil, explainUnreadable("--kubeconfig", kubeconfig, fmt.Errorf("load the managed cluster's kubeconfig %s: %w", kubeconfig, err))
	}
	cfg.UserAgent = userAgent
	return cfg, nil
}

// clientConfig is what the agent reports as its cluster's API server.
func clientConfig(opts Options, cfg *rest.Config) (clusterv1.ClientConfig, error) {
	cc := clusterv1.ClientConfig{URL: opts.SpokeAPIServerURL, CABundle: opts.SpokeCAData}
	if cc.URL == "" {
		cc.URL = cfg.Host
	}
	if len(cc.CABundle) == 0 {
		cc.CABundle = cfg.CAData
		if len(cc.CABundle) == 0 && cfg.CAFile != "" {
			data, err := os.ReadFile(cfg.CAFile)
			if err != nil {
				return cc, fmt.Errorf("read the managed cluster's CA: %w", err)
			}
			cc.CABundle = data
		}
	}
	return cc, nil
}

// prepareSpoke creates the agent namespace and the agent-side CRDs
// (ClusterClaim among them) where they are missing, retrying until it
// succeeds or ctx ends.
func prepareSpoke(ctx context.Context, cfg *rest.Config, spoke kubernetes.Interface, ns string) error {
	crds, err := manifests.AgentCRDs()
	if err != nil {
		return err
	}
	backoff := wait.Backoff{Duration: time.Second, Factor: 2, Jitter: 0.1, Steps: math.MaxInt32, Cap: time.Minute}
	return wait.ExponentialBackoffWithContext(ctx, backoff, func(ctx context.Context) (bool, error) {
		err := ensureNamespace(ctx, spoke, ns)
		if err == nil {
			err = kubeapply.InstallCRDs(ctx, cfg, crds)
		}
		if err != nil {
			klog.FromContext(ctx).Info("Cannot prepare the managed cluster; retrying", "reason", err.Error())
			return false, nil
		}
		return true, nil
	})
}

// ensureNamespace creates namespace ns unless it exists; an agent allowed
// only to read namespaces runs in one that exists.
func ensureNamespace(ctx context.Context, spoke kubernetes.Interface, ns string) error {
	_, err := spoke.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		_, err = spoke.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			err = nil
		}
	}
	if err != nil {
		return fmt.Errorf("ensure namespace %s: %w", ns, err)
	}
	return nil
}

// spokeScheme holds the spoke types the manager's controllers read: Nodes
// and ClusterClaims. Not client-go's whole scheme, whose several hundred
// kinds would cost the agent about a megabyte of heap for nothing. It is
// only read once built, so agents in one process share it.
var spokeScheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(corev1.AddToScheme(s))
	utilruntime.Must(clusterv1alpha1.AddToScheme(s))
	return s
}()

// newManager returns the spoke's manager. Its cache holds only what the
// controllers watch: Nodes, stripped to their resources, and ClusterClaims.
// Secrets and ConfigMaps are never cached, to keep the agent small.
func newManager(cfg *rest.Config, mapper meta.RESTMapper, opts Options, logger klog.Logger) (ctrl.Manager, error) {
	metrics := metricsserver.Options{BindAddress: addr(opts.MetricsAddr)}
	if opts.Profiling {
		metrics.ExtraHandlers = profilingHandlers()
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 spokeScheme,
		Logger:                 logger,
		Metrics:                metrics,
		HealthProbeBindAddress: addr(opts.HealthProbeAddr),
		MapperProvider:         func(*rest.Config, *http.Client) (meta.RESTMapper, error) { return mapper, nil },
		Cache: cache.Options{
			DefaultTransform: cache.TransformStripManagedFields(),
			ByObject: map[client.Object]cache.ByObject{
				&corev1.Node{}: {Transform: registration.NodeTransform},
			},
		},
		Client: client.Options{Cache: &client.CacheOptions{DisableFor: []client.Object{&corev1.Secret{}, &corev1.ConfigMap{}}}},
		// Tests run several agents in one process.
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		return nil, fmt.Errorf("create the agent's manager: %w", err)
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return nil, err
	}
	if err := mgr.AddReadyzCheck("ping", healthz.Ping); err != nil {
		return nil, err
	}
	return mgr, nil
}

// addr maps the options' "off" values to controller-runtime's.
func addr(a string) string {
	if a == "" {
		return "0"
	}
	return a
}
