package registration

import (
	"bytes"
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	clientretry "k8s.io/client-go/util/retry"
)

// Names on the spoke that the agent and the CLI share.
const (
	// BootstrapSecretName holds the bootstrap kubeconfig (key "kubeconfig").
	BootstrapSecretName = "bootstrap-hub-kubeconfig"
	// HubKubeconfigSecretName holds the agent's own hub credentials.
	HubKubeconfigSecretName = "hub-kubeconfig-secret"
)

// Keys of the hub kubeconfig secret. The kubeconfig refers to the key and
// certificate by file name, so that the secret mounted as a directory is a
// working kubeconfig that survives rotations unchanged.
const (
	KeyFile         = "tls.key"
	CertFile        = "tls.crt"
	KubeconfigFile  = "kubeconfig"
	ClusterNameFile = "cluster-name"
	AgentNameFile   = "agent-name"
)

// Credentials are what the agent authenticates to the hub with.
type Credentials struct {
	// ClusterName and AgentID name the agent; its certificate's user is
	// identity.AgentUser(ClusterName, AgentID).
	ClusterName, AgentID string
	// Hub is how to reach the hub: server, CA, TLS server name, proxy.
	Hub *clientcmdapi.Cluster
	// KeyPEM and CertPEM are the client key and certificate.
	KeyPEM, CertPEM []byte
	// Cert is CertPEM parsed.
	Cert *x509.Certificate
}

// newCredentials checks certPEM against keyPEM and the agent's name.
func newCredentials(c, id string, hub *clientcmdapi.Cluster, keyPEM, certPEM []byte) (*Credentials, error) {
	cert, err := checkCertificate(certPEM, keyPEM, c, id)
	if err != nil {
		return nil, err
	}
	return &Credentials{ClusterName: c, AgentID: id, Hub: hub, KeyPEM: keyPEM, CertPEM: certPEM, Cert: cert}, nil
}

// kubeconfig is the stored kubeconfig: the hub, and a user whose key and
// certificate are the files beside it.
func (c *Credentials) kubeconfig() ([]byte, error) {
	kc := clientcmdapi.NewConfig()
	kc.Clusters["hub"] = c.Hub.DeepCopy()
	kc.AuthInfos["agent"] = &clientcmdapi.AuthInfo{ClientCertificate: CertFile, ClientKey: KeyFile}
	kc.Contexts["hub"] = &clientcmdapi.Context{Cluster: "hub", AuthInfo: "agent"}
	kc.CurrentContext = "hub"
	return clientcmd.Write(*kc)
}

// usable says why c cannot be used at time now by agent id of cluster name
// against hub, or nil. A nil hub (no bootstrap kubeconfig to compare with)
// accepts any.
func (c *Credentials) usable(now time.Time, name, id string, hub *clientcmdapi.Cluster) error {
	switch {
	case c.ClusterName != name:
		return fmt.Errorf("they belong to cluster %q", c.ClusterName)
	case c.AgentID != id:
		return fmt.Errorf("they belong to agent %q", c.AgentID)
	case !now.Before(c.Cert.NotAfter):
		return fmt.Errorf("the client certificate expired at %s", c.Cert.NotAfter.UTC().Format(time.RFC3339))
	case hub != nil && hub.Server != c.Hub.Server:
		return fmt.Errorf("the bootstrap kubeconfig now names hub %s, not %s", hub.Server, c.Hub.Server)
	case hub != nil && !bytes.Equal(hub.CertificateAuthorityData, c.Hub.CertificateAuthorityData):
		return errors.New("the bootstrap kubeconfig now names another hub CA")
	}
	return nil
}

// storedSecret is what the hub kubeconfig secret holds; any part may be missing.
type storedSecret struct {
	clusterName, agentID string
	creds                *Credentials
	// invalid says why creds is nil although the secret holds a certificate.
	invalid error
}

