package registration

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"
	bootstraputil "k8s.io/cluster-bootstrap/token/util"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	"github.com/flotilla-io/flotilla/hub/bootstraptoken"
)

// tokenGrace is how long a join token for one cluster stays valid once a
// CSR made with it was signed: long enough for the agent to read its
// certificate with it, not for another join.
const tokenGrace = 5 * time.Minute

// retireClusterToken ends the join token for one cluster (flotilla init
// --cluster-name) that an approved, signed CSR of that cluster was made
// with: it lets it expire tokenGrace later, and deletes it then. The
// token is not deleted at once, since the agent still reads its signed
// certificate with it.
func (r *CSRReconciler) retireClusterToken(ctx context.Context, csr *certificatesv1.CertificateSigningRequest, now time.Time) (ctrl.Result, error) {
	id, ok := strings.CutPrefix(csr.Spec.Username, bootstrapapi.BootstrapUserPrefix)
	cluster := csr.Labels[clusterv1.ClusterNameLabel]
	if !ok || !approved(csr) || len(csr.Status.Certificate) == 0 || !slices.Contains(csr.Spec.Groups, bootstraptoken.ClusterGroup(cluster)) {
		return ctrl.Result{}, nil
	}
	secret := &corev1.Secret{}
	key := client.ObjectKey{Namespace: metav1.NamespaceSystem, Name: bootstraputil.BootstrapTokenSecretName(id)}
	if err := r.APIReader.Get(ctx, key, secret); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if secret.Labels[bootstraptoken.ClusterLabel] != cluster {
		return ctrl.Result{}, nil
	}
	expires, _ := bootstraptoken.Expiration(secret)
	if usedBy := secret.Annotations[bootstraptoken.UsedByAnnotation]; usedBy != "" {
		if left := expires.Sub(now); left > 0 {
			return ctrl.Result{RequeueAfter: left}, nil
		}
		if err := r.Client.Delete(ctx, secret, client.Preconditions{UID: &secret.UID}); err != nil && !apierrors.IsNotFound(err) {
			return ctrl.Result{}, fmt.Errorf("delete used join token %s: %w", id, err)
		}
		klog.FromContext(ctx).Info("Deleted the used join token of the cluster", "managedCluster", klog.KRef("", cluster), "token", id, "usedBy", usedBy)
		return ctrl.Result{}, nil
	}
	end := now.Add(tokenGrace)
	if expires.Before(end) {
		end = expires
	}
	if secret.Annotations == nil {
		secret.Annotations = map[string]string{}
	}
	secret.Annotations[bootstraptoken.UsedByAnnotation] = csr.Name
	secret.Data[bootstrapapi.BootstrapTokenExpirationKey] = []byte(end.UTC().Format(time.RFC3339))
	if err := r.Client.Update(ctx, secret); err != nil {
		return ctrl.Result{}, fmt.Errorf("retire join token %s of cluster %s: %w", id, cluster, err)
	}
	klog.FromContext(ctx).Info("A join token for one cluster was used: it expires shortly", "managedCluster", klog.KRef("", cluster), "token", id, "csr", csr.Name, "expires", end)
	return ctrl.Result{RequeueAfter: end.Sub(now)}, nil
}
