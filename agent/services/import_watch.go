package services

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/flotilla-io/flotilla/internal/mcs"
)

// watchOwn watches, in the cluster, what the agent wrote for set (the
// ServiceImports, derived Services and EndpointSlices labelled with it)
// and calls enqueue with the import key of each one that changes or goes,
// so that what someone else changes or deletes (or the garbage collector
// takes with a deleted ServiceImport) is written again at once, not at the
// next resync. It returns when ctx ends.
func (im *importer) watchOwn(ctx context.Context, set string, enqueue func(string)) {
	sel := labels.SelectorFromSet(labels.Set{mcs.ClusterSetLabel: set}).String()
	kinds := []struct {
		list func() client.ObjectList
		obj  runtime.Object
		key  func(client.Object) string
	}{
		{
			list: func() client.ObjectList { return &mcsv1beta1.ServiceImportList{} }, obj: &mcsv1beta1.ServiceImport{},
			key: func(o client.Object) string { return importKey(o.GetNamespace(), o.GetName()) },
		},
		{
			list: func() client.ObjectList { return &corev1.ServiceList{} }, obj: &corev1.Service{},
			key: func(o client.Object) string { return labelKey(o, mcs.ServiceNameLabel) },
		},
		{
			list: func() client.ObjectList { return &discoveryv1.EndpointSliceList{} }, obj: &discoveryv1.EndpointSlice{},
			key: func(o client.Object) string { return labelKey(o, mcsv1beta1.LabelServiceName) },
		},
	}
	done := make(chan struct{}, len(kinds))
	for _, k := range kinds {
		lw := &toolscache.ListWatch{
			ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
				opts.LabelSelector = sel
				list := k.list()
				return list, im.spokeWatch.List(ctx, list, &client.ListOptions{Raw: &opts})
			},
			WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
				opts.LabelSelector = sel
				return im.spokeWatch.Watch(ctx, k.list(), &client.ListOptions{Raw: &opts})
			},
		}
		inf := toolscache.NewSharedIndexInformer(lw, k.obj, 0, toolscache.Indexers{})
		_ = inf.SetTransform(cache.TransformStripManagedFields())
		on := func(obj any) {
			if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			if o, ok := obj.(client.Object); ok {
				if key := k.key(o); key != "" {
					enqueue(key)
				}
			}
		}
		// What the first list brings is what the start's comparison
		// covers already: only later changes are passed on.
		_, _ = inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
			UpdateFunc: func(old, obj any) {
				if old.(client.Object).GetResourceVersion() != obj.(client.Object).GetResourceVersion() {
					on(obj)
				}
			},
			DeleteFunc: on,
		})
		go func() {
			defer func() { done <- struct{}{} }()
			inf.RunWithContext(ctx)
		}()
	}
	for range kinds {
		<-done
	}
}

// labelKey is the import key of o by its label holding the service name,
// or "" without one.
func labelKey(o client.Object, label string) string {
	name := o.GetLabels()[label]
	if name == "" {
		return ""
	}
	return importKey(o.GetNamespace(), name)
}
