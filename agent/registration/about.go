package registration

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/event"

	aboutv1beta1 "github.com/flotilla-io/flotilla/api/about/v1beta1"
)

// aboutVersions are the versions of the About API whose ClusterProperty
// the agent reads (spec.value in each), most preferred first.
var aboutVersions = []string{aboutv1beta1.GroupVersion.Version, "v1alpha1"}

// aboutRecheck is how often the agent asks the spoke's discovery whether
// the About API is served, or served at another version.
const aboutRecheck = 15 * time.Second

// aboutProperties follows the About API's ClusterProperties on the spoke,
// which belong to the cluster's owner: the agent never installs their CRD.
// While the kind is served it keeps a watch on them, and each change asks
// the status controller to report them again; whether it is served is
// asked again at most every aboutRecheck, when the status is worked out.
type aboutProperties struct {
	disc    discovery.DiscoveryInterface
	dyn     dynamic.Interface
	changed chan event.GenericEvent

	mu sync.Mutex
	// runCtx is the manager's context, set when it starts.
	runCtx  context.Context
	gvr     schema.GroupVersionResource
	watch   toolscache.SharedIndexInformer
	stop    context.CancelFunc
	checked time.Time
}

func newAboutProperties(disc discovery.DiscoveryInterface, dyn dynamic.Interface) *aboutProperties {
	return &aboutProperties{disc: disc, dyn: dyn, changed: make(chan event.GenericEvent, 1)}
}

// Start records the manager's context, for the watches' lifetime.
func (a *aboutProperties) Start(ctx context.Context) error {
	a.mu.Lock()
	a.runCtx = ctx
	a.mu.Unlock()
	<-ctx.Done()
	a.mu.Lock()
	a.stopWatch()
	a.mu.Unlock()
	return nil
}

// properties returns the ClusterProperties' values by name; none while
// the About API is not served on the spoke.
func (a *aboutProperties) properties(ctx context.Context) (map[string]string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.runCtx == nil {
		return nil, nil
	}
	if a.watch == nil || time.Since(a.checked) >= aboutRecheck {
		if err := a.follow(ctx); err != nil {
			return nil, err
		}
	}
	if a.watch == nil {
		return nil, nil
	}
	synced := make(chan struct{})
	waitCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	go func() {
		defer close(synced)
		toolscache.WaitForCacheSync(waitCtx.Done(), a.watch.HasSynced)
	}()
	<-synced
	if !a.watch.HasSynced() {
		return nil, fmt.Errorf("list %s on the managed cluster: not listed yet", a.gvr.GroupResource())
	}
	out := map[string]string{}
	for _, o := range a.watch.GetStore().List() {
		u, ok := o.(*unstructured.Unstructured)
		if !ok || u.GetDeletionTimestamp() != nil {
			continue
		}
		if v, _, _ := unstructured.NestedString(u.Object, "spec", "value"); v != "" {
			out[u.GetName()] = v
		}
	}
	return out, nil
}

// follow asks discovery which version of ClusterProperty the spoke serves
// and watches that one, or none.
func (a *aboutProperties) follow(ctx context.Context) error {
	a.checked = time.Now()
	gvr, served, err := a.served()
	if err != nil {
		return fmt.Errorf("discover the About API on the managed cluster: %w", err)
	}
	if !served {
		if a.watch != nil {
			klog.FromContext(ctx).Info("The managed cluster no longer serves ClusterProperties; reporting none", "resource", a.gvr.String())
			a.stopWatch()
			a.notify()
		}
		return nil
	}
	if a.watch != nil && a.gvr == gvr {
		return nil
	}
	a.stopWatch()
	watchCtx, stop := context.WithCancel(a.runCtx)
	inf := dynamicinformer.NewFilteredDynamicInformer(a.dyn, gvr, "", 0, toolscache.Indexers{}, nil).Informer()
	if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { a.notify() },
		UpdateFunc: func(any, any) { a.notify() },
		DeleteFunc: func(any) { a.notify() },
	}); err != nil {
		stop()
		return err
	}
	go inf.RunWithContext(watchCtx)
	a.gvr, a.watch, a.stop = gvr, inf, stop
	klog.FromContext(ctx).Info("Reading the managed cluster's ClusterProperties into cluster claims", "resource", gvr.String())
	return nil
}

// served returns the ClusterProperty resource the spoke serves, at the
// group's preferred version when the agent knows it.
func (a *aboutProperties) served() (schema.GroupVersionResource, bool, error) {
	groups, err := a.disc.ServerGroups()
	if err != nil {
		return schema.GroupVersionResource{}, false, err
	}
	for _, g := range groups.Groups {
		if g.Name != aboutv1beta1.GroupName {
			continue
		}
		versions := make([]string, 0, len(g.Versions))
		versions = append(versions, g.PreferredVersion.Version)
		for _, v := range g.Versions {
			versions = append(versions, v.Version)
		}
		for _, v := range versions {
			if !slices.Contains(aboutVersions, v) {
				continue
			}
			resources, err := a.disc.ServerResourcesForGroupVersion(aboutv1beta1.GroupName + "/" + v)
			if err != nil {
				return schema.GroupVersionResource{}, false, err
			}
			for _, r := range resources.APIResources {
				if r.Name == "clusterproperties" && slices.Contains(r.Verbs, "watch") {
					return schema.GroupVersionResource{Group: aboutv1beta1.GroupName, Version: v, Resource: r.Name}, true, nil
				}
			}
		}
	}
	return schema.GroupVersionResource{}, false, nil
}

func (a *aboutProperties) stopWatch() {
	if a.stop != nil {
		a.stop()
	}
	a.watch, a.stop = nil, nil
}

// notify asks the status controller to run, without waiting: one pending
// request is enough.
func (a *aboutProperties) notify() {
	select {
	case a.changed <- event.GenericEvent{}:
	default:
	}
}
