// Package v1beta2 holds the cluster.open-cluster-management.io/v1beta2 API types, wire-compatible with Open Cluster Management.
//
// +kubebuilder:object:generate=true
// +groupName=cluster.open-cluster-management.io
package v1beta2
