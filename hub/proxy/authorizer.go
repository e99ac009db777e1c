package proxy

import (
	"context"
	"fmt"
	"slices"

	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/flotilla-io/flotilla/internal/tunnel"
)

// AgentGroupPrefix begins the group that names a cluster's agents
// (system:open-cluster-management:<cluster>), set by the hub's CSR signer.
const AgentGroupPrefix = "system:open-cluster-management:"

// proxyGrant is the hub RBAC that the door asks of its callers: create
// on managedclusters/proxy, named after the cluster.
func proxyGrant(a authorizer.Attributes) authorizer.AttributesRecord {
	return authorizer.AttributesRecord{
		User:            a.GetUser(),
		Verb:            "create",
		APIGroup:        "cluster.open-cluster-management.io",
		APIVersion:      "v1",
		Resource:        "managedclusters",
		Subresource:     "proxy",
		Name:            a.GetName(),
		ResourceRequest: true,
	}
}

// ownClusterGrant is the hub RBAC that an agent opening cluster c's tunnel
// must hold: get on its ManagedCluster, which the hub grants the
// cluster's accepted agent alone.
func ownClusterGrant(a authorizer.Attributes) authorizer.AttributesRecord {
	return authorizer.AttributesRecord{
		User:            a.GetUser(),
		Verb:            "get",
		APIGroup:        "cluster.open-cluster-management.io",
		APIVersion:      "v1",
		Resource:        "managedclusters",
		Name:            a.GetName(),
		ResourceRequest: true,
	}
}

// Authorizer decides about the cluster proxy's paths and hands every
// other request to next. The tunnel of cluster c is for c's agents alone;
// the door of c asks next whether the caller may create
// managedclusters/proxy named c, so that one RBAC rule grants a cluster.
func Authorizer(next authorizer.Authorizer) authorizer.Authorizer {
	return authorizer.AuthorizerFunc(func(ctx context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
		if !a.IsResourceRequest() || a.GetAPIGroup() != tunnel.Group || a.GetResource() != tunnel.Resource {
			return next.Authorize(ctx, a)
		}
		cluster := a.GetName()
		if cluster == "" {
			return authorizer.DecisionDeny, "the cluster proxy serves named clusters only: /apis/proxy.flotilla.io/v1/clusters/<cluster>/proxy/", nil
		}
		switch a.GetSubresource() {
		case tunnel.TunnelSubresource:
			if a.GetUser() == nil || !slices.Contains(a.GetUser().GetGroups(), AgentGroupPrefix+cluster) {
				return authorizer.DecisionDeny, fmt.Sprintf("only the agent of cluster %s may open its tunnel", cluster), nil
			}
			// The group is in every certificate signed for the cluster; the
			// hub's RBAC says which of them is the cluster's agent (once it
			// recorded one, the accepted agent's user alone).
			d, _, err := next.Authorize(ctx, ownClusterGrant(a))
			if d == authorizer.DecisionAllow {
				return d, "", err
			}
			return authorizer.DecisionDeny, fmt.Sprintf("only the accepted agent of cluster %s may open its tunnel: %s may not get ManagedCluster %s", cluster, a.GetUser().GetName(), cluster), err
		case tunnel.ProxySubresource:
			d, reason, err := next.Authorize(ctx, proxyGrant(a))
			if d == authorizer.DecisionAllow {
				return d, reason, err
			}
			return authorizer.DecisionDeny, fmt.Sprintf("reaching cluster %s through the hub needs create on managedclusters/proxy named %s (group cluster.open-cluster-management.io)", cluster, cluster), err
		default:
			return authorizer.DecisionDeny, "the cluster proxy serves clusters/<cluster>/proxy only", nil
		}
	})
}
