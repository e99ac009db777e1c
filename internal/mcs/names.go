package mcs

import (
	"crypto/sha256"
	"encoding/base32"
	"strings"
)

const (
	// SetNamespacePrefix begins the name of each cluster set's namespace on
	// the hub, where the hub writes the set's ImportedServices.
	SetNamespacePrefix = "flotilla-clusterset-"

	// ClusterSetLabel is on each cluster set namespace and on everything the
	// agent writes into its cluster for an import: the set it came from.
	ClusterSetLabel = "mcs.flotilla.io/clusterset"
	// ClusterLabel is on each ExportedService: the exporting cluster.
	ClusterLabel = "mcs.flotilla.io/cluster"
	// ServiceNamespaceLabel and ServiceNameLabel are on ExportedServices and
	// ImportedServices: the Service they are about, for selection.
	ServiceNamespaceLabel = "mcs.flotilla.io/service-namespace"
	ServiceNameLabel      = "mcs.flotilla.io/service-name"

	// ManagedBy is the endpointslice.kubernetes.io/managed-by of the
	// EndpointSlices the agent writes for imports, and the
	// app.kubernetes.io/managed-by of its ServiceImports and derived
	// Services: never the built-in controller's, so it leaves them alone.
	ManagedBy = "mcs.flotilla.io"

	// DerivedServiceAnnotation on a ServiceImport names the ClusterIP
	// Service that carries its cluster-set IP (as in mcs-api's reference
	// controllers).
	DerivedServiceAnnotation = "multicluster.kubernetes.io/derived-service"
)

// maxName is the longest name of a namespace (a DNS label).
const maxName = 63

// SetNamespace returns the hub namespace of cluster set set: the prefix
// and the set's name, or, where that is longer than a namespace name may
// be, the prefix, as much of the name as fits and a hash of the whole.
func SetNamespace(set string) string {
	name := SetNamespacePrefix + set
	if len(name) <= maxName {
		return name
	}
	h := hash(set)[:8]
	return strings.TrimRight(name[:maxName-len(h)-1], "-") + "-" + h
}

// ObjectName returns the name of the ExportedService and ImportedService
// of Service namespace/name: <namespace>.<name>.
func ObjectName(namespace, name string) string {
	return namespace + "." + name
}

// DerivedServiceName returns the name of the ClusterIP Service that holds
// the cluster-set IP of imported service namespace/name in an importing
// cluster: "derived-" and the first 10 characters of the lower-case,
// unpadded base32hex of the SHA-256 of "namespace/name", as mcs-api's
// reference controllers and Cilium name it.
func DerivedServiceName(namespace, name string) string {
	return "derived-" + hash(namespace + "/" + name)[:10]
}

func hash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return strings.ToLower(base32.HexEncoding.WithPadding(base32.NoPadding).EncodeToString(sum[:]))
}
