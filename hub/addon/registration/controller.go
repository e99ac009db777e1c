package registration

import (
	"context"
	"fmt"
	"strings"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	addonv1alpha1 "github.com/flotilla-io/flotilla/api/addon/v1alpha1"
	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	"github.com/flotilla-io/flotilla/internal/addon"
	"github.com/flotilla-io/flotilla/internal/identity"
)

const (
	recorderName = "flotilla-hub-addon-registration"
	// HubNamespace is where a template's signing CA Secret is looked for
	// when the template names no namespace.
	HubNamespace = "open-cluster-management-hub"

	reasonApproved    = "AddOnCSRApproved"
	reasonNotApproved = "AddOnCSRNotApproved"
	reasonSigned      = "AddOnCSRSigned"
	reasonSignFailed  = "AddOnCSRSigningFailed"
)

// Reconciler approves and signs add-on agents' CSRs.
type Reconciler struct {
	// Client reads from the manager's cache and writes to the API server.
	Client client.Client
	// APIReader reads signing CA Secrets, which no cache holds.
	APIReader client.Reader
	Recorder  events.EventRecorder
}

// workers is how many CSRs are looked at at once. Each is its own, and a
// pass mostly waits for the API server's answer to its approval (or its
// signature): with one worker, 1,000 clusters' add-on CSRs were approved
// at 4 a second on a busy hub, the last ones after their add-ons were
// Available (docs/benchmarks.md, "Add-ons").
const workers = 4

// Setup adds the add-on CSR controller to mgr.
func Setup(mgr manager.Manager) error {
	r := &Reconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Recorder: mgr.GetEventRecorder(recorderName)}
	return ctrl.NewControllerManagedBy(mgr).
		Named("addon-csr").
		WithOptions(controller.Options{MaxConcurrentReconciles: workers}).
		For(&certificatesv1.CertificateSigningRequest{}, builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool {
			return isAddOnCSR(o)
		}))).
		// A CSR left pending for what was missing (the cluster's accepted
		// agent not recorded yet, its ManagedClusterAddOn not made yet) is
		// looked at again when it comes.
		Watches(&clusterv1.ManagedCluster{}, handler.EnqueueRequestsFromMapFunc(r.pendingOf(func(o client.Object) (string, string) { return o.GetName(), "" })),
			builder.WithPredicates(predicate.Funcs{
				CreateFunc: func(e event.CreateEvent) bool {
					return e.Object.GetAnnotations()[identity.AcceptedAgentAnnotation] != ""
				},
				UpdateFunc:  func(e event.UpdateEvent) bool { return acceptedAgent(e.ObjectOld) != acceptedAgent(e.ObjectNew) },
				DeleteFunc:  func(event.DeleteEvent) bool { return false },
				GenericFunc: func(event.GenericEvent) bool { return false },
			})).
		Watches(&addonv1alpha1.ManagedClusterAddOn{}, handler.EnqueueRequestsFromMapFunc(r.pendingOf(func(o client.Object) (string, string) { return o.GetNamespace(), o.GetName() })),
			builder.WithPredicates(predicate.Funcs{
				CreateFunc:  func(event.CreateEvent) bool { return true },
				UpdateFunc:  func(event.UpdateEvent) bool { return false },
				DeleteFunc:  func(event.DeleteEvent) bool { return false },
				GenericFunc: func(event.GenericEvent) bool { return false },
			})).
		Complete(r)
}

func acceptedAgent(o client.Object) string {
	return o.GetAnnotations()[identity.AcceptedAgentAnnotation]
}

// pendingOf maps an object to the pending add-on CSRs of the cluster and
// add-on (every add-on when "") that key gives.
func (r *Reconciler) pendingOf(key func(client.Object) (cluster, addOn string)) handler.MapFunc {
	return func(ctx context.Context, o client.Object) []reconcile.Request {
		c, a := key(o)
		sel := client.MatchingLabels{addon.ClusterNameLabel: c}
		if a != "" {
			sel[addon.AddOnNameLabel] = a
		}
		csrs := &certificatesv1.CertificateSigningRequestList{}
		if err := r.Client.List(ctx, csrs, sel); err != nil {
			klog.FromContext(ctx).Error(err, "Cannot list the add-on CSRs of a cluster", "managedCluster", c)
			return nil
		}
		var reqs []reconcile.Request
		for i := range csrs.Items {
			if csr := &csrs.Items[i]; isAddOnCSR(csr) && len(csr.Status.Certificate) == 0 && !condition(csr, certificatesv1.CertificateDenied) {
				reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(csr)})
			}
		}
		return reqs
	}
}

// isAddOnCSR says whether o is a CSR of a cluster's add-on, by name and labels.
func isAddOnCSR(o client.Object) bool {
	l := o.GetLabels()
	return strings.HasPrefix(o.GetName(), "addon") && l[addon.ClusterNameLabel] != "" && l[addon.AddOnNameLabel] != ""
}

