// Package credentialplugin is `flotilla credential-plugin`, the kubeconfig
// exec plugin (the ClusterProfile access provider "flotilla") that hands
// a consumer a short-lived hub credential for reaching a cluster through
// the hub.
package credentialplugin
