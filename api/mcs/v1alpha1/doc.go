// Package v1alpha1 holds the mcs.flotilla.io/v1alpha1 API types: the hub's
// side of the Multi-Cluster Services API (KEP-1645) in pull mode.
//
// The MCS kinds themselves (ServiceExport, ServiceImport) live on the
// managed clusters and come from sigs.k8s.io/mcs-api. On the hub, each
// cluster's agent publishes what its cluster exports as an ExportedService
// in its own cluster namespace; the hub merges the exports of a cluster set
// into one ImportedService per exported namespace and name, in the set's
// namespace, which every member's agent reads and writes into its cluster
// as a ServiceImport and EndpointSlices.
//
// +kubebuilder:object:generate=true
// +groupName=mcs.flotilla.io
package v1alpha1
