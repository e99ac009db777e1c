// Package v1alpha1 holds the cluster.open-cluster-management.io/v1alpha1 API types, wire-compatible with Open Cluster Management.
//
// +kubebuilder:object:generate=true
// +groupName=cluster.open-cluster-management.io
package v1alpha1
