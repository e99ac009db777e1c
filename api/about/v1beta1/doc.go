// Package v1beta1 holds the about.k8s.io/v1beta1 API types of the
// SIG-Multicluster About API (KEP-2149): ClusterProperty, facts a cluster
// states about itself. It is the managed cluster owner's API: the agent only
// reads it, where it is served, into cluster claims.
//
// +kubebuilder:object:generate=true
// +groupName=about.k8s.io
package v1beta1
