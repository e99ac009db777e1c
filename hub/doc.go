// Package hub runs a Flotilla hub: an embedded control plane (or an existing
// cluster reached through a kubeconfig), the bootstrap objects every hub
// needs, and a controller-runtime manager with leader election, health
// endpoints and metrics, into which the hub controllers are added.
package hub
