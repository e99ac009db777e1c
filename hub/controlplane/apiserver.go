package controlplane

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authorization/union"
	"k8s.io/apiserver/pkg/registry/generic"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/client-go/rest"
	"k8s.io/kubernetes/cmd/kube-apiserver/app"
	"k8s.io/kubernetes/cmd/kube-apiserver/app/options"
)

// serviceClusterIPRange is the range of the (unused) in-cluster Service IPs.
const serviceClusterIPRange = "10.96.0.0/16"

// firstServiceIP is the address of the "kubernetes" Service in that range.
const firstServiceIP = "10.96.0.1"

// apiServerArgs are the kube-apiserver flags of an embedded control plane.
func apiServerArgs(p *pki, etcdServers []string, etcdTLS EtcdClientTLS, bind string, port int, advertise string) []string {
	return append(etcdTLS.args(), []string{
		"--etcd-servers=" + strings.Join(etcdServers, ","),
		"--bind-address=" + bind,
		fmt.Sprintf("--secure-port=%d", port),
		"--advertise-address=" + advertise,
		"--tls-cert-file=" + p.path(servingCertFile),
		"--tls-private-key-file=" + p.path(servingKeyFile),
		"--client-ca-file=" + p.path(caCertFile),
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-account-key-file=" + p.path(saPubFile),
		"--service-account-signing-key-file=" + p.path(saKeyFile),
		"--authorization-mode=RBAC",
		"--enable-bootstrap-token-auth=true",
		"--anonymous-auth=true",
		"--allow-privileged=true",
		"--service-cluster-ip-range=" + serviceClusterIPRange,
		// The in-cluster "kubernetes" Service is of no use to a hub, and its
		// endpoints may not be a loopback address, which ours usually is.
		"--endpoint-reconciler-type=none",
		"--profiling=false",
		// On stop, end the clients' watches (agents watch their works and
		// policies the whole time) rather than wait for them: the agents
		// reconnect at once, to another member or the restarted hub, and the
		// stop takes seconds instead of the drain bound (Stop).
		"--shutdown-watch-termination-grace-period=" + watchTerminationGrace.String(),
	}...)
}

// watchTerminationGrace bounds how long the API server takes to end its
// watches when it stops (at least 200 a second, by its own rate).
const watchTerminationGrace = 10 * time.Second

// runAPIServer configures a kube-apiserver from flags and runs it until ctx
// ends, with the authorizer opts.Authorizer makes (if any) in front of its
// own, opts.Admission (if any) after its own admission plugins, and the
// custom resources opts.Uncached without a watch cache.
// Errors while configuring are returned; errors while running arrive on
// the returned channel, which is closed when the server has stopped.
func runAPIServer(ctx context.Context, args []string, opts Options) (<-chan error, error) {
	s := options.NewServerRunOptions()
	fs := pflag.NewFlagSet("kube-apiserver", pflag.ContinueOnError)
	for _, f := range s.Flags().FlagSets {
		fs.AddFlagSet(f)
	}
	if err := fs.Parse(args); err != nil {
		return nil, fmt.Errorf("kube-apiserver flags: %w", err)
	}
	if err := s.GenericServerRunOptions.ComponentGlobalsRegistry.Set(); err != nil {
		return nil, err
	}
	completed, err := s.Complete(ctx)
	if err != nil {
		return nil, fmt.Errorf("kube-apiserver options: %w", err)
	}
	if errs := completed.Validate(); len(errs) != 0 {
		return nil, fmt.Errorf("kube-apiserver options: %w", utilerrors.NewAggregate(errs))
	}
	// The server's own loopback client should not log warnings it caused.
	rest.SetDefaultWarningHandler(rest.NoWarnings{})
	// What app.Run does, with the authorizer put in front.
	config, err := app.NewConfig(completed)
	if err != nil {
		return nil, fmt.Errorf("kube-apiserver config: %w", err)
	}
	replaceBootstrapHooks(config.KubeAPIs.ControlPlane.Generic)
	if opts.Authorizer != nil {
		a := opts.Authorizer(config.KubeAPIs.ControlPlane.VersionedInformers)
		for _, info := range []*genericapiserver.AuthorizationInfo{
			&config.KubeAPIs.ControlPlane.Generic.Authorization,
			&config.ApiExtensions.GenericConfig.Authorization,
			&config.Aggregator.GenericConfig.Authorization,
		} {
			info.Authorizer = union.New(a, info.Authorizer)
		}
	}
	if len(opts.Uncached) > 0 {
		crds := &config.ApiExtensions.ExtraConfig
		crds.CRDRESTOptionsGetter = uncachedGetter{crds.CRDRESTOptionsGetter, opts.Uncached}
	}
	applyExtensions(opts.Extensions, config.KubeAPIs.ControlPlane.Generic, &config.ApiExtensions.GenericConfig.Config, &config.Aggregator.GenericConfig.Config)
	serveExtensions(opts.Extensions, &config.Aggregator.GenericConfig.Config)
	if opts.Admission != nil {
		generic := config.KubeAPIs.ControlPlane.Generic
		if generic.AdmissionControl == nil {
			generic.AdmissionControl = opts.Admission
		} else {
			generic.AdmissionControl = admission.NewChainHandler(generic.AdmissionControl, opts.Admission)
		}
	}
	done := make(chan error, 1)
	go func() {
		defer close(done)
		if err := runServer(ctx, config); err != nil {
			done <- err
		}
	}()
	return done, nil
}

// uncachedGetter serves the custom resources in uncached from etcd alone,
// without a watch cache in front (kube-apiserver's --watch-cache-sizes is
// not meant for custom resources).
type uncachedGetter struct {
	generic.RESTOptionsGetter
	uncached []schema.GroupResource
}

func (g uncachedGetter) GetRESTOptions(resource schema.GroupResource, example runtime.Object) (generic.RESTOptions, error) {
	opts, err := g.RESTOptionsGetter.GetRESTOptions(resource, example)
	if err == nil && slices.Contains(g.uncached, resource) {
		opts.Decorator = generic.UndecoratedStorage
	}
	return opts, err
}

// runServer is the rest of app.Run: it builds the server chain from
// config and serves until ctx ends.
func runServer(ctx context.Context, config *app.Config) error {
	completed, err := config.Complete()
	if err != nil {
		return err
	}
	server, err := app.CreateServerChain(completed)
	if err != nil {
		return err
	}
	if err := addBootstrapHooks(server.GenericAPIServer); err != nil {
		return err
	}
	prepared, err := server.PrepareRun()
	if err != nil {
		return err
	}
	return prepared.Run(ctx)
}
