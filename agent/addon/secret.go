package addon

import (
	"context"
	"crypto/x509"
	"fmt"
	"slices"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/client-go/util/retry"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	addonv1alpha1 "github.com/flotilla-io/flotilla/api/addon/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/addon"
)

// pendingCSR is a CSR waited for, with the key only this process knows.
type pendingCSR struct {
	addon, name, hash string
	keyPEM            []byte
	created           time.Time
}

// cacheLag is how long a CSR just created may be missing from the cache.
const cacheLag = time.Minute

// register keeps reg's Secret holding a valid certificate. It returns
// when to look again and the ClusterCertificateRotated condition to set,
// if any.
func (r *runner) register(ctx context.Context, reg *registration) (time.Duration, *metav1.Condition, error) {
	logger := klog.FromContext(ctx)
	secrets := r.spoke.CoreV1().Secrets(reg.secret.Namespace)
	secret, err := secrets.Get(ctx, reg.secret.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		secret = nil
	case apierrors.IsForbidden(err):
		return 0, failed(forbiddenMessage(reg.secret.Namespace)), fmt.Errorf("read Secret %s: %w", reg.secret, err)
	case err != nil:
		return 0, nil, fmt.Errorf("read Secret %s: %w", reg.secret, err)
	}
	if secret != nil && secret.Annotations[hashAnnotation] != "" && secret.Annotations[hashAnnotation] != reg.hash {
		// The registration changed: its old certificate goes at once.
		if err := secrets.Delete(ctx, reg.secret.Name, metav1.DeleteOptions{}); client.IgnoreNotFound(err) != nil {
			return 0, nil, fmt.Errorf("delete Secret %s of a changed registration: %w", reg.secret, err)
		}
		logger.Info("Deleted the Secret of a changed registration", "secret", reg.secret.String())
		secret = nil
	}
	want, err := r.kubeconfig(reg)
	if err != nil {
		return 0, nil, err
	}
	now := time.Now()
	why, deadline := secretProblem(secret, reg, r.cfg.ClusterName, want, r.cfg.RenewBefore, now)
	if why == "" {
		// Said again while the Secret holds a good certificate: a status
		// write that failed after the Secret was stored (a conflict with
		// the hub's own write) must not leave the condition unsaid.
		var cond *metav1.Condition
		if cert, err := checkPair(secret.Data[keyCert], secret.Data[keyKey], reg); err == nil {
			cond = rotated(cert)
		}
		return time.Until(deadline) + time.Second, cond, nil
	}

	r.mu.Lock()
	p := r.pending[reg.secret]
	r.mu.Unlock()
	if p != nil && p.hash != reg.hash {
		p = nil
	}
	if p != nil {
		csr := &certificatesv1.CertificateSigningRequest{}
		err := r.hub.Get(ctx, client.ObjectKey{Name: p.name}, csr)
		switch {
		case apierrors.IsNotFound(err) && time.Since(p.created) < cacheLag:
			return time.Second, nil, nil
		case apierrors.IsNotFound(err):
			logger.Info("The CSR waited for is gone; asking again", "csr", p.name)
		case err != nil:
			return 0, nil, err
		default:
			certPEM, refused := csrOutcome(csr)
			if refused != "" {
				r.setPending(reg.secret, nil)
				return 0, failed(refused), fmt.Errorf("%s", refused)
			}
			if len(certPEM) == 0 {
				// Waiting for the hub: the CSR's next change queues the add-on.
				return secretCheckInterval, nil, nil
			}
			return r.store(ctx, reg, p, certPEM, want)
		}
		r.setPending(reg.secret, nil)
	}

	if _, err := r.spoke.CoreV1().Namespaces().Get(ctx, reg.secret.Namespace, metav1.GetOptions{}); err != nil {
		if apierrors.IsNotFound(err) {
			return 0, nil, fmt.Errorf("the add-on's install namespace %s does not exist yet (the add-on's manifests create it)", reg.secret.Namespace)
		}
		return 0, nil, err
	}
	if n := r.countCSRs(reg.addon); n >= addon.MaxCSRs {
		logger.Info("Not asking for a certificate: too many CSRs of the add-on are on the hub", "csrs", n)
		return time.Minute, failed(addon.MessageTooManyCSRs), nil
	}
	keyPEM, csr, err := newCSR(r.cfg.ClusterName, reg, r.cfg.CertificateExpiration)
	if err != nil {
		return 0, nil, err
	}
	if err := r.hub.Create(ctx, csr); err != nil {
		return 0, nil, fmt.Errorf("create a CSR for the add-on: %w", err)
	}
	r.setPending(reg.secret, &pendingCSR{addon: reg.addon, name: csr.Name, hash: reg.hash, keyPEM: keyPEM, created: time.Now()})
	logger.Info("Asked the hub for the add-on's certificate", "csr", csr.Name, "signer", reg.signer, "reason", why)
	return secretCheckInterval, nil, nil
}

