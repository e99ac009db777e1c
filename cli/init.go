package cli

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	"github.com/flotilla-io/flotilla/deploy"
	"github.com/flotilla-io/flotilla/hub/bootstrap"
	"github.com/flotilla-io/flotilla/internal/version"
)

// defaultTokenTTL is how long a new join token stays valid.
const defaultTokenTTL = 24 * time.Hour

// tokenOptions are the flags of the commands that hand out join tokens.
type tokenOptions struct {
	*globalOptions
	tokenTTL     time.Duration
	hubAPIServer string
	output       string
}

func (o *tokenOptions) addFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.DurationVar(&o.tokenTTL, "token-ttl", defaultTokenTTL, "lifetime of a newly created join token (e.g. 2h, 30m)")
	f.StringVar(&o.hubAPIServer, "hub-apiserver", "", "hub API server address that agents should use, if not the kubeconfig's (e.g. a load balancer)")
	addOutputFlag(cmd, &o.output, outputJSON, outputYAML)
}

func (o *tokenOptions) validate() error {
	if o.tokenTTL <= 0 {
		return fmt.Errorf("--token-ttl %s must be positive: join tokens always expire (e.g. --token-ttl 2h)", o.tokenTTL)
	}
	if o.hubAPIServer != "" {
		if _, err := parseHubURL(o.hubAPIServer); err != nil {
			return err
		}
	}
	return checkOutput(o.output, outputJSON, outputYAML)
}

// agentURL is the hub address for agents: --hub-apiserver, else the kubeconfig's.
func (o *tokenOptions) agentURL(c *clients) string {
	if o.hubAPIServer != "" {
		return o.hubAPIServer
	}
	return serverURL(c.cfg)
}

// joinInfo is what -o json|yaml prints: everything a join needs.
type joinInfo struct {
	HubToken     string `json:"hub-token"`
	HubAPIServer string `json:"hub-apiserver"`
	// ClusterName is the one cluster the token joins, if it is for one.
	ClusterName string `json:"cluster-name,omitempty"`
}

// cluster is the cluster name to join as, or a placeholder.
func (j joinInfo) cluster() string {
	if j.ClusterName != "" {
		return j.ClusterName
	}
	return "<cluster_name>"
}

// joinCommand is the command to run on a cluster to join it.
func (j joinInfo) joinCommand() string {
	return fmt.Sprintf("flotilla join --hub-token %s --hub-apiserver %s --cluster-name %s", j.HubToken, j.HubAPIServer, j.cluster())
}

// printJoin prints the join command, or its parts as JSON or YAML.
func (o *tokenOptions) printJoin(info joinInfo, expires time.Time) error {
	if o.output != outputText {
		return printData(o.streams.Out, o.output, info)
	}
	what := "a cluster"
	if info.ClusterName != "" {
		what = "cluster " + info.ClusterName + " (the token joins it alone, once)"
	}
	fmt.Fprintf(o.streams.Out, `To add %s to this hub, run on it (the token is valid until %s):

    %s

then accept it here with:

    flotilla accept --clusters %s
`, what, expires.Local().Format(time.RFC1123), info.joinCommand(), info.cluster())
	return nil
}

type initOptions struct {
	tokenOptions
	joinCommandFile string
	newToken        bool
	dryRun          bool
	// clusterName, when set, makes the token one for that cluster alone.
	clusterName string
}

