// Package v1alpha1 holds the multicluster.x-k8s.io/v1alpha1 API types of the
// Kubernetes SIG-Multicluster standards: ClusterProfile (the cluster
// inventory, KEP-4322, with access providers, KEP-5339) and the
// vendor-neutral PlacementDecision (KEP-5313). The hub writes both; other
// tools read them.
//
// +kubebuilder:object:generate=true
// +groupName=multicluster.x-k8s.io
package v1alpha1