// store writes the issued certificate of p into reg's Secret.
func (r *runner) store(ctx context.Context, reg *registration, p *pendingCSR, certPEM, kubeconfig []byte) (time.Duration, *metav1.Condition, error) {
	cert, err := checkPair(certPEM, p.keyPEM, reg)
	if err != nil {
		r.setPending(reg.secret, nil)
		return 0, failed("the hub issued a certificate that cannot be used: " + err.Error()), err
	}
	data := map[string][]byte{keyCert: certPEM, keyKey: p.keyPEM, keyClusterName: []byte(r.cfg.ClusterName)}
	if reg.kubeClient() {
		data[keyKubeconfig] = kubeconfig
	}
	if err := r.writeSecret(ctx, reg, data); err != nil {
		return 0, nil, err
	}
	r.setPending(reg.secret, nil)
	klog.FromContext(ctx).Info("Stored the add-on's certificate", "secret", reg.secret.String(), "notAfter", cert.NotAfter)
	return time.Until(rotationDeadline(cert, r.cfg.RenewBefore)) + time.Second, rotated(cert), nil
}

// rotated is the ClusterCertificateRotated condition of a Secret holding
// cert.
func rotated(cert *x509.Certificate) *metav1.Condition {
	return &metav1.Condition{
		Type: addon.ConditionClusterCertificateRotated, Status: metav1.ConditionTrue, Reason: addon.ReasonClientCertificateUpdated,
		Message: fmt.Sprintf("client certificate rotated starting from %s to %s", cert.NotBefore.UTC().Format(time.RFC3339), cert.NotAfter.UTC().Format(time.RFC3339)),
	}
}

func failed(msg string) *metav1.Condition {
	return &metav1.Condition{Type: addon.ConditionClusterCertificateRotated, Status: metav1.ConditionFalse, Reason: addon.ReasonClientCertificateUpdateFailed, Message: msg}
}

func (r *runner) setPending(k secretKey, p *pendingCSR) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if p == nil {
		delete(r.pending, k)
	} else {
		r.pending[k] = p
	}
}

// forget drops what is kept in memory of add-on a.
func (r *runner) forget(a string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for k, p := range r.pending {
		if p.addon == a {
			delete(r.pending, k)
		}
	}
}

// countCSRs counts the CSRs of the cluster's add-on a, in any state.
func (r *runner) countCSRs(a string) int {
	list := &certificatesv1.CertificateSigningRequestList{}
	if err := r.hubCache.List(context.Background(), list, client.MatchingLabels{addon.ClusterNameLabel: r.cfg.ClusterName, addon.AddOnNameLabel: a}); err != nil {
		return 0
	}
	return len(list.Items)
}

// writeSecret creates or replaces reg's Secret with data.
func (r *runner) writeSecret(ctx context.Context, reg *registration, data map[string][]byte) error {
	secrets := r.spoke.CoreV1().Secrets(reg.secret.Namespace)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		s, err := secrets.Get(ctx, reg.secret.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			if err := r.record(ctx, reg.secret.Namespace); err != nil {
				return err
			}
			s = &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: reg.secret.Name, Namespace: reg.secret.Namespace}, Type: corev1.SecretTypeOpaque}
			r.labelSecret(s, reg)
			s.Data = data
			_, err = secrets.Create(ctx, s, metav1.CreateOptions{})
			return err
		}
		if err != nil {
			return err
		}
		r.labelSecret(s, reg)
		s.Data = data
		_, err = secrets.Update(ctx, s, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return fmt.Errorf("write Secret %s: %w", reg.secret, err)
	}
	return nil
}

