package controlplane

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/pflag"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/client-go/rest"
	"k8s.io/kubernetes/cmd/kube-apiserver/app"
	"k8s.io/kubernetes/cmd/kube-apiserver/app/options"
)

// serviceClusterIPRange is the range of the (unused) in-cluster Service IPs.
const serviceClusterIPRange = "10.96.0.0/16"

// firstServiceIP is the address of the "kubernetes" Service in that range.
const firstServiceIP = "10.96.0.1"

// apiServerArgs are the kube-apiserver flags of an embedded control plane.
func apiServerArgs(p *pki, etcdServers []string, bind string, port int, advertise string) []string {
	return []string{
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
	}
}

// runAPIServer configures a kube-apiserver from flags and runs it until ctx
// ends. Errors while configuring are returned; errors while running arrive on
// the returned channel, which is closed when the server has stopped.
func runAPIServer(ctx context.Context, args []string) (<-chan error, error) {
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
	done := make(chan error, 1)
	go func() {
		defer close(done)
		if err := app.Run(ctx, completed); err != nil {
			done <- err
		}
	}()
	return done, nil
}
