package agent

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/flotilla-io/flotilla/agent/registration"
)

// Names on the spoke that the agent, `flotilla join` and `flotilla unjoin` share.
const (
	// DefaultNamespace is the spoke namespace the agent runs in and keeps its secrets in.
	DefaultNamespace = "open-cluster-management-agent"
	// BootstrapSecretName holds the bootstrap kubeconfig (key "kubeconfig").
	BootstrapSecretName = registration.BootstrapSecretName
	// HubKubeconfigSecretName holds the agent's own hub credentials: keys
	// "tls.key", "tls.crt", "kubeconfig", "cluster-name", "agent-name".
	HubKubeconfigSecretName = registration.HubKubeconfigSecretName
)

// MinCertificateExpiration is the shortest certificate lifetime a
// Kubernetes signer issues (CSR spec.expirationSeconds).
const MinCertificateExpiration = 10 * time.Minute

// DefaultCertificateExpiration is the hub client certificate lifetime asked
// for when Options leave it unset: 30 days, what a Flotilla hub signs at
// most for an agent (docs/security.md). The agent renews it when 20–25 %
// of it is left, so a lost certificate is good for at most a week.
const DefaultCertificateExpiration = 30 * 24 * time.Hour

// Options configure an agent.
type Options struct {
	// ClusterName is the managed cluster's name on the hub (DNS-1123 label).
	ClusterName string
	// AgentID names this agent instance; empty reuses the one stored in the
	// hub kubeconfig secret, or generates one.
	AgentID string
	// Namespace is the agent's namespace on the spoke; empty means
	// DefaultNamespace.
	Namespace string
	// SpokeKubeconfig is the kubeconfig of the managed cluster; empty means
	// the in-cluster configuration.
	SpokeKubeconfig string
	// SpokeAPIServerURL and SpokeCAData, when set, are reported to the hub
	// in spec.managedClusterClientConfigs instead of what the spoke
	// kubeconfig says.
	SpokeAPIServerURL string
	SpokeCAData       []byte
	// BootstrapKubeconfig, when set, is a kubeconfig file to join the hub
	// with, read instead of Secret BootstrapSecretName in Namespace.
	BootstrapKubeconfig string
	// HubServers are further addresses (host:port) of the same hub, for a
	// hub of several members: the agent dials them, in turn, when the hub
	// kubeconfig's server does not answer (docs/ha.md).
	HubServers []string
	// LeaseDurationSeconds goes into spec.leaseDurationSeconds when the agent
	// creates its ManagedCluster; 0 means 60. Afterwards the hub's value rules.
	LeaseDurationSeconds int32
	// CertificateExpiration is the lifetime asked for in CSRs
	// (expirationSeconds, which the contract requires); 0 means
	// DefaultCertificateExpiration. At least MinCertificateExpiration.
	CertificateExpiration time.Duration
	// RenewBefore, when set, renews the hub client certificate this long
	// before it expires, instead of when 20–25 % (drawn at random) of its
	// life is left. Since no signer issues certificates shorter than ten
	// minutes, this is how tests see a rotation within seconds.
	RenewBefore time.Duration
	// AddOnLeaseCheckInterval is how often the Lease of each add-on whose
	// health the agent reports is read; 0 means 30 s, the contract's.
	AddOnLeaseCheckInterval time.Duration
	// AddOnInstallNamespaces, when set, are the only namespaces add-ons
	// may be installed in: the agent writes their Secrets and reads their
	// Leases there alone, and needs no access to other namespaces' Secrets
	// (the agent chart grants exactly these). Empty: any namespace; the
	// agent then needs Secrets only where its add-ons run (agent/addon).
	AddOnInstallNamespaces []string
	// WorkResyncInterval is how often each ManifestWork is checked against
	// the managed cluster besides the events that ask for it; 0 means
	// work.DefaultResyncInterval.
	WorkResyncInterval time.Duration
	// HubHash, when set, replaces the hash of the hub's URL that prefixes
	// and marks this agent's AppliedManifestWorks on the managed cluster.
	// Only agents that share one managed cluster and one hub need it, each
	// its own: the fleet simulator (test/bench) runs them so.
	HubHash string
	// SpokeMapper, when set, resolves the managed cluster's kinds for the
	// work and policy agents; unset, they share one discovery-backed
	// RESTMapper of their own. Agents that share one managed cluster may
	// share one: the fleet simulator's thousands of agents do, since each
	// mapper holds the cluster's whole discovery.
	SpokeMapper meta.RESTMapper
	// AppliedManifestWorkEvictionGracePeriod is how long the objects of a
	// ManifestWork that is gone from a reachable hub are kept before they
	// are removed; 0 means work.DefaultEvictionGracePeriod.
	AppliedManifestWorkEvictionGracePeriod time.Duration
	// MetricsAddr and HealthProbeAddr serve /metrics, /healthz and /readyz;
	// "0" or empty turns them off.
	MetricsAddr     string
	HealthProbeAddr string
	// Proxy keeps the cluster proxy's tunnel open to the hub (agent/proxy).
	Proxy bool
	// Search indexes the cluster's objects in the hub's search index
	// (agent/search).
	Search bool
	// ProxyUserPrefix and ProxyGroupPrefix begin the names hub users and
	// groups have on the managed cluster through the proxy; empty means
	// proxy.DefaultPrefix.
	ProxyUserPrefix, ProxyGroupPrefix string
	// Profiling adds Go's /debug/pprof/ endpoints and /debug/memory (where
	// the process's memory goes) to the metrics server at MetricsAddr.
	Profiling bool
}

