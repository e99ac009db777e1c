package registration

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	clientretry "k8s.io/client-go/util/retry"
	"k8s.io/klog/v2"
)

// BootstrapCredentialsRemovedAnnotation on the bootstrap kubeconfig Secret
// says when the agent removed the join credentials from it.
const BootstrapCredentialsRemovedAnnotation = "registration.flotilla.io/join-credentials-removed"

// bootstrapUsedHelp says why a bootstrap kubeconfig holds no credentials,
// and what to do.
const bootstrapUsedHelp = "its join token was removed once the agent held a certificate of its own; " +
	"to join again, get a new token on the hub (flotilla get token, or flotilla init --cluster-name <cluster>) and run flotilla join with it"

// removeBootstrapCredentials removes the join credentials (a token, or
// whatever else authenticates) from the bootstrap kubeconfig Secret, once
// the agent holds a certificate of its own. A join token is valid for
// many joins and for any cluster name; left on every spoke, it was a key
// to the hub for whoever could read one spoke's Secrets. The Secret itself
// stays, with the hub's address and CA, as OCM's agents keep it: the agent
// still reads it to see whether the cluster moved to another hub or CA.
// A kubeconfig given as a file (Config.BootstrapKubeconfig) is the
// operator's, and left alone.
func (r *Registration) removeBootstrapCredentials(ctx context.Context) error {
	if r.cfg.BootstrapKubeconfig != "" {
		return nil
	}
	secrets := r.cfg.Spoke.CoreV1().Secrets(r.cfg.Namespace)
	removed := false
	err := clientretry.RetryOnConflict(clientretry.DefaultRetry, func() error {
		removed = false
		s, err := secrets.Get(ctx, BootstrapSecretName, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		kc, err := clientcmd.Load(s.Data[KubeconfigFile])
		if err != nil || !stripCredentials(kc) {
			// Not a kubeconfig: loadBootstrap says so when it is needed.
			return nil
		}
		data, err := clientcmd.Write(*kc)
		if err != nil {
			return err
		}
		s.Data[KubeconfigFile] = data
		if s.Annotations == nil {
			s.Annotations = map[string]string{}
		}
		s.Annotations[BootstrapCredentialsRemovedAnnotation] = time.Now().UTC().Format(time.RFC3339)
		if _, err := secrets.Update(ctx, s, metav1.UpdateOptions{}); err != nil {
			return err
		}
		removed = true
		return nil
	})
	if err != nil {
		return fmt.Errorf("remove the join credentials from Secret %s/%s: %w", r.cfg.Namespace, BootstrapSecretName, err)
	}
	if removed {
		klog.FromContext(ctx).Info("Removed the join token from the bootstrap kubeconfig: the agent holds a certificate of its own",
			"secret", klog.KRef(r.cfg.Namespace, BootstrapSecretName), "cluster", r.cfg.ClusterName)
	}
	return nil
}

// stripCredentials empties every user of kc, and says whether any had
// credentials.
func stripCredentials(kc *clientcmdapi.Config) bool {
	changed := false
	for name, u := range kc.AuthInfos {
		if hasCredentials(u) {
			kc.AuthInfos[name] = clientcmdapi.NewAuthInfo()
			changed = true
		}
	}
	return changed
}

// hasCredentials says whether u authenticates in any way.
func hasCredentials(u *clientcmdapi.AuthInfo) bool {
	return u != nil && (u.Token != "" || u.TokenFile != "" || len(u.ClientCertificateData) > 0 || u.ClientCertificate != "" ||
		len(u.ClientKeyData) > 0 || u.ClientKey != "" || u.Username != "" || u.Password != "" || u.Exec != nil || u.AuthProvider != nil)
}
