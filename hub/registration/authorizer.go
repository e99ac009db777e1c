package registration

import (
	"context"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/client-go/informers"
	rbaclisters "k8s.io/client-go/listers/rbac/v1"
	"k8s.io/kubernetes/plugin/pkg/auth/authorizer/rbac"

	"github.com/flotilla-io/flotilla/internal/identity"
)

// NewAuthorizer returns the hub API server's authorizer for the requests
// of managed clusters' agents, consulted before RBAC.
//
// RBAC reads every ClusterRoleBinding for every request that no
// ClusterRoleBinding allows first, and each accepted cluster has one of
// its own: with thousands of clusters, RBAC was a quarter of the hub's CPU
// (docs/benchmarks.md). This authorizer is RBAC itself, over fewer
// bindings: for a user in a cluster's group it reads that cluster's own
// ClusterRoleBinding, by name, and the RoleBindings of the request's
// namespace. It allows only what RBAC would allow through those bindings
// and has no opinion otherwise, so RBAC still decides everything else: a
// binding removed or changed takes effect here as it does there.
func NewAuthorizer(factory informers.SharedInformerFactory) authorizer.Authorizer {
	rb := factory.Rbac().V1()
	return &clusterAuthorizer{rbac: rbac.New(
		&rbac.RoleGetter{Lister: rb.Roles().Lister()},
		&rbac.RoleBindingLister{Lister: rb.RoleBindings().Lister()},
		&rbac.ClusterRoleGetter{Lister: rb.ClusterRoles().Lister()},
		ownBindings{rb.ClusterRoleBindings().Lister()},
	)}
}

type clusterAuthorizer struct {
	rbac *rbac.RBACAuthorizer
}

func (a *clusterAuthorizer) Authorize(ctx context.Context, attrs authorizer.Attributes) (authorizer.Decision, string, error) {
	u := attrs.GetUser()
	if u == nil {
		return authorizer.DecisionNoOpinion, "", nil
	}
	clusters := clustersOf(u)
	if len(clusters) == 0 {
		return authorizer.DecisionNoOpinion, "", nil
	}
	decision, reason, err := a.rbac.Authorize(context.WithValue(ctx, clustersKey{}, clusters), attrs)
	if decision != authorizer.DecisionAllow {
		// RBAC over all bindings decides, and explains a denial.
		return authorizer.DecisionNoOpinion, "", nil
	}
	return decision, reason, err
}

// clustersOf lists the clusters whose group u is in.
func clustersOf(u user.Info) []string {
	var clusters []string
	for _, g := range u.GetGroups() {
		if c, ok := strings.CutPrefix(g, identity.Prefix); ok && c != "" && g != identity.ManagedClustersGroup {
			clusters = append(clusters, c)
		}
	}
	return clusters
}

// clustersKey carries the requesting user's clusters to ownBindings.
type clustersKey struct{}

// ownBindings lists, of all ClusterRoleBindings, only those of the
// clusters in the request's context.
type ownBindings struct {
	lister rbaclisters.ClusterRoleBindingLister
}

func (b ownBindings) ListClusterRoleBindings(ctx context.Context) ([]*rbacv1.ClusterRoleBinding, error) {
	clusters, _ := ctx.Value(clustersKey{}).([]string)
	var own []*rbacv1.ClusterRoleBinding
	for _, c := range clusters {
		if crb, err := b.lister.Get(ClusterRoleName(c)); err == nil {
			own = append(own, crb)
		}
	}
	return own, nil
}
