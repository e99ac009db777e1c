// Package hub runs a Flotilla hub: an embedded control plane (or an existing
// cluster reached through a kubeconfig), the bootstrap objects every hub
// needs, and a controller-runtime manager with leader election, health
// endpoints and metrics, into which the hub controllers are added.
//
// The manager also runs the webhook server of packages work and policy. With
// the embedded control plane its certificate is issued from the hub's CA and
// it listens on a free loopback port; against an existing cluster the
// operator provides certificate and URL (WebhookOptions). Once the server
// answers, every hub process, leader or standby, points the
// ValidatingWebhookConfigurations at the address all replicas share (a
// Service, or a port shared with SO_REUSEPORT), and only then reports
// ready, so that no ManifestWork is written unchecked and none is refused
// for want of a listener, even while the controllers change hands.
//
// Only the leader runs the controllers (Lease); the embedded hub keeps its
// identity in the election in its data directory, so that a restarted or
// restored hub takes back its lease at once. See docs/ha.md.
package hub