// Validate says what is wrong with o, in terms of the flags of
// flotilla-agent. Input that it rejects can never work, so the agent
// refuses to start rather than retry.
func (o *Options) Validate() error {
	var errs []error
	if o.ClusterName == "" {
		errs = append(errs, errors.New("a cluster name is required (--cluster-name)"))
	} else if msgs := validation.IsDNS1123Label(o.ClusterName); len(msgs) > 0 {
		errs = append(errs, fmt.Errorf("invalid cluster name %q: %s; it names the cluster's namespace on the hub", o.ClusterName, strings.Join(msgs, "; ")))
	}
	if o.AgentID != "" {
		if msgs := validation.IsDNS1123Label(o.AgentID); len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("invalid agent id %q: %s", o.AgentID, strings.Join(msgs, "; ")))
		}
	}
	for _, a := range o.HubServers {
		if host, port, err := net.SplitHostPort(a); err != nil || host == "" || port == "" {
			errs = append(errs, fmt.Errorf("--hub-server %q is not host:port", a))
		}
	}
	if o.Namespace != "" {
		if msgs := validation.IsDNS1123Label(o.Namespace); len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("invalid namespace %q: %s", o.Namespace, strings.Join(msgs, "; ")))
		}
	}
	for _, ns := range o.AddOnInstallNamespaces {
		if msgs := validation.IsDNS1123Label(ns); len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("invalid add-on install namespace %q (--addon-install-namespaces): %s", ns, strings.Join(msgs, "; ")))
		}
	}
	if o.SpokeAPIServerURL != "" {
		if u, err := url.Parse(o.SpokeAPIServerURL); err != nil || u.Scheme != "https" || u.Host == "" {
			errs = append(errs, fmt.Errorf("invalid spoke API server URL %q: want https://host[:port]", o.SpokeAPIServerURL))
		}
	}
	if o.LeaseDurationSeconds < 0 {
		errs = append(errs, fmt.Errorf("invalid lease duration %ds: must not be negative", o.LeaseDurationSeconds))
	}
	if o.CertificateExpiration != 0 && o.CertificateExpiration < MinCertificateExpiration {
		errs = append(errs, fmt.Errorf("certificate expiration %s is too short: the hub's signer issues no certificate shorter than %s", o.CertificateExpiration, MinCertificateExpiration))
	}
	if o.RenewBefore < 0 || (o.CertificateExpiration > 0 && o.RenewBefore >= o.CertificateExpiration) {
		errs = append(errs, fmt.Errorf("renew-before %s must not be negative, and must be shorter than the certificate expiration %s", o.RenewBefore, o.CertificateExpiration))
	}
	if o.WorkResyncInterval < 0 {
		errs = append(errs, fmt.Errorf("work resync interval %s must not be negative", o.WorkResyncInterval))
	}
	if o.HubHash != "" {
		if msgs := validation.IsDNS1123Subdomain(o.HubHash); len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("invalid hub hash %q: %s; it prefixes AppliedManifestWork names", o.HubHash, strings.Join(msgs, "; ")))
		}
	}
	if o.AppliedManifestWorkEvictionGracePeriod < 0 {
		errs = append(errs, fmt.Errorf("eviction grace period %s must not be negative", o.AppliedManifestWorkEvictionGracePeriod))
	}
	for flag, p := range map[string]string{"--proxy-user-prefix": o.ProxyUserPrefix, "--proxy-group-prefix": o.ProxyGroupPrefix} {
		if strings.TrimSpace(p) != p || strings.ContainsAny(p, "\r\n") {
			errs = append(errs, fmt.Errorf("%s %q must not hold spaces or line breaks", flag, p))
		}
	}
	if o.Profiling && addr(o.MetricsAddr) == "0" {
		errs = append(errs, errors.New("profiling is served on the metrics address: give one (--metrics-bind-address 127.0.0.1:PORT) or leave --profiling off"))
	}
	return errors.Join(errs...)
}
