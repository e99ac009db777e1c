package agent

import "time"

// Names on the spoke that the agent, `flotilla join` and `flotilla unjoin` share.
const (
	// DefaultNamespace is the spoke namespace the agent runs in and keeps its secrets in.
	DefaultNamespace = "open-cluster-management-agent"
	// BootstrapSecretName holds the bootstrap kubeconfig (key "kubeconfig").
	BootstrapSecretName = "bootstrap-hub-kubeconfig"
	// HubKubeconfigSecretName holds the agent's own hub credentials: keys
	// "tls.key", "tls.crt", "kubeconfig", "cluster-name", "agent-name".
	HubKubeconfigSecretName = "hub-kubeconfig-secret"
)

// Options configure an agent.
type Options struct {
	// ClusterName is the managed cluster's name on the hub (DNS-1123 label).
	ClusterName string
	// AgentID names this agent instance; empty reuses the one stored in the
	// hub kubeconfig secret, or generates one.
	AgentID string
	// Namespace is the agent's namespace on the spoke.
	Namespace string
	// SpokeKubeconfig is the kubeconfig of the managed cluster; empty means
	// the in-cluster configuration.
	SpokeKubeconfig string
	// SpokeAPIServerURL and SpokeCAData, when set, are reported to the hub
	// in spec.managedClusterClientConfigs instead of what the spoke
	// kubeconfig says.
	SpokeAPIServerURL string
	SpokeCAData       []byte
	// CertificateExpiration is the lifetime asked for in CSRs
	// (expirationSeconds); 0 lets the hub's signer decide.
	CertificateExpiration time.Duration
	// MetricsAddr and HealthProbeAddr serve /metrics, /healthz and /readyz;
	// "0" turns them off.
	MetricsAddr     string
	HealthProbeAddr string
}
