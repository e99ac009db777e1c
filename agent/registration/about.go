package registration

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/event"

	aboutv1alpha1 "github.com/flotilla-io/flotilla/api/about/v1alpha1"
	aboutv1beta1 "github.com/flotilla-io/flotilla/api/about/v1beta1"
)

// aboutVersions are the versions of the About API whose ClusterProperty
// the agent reads (spec.value in each), most preferred first.
var aboutVersions = []string{aboutv1beta1.GroupVersion.Version, aboutv1alpha1.GroupVersion.Version}

// aboutCRDName names the About API's CRD, which the agent watches alone.
const aboutCRDName = "clusterproperties." + aboutv1beta1.GroupName

var crdResource = apiextensionsv1.SchemeGroupVersion.WithResource("customresourcedefinitions")

// aboutSyncTimeout bounds how long a status waits for a watch's first list.
const aboutSyncTimeout = 10 * time.Second

// aboutProperties follows the About API's ClusterProperties on the spoke,
// which belong to the cluster's owner: the agent never installs their CRD.
// It watches that one CRD, by name (the agent may already read CRDs: it
// installs its own), and while the CRD is established and serves a
// version the agent reads, it watches the ClusterProperties of that
// version. Each change asks the status controller to report them again:
// a property made right after its CRD is reported within moments.
type aboutProperties struct {
	dyn     dynamic.Interface
	changed chan event.GenericEvent

	mu sync.Mutex
	// runCtx is the manager's context, set when it starts.
	runCtx context.Context
	// crd watches the About API's CRD.
	crd   toolscache.SharedIndexInformer
	gvr   schema.GroupVersionResource
	watch toolscache.SharedIndexInformer
	stop  context.CancelFunc
}

func newAboutProperties(dyn dynamic.Interface) *aboutProperties {
	return &aboutProperties{dyn: dyn, changed: make(chan event.GenericEvent, 1)}
}

// Start watches the About API's CRD for the manager's lifetime.
func (a *aboutProperties) Start(ctx context.Context) error {
	crd := dynamicinformer.NewFilteredDynamicInformer(a.dyn, crdResource, "", 0, toolscache.Indexers{}, func(o *metav1.ListOptions) {
		o.FieldSelector = fields.OneTermEqualSelector("metadata.name", aboutCRDName).String()
	}).Informer()
	onChange := func(any) {
		a.mu.Lock()
		changed := a.follow(ctx)
		a.mu.Unlock()
		if changed {
			a.notify()
		}
	}
	if _, err := crd.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    onChange,
		UpdateFunc: func(_, o any) { onChange(o) },
		DeleteFunc: onChange,
	}); err != nil {
		return err
	}
	a.mu.Lock()
	a.runCtx, a.crd = ctx, crd
	a.mu.Unlock()
	go crd.RunWithContext(ctx)
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
	if !waitSynced(ctx, a.crd) {
		return nil, fmt.Errorf("watch CustomResourceDefinition %s on the managed cluster: not listed yet (the agent needs list and watch on customresourcedefinitions)", aboutCRDName)
	}
	// The CRD's own event may not have been handled yet.
	a.follow(ctx)
	if a.watch == nil {
		return nil, nil
	}
	if !waitSynced(ctx, a.watch) {
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

// waitSynced waits, at most aboutSyncTimeout, for inf's first list.
func waitSynced(ctx context.Context, inf toolscache.SharedIndexInformer) bool {
	if inf.HasSynced() {
		return true
	}
	waitCtx, cancel := context.WithTimeout(ctx, aboutSyncTimeout)
	defer cancel()
	return toolscache.WaitForCacheSync(waitCtx.Done(), inf.HasSynced)
}

// follow watches the ClusterProperties of the version the CRD serves, or
// none; it says whether that changed. a.mu is held.
func (a *aboutProperties) follow(ctx context.Context) bool {
	var crd *apiextensionsv1.CustomResourceDefinition
	if o, ok, _ := a.crd.GetStore().GetByKey(aboutCRDName); ok {
		if u, isU := o.(*unstructured.Unstructured); isU {
			crd = &apiextensionsv1.CustomResourceDefinition{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, crd); err != nil {
				klog.FromContext(ctx).Error(err, "Cannot read the About API's CRD", "crd", aboutCRDName)
				crd = nil
			}
		}
	}
	gvr, served := servedAboutResource(crd)
	if !served {
		if a.watch == nil {
			return false
		}
		klog.FromContext(ctx).Info("The managed cluster no longer serves ClusterProperties; reporting none", "resource", a.gvr.String())
		a.stopWatch()
		return true
	}
	if a.watch != nil && a.gvr == gvr {
		return false
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
		klog.FromContext(ctx).Error(err, "Cannot watch ClusterProperties", "resource", gvr.String())
		return false
	}
	go inf.RunWithContext(watchCtx)
	a.gvr, a.watch, a.stop = gvr, inf, stop
	klog.FromContext(ctx).Info("Reading the managed cluster's ClusterProperties into cluster claims", "resource", gvr.String())
	return true
}

// servedAboutResource returns the ClusterProperty resource that crd, the
// About API's CRD (nil when there is none), serves: while it is
// established and not being deleted, at the most preferred of
// aboutVersions that it serves.
func servedAboutResource(crd *apiextensionsv1.CustomResourceDefinition) (schema.GroupVersionResource, bool) {
	if crd == nil || crd.DeletionTimestamp != nil || crd.Spec.Group != aboutv1beta1.GroupName {
		return schema.GroupVersionResource{}, false
	}
	established := slices.ContainsFunc(crd.Status.Conditions, func(c apiextensionsv1.CustomResourceDefinitionCondition) bool {
		return c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue
	})
	if !established {
		return schema.GroupVersionResource{}, false
	}
	for _, want := range aboutVersions {
		for _, v := range crd.Spec.Versions {
			if v.Name == want && v.Served {
				return schema.GroupVersionResource{Group: crd.Spec.Group, Version: v.Name, Resource: crd.Spec.Names.Plural}, true
			}
		}
	}
	return schema.GroupVersionResource{}, false
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
