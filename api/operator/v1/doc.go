// Package v1 holds the operator.open-cluster-management.io/v1 ClusterManager
// type, wire-compatible with Open Cluster Management. OCM's operator
// installs a hub from it; a Flotilla hub is installed by other means and
// serves one ClusterManager, cluster-manager, whose status describes the
// running hub, so that tools written for OCM (clusteradm) recognise it.
//
// +kubebuilder:object:generate=true
// +groupName=operator.open-cluster-management.io
package v1
