package controlplane

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/server/healthz"
	cacheddiscovery "k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/informers"
	v1core "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/keyutil"
	controllersmetrics "k8s.io/component-base/metrics/prometheus/controllers"
	"k8s.io/controller-manager/pkg/clientbuilder"
	"k8s.io/controller-manager/pkg/informerfactory"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/cmd/kube-controller-manager/app"
	"k8s.io/kubernetes/cmd/kube-controller-manager/app/config"
	"k8s.io/kubernetes/cmd/kube-controller-manager/app/options"
	"k8s.io/kubernetes/cmd/kube-controller-manager/names"
	"k8s.io/kubernetes/pkg/controller/garbagecollector"
	serviceaccountcontroller "k8s.io/kubernetes/pkg/controller/serviceaccount"
	"k8s.io/kubernetes/pkg/serviceaccount"
)

// HubControllers are the kube-controller-manager controllers a hub needs:
// signing agents' client certificates, deleting namespaces, collecting
// garbage, service accounts and their tokens, bootstrap tokens (signing
// cluster-info, removing expired tokens), aggregated cluster roles, and the
// default ServiceAccount and root CA ConfigMap in every namespace that is
// no managed cluster's.
var HubControllers = []string{
	names.CertificateSigningRequestSigningController,
	names.CertificateSigningRequestCleanerController,
	names.NamespaceController,
	names.GarbageCollectorController,
	names.ServiceAccountController,
	names.ServiceAccountTokenController,
	names.BootstrapSignerController,
	names.TokenCleanerController,
	names.ClusterRoleAggregationController,
	names.RootCACertificatePublisherController,
}

// MaxSignedCertificateLifetime caps the lifetime of the certificates the
// hub signs for CSRs, agents' client certificates among them. Agents ask
// for as much by default and renew when a fifth to a quarter is left.
const MaxSignedCertificateLifetime = 30 * 24 * time.Hour

// instances numbers the controller managers of this process. Each needs an
// informer name of its own: client-go keeps those in a process-wide
// registry, which is why kube-controller-manager's own Run, which always
// claims the same name and never releases it, runs only once per process.
var instances atomic.Int64

// controllerManagerArgs are the kube-controller-manager flags of an embedded control plane.
func controllerManagerArgs(p *pki, kubeconfig string, controllers []string) []string {
	return []string{
		"--kubeconfig=" + kubeconfig,
		"--controllers=" + strings.Join(controllers, ","),
		"--leader-elect=false",
		"--secure-port=0",
		"--use-service-account-credentials=false",
		"--cluster-signing-cert-file=" + p.path(caCertFile),
		"--cluster-signing-key-file=" + p.path(caKeyFile),
		// Every certificate signed for a CSR lives at most this long,
		// whatever the CSR's expirationSeconds asks for (shorter is granted).
		"--cluster-signing-duration=" + MaxSignedCertificateLifetime.String(),
		"--service-account-private-key-file=" + p.path(saKeyFile),
		"--root-ca-file=" + p.path(caCertFile),
		// kube-controller-manager's default of 20 requests a second (burst
		// 30) for each of its controllers' clients held the CSR signer, one
		// status write per CSR, to 20 new clusters a second however idle
		// the hub: 5,000 took 250 s whatever else was made faster. They
		// get the hub controllers' allowance, which bounds both the same
		// way: both speak as system:masters, whom priority and fairness
		// exempts.
		"--kube-api-qps=" + strconv.Itoa(ClientQPS),
		"--kube-api-burst=" + strconv.Itoa(ClientBurst),
	}
}

