// Package tunnel holds the names that the hub's cluster proxy
// (hub/proxy) and the agent's end of it (agent/proxy) share: the hub paths,
// the upgrade that opens a tunnel, and the headers and gRPC metadata that
// cross it.
package tunnel

import (
	"net/http"
	"strings"
)

const (
	// Group is the API group of the cluster proxy's paths on the hub.
	Group = "proxy.flotilla.io"
	// Resource is the resource of those paths: one per managed cluster.
	Resource = "clusters"
	// ProxySubresource is the door: a caller's request to
	// <prefix><cluster>/proxy/<path> reaches <path> on the cluster.
	ProxySubresource = "proxy"
	// TunnelSubresource is where a cluster's agent opens its tunnel.
	TunnelSubresource = "tunnel"
	// Prefix is the path below which the hub serves every cluster.
	Prefix = "/apis/" + Group + "/v1/" + Resource + "/"

	// UpgradeProtocol is the Upgrade header of the agent's tunnel
	// request: once the hub answers 101, the connection carries the
	// konnectivity agent protocol (gRPC).
	UpgradeProtocol = "flotilla-tunnel"

	// UserHeader and GroupHeader carry the hub identity of the caller
	// from the hub to the agent, which impersonates it (prefixed).
	UserHeader  = "X-Flotilla-User"
	GroupHeader = "X-Flotilla-Group"
	// TokenHeader carries the secret that the agent gave the hub for its
	// tunnel, so that only requests from the tunnel reach the agent's
	// forwarder.
	TokenHeader = "X-Flotilla-Tunnel-Token"

	// BackendAddressMetadata and BackendTokenMetadata are gRPC metadata
	// of the agent's connection: where the agent's end of the tunnel
	// forwards from (what the hub asks it to dial) and the secret it
	// expects in TokenHeader.
	BackendAddressMetadata = "flotilla-backend-address"
	BackendTokenMetadata   = "flotilla-backend-token"
	// ConditionConnected is the ManagedCluster condition in which the hub
	// says whether the cluster's tunnel is open.
	ConditionConnected = "TunnelConnected"

	// ClusterMetadata names the cluster of a dial through the hub's
	// proxy server.
	ClusterMetadata = "flotilla-cluster"
)

// ProxyPath is the hub path under which cluster's API is served.
func ProxyPath(cluster string) string {
	return Prefix + cluster + "/" + ProxySubresource
}

// TunnelPath is the hub path where cluster's agent opens its tunnel.
func TunnelPath(cluster string) string {
	return Prefix + cluster + "/" + TunnelSubresource
}

// ParsePath splits a path below Prefix into the cluster, the subresource
// and the rest (with its leading slash); ok is false for any other path.
func ParsePath(path string) (cluster, subresource, rest string, ok bool) {
	tail, found := strings.CutPrefix(path, Prefix)
	if !found {
		return "", "", "", false
	}
	cluster, tail, _ = strings.Cut(tail, "/")
	subresource, rest, _ = strings.Cut(tail, "/")
	if cluster == "" || subresource == "" {
		return "", "", "", false
	}
	return cluster, subresource, "/" + rest, true
}

// StripIdentity removes from h every header through which a caller could
// claim an identity or a tunnel of its own: the hub sets them itself.
func StripIdentity(h http.Header) {
	for k := range h {
		lk := strings.ToLower(k)
		if strings.HasPrefix(lk, "impersonate-") || strings.HasPrefix(lk, "x-flotilla-") || lk == "authorization" {
			h.Del(k)
		}
	}
}
