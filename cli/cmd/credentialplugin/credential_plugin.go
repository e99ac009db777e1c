package credentialplugin

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authentication/serviceaccount"
	"k8s.io/client-go/kubernetes"
	clientauthv1 "k8s.io/client-go/pkg/apis/clientauthentication/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/flotilla-io/flotilla/cli/cmdutil"
	"github.com/flotilla-io/flotilla/internal/version"
)

// execInfoEnv is where a kubeconfig exec plugin finds its ExecCredential
// request, with the cluster when provideClusterInfo is true.
const execInfoEnv = "KUBERNETES_EXEC_INFO"

// execConfig is the flotilla access provider's extension content, as the
// hub writes it into each ClusterProfile (hub/inventory.ExecConfig).
type execConfig struct {
	ClusterName string `json:"clusterName"`
	Hub         string `json:"hub"`
}

type credentialPluginOptions struct {
	*cmdutil.Globals
	audiences []string
	lifetime  time.Duration
	// inCluster is rest.InClusterConfig, replaced in tests.
	inCluster func() (*rest.Config, error)
}

// NewCommand returns `flotilla credential-plugin`.
func NewCommand(g *cmdutil.Globals) *cobra.Command {
	o := &credentialPluginOptions{Globals: g, inCluster: rest.InClusterConfig}
	cmd := &cobra.Command{
		Use:   "credential-plugin",
		Short: "Kubeconfig exec plugin: a hub credential for reaching clusters through the hub (the ClusterProfile access provider \"flotilla\")",
		Long: `A kubeconfig exec plugin (client.authentication.k8s.io/v1) for the
"flotilla" access provider of the hub's ClusterProfiles. A consumer of the
SIG-Multicluster inventory (MultiKueue, Argo CD, any client that reads
ClusterProfiles) runs it, as kubectl runs exec plugins, to connect to a
cluster's door in the hub's cluster proxy. It prints an ExecCredential
holding a credential of the consumer's own hub identity: the hub's RBAC
(create on managedclusters/proxy named after the cluster) then decides
which clusters the consumer may reach. Nothing per cluster is needed.

It reads KUBERNETES_EXEC_INFO (set it up with provideClusterInfo: true) for
the cluster it is asked about, and finds the consumer's hub identity in
--kubeconfig when given, else in the pod it runs in (in-cluster
ServiceAccount). $KUBECONFIG and ~/.kube/config are not read: they may be
the very kubeconfig that runs this plugin.

  - A ServiceAccount (its token in-cluster, or a kubeconfig with a
    ServiceAccount's token): a new bound token of that ServiceAccount from
    the hub's TokenRequest API, for --audience (default: the hub API
    server's own audiences) and --token-lifetime (default 10m, the
    shortest the API server issues). The ServiceAccount needs hub RBAC to
    create serviceaccounts/token for its own name.
  - A kubeconfig with a client certificate: that certificate and key,
    until the certificate expires.
  - A kubeconfig with another bearer token: that token, as it is.

client-go (kubectl among its users) keeps the credential until its
expirationTimestamp and runs the plugin again after.`,
		Example: `  # What a consumer's kubeconfig holds for a cluster (from its ClusterProfile):
  users:
  - name: flotilla
    user:
      exec:
        apiVersion: client.authentication.k8s.io/v1
        command: flotilla
        args: [credential-plugin]
        provideClusterInfo: true
        interactiveMode: Never

  # A consumer outside the hub cluster, with a kubeconfig of the hub:
  args: [credential-plugin, --kubeconfig, /etc/consumer/hub.kubeconfig, --token-lifetime, 30m]`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.run(cmd.Context())
		},
	}
	f := cmd.Flags()
	f.StringSliceVar(&o.audiences, "audience", nil, "audience of the ServiceAccount token asked for, repeated or comma separated (default: the hub API server's own)")
	f.DurationVar(&o.lifetime, "token-lifetime", 10*time.Minute, "lifetime of the ServiceAccount token asked for (at least 10m)")
	return cmd
}

func (o *credentialPluginOptions) run(ctx context.Context) error {
	req, cfg, err := readExecInfo(os.Getenv(execInfoEnv))
	if err != nil {
		return err
	}
	what := "the hub"
	if cfg.ClusterName != "" {
		what = "cluster " + cfg.ClusterName + " through the hub"
	}
	if o.lifetime < 10*time.Minute {
		return fmt.Errorf("--token-lifetime %s: the API server issues tokens of 10m or more", o.lifetime)
	}
	hub, err := o.identity()
	if err != nil {
		return fmt.Errorf("cannot reach %s: %w", what, err)
	}
	status, err := o.credential(ctx, hub)
	if err != nil {
		return fmt.Errorf("cannot reach %s: %w", what, err)
	}
	out := clientauthv1.ExecCredential{TypeMeta: req.TypeMeta, Status: status}
	data, err := json.Marshal(out)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(o.Streams.Out, string(data))
	return err
}

