package registration

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// bootstrap is a loaded bootstrap kubeconfig.
type bootstrap struct {
	// config authenticates as the bootstrap identity.
	config *rest.Config
	// hub is the hub it names, with the CA inline.
	hub *clientcmdapi.Cluster
	// used is set when it holds no credentials: the agent removed them
	// after joining (removeBootstrapCredentials).
	used bool
}

// errNoBootstrap means there is no usable bootstrap kubeconfig: it is
// missing or malformed, as opposed to unreadable for now.
var errNoBootstrap = errors.New("no usable bootstrap kubeconfig")

// loadBootstrap reads the bootstrap kubeconfig: the file cfg names, or the
// bootstrap secret in the agent namespace.
func (r *Registration) loadBootstrap(ctx context.Context) (*bootstrap, error) {
	var (
		kc     *clientcmdapi.Config
		source string
	)
	if path := r.cfg.BootstrapKubeconfig; path != "" {
		source = path
		loaded, err := (&clientcmd.ClientConfigLoadingRules{ExplicitPath: path}).Load()
		if err != nil {
			return nil, fmt.Errorf("%w: %w", errNoBootstrap, err)
		}
		// Certificate and token files referred to by path are read now,
		// relative to the kubeconfig's directory.
		if err := clientcmdapi.FlattenConfig(loaded); err != nil {
			return nil, fmt.Errorf("%w: %s: %w", errNoBootstrap, path, err)
		}
		kc = loaded
	} else {
		source = fmt.Sprintf("Secret %s/%s", r.cfg.Namespace, BootstrapSecretName)
		s, err := r.cfg.Spoke.CoreV1().Secrets(r.cfg.Namespace).Get(ctx, BootstrapSecretName, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("%w: %s does not exist (flotilla join creates it)", errNoBootstrap, source)
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", source, err)
		}
		if kc, err = clientcmd.Load(s.Data[KubeconfigFile]); err != nil {
			return nil, fmt.Errorf("%w: %s: key %q is not a kubeconfig: %w", errNoBootstrap, source, KubeconfigFile, err)
		}
	}
	hub := currentCluster(kc)
	if hub == nil {
		return nil, fmt.Errorf("%w: %s: its current context names no cluster with a server", errNoBootstrap, source)
	}
	if hub.InsecureSkipTLSVerify {
		// The credentials the agent receives would go to whoever answers.
		return nil, fmt.Errorf("%w: %s: insecure-skip-tls-verify is not allowed: give the hub's CA as certificate-authority-data", errNoBootstrap, source)
	}
	config, err := clientcmd.NewDefaultClientConfig(*kc, nil).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", errNoBootstrap, source, err)
	}
	used := true
	if ctx, ok := kc.Contexts[kc.CurrentContext]; ok && hasCredentials(kc.AuthInfos[ctx.AuthInfo]) {
		used = false
	}
	config.UserAgent = userAgent
	if d := newHubDialer(hub.Server, r.cfg.HubServers); d != nil {
		config.Dial = d.DialContext
	}
	return &bootstrap{config: config, hub: hub, used: used}, nil
}
