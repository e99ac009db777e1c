package registration

import (
	"context"
	"fmt"
	"slices"
	"strings"

	certificatesv1 "k8s.io/api/certificates/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apiserver/pkg/authentication/serviceaccount"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/client-go/informers"
	certificateslisters "k8s.io/client-go/listers/certificates/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/plugin/pkg/auth/authorizer/rbac"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	"github.com/flotilla-io/flotilla/hub/bootstraptoken"
	"github.com/flotilla-io/flotilla/internal/identity"
)

// NewAuthorizer returns the hub API server's authorizer, consulted before
// RBAC: RBAC itself, over only the ClusterRoleBindings that name the
// requesting user or one of its groups.
//
// RBAC reads every ClusterRoleBinding for every request that no
// ClusterRoleBinding allows first, and each accepted cluster has one of
// its own: with thousands of clusters, RBAC was a quarter of the hub's CPU
// (docs/benchmarks.md). This authorizer finds a user's bindings through an
// index of the bindings by the users and groups they name, which are the
// only ones RBAC would apply to it; the RoleBindings of the request's
// namespace it reads as RBAC does. So it allows what RBAC allows, and a
// binding removed or changed takes effect here as it does there. What it
// does not allow is refused outright for a cluster's agent and for an
// agent joining with a bootstrap token, whom nothing but RBAC could allow
// (unless they are also in system:masters, whose requests are left to the
// authorizers after it). Everything else it leaves to RBAC, which decides
// and explains as before. Agents asking, until the hub accepted their
// cluster, whether it did were each a walk of every cluster's binding.
func NewAuthorizer(factory informers.SharedInformerFactory) authorizer.Authorizer {
	rb := factory.Rbac().V1()
	crbs := rb.ClusterRoleBindings().Informer()
	if err := crbs.AddIndexers(cache.Indexers{subjectIndex: subjectKeys}); err != nil {
		// Only an informer that already stopped refuses; the bindings
		// are then read as RBAC reads them, all of them.
		klog.Background().Error(err, "Cannot index ClusterRoleBindings by subject")
	}
	return &clusterAuthorizer{csrs: factory.Certificates().V1().CertificateSigningRequests().Lister(), rbac: rbac.New(
		&rbac.RoleGetter{Lister: rb.Roles().Lister()},
		&rbac.RoleBindingLister{Lister: rb.RoleBindings().Lister()},
		&rbac.ClusterRoleGetter{Lister: rb.ClusterRoles().Lister()},
		subjectBindings{crbs.GetIndexer()},
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
	groups := u.GetGroups()
	clusters := clustersOf(u)
	if len(clusters) > 0 {
		if reason := a.refuseCSRRead(clusters, attrs); reason != "" {
			return authorizer.DecisionDeny, reason, nil
		}
	}
	decision, reason, err := a.rbac.Authorize(context.WithValue(ctx, userKey{}, u), attrs)
	switch {
	case decision == authorizer.DecisionAllow:
		return decision, reason, err
	case err == nil && (len(clusters) > 0 || slices.Contains(groups, bootstraptoken.Group)) && !slices.Contains(groups, user.SystemPrivilegedGroup):
		// RBAC over every binding would find no other: refused as it would be.
		return authorizer.DecisionDeny, reason, nil
	}
	return authorizer.DecisionNoOpinion, "", nil
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

// userKey carries the requesting user to subjectBindings.
type userKey struct{}

// subjectIndex indexes ClusterRoleBindings by the users and groups they
// bind, as subjectKeys names them.
const subjectIndex = "flotilla.io/subject"

// subjectKeys names the users and groups a ClusterRoleBinding binds:
// "user:<name>" for a user or a service account (by its user name),
// "group:<name>" for a group. A service account without a namespace binds
// no one through a ClusterRoleBinding.
func subjectKeys(obj any) ([]string, error) {
	crb, ok := obj.(*rbacv1.ClusterRoleBinding)
	if !ok {
		return nil, nil
	}
	keys := make([]string, 0, len(crb.Subjects))
	for _, s := range crb.Subjects {
		switch s.Kind {
		case rbacv1.UserKind:
			keys = append(keys, "user:"+s.Name)
		case rbacv1.GroupKind:
			keys = append(keys, "group:"+s.Name)
		case rbacv1.ServiceAccountKind:
			if s.Namespace != "" {
				keys = append(keys, "user:"+serviceaccount.MakeUsername(s.Namespace, s.Name))
			}
		}
	}
	return keys, nil
}

// subjectBindings lists, of all ClusterRoleBindings, those that name the
// user in the request's context or one of its groups.
type subjectBindings struct {
	indexer cache.Indexer
}

func (b subjectBindings) ListClusterRoleBindings(ctx context.Context) ([]*rbacv1.ClusterRoleBinding, error) {
	u, _ := ctx.Value(userKey{}).(user.Info)
	if u == nil {
		return nil, nil
	}
	var bound []*rbacv1.ClusterRoleBinding
	add := func(key string) error {
		objs, err := b.indexer.ByIndex(subjectIndex, key)
		for _, o := range objs {
			// A binding names a user and its groups rarely more than once:
			// a look through the few found is cheaper than a set.
			if crb, ok := o.(*rbacv1.ClusterRoleBinding); ok && !slices.Contains(bound, crb) {
				bound = append(bound, crb)
			}
		}
		return err
	}
	if err := add("user:" + u.GetName()); err != nil {
		// No index (it could not be added): every binding, as RBAC reads them.
		return b.all(), nil
	}
	for _, g := range u.GetGroups() {
		if err := add("group:" + g); err != nil {
			return b.all(), nil
		}
	}
	return bound, nil
}

// all lists every ClusterRoleBinding.
func (b subjectBindings) all() []*rbacv1.ClusterRoleBinding {
	var all []*rbacv1.ClusterRoleBinding
	for _, o := range b.indexer.List() {
		if crb, ok := o.(*rbacv1.ClusterRoleBinding); ok {
			all = append(all, crb)
		}
	}
	return all
}
