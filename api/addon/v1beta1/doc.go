// Package v1beta1 holds the addon.open-cluster-management.io/v1beta1 API
// types, wire-compatible with Open Cluster Management: the version OCM's
// agents watch. It is served beside v1alpha1, which is stored; the
// versions convert by name (no conversion webhook), so only the fields the
// two share keep their values across versions. Structures identical in
// both versions are v1alpha1's.
//
// +kubebuilder:object:generate=true
// +groupName=addon.open-cluster-management.io
package v1beta1
