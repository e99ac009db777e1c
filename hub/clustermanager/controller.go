package clustermanager

import (
	"context"
	"fmt"
	"os"
	"slices"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	operatorv1 "github.com/flotilla-io/flotilla/api/operator/v1"
	"github.com/flotilla-io/flotilla/hub/bootstraptoken"
	"github.com/flotilla-io/flotilla/manifests"
)

// Name is the ClusterManager's name, the one clusteradm reads.
const Name = "cluster-manager"

// notEstablishedRetry is how soon a hub whose CRDs are not all served yet
// looks again.
const notEstablishedRetry = 10 * time.Second

// Reconciler keeps the ClusterManager and its status, and the Leases of
// the OCM components the hub does the work of.
type Reconciler struct {
	Client client.Client
	// CRDs reads the CustomResourceDefinitions.
	CRDs apiextensionsclient.Interface
	// Want are the names of the CRDs the hub installs.
	Want []string
	Options
}

// Options say what the hub process that runs the controller is.
type Options struct {
	// Version is the hub's version, named in the Applied condition.
	Version string
	// Namespace holds the components' Leases: the hub's own namespace.
	Namespace string
	// Holder names this process in the Leases it holds; empty means the
	// host's name.
	Holder string
	// WorkWebhook says that this process serves the ManifestWork
	// admission webhook.
	WorkWebhook bool
}

// Setup adds the ClusterManager controller to mgr.
func Setup(mgr manager.Manager, opts Options) error {
	crds, err := manifests.AllCRDs()
	if err != nil {
		return err
	}
	if opts.Holder == "" {
		if opts.Holder, err = os.Hostname(); err != nil {
			return fmt.Errorf("name this hub process in its Leases: %w", err)
		}
	}
	r := &Reconciler{Client: mgr.GetClient(), Options: opts}
	for _, crd := range crds {
		r.Want = append(r.Want, crd.Name)
	}
	if r.CRDs, err = apiextensionsclient.NewForConfig(mgr.GetConfig()); err != nil {
		return err
	}
	// The Leases are renewed apart from the status, which lists every CRD
	// when it is written: only the leading process renews them.
	renew := manager.RunnableFunc(func(ctx context.Context) error {
		wait.UntilWithContext(ctx, func(ctx context.Context) {
			if err := r.renewComponents(ctx); err != nil {
				klog.FromContext(ctx).Error(err, "Renewing the Leases of the hub components")
			}
		}, renewInterval)
		return nil
	})
	if err := mgr.Add(renew); err != nil {
		return err
	}
	named := predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetName() == Name })
	return ctrl.NewControllerManagedBy(mgr).
		Named("clustermanager").
		For(&operatorv1.ClusterManager{}, builder.WithPredicates(named)).
		// The join path is open while the bootstrap ClusterRole exists.
		Watches(&rbacv1.ClusterRole{}, handler.EnqueueRequestsFromMapFunc(func(context.Context, client.Object) []reconcile.Request {
			return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: Name}}}
		}), builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetName() == bootstraptoken.ClusterRoleName }))).
		// The object may not exist yet: reconcile once at start to create it.
		WatchesRawSource(source.Func(func(_ context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
			q.Add(reconcile.Request{NamespacedName: types.NamespacedName{Name: Name}})
			return nil
		})).
		Complete(r)
}

