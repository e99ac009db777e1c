package handshake

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	"github.com/flotilla-io/flotilla/cli/cmdutil"
	"github.com/flotilla-io/flotilla/hub/bootstrap"
)

// defaultTokenTTL is how long a new join token stays valid.
const defaultTokenTTL = 24 * time.Hour

// TokenOptions are the flags of the commands that hand out join tokens.
type TokenOptions struct {
	*cmdutil.Globals
	TokenTTL     time.Duration
	HubAPIServer string
	Output       string
}

// AddFlags adds --token-ttl, --hub-apiserver and -o to cmd.
func (o *TokenOptions) AddFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.DurationVar(&o.TokenTTL, "token-ttl", defaultTokenTTL, "lifetime of a newly created join token (e.g. 2h, 30m)")
	f.StringVar(&o.HubAPIServer, "hub-apiserver", "", "hub API server address that agents should use, if not the kubeconfig's (e.g. a load balancer)")
	cmdutil.AddOutputFlag(cmd, &o.Output, cmdutil.OutputJSON, cmdutil.OutputYAML)
}

// Validate checks the flags before anything is sent anywhere.
func (o *TokenOptions) Validate() error {
	if o.TokenTTL <= 0 {
		return fmt.Errorf("--token-ttl %s must be positive: join tokens always expire (e.g. --token-ttl 2h)", o.TokenTTL)
	}
	if o.HubAPIServer != "" {
		if _, err := ParseHubURL(o.HubAPIServer); err != nil {
			return err
		}
	}
	return cmdutil.CheckOutput(o.Output, cmdutil.OutputJSON, cmdutil.OutputYAML)
}

// AgentURL is the hub address for agents: --hub-apiserver, else the kubeconfig's.
func (o *TokenOptions) AgentURL(c *cmdutil.Clients) string {
	if o.HubAPIServer != "" {
		return o.HubAPIServer
	}
	return cmdutil.ServerURL(c.Config)
}

// JoinInfo is what -o json|yaml prints: everything a join needs.
type JoinInfo struct {
	HubToken     string `json:"hub-token"`
	HubAPIServer string `json:"hub-apiserver"`
	// ClusterName is the one cluster the token joins, if it is for one.
	ClusterName string `json:"cluster-name,omitempty"`
}

// cluster is the cluster name to join as, or a placeholder.
func (j JoinInfo) cluster() string {
	if j.ClusterName != "" {
		return j.ClusterName
	}
	return "<cluster_name>"
}

// JoinCommand is the command to run on a cluster to join it.
func (j JoinInfo) JoinCommand() string {
	return fmt.Sprintf("flotilla join --hub-token %s --hub-apiserver %s --cluster-name %s", j.HubToken, j.HubAPIServer, j.cluster())
}

// PrintJoin prints the join command, or its parts as JSON or YAML.
func (o *TokenOptions) PrintJoin(info JoinInfo, expires time.Time) error {
	if o.Output != cmdutil.OutputText {
		return cmdutil.PrintData(o.Streams.Out, o.Output, info)
	}
	what := "a cluster"
	if info.ClusterName != "" {
		what = "cluster " + info.ClusterName + " (the token joins it alone, once)"
	}
	fmt.Fprintf(o.Streams.Out, `To add %s to this hub, run on it (the token is valid until %s):

    %s

then accept it here with:

    flotilla accept --clusters %s
`, what, expires.Local().Format(time.RFC1123), info.JoinCommand(), info.cluster())
	return nil
}

