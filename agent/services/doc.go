// Package services is the agent's side of multi-cluster services
// (KEP-1645, sigs.k8s.io/mcs-api): it publishes what its cluster exports
// (ServiceExports, their Services and endpoints) to the hub as
// ExportedServices in the cluster's own namespace, and writes what its
// cluster imports (the hub's ImportedServices of the cluster's set) into
// the cluster as ServiceImports, derived Services and EndpointSlices, as
// CoreDNS's multicluster support reads them.
package services
