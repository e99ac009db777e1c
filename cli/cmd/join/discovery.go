package join

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"strings"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	certutil "k8s.io/client-go/util/cert"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"
	"k8s.io/cluster-bootstrap/token/jws"

	"github.com/flotilla-io/flotilla/cli/cmdutil"
	"github.com/flotilla-io/flotilla/cli/cmdutil/handshake"
	"github.com/flotilla-io/flotilla/internal/version"
)

// Timeouts of talking to a hub that may not be there.
const (
	// hubRequestTimeout bounds each request join sends to the hub.
	hubRequestTimeout = 15 * time.Second
	// signatureWait is how long join waits for the hub's bootstrap signer
	// to sign cluster-info for a token (it takes well under a second).
	signatureWait = 10 * time.Second
)

// hubContact is what join knows about the hub, for messages.
type hubContact struct {
	url    string
	caFile string
	// route, when the URL's host is a Docker container's name that does
	// not resolve here, is how this machine reaches it.
	route *containerRoute
	// clusterInfoServer is the address cluster-info publishes, when read.
	clusterInfoServer string
}

func (h *hubContact) where() string { return "the hub at " + h.url }

// readCAFile reads --ca-file.
func readCAFile(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--ca-file: %w", err)
	}
	if _, err := certutil.ParseCertsPEM(data); err != nil {
		return nil, fmt.Errorf("--ca-file %s holds no PEM certificate: %w\nPass the hub's CA certificate (the certificate-authority-data of its kubeconfig, base64-decoded)", path, err)
	}
	return data, nil
}

// discoverCA learns the hub's CA from kube-public/cluster-info, read without
// credentials and without verifying TLS, and trusts it only if the hub signed
// it with the join token: only the hub and the token's holder know the
// token secret.
func (h *hubContact) discoverCA(ctx context.Context, tok handshake.BootstrapToken, prog *cmdutil.Progress) ([]byte, error) {
	anonymous, err := kubernetes.NewForConfig(h.config(&rest.Config{
		Host:            h.url,
		TLSClientConfig: rest.TLSClientConfig{Insecure: true},
		Timeout:         hubRequestTimeout,
		UserAgent:       "flotilla/" + version.Version,
	}))
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(signatureWait)
	for {
		cm, err := anonymous.CoreV1().ConfigMaps(metav1.NamespacePublic).Get(ctx, bootstrapapi.ConfigMapClusterInfo, metav1.GetOptions{})
		if err != nil {
			return nil, h.explainClusterInfo(err)
		}
		ca, server, err := verifyClusterInfo(cm, tok)
		h.clusterInfoServer = server
		var unsigned *unsignedError
		if !errors.As(err, &unsigned) {
			if err != nil {
				return nil, fmt.Errorf("%s: %w", h.where(), err)
			}
			return ca, nil
		}
		if time.Now().After(deadline) {
			if unsigned.others > 0 {
				return nil, fmt.Errorf("%s knows no join token with id %q (it signs cluster-info for other tokens only): --hub-token is wrong, has expired or was deleted\nGet a valid one by running `flotilla get token` on the hub", h.where(), tok.ID)
			}
			return nil, fmt.Errorf("%s has not signed kube-public/cluster-info for any token, so its CA cannot be verified with --hub-token (does the hub run the bootstrapsigner controller?)\nPass the hub's CA certificate with --ca-file", h.where())
		}
		prog.Report("Waiting for %s to sign cluster-info for token %s...", h.where(), tok.ID)
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(cmdutil.PollInterval / 2):
		}
	}
}

// config dials through h.route, if any.
func (h *hubContact) config(cfg *rest.Config) *rest.Config {
	if h.route != nil {
		cfg.Dial = h.route.dial
	}
	return cfg
}

// unreachableHint says what to do when the hub cannot be reached: when its
// host does not resolve here, that a container's name resolves only on
// its networks.
func (h *hubContact) unreachableHint(err error) string {
	var dnsErr *net.DNSError
	if !errors.As(err, &dnsErr) || h.route != nil {
		return "Check --hub-apiserver, and that this machine can connect to the hub"
	}
	return fmt.Sprintf("%s does not resolve on this machine. If it is a Docker container's name, start the container (join then reaches it through docker), "+
		"or run join on the container's network, where the name resolves: docker run --rm --network NETWORK %s join ...", dnsErr.Name, version.Image("flotilla"))
}

func (h *hubContact) explainClusterInfo(err error) error {
	switch {
	case cmdutil.Classify(err) == cmdutil.FailureUnreachable:
		return fmt.Errorf("cannot reach %s: %w\n%s", h.where(), err, h.unreachableHint(err))
	case apierrors.IsUnauthorized(err), apierrors.IsForbidden(err):
		return fmt.Errorf("%s does not let anonymous clients read kube-public/cluster-info, so its CA cannot be learned: %w\nPass the hub's CA certificate with --ca-file", h.where(), err)
	case apierrors.IsNotFound(err):
		return fmt.Errorf("%s publishes no kube-public/cluster-info: run `flotilla init` on the hub, or pass the hub's CA certificate with --ca-file", h.where())
	}
	return fmt.Errorf("read kube-public/cluster-info from %s: %w\nCheck that --hub-apiserver is the hub's API server", h.where(), err)
}

// unsignedError: cluster-info has no signature for the token (yet).
type unsignedError struct {
	id string
	// others counts the signatures for other tokens.
	others int
}

