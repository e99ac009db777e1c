// Package hub runs a Flotilla hub: an embedded control plane (or an existing
// cluster reached through a kubeconfig), the bootstrap objects every hub
// needs, and a controller-runtime manager with leader election, health
// endpoints and metrics, into which the hub controllers are added.
//
// The manager also runs the admission webhook server of package work. With
// the embedded control plane its certificate is issued from the hub's CA and
// it listens on a free loopback port; against an existing cluster the
// operator provides certificate and URL (WebhookOptions). Once the process
// leads and the server answers, the hub points the
// ValidatingWebhookConfiguration at it, and only then reports ready, so
// that no ManifestWork is written unchecked and none is refused for want
// of a listener.
package hub
