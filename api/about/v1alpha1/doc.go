// Package v1alpha1 holds the about.k8s.io/v1alpha1 API types of the
// SIG-Multicluster About API (KEP-2149): ClusterProperty, the same kind as
// in v1beta1, field for field. The SIG's CRD still serves this version
// (v1beta1 is stored), and tools written against it create v1alpha1
// objects; the agent reads whichever version the cluster serves.
//
// +kubebuilder:object:generate=true
// +groupName=about.k8s.io
package v1alpha1