func newInitCommand(g *globalOptions) *cobra.Command {
	o := &initOptions{tokenOptions: tokenOptions{globalOptions: g}}
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Prepare a hub for clusters to join, and print the join command",
		Long: `Prepare a running Flotilla hub for clusters to join, and print the command
that joins a cluster.

init talks to the hub with its admin kubeconfig and makes sure that:
  - a join token exists: a bootstrap token Secret kube-system/bootstrap-token-<id>
    in group system:bootstrappers:managedcluster that expires after --token-ttl.
    A token that stays valid long enough is reused; --new-token makes another.
  - the ClusterRole open-cluster-management:bootstrap exists and is bound to that
    group. It allows no more than joining: get configmaps; create, get, list and
    watch certificatesigningrequests; get, create, list and watch managedclusters;
    create managedclustersets/join.
  - the ConfigMap kube-public/cluster-info exists, from which agents learn the
    hub's CA.

It is safe to run again: it repairs what is missing and changes nothing else.

With --cluster-name, the join token is one for that cluster alone, and for
one join: the hub refuses a ManagedCluster or CSR of any other cluster made
with it, and ends it once a hub admin accepted the cluster's first CSR made
with it (it expires 5 minutes after the certificate is signed, and the hub
then deletes it). A token for any cluster, which init hands out without
--cluster-name, lets whoever reads it ask for any cluster's name, as often
as they like, until it expires: prefer one token per cluster (see
docs/security.md).

With --dry-run, init instead prints what installs the hub controllers on an
existing cluster (CRDs, RBAC, the leader-elected Deployment, the webhook and
metrics Services): the objects of the flotilla-hub Helm chart, for
kubectl apply or a GitOps repository. It contacts nothing.`,
		Example: `  # Prepare the hub and print the join command.
  flotilla init --kubeconfig ~/.local/share/flotilla/hub/admin.kubeconfig

  # A token that joins cluster1 alone, once (the safe default for a fleet).
  flotilla init --cluster-name cluster1 -o json

  # Agents reach the hub through a load balancer, not the kubeconfig's address.
  flotilla init --hub-apiserver https://hub.example.com:6443

  # A short-lived token, with the join command saved for automation.
  flotilla init --token-ttl 1h --output-join-command-file join.sh

  # What installs the hub controllers on an existing cluster, for GitOps.
  flotilla init --dry-run --hub-apiserver https://hub.example.com:6443 -o yaml > hub.yaml

  # For scripts: the token and the address as JSON.
  flotilla init -o json | jq -r '."hub-token"'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.dryRun {
				return o.printHub()
			}
			if err := o.validate(); err != nil {
				return err
			}
			if o.clusterName != "" {
				if err := validateClusterName(o.clusterName); err != nil {
					return fmt.Errorf("--cluster-name: %w", err)
				}
			}
			return o.run(cmd.Context())
		},
	}
	o.addFlags(cmd)
	cmd.Flags().BoolVar(&o.dryRun, "dry-run", false, "print the objects that install the hub controllers on an existing cluster (the flotilla-hub chart's, with --hub-apiserver as the address agents use) as YAML (-o json: a List), contacting nothing")
	cmd.Flags().StringVar(&o.joinCommandFile, "output-join-command-file", "", "also write the join command to this file (mode 0600: it holds the token)")
	cmd.Flags().BoolVar(&o.newToken, "new-token", false, "create a new join token even if a valid one exists")
	cmd.Flags().StringVar(&o.clusterName, "cluster-name", "", "make the join token one for this cluster alone, accepted once")
	return cmd
}

// printHub prints the flotilla-hub chart's objects for --dry-run.
func (o *initOptions) printHub() error {
	if err := checkOutput(o.output, outputJSON, outputYAML); err != nil {
		return err
	}
	values := map[string]any{"createNamespace": true, "image": map[string]any{"reference": version.Image("flotilla-hub")}}
	if o.hubAPIServer != "" {
		if _, err := parseHubURL(o.hubAPIServer); err != nil {
			return err
		}
		values["apiServer"] = o.hubAPIServer
	}
	rendered, err := deploy.Render(deploy.HubChart, deploy.HubNamespace, values)
	if err != nil {
		return err
	}
	objs := make([]client.Object, len(rendered))
	for i, obj := range rendered {
		objs[i] = obj
	}
	format := o.output
	if format == outputText {
		format = outputYAML
	}
	return printObjects(o.streams.Out, format, objs)
}

func (o *initOptions) run(ctx context.Context) error {
	c, err := o.clientsFor(hubSide)
	if err != nil {
		return err
	}
	if err := checkIsHub(c); err != nil {
		return err
	}
	hubURL := o.agentURL(c)
	if err := ensureClusterInfo(ctx, c, hubURL); err != nil {
		return err
	}
	changed, err := ensureBootstrapRBAC(ctx, c)
	for _, what := range changed {
		o.notef("Hub: %s", what)
	}
	if err != nil {
		return err
	}
	t, created, err := ensureTokenFor(ctx, c, o.tokenTTL, o.newToken, o.clusterName)
	if err != nil {
		return err
	}
	forWhom := ""
	if o.clusterName != "" {
		forWhom = " for cluster " + o.clusterName + " alone, once,"
	}
	if created {
		o.notef("Hub: created join token %s,%s valid until %s", t.ID, forWhom, t.Expires.Local().Format(time.RFC3339))
	} else {
		o.notef("Hub: reusing join token %s,%s valid until %s (--new-token makes another)", t.ID, forWhom, t.Expires.Local().Format(time.RFC3339))
	}
	info := joinInfo{HubToken: t.String(), HubAPIServer: hubURL, ClusterName: o.clusterName}
	if o.joinCommandFile != "" {
		if err := os.WriteFile(o.joinCommandFile, []byte(info.joinCommand()+"\n"), 0o600); err != nil {
			return fmt.Errorf("--output-join-command-file: %w", err)
		}
		o.notef("Wrote the join command to %s", o.joinCommandFile)
	}
	return o.printJoin(info, t.Expires)
}

// checkIsHub fails unless the API server serves ManagedClusters.
func checkIsHub(c *clients) error {
	gv := clusterv1.GroupVersion.String()
	resources, err := c.kube.Discovery().ServerResourcesForGroupVersion(gv)
	if apierrors.IsNotFound(err) || (err == nil && !slices.ContainsFunc(resources.APIResources, func(r metav1.APIResource) bool { return r.Kind == "ManagedCluster" })) {
		return fmt.Errorf("%s does not serve %s ManagedClusters, so it is not a Flotilla (or OCM) hub\nStart a hub with flotilla-hub, or install the hub on this cluster with flotilla-hub --kubeconfig, or point --kubeconfig at the hub", c.where, gv)
	}
	return explain(err, c.where, "discover the "+gv+" API")
}

// ensureClusterInfo publishes kube-public/cluster-info when it is missing.
// An existing one is the hub's to keep: it is left as it is.
func ensureClusterInfo(ctx context.Context, c *clients, hubURL string) error {
	_, err := c.kube.CoreV1().ConfigMaps(metav1.NamespacePublic).Get(ctx, bootstrapapi.ConfigMapClusterInfo, metav1.GetOptions{})
	if err == nil {
		return nil
	}
	if !apierrors.IsNotFound(err) {
		return explain(err, c.where, "read ConfigMap kube-public/cluster-info")
	}
	ca, err := caData(c.cfg)
	if err != nil {
		return err
	}
	if len(ca) == 0 {
		return fmt.Errorf("ConfigMap kube-public/cluster-info is missing on %s, and the kubeconfig names no certificate authority to publish in it\nUse a kubeconfig with certificate-authority-data", c.where)
	}
	if err := bootstrap.PublishClusterInfo(ctx, c.kube, hubURL, ca); err != nil {
		return explain(err, c.where, "publish ConfigMap kube-public/cluster-info")
	}
	return nil
}

// parseHubURL checks a hub API server address given on the command line.
// parseHubServers checks join's --hub-server entries, the other addresses
// of the hub whose --hub-apiserver is apiServer, and returns them as the
// host:port the agent's --hub-server takes. An entry may also be given as
// an https:// URL, as --hub-apiserver is.
func parseHubServers(apiServer string, servers []string) ([]string, error) {
	first, err := parseHubURL(apiServer)
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

func parseHubURL(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("--hub-apiserver %q is not an https:// URL of an API server (e.g. https://hub.example.com:6443)", s)
	}
	return u, nil
}