func (e *unsignedError) Error() string {
	return fmt.Sprintf("cluster-info is not signed for token %s", e.id)
}

// verifyClusterInfo checks the signature of cluster-info for tok and returns
// the CA and the server address it publishes.
func verifyClusterInfo(cm *corev1.ConfigMap, tok handshake.BootstrapToken) (ca []byte, server string, err error) {
	content, ok := cm.Data[bootstrapapi.KubeConfigKey]
	if !ok || content == "" {
		return nil, "", fmt.Errorf("kube-public/cluster-info holds no %q", bootstrapapi.KubeConfigKey)
	}
	sig, ok := cm.Data[bootstrapapi.JWSSignatureKeyPrefix+tok.ID]
	if !ok {
		others := 0
		for k := range cm.Data {
			if strings.HasPrefix(k, bootstrapapi.JWSSignatureKeyPrefix) {
				others++
			}
		}
		return nil, "", &unsignedError{id: tok.ID, others: others}
	}
	if !jws.DetachedTokenIsValid(sig, content, tok.ID, tok.Secret) {
		return nil, "", fmt.Errorf("the signature of kube-public/cluster-info for token %s does not match --hub-token: the token secret is wrong (or something between here and the hub altered cluster-info)\nGet a valid token by running `flotilla get token` on the hub", tok.ID)
	}
	kc, err := clientcmd.Load([]byte(content))
	if err != nil {
		return nil, "", fmt.Errorf("kube-public/cluster-info holds no valid kubeconfig: %w", err)
	}
	names := make([]string, 0, len(kc.Clusters))
	for name := range kc.Clusters {
		names = append(names, name)
	}
	if len(names) != 1 {
		return nil, "", fmt.Errorf("kube-public/cluster-info names %d clusters, not one", len(names))
	}
	cluster := kc.Clusters[names[0]]
	if len(cluster.CertificateAuthorityData) == 0 {
		return nil, cluster.Server, fmt.Errorf("kube-public/cluster-info publishes no CA: pass the hub's CA certificate with --ca-file")
	}
	return cluster.CertificateAuthorityData, cluster.Server, nil
}

// checkToken authenticates to the hub with the token, verifying the hub
// against ca, and returns who the token is.
func (h *hubContact) checkToken(ctx context.Context, ca []byte, tok handshake.BootstrapToken) (authenticationv1.UserInfo, error) {
	kube, err := kubernetes.NewForConfig(h.config(&rest.Config{
		Host:            h.url,
		TLSClientConfig: rest.TLSClientConfig{CAData: ca},
		BearerToken:     tok.String(),
		Timeout:         hubRequestTimeout,
		UserAgent:       "flotilla/" + version.Version,
	}))
	if err != nil {
		return authenticationv1.UserInfo{}, err
	}
	review, err := kube.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		return authenticationv1.UserInfo{}, h.explainTokenCheck(err)
	}
	user := review.Status.UserInfo
	if !slices.Contains(user.Groups, handshake.BootstrapGroup) {
		return user, fmt.Errorf("--hub-token authenticates to %s as %q in groups %v, not as a join token (group %s)\nGet a join token by running `flotilla get token` on the hub", h.where(), user.Username, user.Groups, handshake.BootstrapGroup)
	}
	return user, nil
}

func (h *hubContact) explainTokenCheck(err error) error {
	switch cmdutil.Classify(err) {
	case cmdutil.FailureUnreachable:
		return fmt.Errorf("cannot reach %s: %w\n%s", h.where(), err, h.unreachableHint(err))
	case cmdutil.FailureUntrusted:
		if h.caFile != "" {
			return fmt.Errorf("%s presented a certificate that the CA in --ca-file %s did not sign: %w\nCheck --ca-file, or leave it out to learn the CA from the hub", h.where(), h.caFile, err)
		}
		return fmt.Errorf("%s presented a certificate that the CA in its cluster-info did not sign: %w\nCheck that --hub-apiserver is the address of the hub that issued the token", h.where(), err)
	case cmdutil.FailureWrongHost:
		hint := "Use an address of the hub that its certificate names"
		if h.clusterInfoServer != "" {
			hint += fmt.Sprintf(" (the hub publishes %s)", h.clusterInfoServer)
		}
		return fmt.Errorf("the certificate of %s is not valid for that address: %w\n%s", h.where(), err, hint)
	case cmdutil.FailureUnauthorized:
		return fmt.Errorf("%s rejected --hub-token: it is wrong, has expired or was deleted\nGet a valid one by running `flotilla get token` on the hub", h.where())
	}
	return fmt.Errorf("check --hub-token with %s: %w", h.where(), err)
}

// BootstrapKubeconfig is the kubeconfig an agent joins the hub with: the
// hub's URL and CA, and a bootstrap token.
func BootstrapKubeconfig(hubURL string, ca []byte, token string) ([]byte, error) {
	kc := clientcmdapi.NewConfig()
	kc.Clusters["hub"] = &clientcmdapi.Cluster{Server: hubURL, CertificateAuthorityData: ca}
	kc.AuthInfos["bootstrap"] = &clientcmdapi.AuthInfo{Token: token}
	kc.Contexts["bootstrap"] = &clientcmdapi.Context{Cluster: "hub", AuthInfo: "bootstrap"}
	kc.CurrentContext = "bootstrap"
	return clientcmd.Write(*kc)
}