// readExecInfo parses KUBERNETES_EXEC_INFO; without it, the plugin still
// answers in client.authentication.k8s.io/v1.
func readExecInfo(info string) (clientauthv1.ExecCredential, execConfig, error) {
	req := clientauthv1.ExecCredential{TypeMeta: metav1.TypeMeta{APIVersion: clientauthv1.SchemeGroupVersion.String(), Kind: "ExecCredential"}}
	var cfg execConfig
	if info == "" {
		return req, cfg, nil
	}
	if err := json.Unmarshal([]byte(info), &req); err != nil {
		return req, cfg, fmt.Errorf("%s is not an ExecCredential: %w", execInfoEnv, err)
	}
	if req.APIVersion != clientauthv1.SchemeGroupVersion.String() {
		return req, cfg, fmt.Errorf("%s asks for %s; this plugin speaks %s (set apiVersion in the kubeconfig's exec)", execInfoEnv, req.APIVersion, clientauthv1.SchemeGroupVersion)
	}
	if req.Spec.Cluster != nil && len(req.Spec.Cluster.Config.Raw) > 0 {
		if err := json.Unmarshal(req.Spec.Cluster.Config.Raw, &cfg); err != nil {
			return req, cfg, fmt.Errorf("%s: spec.cluster.config is not the flotilla access provider's: %w", execInfoEnv, err)
		}
	}
	req.Spec = clientauthv1.ExecCredentialSpec{}
	return req, cfg, nil
}

// identity is the consumer's hub client configuration: --kubeconfig when
// given, else the pod's ServiceAccount.
func (o *credentialPluginOptions) identity() (*rest.Config, error) {
	if o.Kubeconfig == "" {
		cfg, err := o.inCluster()
		if err != nil {
			return nil, fmt.Errorf("not in a pod (%w) and no --kubeconfig: give the consumer's hub kubeconfig with --kubeconfig", err)
		}
		return cfg, nil
	}
	rules := &clientcmd.ClientConfigLoadingRules{ExplicitPath: o.Kubeconfig}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: o.Context}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("load --kubeconfig %s: %w", o.Kubeconfig, err)
	}
	if cfg.ExecProvider != nil && slices.Contains(cfg.ExecProvider.Args, "credential-plugin") {
		return nil, fmt.Errorf("--kubeconfig %s runs this plugin itself: give a kubeconfig of the hub with the consumer's own credentials", o.Kubeconfig)
	}
	return cfg, nil
}

// credential works out the consumer's credential from its hub identity.
func (o *credentialPluginOptions) credential(ctx context.Context, hub *rest.Config) (*clientauthv1.ExecCredentialStatus, error) {
	if err := rest.LoadTLSFiles(hub); err != nil {
		return nil, fmt.Errorf("read the kubeconfig's files: %w", err)
	}
	if len(hub.CertData) > 0 && len(hub.KeyData) > 0 {
		return certificateCredential(hub.CertData, hub.KeyData)
	}
	token := hub.BearerToken
	if hub.BearerTokenFile != "" {
		data, err := os.ReadFile(hub.BearerTokenFile)
		if err != nil {
			return nil, fmt.Errorf("read the token: %w", err)
		}
		token = strings.TrimSpace(string(data))
	}
	if token == "" {
		return nil, errors.New("the consumer's hub credentials are neither a client certificate nor a bearer token")
	}
	cfg := rest.CopyConfig(hub)
	cfg.BearerToken, cfg.BearerTokenFile = token, ""
	cfg.UserAgent = "flotilla-credential-plugin/" + version.Version
	cfg.Timeout = cmdutil.RequestTimeout
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	review, err := kube.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("ask the hub at %s who the token is: %w", cfg.Host, err)
	}
	ns, name, err := serviceaccount.SplitUsername(review.Status.UserInfo.Username)
	if err != nil {
		// Not a ServiceAccount: the token is the consumer's to hand on.
		return &clientauthv1.ExecCredentialStatus{Token: token}, nil
	}
	seconds := int64(o.lifetime / time.Second)
	tr, err := kube.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{Audiences: o.audiences, ExpirationSeconds: &seconds},
	}, metav1.CreateOptions{})
	if err != nil {
		if apierrors.IsForbidden(err) {
			return nil, fmt.Errorf("ServiceAccount %s/%s may not ask the hub for its own tokens: grant it create on serviceaccounts/token named %s in namespace %s: %w", ns, name, name, ns, err)
		}
		return nil, fmt.Errorf("ask the hub for a token of ServiceAccount %s/%s: %w", ns, name, err)
	}
	expires := tr.Status.ExpirationTimestamp
	return &clientauthv1.ExecCredentialStatus{Token: tr.Status.Token, ExpirationTimestamp: &expires}, nil
}

// certificateCredential hands on a client certificate and its key, valid
// until the certificate's end.
func certificateCredential(certPEM, keyPEM []byte) (*clientauthv1.ExecCredentialStatus, error) {
	block, _ := pem.Decode(certPEM)
	if block == nil {
		return nil, errors.New("the kubeconfig's client certificate is not PEM")
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("the kubeconfig's client certificate: %w", err)
	}
	expires := metav1.NewTime(cert.NotAfter)
	return &clientauthv1.ExecCredentialStatus{
		ClientCertificateData: string(certPEM),
		ClientKeyData:         string(keyPEM),
		ExpirationTimestamp:   &expires,
	}, nil
}
