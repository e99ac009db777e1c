// Package proxy is the agent's end of the cluster proxy (see hub/proxy):
// it keeps one outbound tunnel open to the hub and forwards what arrives
// through it to the managed cluster's API server, impersonating the hub
// caller under a prefix.
//
// The tunnel is an HTTP upgrade of a request to the hub's API server,
// authenticated with the agent's hub client certificate, that then carries
// the konnectivity agent protocol (the konnectivity library's agent
// client). It is opened with the hub session's TLS configuration and
// dialer, so it reopens with each rotated certificate, and again as soon
// as the hub accepts connections after an outage. Each dial from the hub reaches a
// forwarder on the agent's loopback interface that accepts only requests
// bearing the secret this agent gave the hub with its tunnel.
//
// The forwarder sends each request on as user <user prefix><hub user>
// with groups <group prefix><hub group>, so the managed cluster's own RBAC
// decides what a hub user may do there, and its audit log names them. A
// request without a hub user is refused; the caller's own credentials and
// impersonation headers never reach the cluster.
package proxy
