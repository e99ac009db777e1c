package search

import (
	"context"
	"fmt"
	"slices"

	"k8s.io/apiserver/pkg/authorization/authorizer"

	searchv1alpha1 "github.com/flotilla-io/flotilla/api/search/v1alpha1"
	"github.com/flotilla-io/flotilla/hub/search/query"
)

// AgentGroupPrefix begins the group that names a cluster's agents
// (system:open-cluster-management:<cluster>), set by the hub's CSR signer.
const AgentGroupPrefix = "system:open-cluster-management:"

// The resources the API server sees in the extension's paths:
// ingest/<cluster>/changes is resource ingest, name <cluster>,
// subresource changes; search and resources/… are the query's.
const (
	ingestResource    = "ingest"
	searchResource    = "search"
	resourcesResource = "resources"
)

// ownClusterGrant is the hub RBAC an agent writing cluster c's rows must
// hold: get on its ManagedCluster, which the hub grants the cluster's
// accepted agent alone.
func ownClusterGrant(a authorizer.Attributes) authorizer.AttributesRecord {
	return authorizer.AttributesRecord{
		User: a.GetUser(), Verb: "get", APIGroup: "cluster.open-cluster-management.io", APIVersion: "v1",
		Resource: "managedclusters", Name: a.GetName(), ResourceRequest: true,
	}
}

// Authorizer decides about the extension's paths and hands every other
// request (SearchConfigs among them) to next. The ingest paths of cluster
// c are for c's accepted agent alone: POST changes, GET versions. The
// query paths are for every authenticated user (query.Authorize): the
// query shows each only the clusters its grants name.
func Authorizer(next authorizer.Authorizer) authorizer.Authorizer {
	return authorizer.AuthorizerFunc(func(ctx context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
		if !a.IsResourceRequest() || a.GetAPIGroup() != searchv1alpha1.GroupName {
			return next.Authorize(ctx, a)
		}
		switch a.GetResource() {
		case searchResource, resourcesResource:
			d, reason := query.Authorize(a)
			return d, reason, nil
		case ingestResource:
			return authorizeIngest(ctx, next, a)
		}
		return next.Authorize(ctx, a)
	})
}

func authorizeIngest(ctx context.Context, next authorizer.Authorizer, a authorizer.Attributes) (authorizer.Decision, string, error) {
	cluster := a.GetName()
	switch {
	case cluster == "":
		return authorizer.DecisionDeny, "the search ingest serves named clusters only: ingest/<cluster>/changes and ingest/<cluster>/versions", nil
	case a.GetSubresource() == "changes" && a.GetVerb() == "create", a.GetSubresource() == "versions" && a.GetVerb() == "get":
	default:
		return authorizer.DecisionDeny, "the search ingest takes POST ingest/<cluster>/changes and GET ingest/<cluster>/versions only", nil
	}
	u := a.GetUser()
	if u == nil || !slices.Contains(u.GetGroups(), AgentGroupPrefix+cluster) {
		name := "anonymous"
		if u != nil {
			name = u.GetName()
		}
		return authorizer.DecisionDeny, fmt.Sprintf("only the agent of cluster %s may write its search index rows; %s is not", cluster, name), nil
	}
	// The group is in every certificate signed for the cluster; the hub's
	// RBAC says which of them is its accepted agent.
	d, _, err := next.Authorize(ctx, ownClusterGrant(a))
	if d == authorizer.DecisionAllow {
		return d, "", err
	}
	return authorizer.DecisionDeny, fmt.Sprintf("only the accepted agent of cluster %s may write its search index rows: %s may not get ManagedCluster %s", cluster, u.GetName(), cluster), err
}
