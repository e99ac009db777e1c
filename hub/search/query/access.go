package query

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
)

// Group, Resource and the subresources of the grants that let a hub user
// see a cluster's objects in search results: create on
// managedclusters/proxy (whoever may reach the cluster may find its
// objects) or, narrower, get on managedclusters/search, both named after
// the cluster.
const (
	ClusterGroup      = "cluster.open-cluster-management.io"
	ClusterResource   = "managedclusters"
	ProxySubresource  = "proxy"
	SearchSubresource = "search"
)

// AccessTTL is how long a user's visible clusters are remembered.
const AccessTTL = 10 * time.Second

// access decides which clusters a user sees, remembering each user's
// answer for AccessTTL.
type access struct {
	authz authorizer.Authorizer
	// clusters lists the clusters there are to see.
	clusters func(ctx context.Context) ([]string, error)
	now      func() time.Time

	mu     sync.Mutex
	byUser map[string]visible
	known  struct {
		names []string
		at    time.Time
	}
}

// visible is what one user may see: every cluster, or these.
type visible struct {
	all      bool
	clusters []string
	at       time.Time
}

// grants are the attributes that let u see cluster ("" is every cluster,
// which RBAC allows only by a rule without resourceNames).
func grants(u user.Info, cluster string) []authorizer.AttributesRecord {
	rec := func(verb, sub string) authorizer.AttributesRecord {
		return authorizer.AttributesRecord{User: u, Verb: verb, APIGroup: ClusterGroup, APIVersion: "v1",
			Resource: ClusterResource, Subresource: sub, Name: cluster, ResourceRequest: true}
	}
	return []authorizer.AttributesRecord{rec("create", ProxySubresource), rec("get", SearchSubresource)}
}

func (a *access) allows(ctx context.Context, u user.Info, cluster string) (bool, error) {
	var errs []string
	for _, g := range grants(u, cluster) {
		d, _, err := a.authz.Authorize(ctx, g)
		if d == authorizer.DecisionAllow {
			return true, nil
		}
		if err != nil {
			errs = append(errs, err.Error())
		}
	}
	if len(errs) > 0 {
		return false, fmt.Errorf("authorize: %s", strings.Join(errs, "; "))
	}
	return false, nil
}

// visibleTo returns the clusters u may see: all true for every one, else
// the list (empty when none).
func (a *access) visibleTo(ctx context.Context, u user.Info) (visible, error) {
	key := userKey(u)
	a.mu.Lock()
	v, ok := a.byUser[key]
	a.mu.Unlock()
	if ok && a.now().Sub(v.at) < AccessTTL {
		return v, nil
	}
	v = visible{at: a.now()}
	all, err := a.allows(ctx, u, "")
	if err != nil {
		return visible{}, err
	}
	if all {
		v.all = true
	} else {
		names, err := a.knownClusters(ctx)
		if err != nil {
			return visible{}, err
		}
		v.clusters = []string{}
		for _, c := range names {
			ok, err := a.allows(ctx, u, c)
			if err != nil {
				return visible{}, err
			}
			if ok {
				v.clusters = append(v.clusters, c)
			}
		}
	}
	a.mu.Lock()
	for k, old := range a.byUser {
		if a.now().Sub(old.at) >= AccessTTL {
			delete(a.byUser, k)
		}
	}
	a.byUser[key] = v
	a.mu.Unlock()
	return v, nil
}

// knownClusters are the clusters the index holds, remembered for
// AccessTTL.
func (a *access) knownClusters(ctx context.Context) ([]string, error) {
	a.mu.Lock()
	names, at := a.known.names, a.known.at
	a.mu.Unlock()
	if names != nil && a.now().Sub(at) < AccessTTL {
		return names, nil
	}
	names, err := a.clusters(ctx)
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	a.mu.Lock()
	a.known.names, a.known.at = names, a.now()
	a.mu.Unlock()
	return names, nil
}

// clustersFor is the store's Clusters for a query by u naming want
// (nil: any) and excluding not: nil is every cluster, an empty list none.
func (a *access) clustersFor(ctx context.Context, u user.Info, want, not []string) ([]string, error) {
	v, err := a.visibleTo(ctx, u)
	if err != nil {
		return nil, err
	}
	var out []string
	switch {
	case v.all && want == nil && len(not) == 0:
		return nil, nil
	case v.all && want == nil:
		known, err := a.knownClusters(ctx)
		if err != nil {
			return nil, err
		}
		out = slices.Clone(known)
	case v.all:
		out = slices.Clone(want)
	case want == nil:
		out = slices.Clone(v.clusters)
	default:
		out = []string{}
		for _, c := range want {
			if slices.Contains(v.clusters, c) {
				out = append(out, c)
			}
		}
	}
	out = slices.DeleteFunc(out, func(c string) bool { return slices.Contains(not, c) })
	if out == nil {
		out = []string{} // none, never "every cluster"
	}
	return out, nil
}

// userKey tells users apart by name and groups.
func userKey(u user.Info) string {
	groups := slices.Clone(u.GetGroups())
	sort.Strings(groups)
	return u.GetName() + "\x00" + strings.Join(groups, "\x00")
}
