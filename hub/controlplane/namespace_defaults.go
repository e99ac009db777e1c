package controlplane

import (
	"context"
	"fmt"
	"os"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/controller-manager/pkg/clientbuilder"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/cmd/kube-controller-manager/app"
	"k8s.io/kubernetes/cmd/kube-controller-manager/app/config"
	"k8s.io/kubernetes/cmd/kube-controller-manager/names"
	"k8s.io/kubernetes/pkg/controller/certificates/rootcacertpublisher"
	serviceaccountcontroller "k8s.io/kubernetes/pkg/controller/serviceaccount"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
)

// The service account controller and the root CA publisher put a
// "default" ServiceAccount and the "kube-root-ca.crt" ConfigMap in every
// namespace, for the pods that run there. No pod runs in a managed
// cluster's namespace on a hub: it holds the cluster's works, policies and
// lease and its agent's RoleBindings, and the agent reads neither object.
// They were two creates more for every cluster that joins, each stored,
// watched and cached, so the hub runs both controllers over the namespaces
// that are no cluster's only: those without the cluster-name label that
// the registration controller puts on every cluster namespace.

// namespaceDefaults are the two controllers, over their own namespace
// informer; the ServiceAccount and ConfigMap informers are the shared ones.
type namespaceDefaults struct {
	informers informers.SharedInformerFactory
	runs      []func(context.Context)
}

// notClusterNamespaces selects the namespaces that are no managed
// cluster's: those without the cluster-name label.
const notClusterNamespaces = "!" + clusterv1.ClusterNameLabel

// newNamespaceDefaults builds the controllers of the two names that c
// enables; nil when it enables neither.
func newNamespaceDefaults(c *config.CompletedConfig, controllerCtx app.ControllerContext, builder clientbuilder.ControllerClientBuilder) (*namespaceDefaults, error) {
	sa, ca := enabled(c, names.ServiceAccountController), enabled(c, names.RootCACertificatePublisherController)
	if !sa && !ca {
		return nil, nil
	}
	client, err := builder.Client("namespace-defaults-informers")
	if err != nil {
		return nil, err
	}
	d := &namespaceDefaults{informers: informers.NewSharedInformerFactoryWithOptions(client, controllerCtx.ResyncPeriod(),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = notClusterNamespaces }))}
	namespaces := d.informers.Core().V1().Namespaces()
	if sa {
		client, err := builder.Client("service-account-controller")
		if err != nil {
			return nil, err
		}
		ctl, err := serviceaccountcontroller.NewServiceAccountsController(klog.Background(),
			controllerCtx.InformerFactory.Core().V1().ServiceAccounts(), namespaces, client,
			serviceaccountcontroller.DefaultServiceAccountsControllerOptions())
		if err != nil {
			return nil, fmt.Errorf("service account controller: %w", err)
		}
		d.runs = append(d.runs, func(ctx context.Context) { ctl.Run(ctx, 1) })
	}
	if ca {
		rootCA, err := os.ReadFile(c.ComponentConfig.SAController.RootCAFile)
		if err != nil {
			return nil, fmt.Errorf("root CA certificate publisher: %w", err)
		}
		client, err := builder.Client("root-ca-cert-publisher")
		if err != nil {
			return nil, err
		}
		ctl, err := rootcacertpublisher.NewPublisher(controllerCtx.InformerFactory.Core().V1().ConfigMaps(), namespaces, client, rootCA)
		if err != nil {
			return nil, fmt.Errorf("root CA certificate publisher: %w", err)
		}
		d.runs = append(d.runs, func(ctx context.Context) { ctl.Run(ctx, 1) })
	}
	return d, nil
}

// run starts the namespace informer and runs the controllers until ctx
// ends.
func (d *namespaceDefaults) run(ctx context.Context) {
	d.informers.Start(ctx.Done())
	defer d.informers.Shutdown()
	var wg sync.WaitGroup
	for _, run := range d.runs {
		wg.Go(func() { run(ctx) })
	}
	wg.Wait()
}
