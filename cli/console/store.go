package console

import (
	"context"
	"fmt"
	"sync"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	clusterv1beta1 "github.com/flotilla-io/flotilla/api/cluster/v1beta1"
	clusterv1beta2 "github.com/flotilla-io/flotilla/api/cluster/v1beta2"
	policyv1 "github.com/flotilla-io/flotilla/api/policy/v1"
	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/parallel"
)

// kind is one kind of object the console shows.
type kind struct {
	// title names it in the page ("ManifestWorks").
	title    string
	group    string
	resource string
	// namespaced kinds may be visible in some namespaces only.
	namespaced bool
	obj        client.Object
}

var (
	kindClusters      = kind{"ManagedClusters", clusterv1.GroupName, "managedclusters", false, &clusterv1.ManagedCluster{}}
	kindClusterSets   = kind{"ManagedClusterSets", clusterv1beta2.GroupName, "managedclustersets", false, &clusterv1beta2.ManagedClusterSet{}}
	kindSetBindings   = kind{"ManagedClusterSetBindings", clusterv1beta2.GroupName, "managedclustersetbindings", true, &clusterv1beta2.ManagedClusterSetBinding{}}
	kindPlacements    = kind{"Placements", clusterv1beta1.GroupName, "placements", true, &clusterv1beta1.Placement{}}
	kindDecisions     = kind{"PlacementDecisions", clusterv1beta1.GroupName, "placementdecisions", true, &clusterv1beta1.PlacementDecision{}}
	kindWorks         = kind{"ManifestWorks", workv1.GroupName, "manifestworks", true, &workv1.ManifestWork{}}
	kindReplicaSets   = kind{"ManifestWorkReplicaSets", workv1alpha1.GroupName, "manifestworkreplicasets", true, &workv1alpha1.ManifestWorkReplicaSet{}}
	kindPolicies      = kind{"Policies", policyv1.GroupName, "policies", true, &policyv1.Policy{}}
	allKinds          = []kind{kindClusters, kindClusterSets, kindSetBindings, kindPlacements, kindDecisions, kindWorks, kindReplicaSets, kindPolicies, kindExports, kindImports, kindCMAs, kindMCAs}
	accessReviewLimit = 8
)

// access is where the caller may list and watch one kind.
type access struct {
	// all: everywhere. Otherwise only in namespaces (none: not at all).
	all        bool
	namespaces []string
}

func (a access) none() bool { return !a.all && len(a.namespaces) == 0 }

// store holds the informers of the console and tells the pages of changes.
type store struct {
	kube   kubernetes.Interface
	client client.Client
	cache  cache.Cache
	access map[string]access
	notify *notifier
}

// newStore finds what the caller may see, starts informers for it and
// waits until they have synced.
func newStore(ctx context.Context, cfg *rest.Config, scheme *runtime.Scheme, h *notifier) (*store, error) {
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, err
	}
	s := &store{kube: kube, client: c, access: map[string]access{}, notify: h}
	if err := s.findAccess(ctx); err != nil {
		return nil, err
	}
	opts := cache.Options{Scheme: scheme, DefaultTransform: cache.TransformStripManagedFields(), ByObject: map[client.Object]cache.ByObject{}}
	for _, k := range allKinds {
		a := s.access[k.resource]
		if a.all || a.none() {
			continue
		}
		ns := map[string]cache.Config{}
		for _, n := range a.namespaces {
			ns[n] = cache.Config{}
		}
		opts.ByObject[k.obj] = cache.ByObject{Namespaces: ns}
	}
	s.cache, err = cache.New(cfg, opts)
	if err != nil {
		return nil, fmt.Errorf("informers: %w", err)
	}
	handler := toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { h.changed() },
		UpdateFunc: func(any, any) { h.changed() },
		DeleteFunc: func(any) { h.changed() },
	}
	for _, k := range allKinds {
		if s.access[k.resource].none() {
			continue
		}
		inf, err := s.cache.GetInformer(ctx, k.obj)
		if err != nil {
			return nil, fmt.Errorf("informer of %s: %w", k.title, err)
		}
		if _, err := inf.AddEventHandler(handler); err != nil {
			return nil, err
		}
	}
	go func() { _ = s.cache.Start(ctx) }()
	if !s.cache.WaitForCacheSync(ctx) {
		return nil, fmt.Errorf("the informers did not sync: %w", context.Cause(ctx))
	}
	return s, nil
}