// CheckIsHub fails unless the API server serves ManagedClusters.
func CheckIsHub(c *cmdutil.Clients) error {
	gv := clusterv1.GroupVersion.String()
	resources, err := c.Kube.Discovery().ServerResourcesForGroupVersion(gv)
	if apierrors.IsNotFound(err) || (err == nil && !slices.ContainsFunc(resources.APIResources, func(r metav1.APIResource) bool { return r.Kind == "ManagedCluster" })) {
		return fmt.Errorf("%s does not serve %s ManagedClusters, so it is not a Flotilla (or OCM) hub\nStart a hub with flotilla-hub, or install the hub on this cluster with flotilla-hub --kubeconfig, or point --kubeconfig at the hub", c.Where, gv)
	}
	return cmdutil.Explain(err, c.Where, "discover the "+gv+" API")
}

// EnsureClusterInfo publishes kube-public/cluster-info when it is missing.
// An existing one is the hub's to keep: it is left as it is.
func EnsureClusterInfo(ctx context.Context, c *cmdutil.Clients, hubURL string) error {
	_, err := c.Kube.CoreV1().ConfigMaps(metav1.NamespacePublic).Get(ctx, bootstrapapi.ConfigMapClusterInfo, metav1.GetOptions{})
	if err == nil {
		return nil
	}
	if !apierrors.IsNotFound(err) {
		return cmdutil.Explain(err, c.Where, "read ConfigMap kube-public/cluster-info")
	}
	ca, err := cmdutil.CAData(c.Config)
	if err != nil {
		return err
	}
	if len(ca) == 0 {
		return fmt.Errorf("ConfigMap kube-public/cluster-info is missing on %s, and the kubeconfig names no certificate authority to publish in it\nUse a kubeconfig with certificate-authority-data", c.Where)
	}
	if err := bootstrap.PublishClusterInfo(ctx, c.Kube, hubURL, ca); err != nil {
		return cmdutil.Explain(err, c.Where, "publish ConfigMap kube-public/cluster-info")
	}
	return nil
}

// ParseHubServers checks join's --hub-server entries, the other addresses
// of the hub whose --hub-apiserver is apiServer, and returns them as the
// host:port the agent's --hub-server takes. An entry may also be given as
// an https:// URL, as --hub-apiserver is.
func ParseHubServers(apiServer string, servers []string) ([]string, error) {
	first, err := ParseHubURL(apiServer)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{hostPort(first): true}
	var out []string
	for _, s := range servers {
		s = strings.TrimSpace(s)
		addr := s
		if strings.Contains(s, "://") {
			u, err := url.Parse(s)
			if err != nil || u.Scheme != "https" || u.Host == "" || (u.Path != "" && u.Path != "/") {
				return nil, fmt.Errorf("--hub-server %q is neither host:port nor an https:// URL of an API server (e.g. 192.0.2.12:6443)", s)
			}
			addr = hostPort(u)
		}
		host, port, err := net.SplitHostPort(addr)
		if err != nil || host == "" {
			return nil, fmt.Errorf("--hub-server %q is not host:port: give another member's address with its port, e.g. 192.0.2.12:6443", s)
		}
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return nil, fmt.Errorf("--hub-server %q: %q is not a port number", s, port)
		}
		if net.ParseIP(host) == nil && len(validation.IsDNS1123Subdomain(host)) > 0 {
			return nil, fmt.Errorf("--hub-server %q: %q is neither an IP address nor a DNS name", s, host)
		}
		if seen[addr] {
			if addr == hostPort(first) {
				return nil, fmt.Errorf("--hub-server %q is the --hub-apiserver address already: list only the hub's other addresses", s)
			}
			return nil, fmt.Errorf("--hub-server names %s twice: list each address of the hub once", addr)
		}
		seen[addr] = true
		out = append(out, addr)
	}
	return out, nil
}

// hostPort is u's host:port, with https's port 443 when u names none.
func hostPort(u *url.URL) string {
	if u.Port() != "" {
		return u.Host
	}
	return net.JoinHostPort(u.Hostname(), "443")
}

// ParseHubURL checks a hub API server address given on the command line.
func ParseHubURL(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("--hub-apiserver %q is not an https:// URL of an API server (e.g. https://hub.example.com:6443)", s)
	}
	return u, nil
}
