// Package v1alpha1 holds the addon.open-cluster-management.io/v1alpha1 API
// types, wire-compatible with Open Cluster Management: the storage version
// of the add-on kinds. v1beta1 is served beside it from the same storage.
//
// +kubebuilder:object:generate=true
// +groupName=addon.open-cluster-management.io
package v1alpha1