func (r *runner) labelSecret(s *corev1.Secret, reg *registration) {
	if s.Labels == nil {
		s.Labels = map[string]string{}
	}
	if s.Annotations == nil {
		s.Annotations = map[string]string{}
	}
	s.Labels[addon.ClusterNameLabel] = r.cfg.ClusterName
	s.Labels[addon.AddOnNameLabel] = reg.addon
	s.Annotations[hashAnnotation] = reg.hash
}

// removeLeftovers deletes the Secrets this agent wrote for add-on a that
// none of regs holds: those of removed registrations or of another
// install namespace, and all of them once the add-on is gone (regs nil).
// It lists them only when regs changed since it last did.
func (r *runner) removeLeftovers(ctx context.Context, a string, regs []registration) error {
	var keep []secretKey
	for _, reg := range regs {
		keep = append(keep, reg.secret)
	}
	sig := fmt.Sprint(keep)
	r.mu.Lock()
	last, seen := r.swept[a]
	r.mu.Unlock()
	if seen && last == sig {
		return nil
	}
	secrets, _, err := r.listSecrets(ctx, labels.Set{addon.ClusterNameLabel: r.cfg.ClusterName, addon.AddOnNameLabel: a}.AsSelector())
	if err != nil {
		return fmt.Errorf("list the add-on's Secrets: %w", err)
	}
	for _, s := range secrets {
		if slices.Contains(keep, secretKey{Namespace: s.Namespace, Name: s.Name}) {
			continue
		}
		if err := r.spoke.CoreV1().Secrets(s.Namespace).Delete(ctx, s.Name, metav1.DeleteOptions{}); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("delete Secret %s/%s: %w", s.Namespace, s.Name, err)
		}
		klog.FromContext(ctx).Info("Deleted a Secret the add-on no longer has", "secret", klog.KObj(&s))
	}
	r.mu.Lock()
	if regs == nil {
		delete(r.swept, a)
	} else {
		r.swept[a] = sig
	}
	r.mu.Unlock()
	return nil
}

// sweep deletes the Secrets of add-ons whose ManagedClusterAddOn went
// while the agent was away, and forgets the recorded namespaces that hold
// none and that no add-on uses.
func (r *runner) sweep(ctx context.Context) error {
	own, _ := labels.NewRequirement(addon.ClusterNameLabel, selection.Equals, []string{r.cfg.ClusterName})
	has, _ := labels.NewRequirement(addon.AddOnNameLabel, selection.Exists, nil)
	secrets, empty, err := r.listSecrets(ctx, labels.NewSelector().Add(*own, *has))
	if err != nil {
		return err
	}
	if err := r.forgetNamespaces(ctx, empty); err != nil {
		return err
	}
	gone := map[string]bool{}
	for _, s := range secrets {
		gone[s.Labels[addon.AddOnNameLabel]] = true
	}
	for a := range gone {
		err := r.hub.Get(ctx, client.ObjectKey{Namespace: r.cfg.ClusterName, Name: a}, &addonv1alpha1.ManagedClusterAddOn{})
		if apierrors.IsNotFound(err) {
			r.queue.Add(a)
		}
	}
	return nil
}

// installable says whether an add-on may be installed in namespace ns,
// and if not, why, and how to change that.
func (r *runner) installable(ns string) string {
	if len(r.cfg.InstallNamespaces) == 0 || slices.Contains(r.cfg.InstallNamespaces, ns) {
		return ""
	}
	return fmt.Sprintf("the add-on's install namespace %s is none of the agent's add-on namespaces %v: add it to the agent chart's addons.installNamespaces (flag --addon-install-namespaces), or install the add-on in one of those", ns, r.cfg.InstallNamespaces)
}

// forbiddenMessage says what to grant for an add-on installed in ns, where
// the agent may not read Secrets.
func forbiddenMessage(ns string) string {
	return fmt.Sprintf("the agent may not read Secrets in the add-on's install namespace %s: grant its identity get, list, create, update and delete on secrets and get on leases there with a Role (as the agent chart does for each of addons.installNamespaces), or install the add-on in a namespace it may write", ns)
}

// kubeconfig is the kubeconfig reg's Secret holds, nil for custom signers.
func (r *runner) kubeconfig(reg *registration) ([]byte, error) {
	if !reg.kubeClient() {
		return nil, nil
	}
	return kubeconfig(r.hubCluster)
}
