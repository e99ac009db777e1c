// Package agent runs a Flotilla agent: the one process per managed cluster
// that registers the cluster with the hub and then pulls its work.
//
// It links only controller-runtime and client-go, never k8s.io/kubernetes,
// so that it stays small. Each capability (registration, work, policy) lives
// in a package of its own below this one, mirroring the hub.
package agent
