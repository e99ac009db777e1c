// Package v1 holds the policy.open-cluster-management.io/v1 API types, wire-compatible with Open Cluster Management.
//
// +kubebuilder:object:generate=true
// +groupName=policy.open-cluster-management.io
package v1