// Reconcile creates the ClusterManager when it is missing and writes its status.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (ctrl.Result, error) {
	if req.Name != Name {
		return ctrl.Result{}, nil
	}
	cm := &operatorv1.ClusterManager{}
	err := r.Client.Get(ctx, req.NamespacedName, cm)
	if apierrors.IsNotFound(err) {
		cm = newClusterManager()
		if err := r.Client.Create(ctx, cm); err != nil && !apierrors.IsAlreadyExists(err) {
			return ctrl.Result{}, fmt.Errorf("create ClusterManager %s: %w", Name, err)
		}
		// The create event brings the object back with its status to write.
		return ctrl.Result{}, nil
	}
	if err != nil {
		return ctrl.Result{}, err
	}
	if staleAddOnGate(cm) {
		patch := client.MergeFromWithOptions(cm.DeepCopy(), client.MergeFromWithOptimisticLock{})
		cm.Spec.AddOnManagerConfiguration = newClusterManager().Spec.AddOnManagerConfiguration
		if err := r.Client.Patch(ctx, cm, patch); err != nil {
			return ctrl.Result{}, fmt.Errorf("say in ClusterManager %s that the hub runs the add-on manager: %w", Name, err)
		}
	}
	list, err := r.CRDs.ApiextensionsV1().CustomResourceDefinitions().List(ctx, metav1.ListOptions{})
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("list CRDs: %w", err)
	}
	missing := notEstablished(r.Want, list.Items)
	joinOpen, err := bootstraptoken.JoinPathOpen(ctx, r.Client)
	if err != nil {
		return ctrl.Result{}, err
	}
	status := r.status(cm, missing, joinOpen)
	if !equality.Semantic.DeepEqual(cm.Status, status) {
		patch := client.MergeFromWithOptions(cm.DeepCopy(), client.MergeFromWithOptimisticLock{})
		cm.Status = status
		if err := r.Client.Status().Patch(ctx, cm, patch); err != nil {
			return ctrl.Result{}, fmt.Errorf("write ClusterManager %s status: %w", Name, err)
		}
	}
	if len(missing) > 0 {
		return ctrl.Result{RequeueAfter: notEstablishedRetry}, nil
	}
	return ctrl.Result{}, nil
}

// newClusterManager says what this hub runs, in the spec's terms.
func newClusterManager() *operatorv1.ClusterManager {
	return &operatorv1.ClusterManager{
		ObjectMeta: metav1.ObjectMeta{Name: Name, Labels: map[string]string{"app.kubernetes.io/managed-by": "flotilla"}},
		Spec: operatorv1.ClusterManagerSpec{
			DeployOption: operatorv1.ClusterManagerDeployOption{Mode: operatorv1.InstallModeDefault},
			WorkConfiguration: &operatorv1.WorkConfiguration{
				WorkDriver:   "kube",
				FeatureGates: []operatorv1.FeatureGate{{Feature: "ManifestWorkReplicaSet", Mode: "Enable"}},
			},
			// The hub runs the add-on manager (hub/addon).
			AddOnManagerConfiguration: &operatorv1.AddOnManagerConfiguration{
				FeatureGates: []operatorv1.FeatureGate{{Feature: addOnManagementGate, Mode: "Enable"}},
			},
		},
	}
}

// addOnManagementGate is OCM's feature gate of the add-on manager, which
// clusteradm get hub-info reads.
const addOnManagementGate = "AddonManagement"

// staleAddOnGate says that cm still carries the spec an older hub wrote
// when it ran no add-on manager: AddonManagement Disable and nothing else,
// on an object Flotilla made. The hub runs one now, so the spec would
// mislead clusteradm; a spec its users wrote is left alone.
func staleAddOnGate(cm *operatorv1.ClusterManager) bool {
	c := cm.Spec.AddOnManagerConfiguration
	return cm.Labels["app.kubernetes.io/managed-by"] == "flotilla" && c != nil &&
		slices.Equal(c.FeatureGates, []operatorv1.FeatureGate{{Feature: addOnManagementGate, Mode: "Disable"}})
}

// notEstablished lists the wanted CRDs that are absent or not served.
func notEstablished(want []string, crds []apiextensionsv1.CustomResourceDefinition) []string {
	established := map[string]bool{}
	for _, crd := range crds {
		for _, c := range crd.Status.Conditions {
			if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
				established[crd.Name] = true
			}
		}
	}
	var missing []string
	for _, name := range want {
		if !established[name] {
			missing = append(missing, name)
		}
	}
	slices.Sort(missing)
	return missing
}
