// Package proxy is the hub's end of the cluster proxy: it lets a hub user
// reach a managed cluster's API through the hub, over a tunnel that the
// cluster's agent opened, so that the cluster needs no inbound port and the
// hub never dials it.
//
// It owns three things, all served by the hub's own API server (an
// Extension of hub/controlplane), so that the API server's authentication,
// impersonation, audit and priority stay in front:
//
//   - the tunnel, at POST /apis/proxy.flotilla.io/v1/clusters/<c>/tunnel:
//     the agent of cluster <c> (its client certificate, group
//     system:open-cluster-management:<c>) upgrades the connection, which
//     then carries the konnectivity agent protocol (gRPC) to a konnectivity
//     proxy server of that cluster's own;
//   - the door, at /apis/proxy.flotilla.io/v1/clusters/<c>/proxy/<path>:
//     a request there is sent through <c>'s tunnel with the caller's hub
//     user and groups, which the agent impersonates under a prefix;
//   - the authorization of both: the tunnel only for the cluster's own
//     agent, the door for whoever hub RBAC allows `create` on
//     managedclusters/proxy (group cluster.open-cluster-management.io)
//     named <c>.
//
// It watches ManagedClusters and writes one status condition,
// TunnelConnected, from the tunnel's opening or the agent's first status
// (the Available condition), whichever comes first: an accepted cluster
// whose agent has not reported has none yet. A cluster that is denied
// (hubAcceptsClient false) or deleted loses its tunnel at once, and a
// tunnel is closed when the client certificate that opened it expires.
package proxy
