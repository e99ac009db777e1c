package cli

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

// requestTimeout bounds every single API request, so that a hub that
// accepts connections but never answers cannot hang a command.
const requestTimeout = 30 * time.Second

// scheme knows the Kubernetes and the OCM types.
var scheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(install.AddToScheme(s))
	return s
}()

// side names the cluster a command talks to, for messages.
type side string

const (
	hubSide   side = "hub"
	spokeSide side = "managed cluster"
)

// clients talk to one API server with the credentials of a kubeconfig.
type clients struct {
	cfg  *rest.Config
	kube kubernetes.Interface
	ctrl client.Client
	// where describes the API server in messages, e.g. "the hub at https://…".
	where string
}

// clientConfig resolves the kubeconfig as kubectl does.
func (g *globalOptions) clientConfig() clientcmd.ClientConfig {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = g.kubeconfig
	return clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: g.context})
}

// kubeconfigSource says where the kubeconfig came from, for messages.
func (g *globalOptions) kubeconfigSource() string {
	switch {
	case g.kubeconfig != "":
		return "--kubeconfig " + g.kubeconfig
	case os.Getenv(clientcmd.RecommendedConfigPathEnvVar) != "":
		return "$KUBECONFIG (" + os.Getenv(clientcmd.RecommendedConfigPathEnvVar) + ")"
	default:
		return clientcmd.RecommendedHomeFile
	}
}

// restConfig loads the client configuration for the given side.
func (g *globalOptions) restConfig(s side) (*rest.Config, error) {
	cfg, err := g.clientConfig().ClientConfig()
	if err != nil {
		if clientcmd.IsEmptyConfig(err) {
			return nil, fmt.Errorf("no kubeconfig for the %s: pass --kubeconfig, set KUBECONFIG, or create %s", s, clientcmd.RecommendedHomeFile)
		}
		return nil, fmt.Errorf("cannot load the %s's kubeconfig from %s: %w", s, g.kubeconfigSource(), err)
	}
	cfg = rest.CopyConfig(cfg)
	cfg.UserAgent = "flotilla/" + version.Version
	cfg.Timeout = requestTimeout
	// The CLI makes a handful of requests; client-side throttling only
	// slows polling loops down.
	cfg.QPS, cfg.Burst = 50, 100
	return cfg, nil
}

// clientsFor returns clients for the given side; tune, when given,
// adjusts their configuration first.
func (g *globalOptions) clientsFor(s side, tune ...func(*rest.Config)) (*clients, error) {
	cfg, err := g.restConfig(s)
	if err != nil {
		return nil, err
	}
	for _, t := range tune {
		t(cfg)
	}
	c, err := newClients(cfg, fmt.Sprintf("the %s API server at %s", s, cfg.Host))
	if err != nil {
		return nil, err
	}
	c.ctrl = g.waitingForWebhook(c.ctrl, c.where)
	return c, nil
}

func newClients(cfg *rest.Config, where string) (*clients, error) {
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	return &clients{cfg: cfg, kube: kube, ctrl: c, where: where}, nil
}

// serverURL returns the API server address of cfg as a URL.
func serverURL(cfg *rest.Config) string {
	if strings.Contains(cfg.Host, "://") {
		return strings.TrimSuffix(cfg.Host, "/")
	}
	return "https://" + strings.TrimSuffix(cfg.Host, "/")
}

// caData returns the CA bundle that cfg trusts, or nil when it relies on
// the system roots.
func caData(cfg *rest.Config) ([]byte, error) {
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
