package framework

import (
	"context"
	"maps"
	"strings"
	"sync"

	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/client-go/informers"
)

// RequestLog counts the requests a hub's API server authorized or
// refused, by user, as its authorizer sees them: every request reaches
// the authorizer, so that a test can tell what one identity asked of the
// hub (an agent's reads of its ManagedCluster, say) among all the others.
type RequestLog struct {
	mu     sync.Mutex
	counts map[string]map[string]int
}

func newRequestLog() *RequestLog {
	return &RequestLog{counts: map[string]map[string]int{}}
}

// Counts returns a copy of user's requests so far, by "verb resource"
// ("get managedclusters", "update leases", "patch managedclusters/status";
// a non-resource request by "verb path").
func (l *RequestLog) Counts(user string) map[string]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return maps.Clone(l.counts[user])
}

// authorizer returns the authorizer next makes with l counting in front of it.
func (l *RequestLog) authorizer(next func(informers.SharedInformerFactory) authorizer.Authorizer) func(informers.SharedInformerFactory) authorizer.Authorizer {
	return func(f informers.SharedInformerFactory) authorizer.Authorizer {
		return &countingAuthorizer{log: l, next: next(f)}
	}
}

type countingAuthorizer struct {
	log  *RequestLog
	next authorizer.Authorizer
}

func (a *countingAuthorizer) Authorize(ctx context.Context, attrs authorizer.Attributes) (authorizer.Decision, string, error) {
	what := attrs.GetVerb() + " " + attrs.GetPath()
	if attrs.IsResourceRequest() {
		what = attrs.GetVerb() + " " + strings.TrimSuffix(attrs.GetResource()+"/"+attrs.GetSubresource(), "/")
	}
	if u := attrs.GetUser(); u != nil {
		a.log.mu.Lock()
		byUser := a.log.counts[u.GetName()]
		if byUser == nil {
			byUser = map[string]int{}
			a.log.counts[u.GetName()] = byUser
		}
		byUser[what]++
		a.log.mu.Unlock()
	}
	return a.next.Authorize(ctx, attrs)
}

// NewRequestLog returns an empty log for a control plane this package
// does not start (a spoke of controlplane.Start): give it Authorizer.
func NewRequestLog() *RequestLog { return newRequestLog() }

// Authorizer is a controlplane.Options.Authorizer that counts every
// request into l and decides none: the API server's own authorizers do.
func (l *RequestLog) Authorizer() func(informers.SharedInformerFactory) authorizer.Authorizer {
	return l.authorizer(func(informers.SharedInformerFactory) authorizer.Authorizer {
		return authorizer.AuthorizerFunc(func(context.Context, authorizer.Attributes) (authorizer.Decision, string, error) {
			return authorizer.DecisionNoOpinion, "", nil
		})
	})
}
