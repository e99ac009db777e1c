// Package bootstrap installs what a hub API server must serve before any hub
// controller runs: the CRDs of the OCM APIs (created, or upgraded in place)
// and the public cluster-info ConfigMap from which agents learn the hub's CA.
//
// It writes CustomResourceDefinitions, kube-public/cluster-info and the RBAC
// that lets anonymous clients read that one ConfigMap. It runs once at start,
// both against the embedded control plane and against an existing cluster.
package bootstrap
