package addon

import (
	"strconv"
	"strings"
)

const (
	// Group is the add-on API group.
	Group = "addon.open-cluster-management.io"
	// DefaultInstallNamespace is where an add-on's agent runs unless it
	// says otherwise.
	DefaultInstallNamespace = "open-cluster-management-agent-addon"

	// LifecycleAnnotation on a ClusterManagementAddOn says who runs the
	// add-on: absent or LifecycleAddOnManager, the hub's add-on manager;
	// any other value (OCM's add-ons use LifecycleSelf), its own manager.
	LifecycleAnnotation   = "addon.open-cluster-management.io/lifecycle"
	LifecycleAddOnManager = "addon-manager"
	LifecycleSelf         = "self"

	// InstallNamespaceAnnotation holds a ManagedClusterAddOn's v1alpha1
	// spec.installNamespace in its v1beta1 form.
	InstallNamespaceAnnotation = "addon.open-cluster-management.io/v1alpha1-install-namespace"
	// HostingClusterAnnotation puts an add-on in hosted mode.
	HostingClusterAnnotation = "addon.open-cluster-management.io/hosting-cluster-name"
	// ConfigSpecHashAnnotation on a deploy ManifestWork maps each config
	// (ConfigKey) to its desired spec hash, as JSON.
	ConfigSpecHashAnnotation = "open-cluster-management.io/config-spec-hash"
	// DeletionOrphanAnnotation on a manifest keeps its object on the
	// cluster when the add-on goes.
	DeletionOrphanAnnotation = "addon.open-cluster-management.io/deletion-orphan"
	// PreDeleteHookLabel (label or annotation) marks a Job or Pod as the
	// add-on's pre-delete hook; PreDeleteHookFinalizer holds the
	// ManagedClusterAddOn until the hook completed.
	PreDeleteHookLabel     = "addon.open-cluster-management.io/addon-pre-delete"
	PreDeleteHookFinalizer = "addon.open-cluster-management.io/addon-pre-delete"
	// ImageRegistriesAnnotation on a ManagedCluster: {"registries":[…]}.
	ImageRegistriesAnnotation = "open-cluster-management.io/image-registries"

	// AddOnNameLabel on an add-on's works, CSRs and RoleBindings;
	// AddOnNamespaceLabel on works in another namespace than the cluster's;
	// ClusterNameLabel on CSRs; TemplateNameLabel on a template's bindings.
	AddOnNameLabel      = "open-cluster-management.io/addon-name"
	AddOnNamespaceLabel = "open-cluster-management.io/addon-namespace"
	ClusterNameLabel    = "open-cluster-management.io/cluster-name"
	TemplateNameLabel   = "open-cluster-management.io/addon-template-name"

	// KubeAPIServerClientSigner signs the client certificates of kubeClient
	// registrations.
	KubeAPIServerClientSigner = "kubernetes.io/kube-apiserver-client"

	// ConfigResourceDeploymentConfigs and ConfigResourceTemplates are the
	// built-in config types (group Group).
	ConfigResourceDeploymentConfigs = "addondeploymentconfigs"
	ConfigResourceTemplates         = "addontemplates"
)

// Condition types of a ManagedClusterAddOn (docs/addons.md, section 7).
const (
	ConditionRegistrationApplied       = "RegistrationApplied"
	ConditionManifestApplied           = "ManifestApplied"
	ConditionHookManifestCompleted     = "HookManifestCompleted"
	ConditionAvailable                 = "Available"
	ConditionConfigured                = "Configured"
	ConditionProgressing               = "Progressing"
	ConditionClusterCertificateRotated = "ClusterCertificateRotated"
	ConditionDegraded                  = "Degraded"
)

// FeatureLabel is the ManagedCluster label the hub keeps for add-on a:
// "available", "unhealthy" or "unreachable".
func FeatureLabel(a string) string { return "feature.open-cluster-management.io/addon-" + a }

// DeployWorkName is the i-th ManifestWork of add-on a's agent manifests.
func DeployWorkName(a string, i int) string { return "addon-" + a + "-deploy-" + strconv.Itoa(i) }

// PreDeleteWorkName is the ManifestWork of add-on a's pre-delete hook.
func PreDeleteWorkName(a string) string { return "addon-" + a + "-pre-delete" }

// AgentGroups are the default groups of add-on a's agent in cluster c:
// the add-on's group in that cluster, and the add-on's in every cluster.
func AgentGroups(c, a string) []string {
	return []string{ClusterAddOnGroup(c, a), "system:open-cluster-management:addon:" + a}
}

// ClusterAddOnGroup is add-on a's group in cluster c.
func ClusterAddOnGroup(c, a string) string {
	return "system:open-cluster-management:cluster:" + c + ":addon:" + a
}

// AgentUser is the default user of agent agentName of add-on a in cluster c.
func AgentUser(c, a, agentName string) string { return ClusterAddOnGroup(c, a) + ":agent:" + agentName }

// KubeconfigSecretName is the Secret in the install namespace holding a
// kubeClient registration's hub kubeconfig.
func KubeconfigSecretName(a string) string { return a + "-hub-kubeconfig" }

// CustomSignerSecretName is the Secret in the install namespace holding a
// customSigner registration's client certificate.
func CustomSignerSecretName(a, signer string) string {
	return a + "-" + strings.ReplaceAll(signer, "/", "-") + "-client-cert"
}

// CSRGenerateName is the generateName of add-on a's CSRs from cluster c.
func CSRGenerateName(c, a string) string { return "addon-" + c + "-" + a + "-" }

// ConfigKey is a config's key in ConfigSpecHashAnnotation:
// <resource>.<group>/<namespace>/<name>, without ".<group>" when the
// group is empty.
func ConfigKey(group, resource, namespace, name string) string {
	gr := resource
	if group != "" {
		gr += "." + group
	}
	return gr + "/" + namespace + "/" + name
}