// Reconcile approves a pending add-on CSR that passes the checks, and
// signs an approved one of a template's custom signer.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	csr := &certificatesv1.CertificateSigningRequest{}
	if err := r.Client.Get(ctx, req.NamespacedName, csr); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !isAddOnCSR(csr) || len(csr.Status.Certificate) > 0 || condition(csr, certificatesv1.CertificateDenied) || condition(csr, certificatesv1.CertificateFailed) {
		return ctrl.Result{}, nil
	}
	c, a := csr.Labels[addon.ClusterNameLabel], csr.Labels[addon.AddOnNameLabel]
	logger := klog.FromContext(ctx).WithValues("managedCluster", c, "addon", a)
	ctx = klog.NewContext(ctx, logger)

	cma := &addonv1alpha1.ClusterManagementAddOn{}
	if err := r.Client.Get(ctx, client.ObjectKey{Name: a}, cma); err != nil {
		if apierrors.IsNotFound(err) {
			logger.V(2).Info("A CSR of an add-on no ClusterManagementAddOn declares; left alone")
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	if !hubManaged(cma) {
		logger.V(2).Info("A CSR of an add-on that runs its own manager; left to it")
		return ctrl.Result{}, nil
	}
	mca := &addonv1alpha1.ManagedClusterAddOn{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: c, Name: a}, mca); err != nil {
		if !apierrors.IsNotFound(err) {
			return ctrl.Result{}, err
		}
		mca = nil
	}
	name := templateName(cma, mca)
	if name == "" {
		logger.V(2).Info("A CSR of an add-on that is no template add-on; left to its manager")
		return ctrl.Result{}, nil
	}
	tmpl := &addonv1alpha1.AddOnTemplate{}
	if err := r.Client.Get(ctx, client.ObjectKey{Name: name}, tmpl); err != nil {
		if apierrors.IsNotFound(err) {
			return ctrl.Result{}, r.refuse(ctx, csr, fmt.Errorf("the add-on's AddOnTemplate %q does not exist", name))
		}
		return ctrl.Result{}, err
	}
	if tmpl.Spec.AddonName != a {
		return ctrl.Result{}, r.refuse(ctx, csr, fmt.Errorf("AddOnTemplate %q is of add-on %q, not %q", name, tmpl.Spec.AddonName, a))
	}
	reg := templateRegistration(tmpl, csr.Spec.SignerName)
	if reg == nil {
		return ctrl.Result{}, r.refuse(ctx, csr, fmt.Errorf("AddOnTemplate %q has no registration for signer %q", name, csr.Spec.SignerName))
	}
	if condition(csr, certificatesv1.CertificateApproved) {
		if reg.Type == registrationCustomSigner {
			return ctrl.Result{}, r.sign(ctx, csr, reg.CustomSigner)
		}
		return ctrl.Result{}, nil
	}

	if mca == nil || !mca.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, r.refuse(ctx, csr, fmt.Errorf("cluster %q has no ManagedClusterAddOn %q, or it is being deleted", c, a))
	}
	cluster := &clusterv1.ManagedCluster{}
	if err := r.Client.Get(ctx, client.ObjectKey{Name: c}, cluster); err != nil {
		if apierrors.IsNotFound(err) {
			return ctrl.Result{}, r.refuse(ctx, csr, fmt.Errorf("cluster %q does not exist", c))
		}
		return ctrl.Result{}, err
	}
	if err := checkRequester(csr, cluster); err != nil {
		return ctrl.Result{}, r.refuse(ctx, csr, err)
	}
	if _, err := checkRequest(csr, c, a, reg); err != nil {
		return ctrl.Result{}, r.refuse(ctx, csr, err)
	}
	csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
		Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue,
		Reason: addon.ReasonCSRAutoApproved, Message: addon.MessageCSRAutoApproved, LastUpdateTime: metav1.Now(),
	})
	if err := r.Client.SubResource("approval").Update(ctx, csr); err != nil {
		return ctrl.Result{}, fmt.Errorf("approve CSR %s: %w", csr.Name, err)
	}
	logger.Info("Approved an add-on agent's CSR", "csr", csr.Name, "signer", csr.Spec.SignerName, "requester", csr.Spec.Username)
	r.Recorder.Eventf(csr, mca, corev1.EventTypeNormal, reasonApproved, "Approve",
		"CSR %s of add-on %s of cluster %s (signer %s) was approved", csr.Name, a, c, csr.Spec.SignerName)
	return ctrl.Result{}, nil
}

// refuse leaves csr pending, and says why in the log and an event.
func (r *Reconciler) refuse(ctx context.Context, csr *certificatesv1.CertificateSigningRequest, why error) error {
	klog.FromContext(ctx).Info("Not approving an add-on agent's CSR", "csr", csr.Name, "requester", csr.Spec.Username, "reason", why.Error())
	r.Recorder.Eventf(csr, nil, corev1.EventTypeWarning, reasonNotApproved, "Approve",
		"CSR %s (requested by %s) is not approved: %s", csr.Name, csr.Spec.Username, why.Error())
	return nil
}

func condition(csr *certificatesv1.CertificateSigningRequest, t certificatesv1.RequestConditionType) bool {
	for _, c := range csr.Status.Conditions {
		if c.Type == t && (c.Status == corev1.ConditionTrue || c.Status == "") {
			return true
		}
	}
	return false
}