// readSecret reads the hub kubeconfig secret; a missing one reads as empty.
func readSecret(ctx context.Context, spoke kubernetes.Interface, ns string) (storedSecret, error) {
	s, err := spoke.CoreV1().Secrets(ns).Get(ctx, HubKubeconfigSecretName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return storedSecret{}, nil
	}
	if err != nil {
		return storedSecret{}, fmt.Errorf("read Secret %s/%s: %w", ns, HubKubeconfigSecretName, err)
	}
	return parseSecret(s.Data), nil
}

func parseSecret(data map[string][]byte) storedSecret {
	st := storedSecret{clusterName: string(data[ClusterNameFile]), agentID: string(data[AgentNameFile])}
	if len(data[CertFile]) == 0 {
		return st
	}
	kc, err := clientcmd.Load(data[KubeconfigFile])
	if err != nil {
		st.invalid = fmt.Errorf("its kubeconfig does not parse: %w", err)
		return st
	}
	hub := currentCluster(kc)
	if hub == nil {
		st.invalid = errors.New("its kubeconfig names no hub")
		return st
	}
	st.creds, st.invalid = newCredentials(st.clusterName, st.agentID, hub, data[KeyFile], data[CertFile])
	return st
}

// writeSecret replaces what the hub kubeconfig secret holds with data.
func writeSecret(ctx context.Context, spoke kubernetes.Interface, ns string, data map[string][]byte) error {
	secrets := spoke.CoreV1().Secrets(ns)
	err := clientretry.RetryOnConflict(clientretry.DefaultRetry, func() error {
		s, err := secrets.Get(ctx, HubKubeconfigSecretName, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			_, err = secrets.Create(ctx, &corev1.Secret{
				ObjectMeta: metav1.ObjectMeta{Name: HubKubeconfigSecretName, Namespace: ns},
				Type:       corev1.SecretTypeOpaque,
				Data:       data,
			}, metav1.CreateOptions{})
			return err
		}
		if err != nil {
			return err
		}
		s.Data = data
		_, err = secrets.Update(ctx, s, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return fmt.Errorf("write Secret %s/%s: %w", ns, HubKubeconfigSecretName, err)
	}
	return nil
}

// storeCredentials writes c into the hub kubeconfig secret.
func storeCredentials(ctx context.Context, spoke kubernetes.Interface, ns string, c *Credentials) error {
	kc, err := c.kubeconfig()
	if err != nil {
		return err
	}
	return writeSecret(ctx, spoke, ns, map[string][]byte{
		KeyFile:         c.KeyPEM,
		CertFile:        c.CertPEM,
		KubeconfigFile:  kc,
		ClusterNameFile: []byte(c.ClusterName),
		AgentNameFile:   []byte(c.AgentID),
	})
}

// currentCluster is the cluster of kc's current context, or nil.
func currentCluster(kc *clientcmdapi.Config) *clientcmdapi.Cluster {
	ctx, ok := kc.Contexts[kc.CurrentContext]
	if !ok {
		return nil
	}
	cluster, ok := kc.Clusters[ctx.Cluster]
	if !ok || cluster.Server == "" {
		return nil
	}
	return cluster
}

// HeldCredentials returns the client certificate of the hub credentials
// that the agent in namespace ns of spoke holds for cluster, if they are
// usable at now; otherwise an error says why not. The CLI asks before it
// needs a join token: an agent that holds usable credentials starts and
// reconnects with them, without the token.
func HeldCredentials(ctx context.Context, spoke kubernetes.Interface, ns, cluster string, now time.Time) (*Credentials, error) {
	st, err := readSecret(ctx, spoke, ns)
	switch {
	case err != nil:
		return nil, err
	case st.invalid != nil:
		return nil, fmt.Errorf("Secret %s/%s holds credentials that are not usable: %w", ns, HubKubeconfigSecretName, st.invalid)
	case st.creds == nil:
		return nil, fmt.Errorf("Secret %s/%s holds no hub credentials", ns, HubKubeconfigSecretName)
	}
	if err := st.creds.usable(now, cluster, st.agentID, nil); err != nil {
		return nil, fmt.Errorf("the hub credentials in Secret %s/%s are not usable: %w", ns, HubKubeconfigSecretName, err)
	}
	return st.creds, nil
}
