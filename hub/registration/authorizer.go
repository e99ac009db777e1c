package registration

import (
	"context"
	"fmt"
	"slices"
	"strings"

	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/util/sets"
	certificateslisters "k8s.io/client-go/listers/certificates/v1"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/client-go/informers"
	rbaclisters "k8s.io/client-go/listers/rbac/v1"
	"k8s.io/kubernetes/plugin/pkg/auth/authorizer/rbac"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	"github.com/flotilla-io/flotilla/hub/bootstraptoken"
	"github.com/flotilla-io/flotilla/internal/identity"
)

// NewAuthorizer returns the hub API server's authorizer for the requests
// of managed clusters' agents, and of agents joining with a bootstrap
// token, consulted before RBAC.
//
// RBAC reads every ClusterRoleBinding for every request that no
// ClusterRoleBinding allows first, and each accepted cluster has one of
// its own: with thousands of clusters, RBAC was a quarter of the hub's CPU
// (docs/benchmarks.md). This authorizer is RBAC itself, over fewer
// bindings: for a user in a cluster's group it reads that cluster's own
// ClusterRoleBinding, by name, and the RoleBindings of the request's
// namespace. It allows only what RBAC would allow through those bindings
// and has no opinion otherwise, so RBAC still decides everything else: a
// binding removed or changed takes effect here as it does there. A user in
// the bootstrap token group (an agent joining) is judged the same way over
// the bootstrap group's own ClusterRoleBinding: a fleet joining at once
// sends several requests per cluster with the bootstrap token, and each
// was a walk of every cluster's ClusterRoleBinding.
func NewAuthorizer(factory informers.SharedInformerFactory) authorizer.Authorizer {
	rb := factory.Rbac().V1()
	return &clusterAuthorizer{csrs: factory.Certificates().V1().CertificateSigningRequests().Lister(), rbac: rbac.New(
		&rbac.RoleGetter{Lister: rb.Roles().Lister()},
		&rbac.RoleBindingLister{Lister: rb.RoleBindings().Lister()},
		&rbac.ClusterRoleGetter{Lister: rb.ClusterRoles().Lister()},
		ownBindings{rb.ClusterRoleBindings().Lister()},
	)}
}

type clusterAuthorizer struct {
	csrs certificateslisters.CertificateSigningRequestLister
	rbac *rbac.RBACAuthorizer
}

func (a *clusterAuthorizer) Authorize(ctx context.Context, attrs authorizer.Attributes) (authorizer.Decision, string, error) {
	u := attrs.GetUser()
	if u == nil {
		return authorizer.DecisionNoOpinion, "", nil
	}
	var bindings []string
	clusters := clustersOf(u)
	switch {
	case len(clusters) > 0:
		if reason := a.refuseCSRRead(clusters, attrs); reason != "" {
			return authorizer.DecisionDeny, reason, nil
		}
		for _, c := range clusters {
			bindings = append(bindings, ClusterRoleName(c))
		}
	case slices.Contains(u.GetGroups(), bootstraptoken.Group):
		bindings = []string{bootstraptoken.GroupBinding().Name}
	default:
		return authorizer.DecisionNoOpinion, "", nil
	}
	decision, reason, err := a.rbac.Authorize(context.WithValue(ctx, bindingsKey{}, bindings), attrs)
	if decision != authorizer.DecisionAllow {
		// RBAC over all bindings decides, and explains a denial.
		return authorizer.DecisionNoOpinion, "", nil
	}
	return decision, reason, err
}

// refuseCSRRead says why a cluster's agent may not read the CSRs attrs
// asks for, or "" when it may or the request reads no CSRs. RBAC lets
// agents get, list and watch CSRs, as OCM's agents need; this narrows it
// to their own clusters' CSRs: lists and watches only with the label
// selector open-cluster-management.io/cluster-name=<own cluster> (OCM's
// agent lists and watches so), gets only of a CSR so labelled.
func (a *clusterAuthorizer) refuseCSRRead(clusters []string, attrs authorizer.Attributes) string {
	if !attrs.IsResourceRequest() || attrs.GetAPIGroup() != certificatesv1.GroupName ||
		attrs.GetResource() != "certificatesigningrequests" || attrs.GetSubresource() != "" {
		return ""
	}
	own := strings.Join(clusters, ", ")
	switch attrs.GetVerb() {
	case "list", "watch":
		reqs, err := attrs.GetLabelSelector()
		if err == nil && selectsOwn(reqs, clusters) {
			return ""
		}
		return fmt.Sprintf("an agent of cluster %s may %s CSRs only with the label selector %s=%s", own, attrs.GetVerb(), clusterv1.ClusterNameLabel, clusters[0])
	case "get":
		csr, err := a.csrs.Get(attrs.GetName())
		if err == nil && slices.Contains(clusters, csr.Labels[clusterv1.ClusterNameLabel]) {
			return ""
		}
		return fmt.Sprintf("an agent of cluster %s may get only CSRs labelled %s=%s", own, clusterv1.ClusterNameLabel, clusters[0])
	}
	return ""
}

// selectsOwn says whether a label selector selects only CSRs of the
// clusters own: one of its requirements is the cluster-name label equal
// to (or in) clusters of own.
func selectsOwn(reqs labels.Requirements, own []string) bool {
	for _, r := range reqs {
		if r.Key() != clusterv1.ClusterNameLabel {
			continue
		}
		switch r.Operator() {
		case selection.Equals, selection.DoubleEquals, selection.In:
			values := sets.New(r.ValuesUnsorted()...)
			if values.Len() > 0 && sets.New(own...).IsSuperset(values) {
				return true
			}
		}
	}
	return false
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

// bindingsKey carries to ownBindings the names of the ClusterRoleBindings
// that may allow the request: its clusters' own, or the bootstrap group's.
type bindingsKey struct{}

// ownBindings lists, of all ClusterRoleBindings, only those named in the
// request's context.
type ownBindings struct {
	lister rbaclisters.ClusterRoleBindingLister
}

func (b ownBindings) ListClusterRoleBindings(ctx context.Context) ([]*rbacv1.ClusterRoleBinding, error) {
	names, _ := ctx.Value(bindingsKey{}).([]string)
	var own []*rbacv1.ClusterRoleBinding
	for _, name := range names {
		if crb, err := b.lister.Get(name); err == nil {
			own = append(own, crb)
		}
	}
	return own, nil
}
