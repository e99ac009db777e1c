package cmdutil

import (
	"fmt"
	"os"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/flotilla/api/install"
	"github.com/flotilla-io/flotilla/internal/version"
)

// RequestTimeout bounds every single API request, so that a hub that
// accepts connections but never answers cannot hang a command.
const RequestTimeout = 30 * time.Second

// Scheme knows the Kubernetes and the OCM types.
var Scheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(install.AddToScheme(s))
	return s
}()

// Side names the cluster a command talks to, for messages.
type Side string

// The two sides: hub commands talk to the hub, join and unjoin to the
// managed cluster.
const (
	HubSide   Side = "hub"
	SpokeSide Side = "managed cluster"
)

// Clients talk to one API server with the credentials of a kubeconfig.
type Clients struct {
	Config *rest.Config
	Kube   kubernetes.Interface
	Ctrl   client.Client
	// Where describes the API server in messages, e.g. "the hub at https://…".
	Where string
}

// ClientConfig resolves the kubeconfig as kubectl does.
func (g *Globals) ClientConfig() clientcmd.ClientConfig {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = g.Kubeconfig
	return clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: g.Context})
}

// KubeconfigSource says where the kubeconfig came from, for messages.
func (g *Globals) KubeconfigSource() string {
	switch {
	case g.Kubeconfig != "":
		return "--kubeconfig " + g.Kubeconfig
	case os.Getenv(clientcmd.RecommendedConfigPathEnvVar) != "":
		return "$KUBECONFIG (" + os.Getenv(clientcmd.RecommendedConfigPathEnvVar) + ")"
	default:
		return clientcmd.RecommendedHomeFile
	}
}

// RestConfig loads the client configuration for the given side.
func (g *Globals) RestConfig(s Side) (*rest.Config, error) {
	cfg, err := g.ClientConfig().ClientConfig()
	if err != nil {
		if clientcmd.IsEmptyConfig(err) {
			return nil, fmt.Errorf("no kubeconfig for the %s: pass --kubeconfig, set KUBECONFIG, or create %s", s, clientcmd.RecommendedHomeFile)
		}
		return nil, fmt.Errorf("cannot load the %s's kubeconfig from %s: %w", s, g.KubeconfigSource(), err)
	}
	cfg = rest.CopyConfig(cfg)
	cfg.UserAgent = "flotilla/" + version.Version
	cfg.Timeout = RequestTimeout
	// The CLI makes a handful of requests; client-side throttling only
	// slows polling loops down.
	cfg.QPS, cfg.Burst = 50, 100
	return cfg, nil
}

// ClientsFor returns clients for the given side; tune, when given,
// adjusts their configuration first.
func (g *Globals) ClientsFor(s Side, tune ...func(*rest.Config)) (*Clients, error) {
	cfg, err := g.RestConfig(s)
	if err != nil {
		return nil, err
	}
	for _, t := range tune {
		t(cfg)
	}
	c, err := NewClients(cfg, fmt.Sprintf("the %s API server at %s", s, cfg.Host))
	if err != nil {
		return nil, err
	}
	c.Ctrl = g.waitingForWebhook(c.Ctrl, c.Where)
	return c, nil
}

// NewClients makes the clients of cfg; where names its API server in messages.
func NewClients(cfg *rest.Config, where string) (*Clients, error) {
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	c, err := client.New(cfg, client.Options{Scheme: Scheme})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	return &Clients{Config: cfg, Kube: kube, Ctrl: c, Where: where}, nil
}

// ServerURL returns the API server address of cfg as a URL.
func ServerURL(cfg *rest.Config) string {
	if strings.Contains(cfg.Host, "://") {
		return strings.TrimSuffix(cfg.Host, "/")
	}
	return "https://" + strings.TrimSuffix(cfg.Host, "/")
}

// CAData returns the CA bundle that cfg trusts, or nil when it relies on
// the system roots.
func CAData(cfg *rest.Config) ([]byte, error) {
	if len(cfg.CAData) > 0 {
		return cfg.CAData, nil
	}
	if cfg.CAFile != "" {
		data, err := os.ReadFile(cfg.CAFile)
		if err != nil {
			return nil, fmt.Errorf("read the CA file of the kubeconfig: %w", err)
		}
		return data, nil
	}
	return nil, nil
}