// findAccess asks the hub (SelfSubjectAccessReviews) where the caller may
// list and watch each kind.
func (s *store) findAccess(ctx context.Context) error {
	var mu sync.Mutex
	var partial []kind
	jobs := make([]func(context.Context) error, 0, len(allKinds))
	for _, k := range allKinds {
		jobs = append(jobs, func(ctx context.Context) error {
			ok, err := s.mayListWatch(ctx, k, "")
			if err != nil {
				return err
			}
			mu.Lock()
			defer mu.Unlock()
			if ok {
				s.access[k.resource] = access{all: true}
			} else if k.namespaced {
				partial = append(partial, k)
			}
			return nil
		})
	}
	if err := firstError(parallel.Run(ctx, accessReviewLimit, jobs)); err != nil {
		return err
	}
	if len(partial) == 0 {
		return nil
	}
	namespaces, err := s.candidateNamespaces(ctx)
	if err != nil {
		return err
	}
	jobs = jobs[:0]
	for _, k := range partial {
		for _, ns := range namespaces {
			jobs = append(jobs, func(ctx context.Context) error {
				ok, err := s.mayListWatch(ctx, k, ns)
				if err != nil || !ok {
					return err
				}
				mu.Lock()
				defer mu.Unlock()
				a := s.access[k.resource]
				a.namespaces = append(a.namespaces, ns)
				s.access[k.resource] = a
				return nil
			})
		}
	}
	return firstError(parallel.Run(ctx, accessReviewLimit, jobs))
}

// candidateNamespaces are the namespaces to ask about: all of them when the
// caller may list namespaces, else the clusters' namespaces.
func (s *store) candidateNamespaces(ctx context.Context) ([]string, error) {
	var out []string
	nss, err := s.kube.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	if err == nil {
		for _, ns := range nss.Items {
			out = append(out, ns.Name)
		}
		return out, nil
	}
	if !s.access[kindClusters.resource].all {
		return nil, nil
	}
	list := &clusterv1.ManagedClusterList{}
	if err := s.client.List(ctx, list); err != nil {
		return nil, fmt.Errorf("list ManagedClusters: %w", err)
	}
	for _, mc := range list.Items {
		out = append(out, mc.Name)
	}
	return out, nil
}

// mayListWatch says whether the caller may list and watch k in ns (all
// namespaces when empty).
func (s *store) mayListWatch(ctx context.Context, k kind, ns string) (bool, error) {
	for _, verb := range []string{"list", "watch"} {
		r, err := s.kube.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{
			Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{
				Namespace: ns, Verb: verb, Group: k.group, Resource: k.resource,
			}},
		}, metav1.CreateOptions{})
		if err != nil {
			return false, fmt.Errorf("ask the hub whether you may %s %s: %w", verb, k.title, err)
		}
		if !r.Status.Allowed {
			return false, nil
		}
	}
	return true, nil
}

// list fills list with the objects of k the caller may see; it returns
// false when they may see none.
func (s *store) list(ctx context.Context, k kind, list client.ObjectList, opts ...client.ListOption) bool {
	if s.access[k.resource].none() {
		return false
	}
	if err := s.cache.List(ctx, list, opts...); err != nil {
		return false
	}
	return true
}

// visibleIn says whether the caller sees k in namespace ns.
func (s *store) visibleIn(k kind, ns string) bool {
	a := s.access[k.resource]
	if a.all {
		return true
	}
	for _, n := range a.namespaces {
		if n == ns {
			return true
		}
	}
	return false
}

// hidden lists the kinds the caller may not see everywhere, for a note.
func (s *store) hidden() []string {
	var out []string
	for _, k := range allKinds {
		a := s.access[k.resource]
		switch {
		case a.none():
			out = append(out, k.title+" (none)")
		case !a.all:
			out = append(out, fmt.Sprintf("%s (only in %d namespaces)", k.title, len(a.namespaces)))
		}
	}
	return out
}

// events lists the events of namespace ns, newest first, read now (the
// console keeps no informer of events: there are too many).
func (s *store) events(ctx context.Context, ns string) ([]corev1.Event, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	list, err := s.kube.CoreV1().Events(ns).List(ctx, metav1.ListOptions{Limit: 200})
	if err != nil {
		return nil, err
	}
	return list.Items, nil
}

func firstError(errs []error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