// runControllerManager configures kube-controller-manager's controllers from
// flags and runs them until ctx ends. Errors while configuring are returned;
// errors while running arrive on the returned channel, which is closed when
// every controller has stopped.
func runControllerManager(ctx context.Context, args []string) (<-chan error, error) {
	s, err := options.NewKubeControllerManagerOptions()
	if err != nil {
		return nil, err
	}
	fs := pflag.NewFlagSet("kube-controller-manager", pflag.ContinueOnError)
	for _, f := range s.Flags(app.KnownControllers(), app.ControllersDisabledByDefault(), app.ControllerAliases()).FlagSets {
		fs.AddFlagSet(f)
	}
	if err := fs.Parse(args); err != nil {
		return nil, fmt.Errorf("kube-controller-manager flags: %w", err)
	}
	if err := s.ComponentGlobalsRegistry.Set(); err != nil {
		return nil, err
	}
	cfg, err := s.Config(ctx, app.KnownControllers(), app.ControllersDisabledByDefault(), app.ControllerAliases())
	if err != nil {
		return nil, fmt.Errorf("kube-controller-manager options: %w", err)
	}
	c := cfg.Complete()
	builder := clientbuilder.SimpleControllerClientBuilder{ClientConfig: c.Kubeconfig}
	name := fmt.Sprintf("kube-controller-manager-%d", instances.Add(1))
	controllerCtx, informerName, err := newControllerContext(ctx, c, builder, name)
	if err != nil {
		return nil, err
	}

	// The token controller is built by kube-controller-manager's Run with a
	// client builder of its own; build it here, the same way. The service
	// account controller and the root CA publisher are built here too, to
	// leave out the clusters' namespaces (namespace_defaults.go).
	descriptors := app.NewControllerDescriptors()
	delete(descriptors, names.ServiceAccountTokenController)
	delete(descriptors, names.ServiceAccountController)
	delete(descriptors, names.RootCACertificatePublisherController)
	controllers, err := app.BuildControllers(ctx, controllerCtx, descriptors, nil, noHealthChecks{})
	if err != nil {
		informerName.Release()
		return nil, err
	}
	var tokens *serviceaccountcontroller.TokensController
	if enabled(c, names.ServiceAccountTokenController) {
		if tokens, err = newTokensController(c, controllerCtx, builder); err != nil {
			informerName.Release()
			return nil, err
		}
	}
	defaults, err := newNamespaceDefaults(c, controllerCtx, builder)
	if err != nil {
		informerName.Release()
		return nil, err
	}

	c.EventBroadcaster.StartRecordingToSink(&v1core.EventSinkImpl{Interface: c.Client.CoreV1().Events("")})
	controllerCtx.InformerFactory.Start(ctx.Done())
	controllerCtx.ObjectOrMetadataInformerFactory.Start(ctx.Done())
	close(controllerCtx.InformersStarted)

	done := make(chan error, 1)
	go func() {
		defer close(done)
		defer informerName.Release()
		defer c.EventBroadcaster.Shutdown()
		defer controllerCtx.InformerFactory.Shutdown()
		if tokens != nil {
			go tokens.Run(ctx, int(c.ComponentConfig.SAController.ConcurrentSATokenSyncs))
		}
		if defaults != nil {
			go defaults.run(ctx)
		}
		if !app.RunControllers(ctx, controllerCtx, controllers, app.ControllerStartJitter, c.ControllerShutdownTimeout) {
			done <- fmt.Errorf("controllers did not stop within %s", c.ControllerShutdownTimeout)
		}
	}()
	return done, nil
}

