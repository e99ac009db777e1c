// Package bootstrap publishes what agents need before they hold any
// credential: the public cluster-info ConfigMap from which they learn the
// hub's CA, and the RBAC that lets anonymous clients read that one ConfigMap.
// It runs once at start, both against the embedded control plane and against
// an existing cluster, after the hub's CRDs are installed (internal/kubeapply).
package bootstrap
