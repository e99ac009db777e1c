// Package api is the root of Flotilla's API module: the Open Cluster Management
// types (cluster, work, policy) that the hub serves and the agent reads, with
// controller-gen markers from which the CRDs in manifests/ are generated.
//
// This module imports only k8s.io/apimachinery and k8s.io/api so that any
// client can depend on it without pulling in the hub.
package api
