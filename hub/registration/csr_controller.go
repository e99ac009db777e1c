package registration

import (
	"context"
	"fmt"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	"github.com/flotilla-io/flotilla/internal/identity"
)

// CSRReconciler approves agents' certificate renewals. First CSRs, sent
// with a bootstrap credential, are left to a hub admin; once one is
// approved for a new cluster, it records the agent it names as the
// cluster's accepted agent.
type CSRReconciler struct {
	// Client reads from the manager's cache and writes to the API server.
	Client client.Client
	// APIReader reads join token Secrets, which the cache does not hold.
	APIReader client.Reader
	// Recorder emits an event for every approval.
	Recorder events.EventRecorder
}

// SetupWithManager registers the reconciler for cluster-labelled client CSRs.
func (r *CSRReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("managedcluster-csr-approver").
		For(&certificatesv1.CertificateSigningRequest{}, builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool {
			csr, ok := o.(*certificatesv1.CertificateSigningRequest)
			return ok && isClusterCSR(csr)
		}))).
		Complete(r)
}

// Reconcile approves one CSR if it is a renewal by an agent of an accepted
// cluster that may renew its certificate, and leaves it alone otherwise.
func (r *CSRReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	logger := klog.FromContext(ctx)
	csr := &certificatesv1.CertificateSigningRequest{}
	if err := r.Client.Get(ctx, req.NamespacedName, csr); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !pending(csr) {
		if err := r.recordJoinedAgent(ctx, csr); err != nil {
			return ctrl.Result{}, err
		}
		return r.retireClusterToken(ctx, csr, time.Now())
	}
	ren, err := parseRenewal(csr)
	if err != nil {
		logger.V(4).Info("Not an agent's certificate renewal; left alone", "reason", err.Error())
		return ctrl.Result{}, nil
	}
	cluster := &clusterv1.ManagedCluster{}
	if err := r.Client.Get(ctx, client.ObjectKey{Name: ren.cluster}, cluster); err != nil {
		if apierrors.IsNotFound(err) {
			logger.V(2).Info("Renewal for an unknown cluster; left alone", "managedCluster", ren.cluster)
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, fmt.Errorf("get ManagedCluster %s: %w", ren.cluster, err)
	}
	if !cluster.Spec.HubAcceptsClient || !cluster.DeletionTimestamp.IsZero() {
		logger.V(2).Info("Renewal for a cluster that is not accepted; left alone", "managedCluster", klog.KObj(cluster))
		return ctrl.Result{}, nil
	}
	allowed, err := r.mayRenew(ctx, csr, ren.cluster)
	if err != nil {
		return ctrl.Result{}, err
	}
	if !allowed {
		logger.Info("Renewal not allowed by RBAC; left alone", "managedCluster", klog.KObj(cluster), "requester", csr.Spec.Username)
		return ctrl.Result{}, nil
	}

	csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
		Type:           certificatesv1.CertificateApproved,
		Status:         corev1.ConditionTrue,
		Reason:         csrApprovalConditionReason,
		Message:        "Auto-approved: a renewal by an agent of accepted cluster " + ren.cluster + ", allowed by a SubjectAccessReview",
		LastUpdateTime: metav1.Now(),
	})
	if err := r.Client.SubResource("approval").Update(ctx, csr); err != nil {
		return ctrl.Result{}, fmt.Errorf("approve CSR %s: %w", csr.Name, err)
	}
	logger.Info("Approved an agent's certificate renewal", "managedCluster", klog.KObj(cluster), "agent", ren.agent)
	r.Recorder.Eventf(csr, cluster, corev1.EventTypeNormal, reasonCSRAutoApproved, "Approve",
		"Renewal CSR %s of agent %s of cluster %s was approved", csr.Name, ren.agent, ren.cluster)
	if cluster.Annotations[identity.AcceptedAgentAnnotation] == "" {
		// A cluster accepted before the hub recorded agents: the agent
		// that renews is the one RBAC allowed to, so it is the cluster's.
		return ctrl.Result{}, r.recordAgent(ctx, cluster, ren.agent)
	}
	return ctrl.Result{}, nil
}

// mayRenew asks the API server whether the CSR's requester, as it
// authenticated when it created the CSR, may renew the client certificate
// of cluster c.
func (r *CSRReconciler) mayRenew(ctx context.Context, csr *certificatesv1.CertificateSigningRequest, c string) (bool, error) {
	extra := map[string]authorizationv1.ExtraValue{}
	for k, v := range csr.Spec.Extra {
		extra[k] = authorizationv1.ExtraValue(v)
	}
	review := &authorizationv1.SubjectAccessReview{
		Spec: authorizationv1.SubjectAccessReviewSpec{
			User:   csr.Spec.Username,
			UID:    csr.Spec.UID,
			Groups: csr.Spec.Groups,
			Extra:  extra,
			ResourceAttributes: &authorizationv1.ResourceAttributes{
				Group:       RegisterGroup,
				Resource:    ManagedClustersResource,
				Subresource: ClientCertificatesSubresource,
				Verb:        RenewVerb,
				Name:        c,
			},
		},
	}
	if err := r.Client.Create(ctx, review); err != nil {
		return false, fmt.Errorf("review whether %s may renew the certificate of cluster %s: %w", csr.Spec.Username, c, err)
	}
	return review.Status.Allowed, nil
}