// newControllerContext builds what kube-controller-manager's controllers
// share, as CreateControllerContext does, but under an informer name of its own.
func newControllerContext(ctx context.Context, c *config.CompletedConfig, builder clientbuilder.ControllerClientBuilder, name string) (app.ControllerContext, *cache.InformerName, error) {
	// Managed fields are of no use to controllers and cost memory.
	trim := func(obj any) (any, error) {
		if accessor, err := meta.Accessor(obj); err == nil {
			accessor.SetManagedFields(nil)
		}
		return obj, nil
	}
	client, err := builder.Client("shared-informers")
	if err != nil {
		return app.ControllerContext{}, nil, err
	}
	informerName, err := cache.NewInformerName(name)
	if err != nil {
		return app.ControllerContext{}, nil, err
	}
	resync := app.ResyncPeriod(c)
	sharedInformers := informers.NewSharedInformerFactoryWithOptions(client, resync(), informers.WithTransform(trim), informers.WithInformerName(informerName))
	metadataClient, err := metadata.NewForConfig(builder.ConfigOrDie("metadata-informers"))
	if err != nil {
		informerName.Release()
		return app.ControllerContext{}, nil, err
	}
	metadataInformers := metadatainformer.NewSharedInformerFactoryWithOptions(metadataClient, resync(), metadatainformer.WithTransform(trim))
	discovery := builder.DiscoveryClientOrDie("controller-discovery")
	restMapper := restmapper.NewDeferredDiscoveryRESTMapper(cacheddiscovery.NewMemCacheClient(discovery))
	go wait.Until(restMapper.Reset, 30*time.Second, ctx.Done())

	controllerCtx := app.ControllerContext{
		ClientBuilder:                   builder,
		InformerFactory:                 sharedInformers,
		ObjectOrMetadataInformerFactory: informerfactory.NewInformerFactory(sharedInformers, metadataInformers),
		ComponentConfig:                 c.ComponentConfig,
		RESTMapper:                      restMapper,
		InformersStarted:                make(chan struct{}),
		ResyncPeriod:                    resync,
		ControllerManagerMetrics:        controllersmetrics.NewControllerManagerMetrics(name),
	}
	if c.ComponentConfig.GarbageCollectorController.EnableGarbageCollector && enabled(c, names.GarbageCollectorController) {
		ignored := map[schema.GroupResource]struct{}{}
		for _, r := range c.ComponentConfig.GarbageCollectorController.GCIgnoredResources {
			ignored[schema.GroupResource{Group: r.Group, Resource: r.Resource}] = struct{}{}
		}
		controllerCtx.GraphBuilder = garbagecollector.NewDependencyGraphBuilder(ctx, metadataClient, restMapper, ignored,
			controllerCtx.ObjectOrMetadataInformerFactory, controllerCtx.InformersStarted)
	}
	controllersmetrics.Register()
	return controllerCtx, informerName, nil
}

// newTokensController builds the controller that fills legacy
// service-account token Secrets.
func newTokensController(c *config.CompletedConfig, controllerCtx app.ControllerContext, builder clientbuilder.ControllerClientBuilder) (*serviceaccountcontroller.TokensController, error) {
	key, err := keyutil.PrivateKeyFromFile(c.ComponentConfig.SAController.ServiceAccountKeyFile)
	if err != nil {
		return nil, fmt.Errorf("service account signing key: %w", err)
	}
	rootCA, err := os.ReadFile(c.ComponentConfig.SAController.RootCAFile)
	if err != nil {
		return nil, err
	}
	generator, err := serviceaccount.JWTTokenGenerator(serviceaccount.LegacyIssuer, key)
	if err != nil {
		return nil, err
	}
	client, err := builder.Client("tokens-controller")
	if err != nil {
		return nil, err
	}
	return serviceaccountcontroller.NewTokensController(klog.Background(),
		controllerCtx.InformerFactory.Core().V1().ServiceAccounts(),
		controllerCtx.InformerFactory.Core().V1().Secrets(),
		client,
		serviceaccountcontroller.TokensControllerOptions{TokenGenerator: generator, RootCA: rootCA},
	)
}

func enabled(c *config.CompletedConfig, controller string) bool {
	for _, name := range c.ComponentConfig.Generic.Controllers {
		if name == controller || name == "*" {
			return true
		}
	}
	return false
}

// noHealthChecks discards the controllers' health checks: the embedded
// controller manager serves no health endpoint of its own.
type noHealthChecks struct{}

func (noHealthChecks) AddHealthChecker(...healthz.HealthChecker) {}
